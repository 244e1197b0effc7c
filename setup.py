"""The one part of the build that pyproject.toml cannot state: the optional C reader.

meshlint/source/_fastread.c reads the common case of a YAML file with the system's libyaml. Where
the compiler or libyaml's header is missing, the build goes on without it (`optional`), and
meshlint reads through PyYAML's C parser as before (meshlint/source/libyaml.py).
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("meshlint.source._fastread", ["meshlint/source/_fastread.c"], libraries=["yaml"], optional=True)])
