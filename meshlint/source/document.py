"""Parsed YAML documents: plain Python data with positions kept in a side table.

The data a rule sees is ordinary dicts, lists and scalars, exactly what Kubernetes would read. Where
each value stands in the file lives beside it, keyed by the identity of its parent container, so the
data never carries position keys and an aliased container keeps the position of its anchor.
A `Node` pairs a value with that table so that code can walk the data and ask where it is, down to
one character inside a string (a command in a block-scalar script, a port in an annotation).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol, cast

from meshlint.findings import Position

# Entry of a mapping: (key line, key column, value line, value column, value style, raw text).
# Raw text is kept only for scalars that did not resolve to a string (`true`, `5432`, `0400`), because
# Kubernetes wants those as strings in annotations and labels, and messages quote what was written.
MapEntry = tuple[int, int, int, int, "str | None", "str | None"]
# Entry of a sequence: (line, column, style, raw text).
SeqEntry = tuple[int, int, "str | None", "str | None"]
# Maps a 0-based (line, column) inside a string value to the 1-based (line, column) of the file.
Placer = Callable[[int, int], tuple[int, int]]


class Mark(Protocol):
    """Where the parser saw something: 0-based, in the text it parsed (libyaml's and ruamel's marks)."""

    @property
    def line(self) -> int: ...

    @property
    def column(self) -> int: ...


# What the reader keeps: the parser's marks, turned into file positions only when asked for.
RawEntry = tuple[Mark, Mark, "str | None", "str | None"]  # key mark, value mark, value style, raw text
RawMap = dict[Any, RawEntry]
RawSeq = list[tuple[Mark, "str | None", "str | None"]]  # item mark, style, raw text


class PositionTable:
    """Where the values of one document (or one embedded string) stand in their file, whose `lines`
    it keeps so that a place inside a block scalar can be found.

    The reader stores the parser's marks per container (`raw_maps`, `raw_seqs`, `raw_starts`, keyed by
    the container's identity); `maps`, `seqs` and `starts` give them as 1-based file positions
    (`MapEntry`, `SeqEntry`), each container converted the first time it is asked for. Most containers
    never are: a position is only needed where a finding lands or a fix is written."""

    __slots__ = ("_converted", "_offset", "_place", "kept", "lines", "ordered", "path", "raw_maps", "raw_seqs", "raw_starts", "roots")

    def __init__(self, path: str, lines: Sequence[str] | None = None, line_offset: int = 0, place: Placer | None = None) -> None:
        self.path = path
        self.lines = lines if lines is not None else []
        self.raw_maps: dict[int, RawMap] = {}
        self.raw_seqs: dict[int, RawSeq] = {}
        self.raw_starts: dict[int, Mark] = {}
        self._offset = line_offset + 1
        self._place = place
        self.kept: list[Any] = []  # containers the data no longer holds (a duplicate key's first value)
        self.roots: list[Any] = []  # the data of its documents, so that a copy of the table finds its containers
        # Set by a reader that saw no anchor, so no alias: then every entry below a container starts
        # after the container does (an alias's value stands where its anchor is, before). A merge key
        # may still have merged a mapping written in place, whose entries stand where it is written.
        self.ordered = False
        # Converted entries, by view and container; the views are made on demand and not kept, so a
        # table holds no reference back to itself and goes as soon as its document does.
        self._converted: tuple[dict[int, Any], dict[int, Any], dict[int, Any]] = ({}, {}, {})

    def __getstate__(self) -> tuple[Any, ...]:
        # A table crosses processes and runs with the mesh context (a worker's first pass, the cache),
        # and a copy must place its nodes as the original does. Its marks are keyed by the
        # identities of the containers, which no copy shares, so they travel beside the containers
        # themselves; pickle keeps one object one object within a dump, so the copy's data and its
        # table name the same containers again.
        by_id = {id(c): c for c in self._containers()}
        return (self.path, self.lines, self._offset, self._place, self.ordered, self.kept, self.roots,
                [(by_id[k], v) for k, v in self.raw_maps.items() if k in by_id],
                [(by_id[k], v) for k, v in self.raw_seqs.items() if k in by_id],
                [(by_id[k], v) for k, v in self.raw_starts.items() if k in by_id])

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.path, self.lines, self._offset, self._place, self.ordered, self.kept, self.roots, maps, seqs, starts = state
        self.raw_maps = {id(c): v for c, v in maps}
        self.raw_seqs = {id(c): v for c, v in seqs}
        self.raw_starts = {id(c): v for c, v in starts}
        self._converted = ({}, {}, {})

    def _containers(self) -> list[Any]:
        """Every container the table has marks for: the documents' data (`roots`) and what `kept` holds."""
        found, stack = [], [*self.roots, *self.kept]
        seen: set[int] = set()
        while stack:
            value = stack.pop()
            if (value.__class__ is dict or value.__class__ is list) and id(value) not in seen:
                seen.add(id(value))
                found.append(value)
                stack.extend(value.values() if value.__class__ is dict else value)
        return found

    @property
    def maps(self) -> Mapping[int, dict[Any, MapEntry]]:
        return _Maps(self, self._converted[0])

    @property
    def seqs(self) -> Mapping[int, list[SeqEntry]]:
        return _Seqs(self, self._converted[1])

    @property
    def starts(self) -> Mapping[int, tuple[int, int]]:
        return _Starts(self, self._converted[2])

    def at(self, mark: Mark) -> tuple[int, int]:
        """A mark as the 1-based (line, column) of the file."""
        if self._place is None:
            return mark.line + self._offset, mark.column + 1
        return self._place(mark.line, mark.column)

    def position(self, mark: Mark) -> Position:
        line, column = self.at(mark)
        return Position(self.path, line, column)


