"""A big text's lines without a string object per line: what a `helm template` stream on stdin keeps
for both passes (findings quote their line, suppressions and fixes read the lines around them)."""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from itertools import accumulate
from operator import add
from typing import overload

PIECE = 1 << 18  # characters split at a time: the short-lived line objects of one piece only


class TextLines(Sequence[str]):
    """`text.splitlines()`, each line cut from the text when it is asked for. A list of short lines
    costs a string object and a pointer a line; this keeps the text and two offsets a line (16 bytes)."""

    __slots__ = ("_ends", "_starts", "_text")

    def __init__(self, text: str) -> None:
        starts, ends = array("q"), array("q")
        position, size = 0, len(text)
        while position < size:
            # Cut just after a \n, which always ends a line (and never splits a \r\n): each piece
            # splits into the text's own lines, by str.splitlines itself.
            cut = text.find("\n", min(position + PIECE, size))
            cut = size if cut < 0 else cut + 1
            piece = text[position:cut]
            whole = list(map(len, piece.splitlines(True)))
            begins = list(accumulate(whole[:-1], initial=position))
            starts.extend(begins)
            ends.extend(map(add, begins, map(len, piece.splitlines())))
            position = cut
        self._text, self._starts, self._ends = text, starts, ends

    def __len__(self) -> int:
        return len(self._ends)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return self._text[self._starts[index] : self._ends[index]]

    def __iter__(self) -> Iterator[str]:
        text = self._text
        for start, end in zip(self._starts, self._ends, strict=True):
            yield text[start:end]
