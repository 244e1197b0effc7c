"""Parsed YAML documents: plain Python data with positions kept in a side table.

The data a rule sees is ordinary dicts, lists and scalars, exactly what Kubernetes would read. Where
each value stands in the file lives beside it, keyed by the identity of its parent container, so the
data never carries position keys and an aliased container keeps the position of its anchor.
A `Node` pairs a value with that table so that code can walk the data and ask where it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

from meshlint.findings import Position

# Entry of a mapping: (key line, key column, value line, value column, value style, raw text).
# Raw text is kept only for scalars that did not resolve to a string (`true`, `5432`, `0400`), because
# Kubernetes wants those as strings in annotations and labels, and messages quote what was written.
MapEntry = tuple  # (int, int, int, int, str | None, str | None)
SeqEntry = tuple  # (int, int, str | None, str | None)


@dataclass(eq=False, repr=False)
class PositionTable:
    """Where the values of one document (or one embedded string) stand in their file."""

    path: str
    maps: dict[int, dict[Any, MapEntry]] = field(default_factory=dict)
    seqs: dict[int, list[SeqEntry]] = field(default_factory=dict)
    starts: dict[int, tuple[int, int]] = field(default_factory=dict)


@dataclass(eq=False, repr=False)
class Document:
    """One YAML document of a file: its data, where it starts, and the position table."""

    path: str
    index: int
    data: Any
    line: int
    column: int
    table: PositionTable
    lines: list[str] = field(repr=False, default_factory=list)

    @property
    def root(self) -> "Node":
        return Node(self.data, self.table, Position(self.path, self.line, self.column), None)


class Node:
    """A value in a document together with where it stands; missing values are Nodes too.

    A missing value (`node.get("absent")`) has `exists == False` and the position of the mapping it
    is missing from, which is where a fix would go.
    """

    __slots__ = ("value", "table", "pos", "key_pos", "style", "raw", "exists")

    def __init__(self, value, table, pos, key_pos, style=None, raw=None, exists=True):
        self.value = value
        self.table = table
        self.pos: Position = pos
        self.key_pos: Position | None = key_pos
        self.style = style
        self.raw = raw
        self.exists = exists

    def __repr__(self) -> str:
        return f"Node({self.value!r} @ {self.pos})"

    @property
    def is_map(self) -> bool:
        return isinstance(self.value, dict)

    @property
    def is_list(self) -> bool:
        return isinstance(self.value, list)

    def get(self, key: Any) -> "Node":
        value = self.value
        if isinstance(value, dict) and key in value:
            entry = self.table.maps.get(id(value), {}).get(key)
            if entry is None:
                return Node(value[key], self.table, self.pos, self.pos)
            path = self.table.path
            return Node(
                value[key],
                self.table,
                Position(path, entry[2], entry[3]),
                Position(path, entry[0], entry[1]),
                entry[4],
                entry[5],
            )
        return Node(None, self.table, self.pos, None, exists=False)

    def path(self, *keys: Any) -> "Node":
        node = self
        for key in keys:
            node = node.get(key) if not isinstance(key, int) else node.at(key)
        return node

    def at(self, index: int) -> "Node":
        value = self.value
        if isinstance(value, list) and 0 <= index < len(value):
            entries = self.table.seqs.get(id(value))
            if entries is None or index >= len(entries):
                return Node(value[index], self.table, self.pos, None)
            line, col, style, raw = entries[index]
            return Node(value[index], self.table, Position(self.table.path, line, col), None, style, raw)
        return Node(None, self.table, self.pos, None, exists=False)

    def items(self) -> Iterator[tuple[Any, "Node"]]:
        if isinstance(self.value, dict):
            for key in self.value:
                yield key, self.get(key)

    def elements(self) -> Iterator["Node"]:
        if isinstance(self.value, list):
            for index in range(len(self.value)):
                yield self.at(index)

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
