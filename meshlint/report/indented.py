"""JSON laid out as `json.dumps(value, indent=2)` lays it out, only faster.

With an indent, the standard library does not use its C encoder: every value goes through a chain of
Python generators, and a big tree's SARIF report took a good part of the run to write. Here strings are
still escaped by the standard library's own C functions, and the layout is one loop per container.

Only the types reports are made of are laid out here: dicts with `str` keys, lists, tuples, and
values whose type is exactly `str`, `int`, `float`, `bool` or None. Anything else (a subclass, a
non-string key, a cycle) hands the whole value to `json.dumps`, so the text, or the error, is the
one the standard library would give. (One exception, which no report comes near: this layout takes
fewer stack frames per level, so a value nested within a few levels of the recursion limit, which
json.dumps refuses, is laid out here.)
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from json import encoder
from typing import Any

_STEP = "  "
_INFINITY = float("inf")


class _Unusual(Exception):
    """A value this layout does not take: `json.dumps` lays it out instead."""


def dumps(value: Any, *, ensure_ascii: bool = True, level: int = 0) -> str:
    """`json.dumps(value, indent=2, ensure_ascii=ensure_ascii)`, with every line after the first
    indented `level` steps more (the value sits `level` deep in a larger document)."""
    escape: Callable[[str], str] = encoder.encode_basestring_ascii if ensure_ascii else encoder.encode_basestring
    out: list[str] = []
    try:
        _lay_out(value, level, out, escape)
    except (_Unusual, RecursionError):
        text = json.dumps(value, indent=2, ensure_ascii=ensure_ascii)
        return text.replace("\n", "\n" + _STEP * level) if level else text
    return "".join(out)


def _scalar(value: Any, escape: Callable[[str], str]) -> str | None:
    """The text of a scalar, or None for a container."""
    kind = type(value)
    if kind is str:
        return escape(value)
    if kind is int:
        return int.__repr__(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if kind is float:
        if math.isnan(value):
            return "NaN"
        if value == _INFINITY:
            return "Infinity"
        if value == -_INFINITY:
            return "-Infinity"
        return float.__repr__(value)
    if kind is dict or kind is list or kind is tuple:
        return None
    raise _Unusual


def _lay_out(value: Any, level: int, out: list[str], escape: Callable[[str], str]) -> None:
    text = _scalar(value, escape)
    if text is not None:
        out.append(text)
        return
    if not value:
        out.append("{}" if type(value) is dict else "[]")
        return
    inner = "\n" + _STEP * (level + 1)
    between = "," + inner
    if type(value) is dict:
        out.append("{")
        separator = inner
        for key, item in value.items():
            if type(key) is not str:
                raise _Unusual  # json.dumps turns numbers, bools and None into keys, and refuses the rest
            # Strings and ints are most of a report: laid out here, without a call.
            kind = type(item)
            text = escape(item) if kind is str else int.__repr__(item) if kind is int else _scalar(item, escape)
            if text is not None:
                out.append(f"{separator}{escape(key)}: {text}")
            else:
                out.append(f"{separator}{escape(key)}: ")
                _lay_out(item, level + 1, out, escape)
            separator = between
        out.append("\n" + _STEP * level + "}")
    else:
        out.append("[")
        separator = inner
        for item in value:
            kind = type(item)
            text = escape(item) if kind is str else int.__repr__(item) if kind is int else _scalar(item, escape)
            if text is not None:
                out.append(separator + text)
            else:
                out.append(separator)
                _lay_out(item, level + 1, out, escape)
            separator = between
        out.append("\n" + _STEP * level + "]")
