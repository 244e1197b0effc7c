"""Parsed YAML documents: plain Python data with positions kept in a side table.

The data a rule sees is ordinary dicts, lists and scalars, exactly what Kubernetes would read. Where
each value stands in the file lives beside it, keyed by the identity of its parent container, so the
data never carries position keys and an aliased container keeps the position of its anchor.
A `Node` pairs a value with that table so that code can walk the data and ask where it is, down to
one character inside a string (a command in a block-scalar script, a port in an annotation).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, cast

from meshlint.findings import Position
from meshlint.source.nodepaths import path_to
from meshlint.source.positions import Mark, Placer, PositionTable, empty_table


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
    """A node's fields and the steps from it to its entries, in Python: what meshlint/source/csrc/node.c
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
            alone = empty_table(table.path, table._offset - 1, table._place)
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
        """The dotted path, below this node, of what stands at `position` (meshlint/source/nodepaths.py)."""
        return path_to(self.value, self.table, position)

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
