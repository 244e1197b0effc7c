"""Every module of the package byte-compiles on the running Python with warnings as errors.

A docstring that writes a lone surrogate, or an escape such as "\\d" that a later Python refuses, breaks
the import of the whole package on that Python; compiling from source (not from a cached .pyc) finds it
on every interpreter CI runs the suite on.
"""

from __future__ import annotations

import pathlib
import warnings

import pytest

import meshlint

PACKAGE = pathlib.Path(meshlint.__file__).parent
MODULES = sorted(PACKAGE.rglob("*.py"))


def test_the_package_has_modules_to_compile() -> None:
    assert len(MODULES) > 50


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_each_module_compiles_with_warnings_as_errors(path: pathlib.Path) -> None:
    source = path.read_bytes()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compile(source, str(path), "exec", dont_inherit=True)
