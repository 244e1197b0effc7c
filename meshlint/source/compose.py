"""From YAML text to Documents: plain data, with the parser's marks in a side table.

libyaml through PyYAML's C parser reads documents when it can be imported (`libyaml`); otherwise, and
for the second try after a C parser error, ruamel.yaml composes nodes that `Converter` turns into the
same data and table.

Aliases are converted once and shared, so an alias bomb costs what its text costs; an alias that refers
to itself is cut and reported. Duplicate keys are reported where the second one stands. Positions are
made 1-based here and nowhere else.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, NamedTuple

from meshlint.source.document import Document
from meshlint.source.positions import Placer, PositionTable, RawMap, RawSeq
from meshlint.source.yaml11 import compose_all, node_tag, scalar_value

# Beyond this depth a document is not read (ruamel.yaml's C composer crashes on tens of thousands of
# levels; no Kubernetes object comes near a few dozen).
MAX_DEPTH = 200
RECURSIVE_ALIAS = "recursive alias: a node contains itself; the inner reference is read as null"
DUPLICATE_KEY = (
    "duplicate key {key!r} (first at line {first}): kubectl apply keeps the last value without a word, "
    "kustomize and Flux reject the file"
)


class SyntaxProblem(NamedTuple):
    """Why (part of) a text could not be read, 1-based in its file."""

    line: int
    column: int
    message: str
    parse: bool = True  # the parser stopped here (False: the YAML parsed, a duplicate key or a recursive alias)


class DocumentTooDeep(Exception):
    """A document nests beyond MAX_DEPTH; the argument is its 1-based line."""


def compose_into(
    documents: list[Document], problems: list[SyntaxProblem], text: str, path: str, lines: Sequence[str],
    index: int = 0, line_offset: int = 0, pure: bool = False,
) -> int:
    """Append every document of `text`, which starts at 0-based line `line_offset` of the file whose
    `lines` are given, numbering them from `index`; returns the next index. Raises what the parser
    raises on bad YAML, after appending the documents before the error."""
    if not pure:
        from meshlint.source import libyaml

        if libyaml.available():
            try:
                return libyaml.read_documents(documents, problems, text, path, lines, index, line_offset, MAX_DEPTH, RECURSIVE_ALIAS, DUPLICATE_KEY)
            except libyaml.TooDeep as err:
                raise DocumentTooDeep(err.args[0]) from None
            except libyaml.Unread:
                pass  # nothing was appended: ruamel.yaml reads the whole text below

    def place(line: int, column: int) -> tuple[int, int]:
        return line + 1 + line_offset, column + 1

    after = line_offset  # 0-based file line where the gap before the next document starts
    for node in compose_all(text, pure):
        if node is None:
            continue
        converter = Converter(path, lines, place, line_offset)
        data = converter.convert(node)
        line, col = place(node.start_mark.line, node.start_mark.column)
        source = rendered_from(lines, after, line - 1)
        documents.append(Document(path, index, data, line, col, converter.table, source))
        problems.extend(converter.problems)
        after = node.end_mark.line + line_offset
        index += 1
    return index


_SOURCE_COMMENT = re.compile(r"^#\s*Source:\s*(\S.*?)\s*$")


def rendered_from(lines: Sequence[str], start: int, end: int) -> str | None:
    """The path in a `# Source: chart/templates/x.yaml` comment between two documents (Helm writes one
    before each document it renders), if there is one."""
    for text in lines[start:end]:
        if text.startswith("#"):
            match = _SOURCE_COMMENT.match(text)
            if match:
                return match.group(1)
    return None


def problem_from(err: Exception, text: str) -> SyntaxProblem:
    """A parser exception as a problem at its mark (1-based, relative to `text`)."""
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    problem = getattr(err, "problem", None)
    if mark is not None:
        line, column = mark.line + 1, mark.column + 1
    elif isinstance(position := getattr(err, "position", None), int):
        if getattr(err, "encoding", None) == "?":
            # libyaml (through PyYAML's or ruamel.yaml's C binding, which mark the error so) counts
            # the UTF-8 bytes it read; the pure reader counts characters, as a column does.
            position = len(text.encode("utf-8", "surrogatepass")[:position].decode("utf-8", "ignore"))
        before = text[:position]
        line = before.count("\n") + 1
        column = len(before) - (before.rfind("\n") + 1) + 1
    else:
        line, column = 1, 1
    message = problem or str(err).splitlines()[0]
    context = getattr(err, "context", None)
    if context and problem:
        message = f"{context}: {problem}"
    reason = getattr(err, "reason", None)
    if not problem and reason:
        message = f"unacceptable character: {reason}"
    return SyntaxProblem(line, column, message)


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
