"""The interface every reader implements (meshlint/source/readers/ says how they are chained)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from meshlint.source.document import Document
    from meshlint.source.positions import Placer
    from meshlint.source.syntax import SyntaxProblem


class Unread(Exception):
    """A reader leaves this text to the next one, and has appended nothing."""


class Target:
    """Where a reader appends what it reads, and where the text stands in its file."""

    __slots__ = ("counts", "documents", "index", "line_offset", "lines", "path", "place", "problems", "pure")

    def __init__(
        self, documents: list[Document], problems: list[SyntaxProblem], path: str, lines: Sequence[str], index: int, line_offset: int,
        place: Placer | None, counts: list[int] | None, pure: bool,
    ) -> None:
        self.documents = documents
        self.problems = problems
        self.path = path
        self.lines = lines  # the whole file's, which positions and `# Source:` comments are read from
        self.index = index  # the number the next document gets
        self.line_offset = line_offset  # 0-based line of the file where the text starts
        # An embedded string is read with `place`, which maps its marks into the host file.
        self.place = place
        self.counts = counts  # receives the number of problems after each document, when given
        # ruamel.yaml's Python parser, which accepts what YAML allows and libyaml does not (a `:`
        # inside a plain scalar of a flow collection), as Kubernetes' own YAML reader does.
        self.pure = pure


class Reader(Protocol):
    NAME: str

    def available(self) -> bool: ...

    def read(self, text: str, target: Target) -> None: ...
