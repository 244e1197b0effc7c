"""The dotted path of the node that stands at a place of a document (`spec.template.metadata`,
`containers[web].ports[0]`): what a finding's fingerprint and a rendered finding's placement read."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from meshlint.findings import Position
from meshlint.source.positions import Mark, PositionTable, RawMap, RawSeq


def path_to(value: Any, table: PositionTable, position: Position) -> str:
    """The dotted path, below `value` (a node's value, placed by `table`), of what stands at
    `position`: the deepest key or value that starts there (`spec.template.metadata`), else, for a
    place inside a string, that string.
    List items that have a `name` go by it (`containers[web]`), others by index (`ports[0]`), so
    the path names the same node when lines move or siblings are added. "" for this node itself.
    Each container is visited once, so an aliased one costs what it costs once.

    Places are compared as the parser's marks (the file position less a constant shift, so the
    order is the same), and only the winning path is spelled out."""
    if position.path != table.path:
        return ""
    shifted = table._place is None
    target = (position.line - table._offset, position.column - 1) if shifted else (position.line, position.column)
    if shifted and table.ordered:
        found = _descended(value, target, table.raw_maps, table.raw_seqs, table.raw_starts)
        if found is not _UNPLACED:
            return _spelled(found)
    return _spelled(_searched(value, table, target, shifted))


# (start, depth, (parent, key or index, item, in a list)): of the places the search has met at or before
# the target, the one that starts latest (the deepest of those that start there), and its path, unspelled.
_Best = tuple[tuple[int, int], int, "tuple[Any, ...] | None"]
_NOWHERE: _Best = ((-(1 << 62), 0), -1, None)
# How a mark becomes the place it is compared at; None where that is the mark itself (`path_to`'s
# target then shifted to the parser's marks instead).
_Placing = Callable[[Mark], tuple[int, int]] | None


def _searched(value: Any, table: PositionTable, target: tuple[int, int], shifted: bool) -> tuple[Any, ...] | None:
    """`path_to`'s answer (unspelled), searching the whole tree below `value`, each container once."""
    at = None if shifted else table.at
    raw_maps, raw_seqs, raw_starts = table.raw_maps, table.raw_seqs, table.raw_starts
    prune = shifted and table.ordered
    best = _NOWHERE
    seen: set[int] = set()
    stack: list[tuple[Any, Any, int]] = [(value, None, 0)]
    while stack:
        value, ref, depth = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        below = depth + 1
        children: list[tuple[Any, Any]] = []
        if isinstance(value, dict):
            best = _best_in_mapping(value, ref, below, raw_maps.get(id(value), {}), target, at, best, children)
        elif isinstance(value, list):
            best = _best_in_sequence(value, ref, below, raw_seqs.get(id(value), []), target, at, best, children)
        if prune:  # nothing below a container that starts after the target can start before it
            children = [c for c in children if _before(raw_starts.get(id(c[0])), target)]
        # In document order, so a shared (aliased) container is named where its anchor stands.
        stack.extend((child, child_ref, below) for child, child_ref in reversed(children))
    return best[2]


def _best_in_mapping(
    value: dict[Any, Any], ref: Any, depth: int, marks: RawMap, target: tuple[int, int], at: _Placing, best: _Best, children: list[tuple[Any, Any]]
) -> _Best:
    """The latest-starting, then deepest, of `best` and the keys and values of `value` (entries at
    `depth`, below `ref`) that start at or before `target`; `value`'s own containers are added to
    `children`, in order. An entry the reader kept no marks for is never a place, only a way down."""
    best_start, best_depth, best_ref = best
    for key, child in value.items():
        child_ref = (ref, key, None, False)
        entry = marks.get(key)
        if entry is not None:
            for mark in (entry[0], entry[1]):  # the key, then its value: on a tie the key wins
                start = (mark.line, mark.column) if at is None else at(mark)
                if start <= target and (start, depth) > (best_start, best_depth):
                    best_start, best_depth, best_ref = start, depth, child_ref
        if isinstance(child, (dict, list)):
            children.append((child, child_ref))
    return best_start, best_depth, best_ref


def _best_in_sequence(
    value: list[Any], ref: Any, depth: int, items: RawSeq, target: tuple[int, int], at: _Placing, best: _Best, children: list[tuple[Any, Any]]
) -> _Best:
    """The latest-starting, then deepest, of `best` and the items of `value` (at `depth`, below
    `ref`) that start at or before `target`; `value`'s own containers are added to `children`, in
    order."""
    best_start, best_depth, best_ref = best
    for n, child in enumerate(value):
        child_ref = (ref, n, child, True)
        if n < len(items):
            mark = items[n][0]
            start = (mark.line, mark.column) if at is None else at(mark)
            if start <= target and (start, depth) > (best_start, best_depth):
                best_start, best_depth, best_ref = start, depth, child_ref
        if isinstance(child, (dict, list)):
            children.append((child, child_ref))
    return best_start, best_depth, best_ref


def _before(mark: Mark | None, target: tuple[int, int]) -> bool:
    return mark is None or (mark.line, mark.column) <= target


_UNPLACED = ("cannot tell",)  # _descended cannot tell: the whole search decides


