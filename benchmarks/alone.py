"""How long the parent of a default-jobs run works alone: before, between and after its pools of
workers (issue 19: what stands between the default jobs and 1.7x `--jobs 1` on two cores).

    python benchmarks/alone.py TREE [--runs 3]

The check runs in this process, with the default jobs and `--no-cache`; a clock notes when each pool
of workers starts (before its fork) and ends (after its last result), and the rest of the run is the
parent's alone. The start-up (the interpreter and meshlint's imports: a whole-process check of one
empty file) is alone too. Nothing of meshlint is changed outside this process; nothing here is a test.

The last line, `alone_seconds=S`, is for benchmarks/run.py, which lays S over the jobs pair: whatever
the workers do, a run cannot take less than S plus the rest of `--jobs 1`'s time shared out.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Generator
from typing import Any

from measure import measure
from run import tool

IN_POOLS: list[float] = []


def clocked(forked: Callable[..., Generator[Any, None, None]]) -> Callable[..., Generator[Any, None, None]]:
    def wrapper(*args: Any, **kwargs: Any) -> Generator[Any, None, None]:
        start = time.perf_counter()
        try:
            yield from forked(*args, **kwargs)
        finally:
            IN_POOLS.append(time.perf_counter() - start)

    return wrapper


def once(argv: list[str]) -> tuple[float, float]:
    """One check in this process: its seconds, and those inside pools of workers."""
    from meshlint import entry

    IN_POOLS.clear()
    sys.argv = ["meshlint", *argv]
    start = time.perf_counter()
    with contextlib.suppress(SystemExit):  # the exit code is the run's, not ours
        entry.main()
    seconds = time.perf_counter() - start
    gc.collect()
    return seconds, sum(IN_POOLS)


def main() -> None:
    parser = argparse.ArgumentParser(description="how long a default-jobs run's parent works alone")
    parser.add_argument("tree")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    from meshlint.engine import forked

    forked.forked = clocked(forked.forked)  # parallel.py imports it when it forks, so it finds this one
    meshlint = tool("meshlint")
    with tempfile.TemporaryDirectory() as empty:
        open(os.path.join(empty, "empty.yaml"), "w").close()
        startup = statistics.median(measure([meshlint, "check", empty, "--no-cache"]).seconds for _ in range(args.runs * 3))
    check = ["check", args.tree, "--no-cache", "-o", os.devnull]
    once(check)  # imports, lazily loaded modules
    runs = [once(check) for _ in range(args.runs)]
    whole = statistics.median(seconds for seconds, _ in runs)
    alone = statistics.median(seconds - pools for seconds, pools in runs)
    print(f"  in this process: {whole:.3f} s, of which {alone:.3f} s outside the pools of workers; the start-up: {startup:.3f} s")
    print(f"alone_seconds={startup + alone:.4f}")


if __name__ == "__main__":
    main()
