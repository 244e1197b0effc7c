"""One big stream on stdin shared among workers by ranges of its documents: each range is checked as
the whole stream would check it, and the parts merge in order into the result one job gives."""

from __future__ import annotations

from functools import partial
from itertools import islice, pairwise
from typing import TYPE_CHECKING, Any, NamedTuple

from meshlint.engine import parallel
from meshlint.engine.filecheck import FileCheck, check_file, syntax_only
from meshlint.engine.results import FileResult, Summary
from meshlint.findings import Finding, Position
from meshlint.mesh.scope import Conflict
from meshlint.source import inputs
from meshlint.source.loader import LoadedFile, decode, each_chunk, each_part, finish_stream, looks_like_a_manifest, streams
from meshlint.suppressions import Suppression

if TYPE_CHECKING:
    from meshlint.engine.run import Plan


def check_stream(plan: Plan, path: str, data: bytes | None = None, *, jobs: int) -> FileResult:
    """stdin's documents checked in `jobs` workers, each a range of them, the parts merged in order
    (findings, counts, problems, suppressions): the result `_check_file` gives, byte for byte."""
    assert plan.stdin is not None
    text, problem = decode(plan.stdin)
    governed = plan.of(path)
    if syntax_only(governed) is None or not streams(text):
        return check_file(plan, path, data)
    count = sum(1 for _ in each_chunk(text))
    pieces = min(count, jobs * 4)  # a few ranges a worker, so that one slow range does not hold the rest
    bounds = [count * n // pieces for n in range(pieces + 1)]
    parts = parallel.map_in_workers(partial(check_range, plan), list(pairwise(bounds)), jobs)
    loaded = LoadedFile(path=plan.stdin_name, lines=plan.stdin_lines if plan.stdin_lines is not None else text.splitlines())
    check = FileCheck(plan, path, governed, loaded, False)
    manifest_like = False
    for part in parts:
        check.merge(part)
        loaded.problems.extend(part.problems)
        loaded.light.extend(part.light)
        manifest_like = manifest_like or part.manifest_like
    finish_stream(loaded, text, problem, True, manifest_like)
    return check.result(FileResult(inputs.display_name(path)))


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


def check_range(plan: Plan, bounds: tuple[int, int]) -> Range:
    assert plan.stdin is not None
    text = decode(plan.stdin)[0]
    loaded = LoadedFile(path=plan.stdin_name, lines=plan.stdin_lines if plan.stdin_lines is not None else text.splitlines())
    governed = plan.of(inputs.STDIN)
    check = FileCheck(plan, inputs.STDIN, governed, loaded, False)
    manifest_like = False
    for document in each_part(loaded, islice(each_chunk(text), *bounds), 0, syntax_only(governed)):
        manifest_like = manifest_like or looks_like_a_manifest(document)
        check.document(document)
    return Range(check.findings, check.summary, check.conflicts, check.used, check.annotations, check.documents, loaded.problems, loaded.light, manifest_like)
