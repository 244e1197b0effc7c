"""What every YAML reader shares: a syntax problem, the depth limit, the words of the problems the
readers report themselves (the parsers' own errors are worded by them, as `problem_from` reads them),
and the `# Source:` comment Helm writes before a document. Positions are made 1-based by the readers
and nowhere else."""

import re
from collections.abc import Sequence
from typing import NamedTuple

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
