"""The promise every applied fix keeps: the file still parses, to the same documents and the same
data, except inside the nodes the fix says it rewrites (its `isolation`)."""

from __future__ import annotations

import bisect
import itertools
import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

from meshlint.fix.edits import Edit, Text
from meshlint.source.loader import LoadedFile, bracket_depth_bound, document_chunks, load_text
from meshlint.source.positions import PositionTable
from meshlint.source.syntax import MAX_DEPTH

Place = tuple[int, int]


def load(path: str, data: bytes) -> LoadedFile | None:
    """The file as the loader reads it, or None when it is not UTF-8 (never fixed)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    return load_text(path, text)


def problem_after(path: str, before: bytes, after: bytes, touched: Iterable[Place]) -> str | None:
    """Why `after` breaks the promise, or None when it keeps it."""
    places = frozenset(touched)
    read = _before(path, before)
    if read is not None and not read.whole_only:
        try:
            text = after.decode("utf-8-sig")
        except UnicodeDecodeError:
            return "the file is not UTF-8"
        kept = _parts_kept(read, path, text, places)
        if kept is not _UNSURE:
            return kept
    return whole_problem(path, before, after, places)


def whole_problem(path: str, before: bytes, after: bytes, places: frozenset[Place]) -> str | None:
    """`problem_after`, reading both files whole."""
    old, new = load(path, before), load(path, after)
    if old is None or new is None:
        return "the file is not UTF-8"
    if old.problems:
        return "the file has a syntax error"
    if new.problems:
        problem = new.problems[0]
        return f"the result would not parse (line {problem.line}: {problem.message})"
    if len(old.documents) != len(new.documents):
        return "the result would hold another number of documents"
    for a, b in zip(old.documents, new.documents, strict=True):
        if not _alike(a.data, b.data, a.table, places):
            return f"the result would change the document at line {a.line} beyond the fix"
    return None


# A fix edits one document or two of a file, and a round tries each of its fixes alone on the same
# text: reading the whole file before and after each fix cost a file of a few hundred rendered
# documents a minute (--fix and --diff on `helm template` output). The text before is read once,
# and after a fix only its `---`-separated parts whose text changed are read, before and after: the
# others are the same text, so the same data. Anything unusual goes to the whole reading above.
_UNSURE = "unsure"


class _Before:
    """What the text before a round's fixes gives once: its parts, its lines, and whether only the
    whole reading can check a fix (the text does not parse, or holds what its parts may not read
    alone: `_unusual`)."""

    def __init__(self, path: str, data: bytes) -> None:
        self.path, self.data = path, data
        self.text = Text.of(data).text
        self.parts = document_chunks(self.text)
        self.starts = list(itertools.accumulate((len(part) for _, part in self.parts), initial=0))  # and the end
        self.lines = self.text.splitlines()
        loaded = load_text(path, self.text)
        self.whole_only = bool(loaded.problems) or _unusual(self.text)
        # The whole reading refuses brackets nested beyond a bound counted over the whole text; an
        # edit deepens any place after it by at most the opening brackets it writes and the closing
        # ones it removes, so below this headroom the parts it changes cannot cross that bound.
        self.headroom = 4 * MAX_DEPTH - bracket_depth_bound(self.text)


_LAST_BEFORE: list[_Before] = []


def _before(path: str, data: bytes) -> _Before | None:
    """The last text's reading, or this one's (None when it is not UTF-8)."""
    known = _LAST_BEFORE[0] if _LAST_BEFORE else None
    if known is not None and known.path == path and (known.data is data or known.data == data):
        return known
    try:
        read = _Before(path, data)
    except UnicodeDecodeError:
        return None
    _LAST_BEFORE[:] = [read]
    return read


def _unusual(text: str) -> bool:
    """Does `text` hold what its `---` parts may not read alone as the whole does: a `%YAML` or `%TAG`
    line (it belongs to the document after it), a line break besides CR and LF, or a `---` followed by
    a space YAML does not count as one (the loader's split takes any Unicode space)?"""
    return _UNUSUAL.search(text) is not None


_UNUSUAL = re.compile(r"(?:\A|[\r\n])%|[\x85\u2028\u2029]|---[^\S \t\r\n]")


def problem_of_edits(path: str, data: bytes, edits: Sequence[Edit], touched: Iterable[Place]) -> str | None:
    """`problem_after` of these edits applied to `data`, reading only the parts of the file they
    change and the parts beside those (a round tries each fix alone: the rest of a file of thousands
    of documents is neither rebuilt nor scanned for each). Raises what `Text.apply` raises when the
    edits do not apply."""
    text = Text.of(data)
    spans = text.spans(edits)
    for _, _, inserted in spans:
        inserted.encode("utf-8")  # what applying them would refuse (a lone surrogate)
    read = _before(path, data)
    if read is not None and not read.whole_only and spans and len(read.parts) > 1 and _deepening(text.text, spans) <= read.headroom:
        # The parts the edits touch, and one more on each side: a part boundary an edit reaches
        # (a `---` it moves or joins) is then inside the region, and the region's own ends are
        # part boundaries of text no edit touches.
        first = max(0, _part_at(read, spans[0][0]) - 1)
        last = min(len(read.parts), _part_at(read, spans[-1][1]) + 2)
        region = text.between(spans, read.starts[first], read.starts[last])
        kept = _parts_kept(read, path, region, frozenset(touched), first, last)
        if kept is not _UNSURE:
            return kept
    return problem_after(path, data, text.apply(edits), touched)


def _part_at(read: _Before, offset: int) -> int:
    """The part an offset is in (the end of the text: the last part)."""
    return min(bisect.bisect_right(read.starts, offset) - 1, len(read.parts) - 1)


def _deepening(text: str, spans: Sequence[tuple[int, int, str]]) -> int:
    """How much deeper these edits may make the brackets anywhere: the opening ones they write and the
    closing ones they remove."""
    return sum(new.count("[") + new.count("{") + text.count("]", start, end) + text.count("}", start, end) for start, end, new in spans)


def _parts_kept(read: _Before, path: str, text: str, places: frozenset[Place], first: int = 0, last: int | None = None) -> str | None:
    """The promise checked on the parts whose text changed, `text` being what parts `first` to `last`
    (all, by default) became: None when it is kept, a reason when a changed part reads to other data,
    `_UNSURE` when only the whole reading can say (parts added or removed, a part that does not
    parse, a directive)."""
    old_parts = read.parts[first:last]
    parts = document_chunks(text)
    if len(parts) != len(old_parts) or _unusual(text) or (last is None and bracket_depth_bound(text) > 4 * MAX_DEPTH):
        return _UNSURE
    read_again = []
    for (old_line, old_part), (_, new_part) in zip(old_parts, parts, strict=True):
        if old_part == new_part:
            continue
        old = load_text(path, old_part, old_line, read.lines)  # the file's own positions, for `places`
        new = load_text(path, new_part)
        if old.problems or new.problems or len(old.documents) != len(new.documents):
            return _UNSURE  # (the whole reading says so before it compares any data)
        read_again.append((old, new))
    for old, new in read_again:
        for a, b in zip(old.documents, new.documents, strict=True):
            if not _alike(a.data, b.data, a.table, places):
                return f"the result would change the document at line {a.line} beyond the fix"
    return None


def _alike(a: Any, b: Any, table: PositionTable, touched: frozenset[Place]) -> bool:
    """Equal data, where a container or value that starts at a touched place may differ."""
    if isinstance(a, dict):
        if table.starts.get(id(a)) in touched:
            return True
        if not isinstance(b, dict) or a.keys() != b.keys():
            return False
        entries = table.maps.get(id(a), {})
        for key, value in a.items():
            entry = entries.get(key)
            if entry is not None and (entry[2], entry[3]) in touched:
                continue
            if not _alike(value, b[key], table, touched):
                return False
        return True
    if isinstance(a, list):
        if table.starts.get(id(a)) in touched:
            return True
        if not isinstance(b, list) or len(a) != len(b):
            return False
        items = table.seqs.get(id(a), [])
        return all(
            (n < len(items) and (items[n][0], items[n][1]) in touched) or _alike(x, y, table, touched)
            for n, (x, y) in enumerate(zip(a, b, strict=True))
        )
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and bool(a == b)
