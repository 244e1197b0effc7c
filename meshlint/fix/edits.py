"""What a fix is: text edits at 1-based positions of one file, safe or unsafe, and how they apply.

Rules write edits with `\n` line breaks; the engine gives each fix the line breaks of its file (CRLF
stays CRLF) before anyone sees it. Edits apply to the file's bytes, so every byte outside an edit (a
BOM, comments, quoting) is left as it was.
"""

import itertools
import re
import sys
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from meshlint.memo import cached_property

SAFE, UNSAFE = "safe", "unsafe"


class Edit(NamedTuple):
    """Replace the text from (line, column) up to (end_line, end_column), 1-based, the end exclusive
    (an insertion has start == end); columns count characters, as finding columns do."""

    line: int
    column: int
    end_line: int
    end_column: int
    text: str

    @property
    def start(self) -> tuple[int, int]:
        return self.line, self.column

    @property
    def end(self) -> tuple[int, int]:
        return self.end_line, self.end_column


def insertion(line: int, column: int, text: str) -> Edit:
    return Edit(line, column, line, column, text)


class Fix(NamedTuple):
    """A finding's fix: what it does (for people), its edits, all in `path`, and whether it is safe.

    `isolation` names the nodes whose text the fix rewrites (a mapping it adds to, an annotation it
    merges into): two fixes that share one are never applied in the same round, since each was
    computed on the text before the other. (A sorted tuple, not a set: every fixable finding holds
    one until the report is written, and a frozenset of one costs four times the memory.)"""

    title: str
    path: str
    edits: tuple[Edit, ...]
    applicability: str = SAFE
    isolation: tuple[tuple[int, int], ...] = ()

    @property
    def safe(self) -> bool:
        return self.applicability == SAFE

    def with_newline(self, newline: str) -> "Fix":
        """The same fix for a file whose lines end with `newline`."""
        if newline == "\n":
            return self
        return self._replace(edits=tuple(e._replace(text=e.text.replace("\n", newline)) for e in self.edits))

    def overlaps(self, other: "Fix") -> bool:
        """The two cannot go in one round: they rewrite the same node or touch the same text."""
        if self.path != other.path:
            return False
        return not set(self.isolation).isdisjoint(other.isolation) or any(_overlap(a, b) for a in self.edits for b in other.edits)


def _overlap(a: Edit, b: Edit) -> bool:
    """Two edits touch the same text (insertions at one place count: their order would be a guess)."""
    return (a.start < b.end and b.start < a.end) or a.start == b.start


def make_fix(title: str, path: str, edits: Iterable[Edit], applicability: str = SAFE, isolation: Iterable[tuple[int, int]] = ()) -> Fix | None:
    """A fix of these edits, or None when there are none or two of them overlap (a bug to hide, not
    to write)."""
    # Every fixable finding holds its fix until the report is written, and most texts repeat (the
    # same annotation at the same indentation in each workload): one copy of each.
    ordered = tuple(sorted((e._replace(text=sys.intern(e.text)) for e in edits), key=lambda e: (e.start, e.end)))
    if not ordered or any(_overlap(a, b) for a, b in itertools.pairwise(ordered)):
        return None
    return Fix(sys.intern(title), path, ordered, applicability, tuple(sorted(set(isolation))))


class Text:
    """A file's bytes and decoded text, with the offsets of its lines, so that edits at positions
    apply to the bytes. Lines break at `\n`, `\r\n` and `\r`, as the YAML reader's do."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.bom = b"\xef\xbb\xbf" if data.startswith(b"\xef\xbb\xbf") else b""
        self.text = data[len(self.bom):].decode("utf-8")
        # One scan of the text: looking for the next \n and the next \r line by line read the whole
        # rest of a file without a \r for each of its lines, time that grew with the square of its size.
        breaks = _BREAK.finditer(self.text)
        self.starts = [0] + [m.end() for m in breaks]
        first = _BREAK.search(self.text)
        self.newline = first.group() if first is not None else "\n"

    @classmethod
    def of(cls, data: bytes) -> "Text":
        """The Text of these bytes, made once for the last bytes asked: a round tries each of its
        fixes on the same file, and a Text of a big file costs a scan of it."""
        last = _LAST_TEXT[0] if _LAST_TEXT else None
        if last is None or not (last.data is data or last.data == data):
            last = cls(data)
            _LAST_TEXT[:] = [last]
        return last

    @cached_property
    def lone_cr(self) -> bool:
        """Does a line end in a CR that no LF follows (a file `--fix` never writes)?"""
        return self.newline == "\r" or "\r" in self.text.replace("\r\n", "")

    def offset(self, line: int, column: int) -> int:
        """The character offset of a 1-based position; a column past the end of its line is the end
        of the line (before its line break), a line past the end is the end of the text."""
        if line > len(self.starts):
            return len(self.text)
        start = self.starts[line - 1]
        end = self.starts[line] if line < len(self.starts) else len(self.text)
        content_end = end
        while content_end > start and self.text[content_end - 1] in "\r\n":
            content_end -= 1
        return min(start + column - 1, content_end)

    def spans(self, edits: Sequence[Edit]) -> list[tuple[int, int, str]]:
        """Each edit as the character offsets it replaces and its text, in order (ValueError when
        they overlap)."""
        spans = []
        done = 0
        for edit in sorted(edits, key=lambda e: (e.start, e.end)):
            start, end = self.offset(edit.line, edit.column), self.offset(edit.end_line, edit.end_column)
            if start < done or end < start:
                raise ValueError(f"overlapping edits at {edit.line}:{edit.column}")
            spans.append((start, end, edit.text))
            done = end
        return spans

    def apply(self, edits: Sequence[Edit]) -> bytes:
        """The bytes with `edits` applied (they must not overlap), their text as it is."""
        pieces: list[bytes] = [self.bom]
        done = 0
        for start, end, text in self.spans(edits):
            pieces.append(self.text[done:start].encode("utf-8"))
            pieces.append(text.encode("utf-8"))
            done = end
        pieces.append(self.text[done:].encode("utf-8"))
        return b"".join(pieces)

    def between(self, spans: Sequence[tuple[int, int, str]], start: int, end: int) -> str:
        """The text from offset `start` to `end`, with `spans` (all within it) applied."""
        pieces = []
        done = start
        for at, until, text in spans:
            pieces.append(self.text[done:at])
            pieces.append(text)
            done = until
        pieces.append(self.text[done:end])
        return "".join(pieces)


_BREAK = re.compile("\r\n|\r|\n")
_LAST_TEXT: list[Text] = []
