"""YAML (or JSON, which is YAML) held inside a string value: `proxy.istio.io/config`, the `istio`
ConfigMap's `data.mesh`, the injector ConfigMap's `data.values`. Positions map back into the host file."""

from __future__ import annotations

from typing import NamedTuple

from meshlint.findings import Position
from meshlint.source.compose import (
    DUPLICATE_KEY,
    MAX_DEPTH,
    RECURSIVE_ALIAS,
    Converter,
    DocumentTooDeep,
    SyntaxProblem,
    problem_from,
)
from meshlint.source.document import Document, Node
from meshlint.source.positions import Placer
from meshlint.source.yaml11 import compose_all


class Embedded(NamedTuple):
    """The result of parsing YAML or JSON held in a string value."""

    root: Node | None
    problem: SyntaxProblem | None  # position already mapped into the host file


def parse_embedded(host: Node) -> Embedded:
    """Parse the string `host` as YAML and map positions back into the host file."""
    text = host.text or ""
    place = host.placer()
    from meshlint.source import libyaml

    if libyaml.available():
        try:
            return _parse_libyaml(host, text, place)
        except libyaml.Unread:
            pass  # read with ruamel.yaml below
    try:
        nodes = [n for n in compose_all(text) if n is not None]
    except Exception as err:  # ruamel raises several unrelated error types
        inner = problem_from(err, text)
        line, col = place(inner.line - 1, inner.column - 1)
        return Embedded(None, SyntaxProblem(line, col, inner.message))
    if not nodes:
        return Embedded(None, None)
    converter = Converter(host.pos.path, host.table.lines, place)
    try:
        data = converter.convert(nodes[0])
    except DocumentTooDeep:
        return Embedded(None, SyntaxProblem(host.pos.line, host.pos.column, "nested too deeply"))
    if converter.problems:
        return Embedded(None, converter.problems[0])
    line, col = place(nodes[0].start_mark.line, nodes[0].start_mark.column)
    converter.table.roots.append(data)
    return Embedded(Node(data, converter.table, Position(host.pos.path, line, col), host.key_pos), None)


def _parse_libyaml(host: Node, text: str, place: Placer) -> Embedded:
    """As above, through libyaml: the first document is read, and any later one parsed."""
    from meshlint.source import libyaml

    documents: list[Document] = []
    problems: list[SyntaxProblem] = []
    counts: list[int] = []
    try:
        libyaml.read_documents(documents, problems, text, host.pos.path, host.table.lines, 0, 0, MAX_DEPTH, RECURSIVE_ALIAS, DUPLICATE_KEY, place, counts)
    except libyaml.TooDeep:
        if not documents:
            return Embedded(None, SyntaxProblem(host.pos.line, host.pos.column, "nested too deeply"))
    except libyaml.Unread:
        raise
    except Exception as err:  # libyaml's errors, as PyYAML raises them
        inner = problem_from(err, text)
        line, col = place(inner.line - 1, inner.column - 1)
        return Embedded(None, SyntaxProblem(line, col, inner.message))
    if not documents:
        return Embedded(None, None)
    if counts and counts[0]:
        return Embedded(None, problems[0])
    first = documents[0]
    return Embedded(Node(first.data, first.table, Position(host.pos.path, first.line, first.column), host.key_pos), None)
