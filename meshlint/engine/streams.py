"""One big stream (stdin, or a run's only file: `helm template ... > all.yaml`) shared among workers by
ranges of its documents: each range is checked as the whole stream would check it, and the parts merge
in order into the result one job gives."""

from collections.abc import Sequence
from functools import partial
from itertools import islice, pairwise
from typing import TYPE_CHECKING, Any, NamedTuple

from meshlint.engine import parallel
from meshlint.engine.filecheck import FileCheck, check_file, syntax_only
from meshlint.engine.results import FileResult, Summary
from meshlint.findings import Finding, Position
from meshlint.mesh.scope import Conflict
from meshlint.source import inputs
from meshlint.source.loader import (
    LoadedFile,
    decode,
    each_chunk,
    each_part,
    finish_stream,
    looks_like_a_manifest,
    newline_of,
    streams,
)
from meshlint.suppressions import Suppression

if TYPE_CHECKING:
    from meshlint.engine.plan import Plan


def check_stream(plan: "Plan", path: str, data: bytes | None = None, *, jobs: int) -> FileResult:
    """A big input's documents checked in `jobs` workers, each a range of them, the parts merged in
    order (findings, counts, problems, suppressions): the result `check_file` gives, byte for byte.
    What `check_file` does not read part by part (a chart's file, a Kustomize patch, a file it cannot
    read, a text that does not stream) it checks as always."""
    if path == inputs.STDIN:
        assert plan.stdin is not None
        data, display, lines = plan.stdin, plan.stdin_name, plan.stdin_lines
    else:
        if inputs.helm_chart_of(path) is not None or (plan.fragments and inputs.real(path) in plan.fragments):
            return check_file(plan, path, data)
        try:
            data = inputs.read(path) if data is None else data
        except OSError:
            return check_file(plan, path, data)  # which says so, as for any file
        display, lines = inputs.display_name(path), None
    text, problem = decode(data)
    governed = plan.of(path)
    if syntax_only(governed) is None or not streams(text):
        return check_file(plan, path, data)
    # Made once, before the workers fork: each inherits the text and its lines.
    stream = Stream(path, display, text, text.splitlines() if lines is None else lines, newline_of(text))
    count = sum(1 for _ in each_chunk(text))
    pieces = min(count, jobs * 4)  # a few ranges a worker, so that one slow range does not hold the rest
    bounds = [count * n // pieces for n in range(pieces + 1)]
    parts = parallel.map_in_workers(partial(check_range, plan, stream), list(pairwise(bounds)), jobs)
    loaded = stream.loaded()
    check = FileCheck(plan, path, governed, loaded, False)
    manifest_like = False
    for part in parts:
        check.merge(part)
        loaded.problems.extend(part.problems)
        loaded.light.extend(part.light)
        manifest_like = manifest_like or part.manifest_like
    finish_stream(loaded, text, problem, True, manifest_like)
    return check.result(FileResult(inputs.display_name(path)))  # stdin's is <stdin>, whatever its findings are named


class Stream(NamedTuple):
    """What every range of a stream reads: its path, its name in findings, its text and lines, and
    how its lines end (fixes write new lines the same way, in every range)."""

    path: str
    display: str
    text: str
    lines: Sequence[str]
    newline: str

    def loaded(self) -> LoadedFile:
        return LoadedFile(path=self.display, lines=self.lines, newline=self.newline)


class Range(NamedTuple):
    """What a worker found in its range of a stream's documents."""

    findings: list[Finding]
    summary: Summary
    conflicts: dict[tuple[Any, ...], tuple[Conflict, int]]
    used: set[tuple[Position, str | None]]
    annotations: list[Suppression]
    documents: int
    problems: list[Any]
    light: list[tuple[str, str]]
    manifest_like: bool


def check_range(plan: "Plan", stream: Stream, bounds: tuple[int, int]) -> Range:
    loaded = stream.loaded()
    governed = plan.of(stream.path)
    check = FileCheck(plan, stream.path, governed, loaded, False)
    manifest_like = False
    for document in each_part(loaded, islice(each_chunk(stream.text), *bounds), 0, syntax_only(governed)):
        manifest_like = manifest_like or looks_like_a_manifest(document)
        check.document(document)
    return Range(check.findings, check.summary, check.conflicts, check.used, check.annotations, check.documents, loaded.problems, loaded.light, manifest_like)