def _descended(value: Any, target: tuple[int, int], raw_maps: dict[int, RawMap], raw_seqs: dict[int, RawSeq], raw_starts: dict[int, Mark]) -> Any:
    """`path_to`'s answer (unspelled) for a table of parser marks read without aliases (`ordered`),
    going down one branch instead of searching the tree.

    Such a document's parse events come in the order of the text, and their marks never go back: an
    entry's key, its value and everything below it are marked at or after the key, and at or before
    the next entry's key. So of one container's entries that start at or before the target, only the
    one that starts last (here `chosen`) and the one before it (`previous`) can hold the deepest
    latest mark: any earlier one ends where the next begins, before `chosen`. `previous` ends at or
    before `chosen`'s key, and the two meet only where an empty value stands at the next key (an
    explicit `? key` without a value): when they do, `_UNPLACED`, as for an entry without marks, two
    entries marked alike, or a duplicate key's order (the dict keeps its first place with the marks
    of its last: each container on the way is read whole, never by its order). When they do not
    meet, a value's mark names the entry its key names and nothing starts between the two, so keys
    are enough."""
    # Each step down is deeper and starts no earlier than the last, so the answer is the last step.
    ref: Any = None
    while True:
        chosen, previous = _last_two(value, target, raw_maps, raw_seqs)
        if chosen is _UNPLACED or previous is _UNPLACED:
            return _UNPLACED
        if chosen is None:
            return ref
        start, key, child, in_list, _ = chosen
        if previous is not None:
            reach = _last_mark(previous, raw_maps, raw_seqs)
            if reach is None or reach >= start:
                return _UNPLACED
        ref = (ref, key, child if in_list else None, in_list)
        if not isinstance(child, (dict, list)) or not _before(raw_starts.get(id(child)), target):
            return ref
        value = child


# (start, key or index, child, in a list, value mark or None): one entry of a container, as read.
_Entry = tuple[tuple[int, int], Any, Any, bool, Any]


def _last_two(value: Any, target: tuple[int, int], raw_maps: dict[int, RawMap], raw_seqs: dict[int, RawSeq]) -> tuple[Any, Any]:
    """Of the entries of `value` that start at or before `target`: the one that starts last and the
    one before it, as `_Entry`s (None where there is none), or `_UNPLACED` when the marks cannot tell.
    (One loop per kind of container, and a tuple only for the two kept: this runs for every finding.)"""
    if isinstance(value, dict):
        return _last_two_keys(value, target, raw_maps.get(id(value), {}))
    if isinstance(value, list):
        return _last_two_items(value, target, raw_seqs.get(id(value), []))
    return None, None


def _last_two_keys(value: dict[Any, Any], target: tuple[int, int], marks: RawMap) -> tuple[Any, Any]:
    """`_last_two` of a mapping: its entries start where their keys do."""
    last_start = before_start = None
    last = before = None
    for key in value:
        entry = marks.get(key)
        if entry is None:
            return _UNPLACED, None
        mark = entry[0]
        start = (mark.line, mark.column)
        if start > target:
            continue
        if last_start is None or start > last_start:
            before_start, before, last_start, last = last_start, last, start, key
        elif start in (last_start, before_start):
            return _UNPLACED, None
        elif before_start is None or start > before_start:
            before_start, before = start, key
    return (
        None if last is None else (last_start, last, value[last], False, marks[last][1]),
        None if before is None else (before_start, before, value[before], False, marks[before][1]),
    )


def _last_two_items(value: list[Any], target: tuple[int, int], items: RawSeq) -> tuple[Any, Any]:
    """`_last_two` of a sequence, by its items' indexes: an item has no mark but its start."""
    if len(items) < len(value):
        return _UNPLACED, None
    last_start = before_start = None
    last = before = None
    for n in range(len(value)):
        mark = items[n][0]
        start = (mark.line, mark.column)
        if start > target:
            continue
        if last_start is None or start > last_start:
            before_start, before, last_start, last = last_start, last, start, n
        elif start in (last_start, before_start):
            return _UNPLACED, None
        elif before_start is None or start > before_start:
            before_start, before = start, n
    return (
        None if last is None else (last_start, last, value[last], True, None),
        None if before is None else (before_start, before, value[before], True, None),
    )


def _last_mark(entry: _Entry, raw_maps: dict[int, RawMap], raw_seqs: dict[int, RawSeq]) -> tuple[int, int] | None:
    """The latest mark at or below `entry` (its key, its value, and down the entries that start last),
    or None when the marks cannot tell."""
    reach = entry[0]
    value_mark, child = entry[4], entry[2]
    while True:
        if value_mark is not None:
            reach = max(reach, (value_mark.line, value_mark.column))
        if isinstance(child, dict):
            marks = raw_maps.get(id(child), {})
            last_start = last = None
            for key in child:
                inner = marks.get(key)
                if inner is None:
                    return None
                start = (inner[0].line, inner[0].column)
                if last_start is None or start > last_start:
                    last_start, last = start, key
                elif start == last_start:
                    return None
            if last_start is None:
                return reach
            reach, value_mark, child = max(reach, last_start), marks[last][1], child[last]
        elif isinstance(child, list):
            items = raw_seqs.get(id(child), [])
            if len(items) < len(child):
                return None
            if not child:
                return reach
            starts = [(item[0].line, item[0].column) for item in items[: len(child)]]
            latest = max(starts)
            if starts.count(latest) > 1:
                return None
            n = starts.index(latest)
            reach, value_mark, child = max(reach, latest), None, child[n]
        else:
            return reach


def _spelled(ref: tuple[Any, ...] | None) -> str:
    """`spec.containers[web].image` from the chain of (parent, key or index, item, in a list) that
    `path_to` kept."""
    parts: list[tuple[Any, Any, bool]] = []
    while ref is not None:
        ref, key, item, in_list = ref
        parts.append((key, item, in_list))
    path = ""
    for key, item, in_list in reversed(parts):
        if in_list:
            path = f"{path}[{item_label(item, key)}]"
        else:
            path = f"{path}.{key}" if path else str(key)
    return path


def item_label(item: Any, index: int) -> str:
    """A list item's name in a path: its `name` (containers, ports, env), else its index."""
    name = item.get("name") if isinstance(item, dict) else None
    return name if isinstance(name, str) and name else str(index)
