"""The one part of the build that pyproject.toml cannot state: the optional C extensions.

meshlint/source/_fastread.c reads the common case of a YAML file with the system's libyaml. Where
the compiler or libyaml's header is missing, the build goes on without it (`optional`), and
meshlint reads through PyYAML's C parser as before (meshlint/source/libyaml.py).
meshlint/source/_node.c is the core of a document's Node (needs only a compiler); without it the
same core in Python is used (meshlint/source/document.py).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("meshlint.source._fastread", ["meshlint/source/_fastread.c"], libraries=["yaml"], optional=True),
        Extension("meshlint.source._node", ["meshlint/source/_node.c"], optional=True),
    ]
)