@lru_cache(maxsize=64)
def _empty_table(path: str, line_offset: int, place: Placer | None) -> PositionTable:
    return PositionTable(path, [], line_offset, place)


class _Converted(Mapping[int, Any]):
    """A lazily converted view of one of the table's raw dictionaries."""

    def __init__(self, table: PositionTable, done: dict[int, Any]) -> None:
        self.table = table
        self.done = done

    def _raw(self) -> dict[int, Any]:
        raise NotImplementedError

    def _convert(self, raw: Any) -> Any:
        raise NotImplementedError

    def __getitem__(self, key: int) -> Any:
        done = self.done.get(key)
        if done is None:
            done = self.done[key] = self._convert(self._raw()[key])
        return done

    def __iter__(self) -> Iterator[int]:
        return iter(self._raw())

    def __len__(self) -> int:
        return len(self._raw())

    def __contains__(self, key: object) -> bool:
        return key in self._raw()


class _Maps(_Converted):
    def _raw(self) -> dict[int, Any]:
        return self.table.raw_maps

    def _convert(self, raw: RawMap) -> dict[Any, MapEntry]:
        at = self.table.at
        return {key: (*at(entry[0]), *at(entry[1]), entry[2], entry[3]) for key, entry in raw.items()}


class _Seqs(_Converted):
    def _raw(self) -> dict[int, Any]:
        return self.table.raw_seqs

    def _convert(self, raw: RawSeq) -> list[SeqEntry]:
        at = self.table.at
        return [(*at(item[0]), item[1], item[2]) for item in raw]


class _Starts(_Converted):
    def _raw(self) -> dict[int, Any]:
        return self.table.raw_starts

    def _convert(self, raw: Mark) -> tuple[int, int]:
        return self.table.at(raw)


class Document:
    """One YAML document of a file: its data, where it starts, and the position table."""

    __slots__ = ("__weakref__", "column", "data", "index", "line", "path", "rendered_from", "table")

    def __init__(
        self, path: str, index: int, data: Any, line: int, column: int, table: PositionTable, rendered_from: str | None = None
    ) -> None:
        self.path = path
        self.index = index
        self.data = data
        self.line = line
        self.column = column
        self.table = table
        self.rendered_from = rendered_from  # the `# Source:` comment Helm writes before a rendered document
        table.roots.append(data)

    @property
    def root(self) -> Node:
        return Node(self.data, self.table, Position(self.path, self.line, self.column), None)


