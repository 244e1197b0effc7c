"""The one part of the build that pyproject.toml cannot state: the optional C extensions.

Both live in meshlint/source/csrc/. fastread/ reads the common case of a YAML file with the system's
libyaml; where the compiler or libyaml's header is missing, the build goes on without it (`optional`),
and meshlint reads through the next reader (meshlint/source/readers/). node.c is the core of a
document's Node (needs only a compiler); without it the same core in Python is used
(meshlint/source/document.py).
"""

from setuptools import Extension, setup

FASTREAD = "meshlint/source/csrc/fastread"

setup(
    ext_modules=[
        Extension(
            "meshlint.source._fastread",
            [f"{FASTREAD}/{part}.c" for part in ("module", "document", "mark")],
            depends=[f"{FASTREAD}/fastread.h", f"{FASTREAD}/releases.h"],
            libraries=["yaml"],
            optional=True,
        ),
        Extension("meshlint.source._node", ["meshlint/source/csrc/node.c"], optional=True),
    ]
)
