"""YAML (or JSON, which is YAML) held inside a string value: `proxy.istio.io/config`, the `istio`
ConfigMap's `data.mesh`, the injector ConfigMap's `data.values`. Positions map back into the host file."""

from typing import NamedTuple

from meshlint.findings import Position
from meshlint.source import readers
from meshlint.source.document import Document, Node
from meshlint.source.syntax import DocumentTooDeep, SyntaxProblem, problem_from


class Embedded(NamedTuple):
    """The result of parsing YAML or JSON held in a string value."""

    root: Node | None
    problem: SyntaxProblem | None  # position already mapped into the host file


def parse_embedded(host: Node) -> Embedded:
    """Parse the string `host` as YAML and map positions back into the host file: its first
    document is read, and any later one parsed."""
    text = host.text or ""
    place = host.placer()
    documents: list[Document] = []
    problems: list[SyntaxProblem] = []
    counts: list[int] = []
    try:
        readers.read(documents, problems, text, host.pos.path, host.table.lines, place=place, counts=counts)
    except DocumentTooDeep:
        if not documents:
            return Embedded(None, SyntaxProblem(host.pos.line, host.pos.column, "nested too deeply"))
    except Exception as err:  # the parsers raise several unrelated error types
        inner = problem_from(err, text)
        line, col = place(inner.line - 1, inner.column - 1)
        return Embedded(None, SyntaxProblem(line, col, inner.message))
    if not documents:
        return Embedded(None, None)
    if counts and counts[0]:
        return Embedded(None, problems[0])
    first = documents[0]
    return Embedded(Node(first.data, first.table, Position(host.pos.path, first.line, first.column), host.key_pos), None)