class _NodeCore:
    """A node's fields and the steps from it to its entries, in Python: what meshlint/source/_node.c
    does where it is built (tests/test_document_node.py holds the two alike)."""

    __slots__ = ("_key_mark", "_key_pos", "_mark", "_pos", "exists", "raw", "style", "table", "value")

    def __init__(
        self,
        value: Any,
        table: PositionTable,
        pos: Position | None,
        key_pos: Position | None,
        style: str | None = None,
        raw: str | None = None,
        exists: bool = True,
        mark: Mark | None = None,
        key_mark: Mark | None = None,
    ) -> None:
        self.value = value
        self.table = table
        self._pos = pos
        self._key_pos = key_pos
        self.style = style
        self.raw = raw
        self.exists = exists
        self._mark = mark  # where `pos` comes from while it is None
        self._key_mark = key_mark

    if TYPE_CHECKING:  # Node's, which both cores call

        @property
        def pos(self) -> Position: ...

    def get(self, key: Any) -> Node:
        value, node = self.value, cast("type[Node]", type(self))  # steps give nodes of one's own class, as in C
        if isinstance(value, dict) and key in value:
            entries = self.table.raw_maps.get(id(value))
            entry = entries.get(key) if entries is not None else None
            if entry is None:
                return node(value[key], self.table, self.pos, self.pos)
            return node(value[key], self.table, None, None, entry[2], entry[3], True, entry[1], entry[0])
        return node(None, self.table, self._pos, None, None, None, False, self._mark)

    def path(self, *keys: Any) -> Node:
        node = cast("Node", self)  # the core is only ever a Node's
        for key in keys:
            node = node.get(key) if not isinstance(key, int) else node.at(key)
        return node

    def at(self, index: int) -> Node:
        value, node = self.value, cast("type[Node]", type(self))
        if isinstance(value, list) and 0 <= index < len(value):
            entries = self.table.raw_seqs.get(id(value))
            if entries is None or index >= len(entries):
                return node(value[index], self.table, self.pos, None)
            mark, style, raw = entries[index]
            return node(value[index], self.table, None, None, style, raw, True, mark)
        return node(None, self.table, self._pos, None, None, None, False, self._mark)


if TYPE_CHECKING:
    _Core = _NodeCore
else:
    try:  # the same core in C: a check takes many of these steps per document
        from meshlint.source._node import NodeCore as _Core
        from meshlint.source._node import fall_back_to
    except ImportError:
        _Core = _NodeCore
    else:
        fall_back_to(_NodeCore.get, _NodeCore.at)  # what the C core leaves to Python: all but the common case


