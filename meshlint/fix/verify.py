"""The promise every applied fix keeps: the file still parses, to the same documents and the same
data, except inside the nodes the fix says it rewrites (its `isolation`)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from meshlint.source.document import PositionTable
from meshlint.source.loader import LoadedFile, load_text

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
    places = frozenset(touched)
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
