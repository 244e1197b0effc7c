"""How the second pass runs, chosen in one place: each file in this process, the files shared among
forked workers, or one big stream shared among them by ranges of its documents. A result cache, when
the run keeps one, wraps whichever is chosen: a file it holds is never checked again."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import TYPE_CHECKING

from meshlint.engine import parallel
from meshlint.engine.filecheck import check_file, contained
from meshlint.engine.plan import Plan
from meshlint.engine.results import FileResult

if TYPE_CHECKING:
    from meshlint.engine.cache import ResultCache

    Checker = Callable[[Plan, str, bytes | None], FileResult]


def second_pass(plan: Plan, checked: list[str], jobs: int, cache: ResultCache | None) -> Iterable[FileResult]:
    """Each file's result, in the order of `checked` (whatever the strategy: the report is the same
    byte for byte for any number of jobs)."""
    stream = _one_stream(plan, checked, jobs)
    checker: Checker = partial(_check_stream, jobs=jobs) if stream else check_file
    if cache is None:
        check = contained(partial(checker, plan))
    else:
        from meshlint.engine.cache import check_cached  # only a run that keeps results loads the cache

        check = contained(partial(check_cached, plan, cache, checker))
    if stream or not parallel.worth_forking(checked, jobs):
        return map(check, checked)  # each file's garbage goes as the next is read
    if cache is not None:
        from meshlint.engine.cache import hits_first

        return hits_first(plan, cache, checked, check, jobs)
    return parallel.check_files(check, checked, jobs)


def _one_stream(plan: Plan, checked: list[str], jobs: int) -> bool:
    """One big stream, on stdin (`helm template ... | meshlint check -`) or as the run's only file: its
    documents are shared among the workers by ranges, since a tree's files would give them nothing."""
    if len(checked) != 1 or jobs <= 1:
        return False
    size = len(plan.stdin) if plan.stdin is not None else parallel.size_of(checked[0])
    return size >= parallel.PARALLEL_BYTES


def _check_stream(plan: Plan, path: str, data: bytes | None = None, *, jobs: int) -> FileResult:
    from meshlint.engine.streams import check_stream  # only a big stream with --jobs

    return check_stream(plan, path, data, jobs=jobs)