class Node(_Core):
    """A value in a document together with where it stands; missing values are Nodes too.

    A missing value (`node.get("absent")`) has `exists == False` and the position of the mapping it
    is missing from, which is where a fix would go. `pos` and `key_pos` are made from the parser's
    marks the first time they are read.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Node({self.value!r} @ {self.pos})"

    def detached(self) -> Node:
        """This scalar with its positions, on a table of its own that holds nothing of the document: what
        a long-lived fact keeps (a Namespace's labels in the mesh context), so that keeping it, or
        sending it to another process, does not keep the whole document or its file's lines. (A block
        scalar keeps the lines: a place inside it is found from its indentation.)"""
        table = self.table
        if self.style in ("|", ">"):
            alone = PositionTable(table.path, table.lines, table._offset - 1, table._place)
        else:  # one empty table for every scalar of the file: one copy where they are pickled together
            alone = _empty_table(table.path, table._offset - 1, table._place)
        return Node(self.value, alone, self.pos, self.key_pos, self.style, self.raw, self.exists)

    def __reduce__(self) -> tuple[Any, ...]:
        # A node that leaves its process (a worker's mesh context, the cache's) travels as its
        # constructor's arguments, with its positions made here instead of the parser's marks:
        # smaller and faster to unpickle than slot by slot.
        pos = self.pos if self._pos is not None or self._mark is not None else None
        return Node, (self.value, self.table, pos, self.key_pos, self.style, self.raw, self.exists)

    @property
    def pos(self) -> Position:
        pos = self._pos
        if pos is None:
            assert self._mark is not None, "a node without a position has the mark it comes from"
            pos = self._pos = self.table.position(self._mark)
        return pos

    @property
    def key_pos(self) -> Position | None:
        if self._key_pos is None and self._key_mark is not None:
            self._key_pos = self.table.position(self._key_mark)
        return self._key_pos

    @property
    def is_map(self) -> bool:
        return isinstance(self.value, dict)

    @property
    def is_list(self) -> bool:
        return isinstance(self.value, list)

    def items(self) -> Iterator[tuple[Any, Node]]:
        if isinstance(self.value, dict):
            for key in self.value:
                yield key, self.get(key)

    def elements(self) -> Iterator[Node]:
        if isinstance(self.value, list):
            for index in range(len(self.value)):
                yield self.at(index)

    def string_map(self) -> dict[str, Node]:
        """A mapping's entries by key as text (labels, annotations, env maps); values keep their node."""
        return {str(key): value for key, value in self.items()}

    @property
    def text(self) -> str | None:
        """The scalar as written: strings as they are, other scalars as their source text."""
        value = self.value
        if isinstance(value, str):
            return value
        if self.raw is not None:
            return self.raw
        if value is None or isinstance(value, (dict, list)):
            return None
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)

    def path_to(self, position: Position) -> str:
        """The dotted path, below this node, of what stands at `position`: the deepest key or value
        that starts there (`spec.template.metadata`), else, for a place inside a string, that string.
        List items that have a `name` go by it (`containers[web]`), others by index (`ports[0]`), so
        the path names the same node when lines move or siblings are added. "" for this node itself.
        Each container is visited once, so an aliased one costs what it costs once.

        Places are compared as the parser's marks (the file position less a constant shift, so the
        order is the same), and only the winning path is spelled out."""
        table = self.table
        if position.path != table.path:
            return ""
        shifted = table._place is None
        target = (position.line - table._offset, position.column - 1) if shifted else (position.line, position.column)
        at = table.at
        raw_maps, raw_seqs, raw_starts = table.raw_maps, table.raw_seqs, table.raw_starts
        prune = shifted and table.ordered
        if prune:
            found = _descended(self.value, target, raw_maps, raw_seqs, raw_starts)
            if found is not _UNPLACED:
                return _spelled(found)
        best_start: tuple[int, int] = (-(1 << 62), 0)
        best_depth = -1
        best: tuple[Any, ...] | None = None  # (parent, key or index, item, in a list): the path, unspelled
        seen: set[int] = set()
        stack: list[tuple[Any, Any, int]] = [(self.value, None, 0)]
        while stack:
            value, ref, depth = stack.pop()
            if id(value) in seen:
                continue
            seen.add(id(value))
            below = depth + 1
            children: list[tuple[Any, Any]] = []
            if isinstance(value, dict):
                entries = raw_maps.get(id(value), {})
                for key, child in value.items():
                    child_ref = (ref, key, None, False)
                    entry = entries.get(key)
                    if entry is not None:
                        for mark in (entry[0], entry[1]):
                            start = (mark.line, mark.column) if shifted else at(mark)
                            if start <= target and (start, below) > (best_start, best_depth):
                                best_start, best_depth, best = start, below, child_ref
                    if isinstance(child, (dict, list)):
                        children.append((child, child_ref))
            elif isinstance(value, list):
                items = raw_seqs.get(id(value), [])
                for n, child in enumerate(value):
                    child_ref = (ref, n, child, True)
                    if n < len(items):
                        mark = items[n][0]
                        start = (mark.line, mark.column) if shifted else at(mark)
                        if start <= target and (start, below) > (best_start, best_depth):
                            best_start, best_depth, best = start, below, child_ref
                    if isinstance(child, (dict, list)):
                        children.append((child, child_ref))
            if prune:  # nothing below a container that starts after the target can start before it
                children = [c for c in children if _before(raw_starts.get(id(c[0])), target)]
            # In document order, so a shared (aliased) container is named where its anchor stands.
            stack.extend((child, child_ref, below) for child, child_ref in reversed(children))
        return _spelled(best)

    # --- places inside a string value --------------------------------------------------------------

    def placer(self) -> Placer:
        """How a 0-based (line, column) inside this string value maps to the file's 1-based place."""
        line0, col0 = self.pos.line, self.pos.column
        if self.style == "|":
            # A literal block keeps one source line per value line, indented by the block's indentation.
            indent = 0
            # (By index: a slice, or an islice that skips to `line0`, of a 10,000-document stream's
            # lines per call made checking a stream quadratic in its length.)
            lines = self.table.lines
            for number in range(line0, len(lines)):
                source = lines[number]
                if source.strip():
                    indent = len(source) - len(source.lstrip(" "))
                    break
            return lambda line, col: (line0 + 1 + line, indent + col + 1)
        if self.style in ('"', "'", None) and "\n" not in (self.text or ""):
            # One source line: columns map after the opening quote; "past the end" stays on that line.
            shift = 1 if self.style else 0
            return lambda line, col: (line0, col0 + shift + col) if line == 0 else (line0, col0)
        return lambda line, col: (line0, col0)  # folded or multi-line flow: lines do not map one to one

    def position_at(self, offset: int) -> Position:
        """Where character `offset` of this string value stands in the file."""
        text = self.text or ""
        line = text.count("\n", 0, offset)
        column = offset - (text.rfind("\n", 0, offset) + 1)
        file_line, file_column = self.placer()(line, column)
        return Position(self.pos.path, file_line, file_column)


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
    last_start = before_start = None
    last = before = None
    if isinstance(value, dict):
        marks = raw_maps.get(id(value), {})
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
    if isinstance(value, list):
        items = raw_seqs.get(id(value), [])
        if len(items) < len(value):
            return _UNPLACED, None
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
    return None, None


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
            path = f"{path}[{_item_label(item, key)}]"
        else:
            path = f"{path}.{key}" if path else str(key)
    return path


def _item_label(item: Any, index: int) -> str:
    """A list item's name in a path: its `name` (containers, ports, env), else its index."""
    name = item.get("name") if isinstance(item, dict) else None
    return name if isinstance(name, str) and name else str(index)
