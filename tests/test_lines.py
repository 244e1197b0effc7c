"""A stream's lines kept as offsets into its text are exactly `str.splitlines()`."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meshlint.source import lines as lines_module
from meshlint.source.lines import TextLines

BREAKS = ["\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


@pytest.mark.parametrize("piece", [1, 2, 3, 1 << 18])
@given(st.lists(st.one_of(st.sampled_from(BREAKS), st.text(alphabet="ab: -#", max_size=6)), max_size=30))
def test_the_lines_of_any_text_are_its_splitlines(piece, parts):
    text = "".join(parts)
    original = lines_module.PIECE
    lines_module.PIECE = piece  # pieces cut at every \n: none may split a line or a \r\n
    try:
        lines = TextLines(text)
    finally:
        lines_module.PIECE = original
    expected = text.splitlines()
    assert list(lines) == expected
    assert len(lines) == len(expected)
    assert [lines[i] for i in range(-len(expected), len(expected))] == expected * 2
    assert lines[1:4] == expected[1:4] and lines[-2:] == expected[-2:]


def test_a_stream_keeps_no_string_per_line():
    text = "apiVersion: v1\nkind: Service\n" * 1000
    lines = TextLines(text)
    assert len(lines) == 2000 and lines[1999] == "kind: Service"
    assert not hasattr(lines, "__dict__")  # the text and two arrays of offsets, nothing else
