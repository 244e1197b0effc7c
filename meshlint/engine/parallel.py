"""Big trees are checked in forked worker processes; results come back in file order."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from meshlint.engine.results import FileResult

# Forking workers costs more than checking a handful of files (a pre-commit run).
PARALLEL_FROM = 32

# What the workers run, set before the pool forks so that they inherit it (with the mesh context).
_WORK: tuple[Callable[[str], FileResult], list[str]] | None = None


def check_files(check: Callable[[str], FileResult], files: list[str], jobs: int) -> Iterator[FileResult]:
    """Each file's result, in file order, as the workers finish them (never all held at once)."""
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        yield from (check(p) for p in files)  # workers could not inherit the context
        return
    global _WORK
    _WORK = (check, files)
    try:
        size = max(1, min(64, len(files) // (jobs * 8)))
        batches = [range(i, min(i + size, len(files))) for i in range(0, len(files), size)]
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            for batch in pool.imap(_check_batch, batches):
                yield from batch
    finally:
        _WORK = None


def _check_batch(indexes: range) -> list[FileResult]:
    assert _WORK is not None, "workers are forked after the work is set"
    check, files = _WORK
    return [check(files[i]) for i in indexes]


