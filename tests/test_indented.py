"""The reports' JSON layout is `json.dumps(value, indent=2)`'s, byte for byte, for any value."""

from __future__ import annotations

import enum
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meshlint.report import indented
from meshlint.report.indented import dumps

# Every code point, lone surrogates included: the escaping is the standard library's either way.
TEXT = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=12)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    TEXT,
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.lists(inner, max_size=3).map(tuple), st.dictionaries(TEXT, inner, max_size=4)),
    max_leaves=30,
)


def expected(value: Any, ensure_ascii: bool, level: int) -> str:
    return json.dumps(value, indent=2, ensure_ascii=ensure_ascii).replace("\n", "\n" + "  " * level)


@settings(max_examples=600, deadline=None)
@given(VALUES, st.booleans(), st.integers(min_value=0, max_value=3))
def test_the_layout_is_json_dumps_indent_2(value: Any, ensure_ascii: bool, level: int) -> None:
    assert dumps(value, ensure_ascii=ensure_ascii, level=level) == expected(value, ensure_ascii, level)


def test_the_laid_out_values_do_not_go_to_json_dumps(monkeypatch: pytest.MonkeyPatch) -> None:
    """A report's usual values are laid out here (else this module would be json.dumps, slower)."""
    value = {"a": [1, "x\u00e9\n", None, True, False, 2.5, float("nan")], "b": {}, "c": [], "d": ({"e": -3},)}
    text = expected(value, True, 0)

    def refused(*args: Any, **kwargs: Any) -> str:
        raise AssertionError("handed to json.dumps")

    monkeypatch.setattr(indented.json, "dumps", refused)
    assert dumps(value) == text


class Level(enum.IntEnum):
    LOW = 1


class Name(str, enum.Enum):
    WEB = "web"


@pytest.mark.parametrize(
    "value",
    [
        {"port": Level.LOW},  # an int subclass: json.dumps writes int.__repr__ of it
        [Name.WEB],  # a str subclass
        {1: "one", None: "none", False: "no", 2.5: "half"},  # keys json.dumps turns into strings
        {"nested": {"x": [1, {"y": Level.LOW}]}},  # found deep inside
    ],
)
def test_values_it_does_not_lay_out_come_out_as_json_dumps_writes_them(value: Any) -> None:
    for level in (0, 2):
        assert dumps(value, level=level) == expected(value, True, level)
        assert dumps(value, ensure_ascii=False, level=level) == expected(value, False, level)


def test_what_json_dumps_refuses_is_refused_the_same_way() -> None:
    cycle: list[Any] = [1]
    cycle.append(cycle)
    with pytest.raises(ValueError, match="Circular reference"):
        dumps({"a": cycle})
    with pytest.raises(TypeError, match="not JSON serializable"):
        dumps({"a": object()})
    with pytest.raises(TypeError, match="keys must be"):
        dumps({(1, 2): "tuple key"})
