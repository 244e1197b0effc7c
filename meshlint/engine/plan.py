"""What the second pass of a run needs, made once by the first (engine/run.py): the mesh context, each
input's configuration, and what the run decided about its inputs. Worker processes inherit it when forked."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from meshlint.engine.governance import Governance, Governing
from meshlint.mesh.context import MeshContext

# Told of each file as a step of the run gets through it: files done, files found, and the step's
# word ("read", "checked"); what a watching person sees of a long run (meshlint/progress.py).
Progress = Callable[[int, int, str], None]


class Reads(NamedTuple):
    """What of its findings something of a run reads besides their place and words."""

    marks: bool = True  # node paths and fingerprints (report.READS_MARKS, the baseline, --fix)
    fixes: bool = True  # fixes (report.READS_FIXES, --fix)


EVERYTHING = Reads()


class Plan:
    """Everything the second pass needs, made once; worker processes inherit it when forked."""

    stdin: bytes | None
    stdin_name: str
    stdin_lines: Sequence[str] | None  # stdin's lines, as the first pass made them
    fragments: frozenset[str]  # Kustomize patches: syntax only
    mesh: MeshContext
    governing: Governing
    governed: dict[str, Governance]  # each input's config, decided before any worker forks
    widened: frozenset[str]  # files checked only for what a changed mesh-wide source can alter (§W2.6)
    alone: frozenset[str]  # named files, whose tree the run did not read whole (§W2.7)
    unseen: bool  # the named files' tree has folders the run did not read
    context_named: bool  # --mesh-config was given
    root: str  # the repository root that fingerprints are relative to
    known: frozenset[str]  # every rule's code and name (and ALL), upper-cased: suppressions may name them
    report_unused: bool  # list suppression entries that silenced nothing
    digests: dict[str, str]  # inputs' content digests, when the first pass's cache key read them
    # Whether findings carry their node paths and fingerprints, and their fixes: made only where
    # something reads them (`Reads`); a run that keeps its results keeps both.
    marks: bool
    fixes: bool

    def __init__(
        self,
        stdin: bytes | None,
        stdin_name: str,
        stdin_lines: Sequence[str] | None,
        fragments: frozenset[str],
        mesh: MeshContext,
        governing: Governing,
        governed: dict[str, Governance],
        widened: frozenset[str],
        alone: frozenset[str],
        unseen: bool,
        context_named: bool,
        root: str,
        known: frozenset[str],
        report_unused: bool,
        digests: dict[str, str] | None = None,
        reads: Reads = EVERYTHING,
    ) -> None:
        self.stdin = stdin
        self.stdin_name = stdin_name
        self.stdin_lines = stdin_lines
        self.fragments = fragments
        self.mesh = mesh
        self.governing = governing
        self.governed = governed
        self.widened = widened
        self.alone = alone
        self.unseen = unseen
        self.context_named = context_named
        self.root = root
        self.known = known
        self.report_unused = report_unused
        self.digests = {} if digests is None else digests
        self.marks, self.fixes = reads

    def of(self, path: str) -> Governance:
        return self.governed.get(path) or self.governing.of(path)
