"""Big trees are checked in forked worker processes; results come back in file order."""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Callable, Generator, Iterator
from typing import Any, TypeVar

from meshlint.engine.results import FileResult

T = TypeVar("T")

# Forking workers costs more than checking a handful of files (a pre-commit run) or a few small ones:
# a pool of two takes time to start and to stop, and each worker then loads again what a check loads
# lazily (tree-sitter's parser, the fixes), so a run forks only from many files and 1 MiB of them,
# where the second core more than pays for both.
PARALLEL_FROM = 32
PARALLEL_BYTES = 1 << 20


def worth_forking(files: list[str], jobs: int) -> bool:
    """Would `jobs` workers finish these files sooner than this process alone?"""
    if jobs < 2 or len(files) < PARALLEL_FROM:
        return False
    total = 0
    for path in files:
        total += size_of(path)
        if pays(len(files), total):
            return True
    return False


def size_of(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0  # stdin, or a file the check will report


def pays(count: int, size: int) -> bool:
    """Do `count` files of `size` bytes in all pay for a pool of workers?"""
    return count >= PARALLEL_FROM and size >= PARALLEL_BYTES


def usable_cores() -> int:
    """The cores this process may run on: its CPU affinity, capped by a cgroup CPU quota (a container
    limited to 1.5 CPUs on a 64-core host gets 2 workers, not 64)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    quota = _cgroup_quota()
    return max(1, min(cores, math.ceil(quota))) if quota is not None else max(1, cores)


def _cgroup_quota(root: str = "/sys/fs/cgroup") -> float | None:
    """CPUs allowed by the cgroup quota (v2 `cpu.max`, else v1 `cpu.cfs_quota_us`), None without one."""
    try:
        with open(os.path.join(root, "cpu.max")) as handle:
            quota, period = handle.read().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        pass
    try:
        with open(os.path.join(root, "cpu", "cpu.cfs_quota_us")) as handle:
            quota_us = int(handle.read())
        with open(os.path.join(root, "cpu", "cpu.cfs_period_us")) as handle:
            period_us = int(handle.read())
        return None if quota_us <= 0 or period_us <= 0 else quota_us / period_us
    except (OSError, ValueError):
        return None


def check_files(check: Callable[[str], FileResult], files: list[str], jobs: int) -> Iterator[FileResult]:
    """Each file's result, in file order, as the workers finish them (never all held at once)."""
    from meshlint.engine.forked import forked
    from meshlint.engine.warmup import load_for_checks

    load_for_checks()  # once here, not once a worker (a first pass in workers loaded it already)
    bounds = shares(len(files), jobs)
    with contextlib.closing(forked(lambda n: [check(path) for path in files[bounds[n] : bounds[n + 1]]], len(bounds) - 1, jobs)) as batches:
        for batch in batches:  # a run that stops reading stops the workers too
            yield from batch


def shares(count: int, jobs: int, most: int = 64, least: int = 4) -> list[int]:
    """Where the tasks of `count` files start, and the end: each task is a quarter of what is left for
    each worker, at most `most` files (a result is held until those before it are given) and at least
    `least` (a task costs the parent a wake-up and a frame). Tasks shrink towards the end, so the workers
    run out of work at nearly the same time: with tasks of one size, one worker went on alone for up
    to a whole task (`most` files)."""
    bounds = [0]
    while bounds[-1] < count:
        left = count - bounds[-1]
        bounds.append(min(count, bounds[-1] + max(least, min(most, left // (jobs * 4)))))
    return bounds


def map_in_workers(task: Callable[[Any], T], items: list[Any], jobs: int, meanwhile: Callable[[], object] | None = None) -> list[T]:
    """`task` of each item in `jobs` forked workers (which inherit what the task reads), in order;
    `meanwhile`, in this process while they work (see `forked`)."""
    return list(each_in_workers(task, items, jobs, meanwhile))


def each_in_workers(task: Callable[[Any], T], items: list[Any], jobs: int, meanwhile: Callable[[], object] | None = None) -> Generator[T, None, None]:
    """As `map_in_workers`, each result given as it comes; closing the generator stops the workers."""
    from meshlint.engine.forked import forked

    return forked(lambda n: task(items[n]), len(items), jobs, meanwhile)
