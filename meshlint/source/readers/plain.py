"""The reference reader: ruamel.yaml's composer, whose nodes `Converter` turns into plain data with
the parser's marks in a side table, as every other reader does (meshlint/source/readers/).

It reads every text: with libyaml through ruamel.yaml's C parser, or (`target.pure`) with ruamel.yaml's
Python parser, which has the last word on what libyaml refuses. Aliases are converted once and shared,
so an alias bomb costs what its text costs; an alias that refers to itself is cut and reported.
Duplicate keys are reported where the second one stands.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from meshlint.source.document import Document
from meshlint.source.positions import Placer, PositionTable, RawMap, RawSeq
from meshlint.source.readers.interface import Target
from meshlint.source.syntax import DUPLICATE_KEY, MAX_DEPTH, RECURSIVE_ALIAS, DocumentTooDeep, SyntaxProblem, rendered_from
from meshlint.source.yaml11 import compose_all, node_tag, scalar_value

NAME = "ruamel"


def available() -> bool:
    return True


def read(text: str, target: Target) -> None:
    """Every document of `text` into `target` (see meshlint/source/readers/)."""
    line_offset, lines = target.line_offset, target.lines
    place = target.place or _shifted(line_offset)
    after = line_offset  # 0-based file line where the gap before the next document starts
    for node in compose_all(text, target.pure):
        if node is None:
            continue
        converter = Converter(target.path, lines, place, line_offset if target.place is None else None)
        data = converter.convert(node)
        line, col = place(node.start_mark.line, node.start_mark.column)
        source = rendered_from(lines, after, line - 1) if target.place is None else None
        target.documents.append(Document(target.path, target.index, data, line, col, converter.table, source))
        target.problems.extend(converter.problems)
        if target.counts is not None:
            target.counts.append(len(target.problems))
        after = node.end_mark.line + line_offset
        target.index += 1


def _shifted(line_offset: int) -> Placer:
    """Marks of a text that starts at 0-based line `line_offset` as 1-based file positions."""

    def place(line: int, column: int) -> tuple[int, int]:
        return line + 1 + line_offset, column + 1

    return place


class Converter:
    """Turns a composed node tree into plain data, filling the position table as it goes."""

    def __init__(self, path: str, lines: Sequence[str], place: Placer, line_offset: int | None = None) -> None:
        # A document's table maps marks by its line offset; an embedded string's by its placer.
        self.table = PositionTable(path, lines, line_offset or 0, None if line_offset is not None else place)
        self.place = place
        self.problems: list[SyntaxProblem] = []
        self._done: dict[int, Any] = {}
        self._active: set[int] = set()

    def convert(self, node: Any, depth: int = 0) -> Any:
        kind = node.id
        if kind == "scalar":
            return scalar_value(node)
        key = id(node)
        if key in self._done:
            return self._done[key]
        if key in self._active:
            line, col = self.place(node.start_mark.line, node.start_mark.column)
            self.problems.append(SyntaxProblem(line, col, RECURSIVE_ALIAS, parse=False))
            return None
        if depth > MAX_DEPTH:
            line, _ = self.place(node.start_mark.line, node.start_mark.column)
            raise DocumentTooDeep(line)
        self._active.add(key)
        try:
            value = self._mapping(node, depth) if kind == "mapping" else self._sequence(node, depth)
        finally:
            self._active.discard(key)
        self._done[key] = value
        return value

    def _sequence(self, node: Any, depth: int) -> list[Any]:
        result: list[Any] = []
        entries: RawSeq = []
        for item in node.value:
            value = self.convert(item, depth + 1)
            entries.append((item.start_mark, _style(item), _raw(item, value)))
            result.append(value)
        self.table.raw_seqs[id(result)] = entries
        self.table.raw_starts[id(result)] = node.start_mark
        return result

    def _mapping(self, node: Any, depth: int) -> dict[Any, Any]:
        result: dict[Any, Any] = {}
        entries: RawMap = {}
        place = self.place
        merged: list[Any] = []
        for key_node, value_node in node.value:
            if key_node.id == "scalar" and key_node.value == "<<" and node_tag(key_node).endswith(":merge"):
                merged.append(self.convert(value_node, depth + 1))
                continue
            key = self.convert(key_node, depth + 1)
            if isinstance(key, (dict, list)):
                continue  # complex keys never occur in Kubernetes objects
            if not isinstance(key, str):
                # As sigs.k8s.io/yaml turns YAML into JSON: `on:` or `y:` becomes the key "true".
                key = ("true" if key else "false") if isinstance(key, bool) else "null" if key is None else str(key)
            kline, kcol = place(key_node.start_mark.line, key_node.start_mark.column)
            if id(value_node) in self._active:
                self.problems.append(SyntaxProblem(kline, kcol, RECURSIVE_ALIAS, parse=False))
                result[key] = None
                entries[key] = (key_node.start_mark, key_node.start_mark, None, None)
                continue
            if key in entries:
                first = place(entries[key][0].line, entries[key][0].column)[0]
                self.problems.append(SyntaxProblem(kline, kcol, DUPLICATE_KEY.format(key=key, first=first), parse=False))
            value = self.convert(value_node, depth + 1)
            result[key] = value
            entries[key] = (key_node.start_mark, value_node.start_mark, _style(value_node), _raw(value_node, value))
        for source in merged:
            for part in source if isinstance(source, list) else [source]:
                if not isinstance(part, dict):
                    continue
                part_entries = self.table.raw_maps.get(id(part), {})
                for key, value in part.items():
                    if key not in result:
                        result[key] = value
                        if key in part_entries:
                            entries[key] = part_entries[key]
        self.table.raw_maps[id(result)] = entries
        self.table.raw_starts[id(result)] = node.start_mark
        return result


def _style(node: Any) -> str | None:
    return getattr(node, "style", None) or None


def _raw(node: Any, value: Any) -> str | None:
    if node.id == "scalar" and not isinstance(value, str):
        return str(node.value)
    return None
