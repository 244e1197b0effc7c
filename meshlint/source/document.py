"""Parsed YAML documents: plain Python data with positions kept in a side table.

The data a rule sees is ordinary dicts, lists and scalars, exactly what Kubernetes would read. Where
each value stands in the file lives beside it, keyed by the identity of its parent container, so the
data never carries position keys and an aliased container keeps the position of its anchor.
A `Node` pairs a value with that table so that code can walk the data and ask where it is, down to
one character inside a string (a command in a block-scalar script, a port in an annotation).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from meshlint.findings import Position

# Entry of a mapping: (key line, key column, value line, value column, value style, raw text).
# Raw text is kept only for scalars that did not resolve to a string (`true`, `5432`, `0400`), because
# Kubernetes wants those as strings in annotations and labels, and messages quote what was written.
MapEntry = tuple[int, int, int, int, "str | None", "str | None"]
# Entry of a sequence: (line, column, style, raw text).
SeqEntry = tuple[int, int, "str | None", "str | None"]
# Maps a 0-based (line, column) inside a string value to the 1-based (line, column) of the file.
Placer = Callable[[int, int], tuple[int, int]]


@dataclass(eq=False, repr=False)
class PositionTable:
    """Where the values of one document (or one embedded string) stand in their file, whose `lines`
    it keeps so that a place inside a block scalar can be found."""

    path: str
    lines: list[str] = field(default_factory=list)
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
    rendered_from: str | None = None  # the `# Source:` comment Helm writes before a rendered document

    @property
    def root(self) -> Node:
        return Node(self.data, self.table, Position(self.path, self.line, self.column), None)


class Node:
    """A value in a document together with where it stands; missing values are Nodes too.

    A missing value (`node.get("absent")`) has `exists == False` and the position of the mapping it
    is missing from, which is where a fix would go.
    """

    __slots__ = ("exists", "key_pos", "pos", "raw", "style", "table", "value")

    def __init__(
        self,
        value: Any,
        table: PositionTable,
        pos: Position,
        key_pos: Position | None,
        style: str | None = None,
        raw: str | None = None,
        exists: bool = True,
    ) -> None:
        self.value = value
        self.table = table
        self.pos = pos
        self.key_pos = key_pos
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

    def get(self, key: Any) -> Node:
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

    def path(self, *keys: Any) -> Node:
        node = self
        for key in keys:
            node = node.get(key) if not isinstance(key, int) else node.at(key)
        return node

    def at(self, index: int) -> Node:
        value = self.value
        if isinstance(value, list) and 0 <= index < len(value):
            entries = self.table.seqs.get(id(value))
            if entries is None or index >= len(entries):
                return Node(value[index], self.table, self.pos, None)
            line, col, style, raw = entries[index]
            return Node(value[index], self.table, Position(self.table.path, line, col), None, style, raw)
        return Node(None, self.table, self.pos, None, exists=False)

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
        Each container is visited once, so an aliased one costs what it costs once."""
        if position.path != self.table.path:
            return ""
        target = (position.line, position.column)
        maps, seqs = self.table.maps, self.table.seqs
        best: tuple[tuple[int, int], int, str] = ((0, 0), -1, "")
        seen: set[int] = set()
        stack: list[tuple[Any, str, int]] = [(self.value, "", 0)]
        while stack:
            value, path, depth = stack.pop()
            if id(value) in seen:
                continue
            seen.add(id(value))
            children: list[tuple[str, Any, tuple[tuple[int, int], ...]]] = []
            if isinstance(value, dict):
                entries = maps.get(id(value), {})
                for key, child in value.items():
                    entry = entries.get(key)
                    starts: tuple[tuple[int, int], ...] = ((entry[0], entry[1]), (entry[2], entry[3])) if entry is not None else ()
                    children.append((f"{path}.{key}" if path else str(key), child, starts))
            elif isinstance(value, list):
                items = seqs.get(id(value), [])
                for n, child in enumerate(value):
                    starts = ((items[n][0], items[n][1]),) if n < len(items) else ()
                    children.append((f"{path}[{_item_label(child, n)}]", child, starts))
            for child_path, _, starts in children:
                for start in starts:
                    if start <= target and (start, depth + 1) > best[:2]:
                        best = (start, depth + 1, child_path)
            # In document order, so a shared (aliased) container is named where its anchor stands.
            stack.extend((child, child_path, depth + 1) for child_path, child, _ in reversed(children) if isinstance(child, (dict, list)))
        return best[2]

    # --- places inside a string value --------------------------------------------------------------

    def placer(self) -> Placer:
        """How a 0-based (line, column) inside this string value maps to the file's 1-based place."""
        line0, col0 = self.pos.line, self.pos.column
        if self.style == "|":
            # A literal block keeps one source line per value line, indented by the block's indentation.
            indent = 0
            for source in self.table.lines[line0:]:
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


def _item_label(item: Any, index: int) -> str:
    """A list item's name in a path: its `name` (containers, ports, env), else its index."""
    name = item.get("name") if isinstance(item, dict) else None
    return name if isinstance(name, str) and name else str(index)
