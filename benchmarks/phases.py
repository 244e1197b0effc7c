"""Where a `--jobs 1` run's time goes, phase by phase, in units of the floor (issue 19: "measure and
say exactly what stands in the way").

    python benchmarks/phases.py TREE [--runs 3] [meshlint check options ...]

It times, as whole processes, PyYAML's C compose of the tree (the floor, `compose_floor.py`) and
`meshlint check TREE --jobs 1 --no-cache`, in alternated pairs as benchmarks/run.py does; then it runs the same check in
this process with a clock around the engine's phases, and lays each phase's share of that run over
the whole-process time. Each phase's time is its own (exclusive): time spent in a phase nested
inside another counts for the inner one only.

The phases, and what is wrapped to time them:
- start-up: the interpreter and meshlint's imports: a whole-process check of one empty file;
- collect: finding the input files (`walk.collect`);
- first pass: reading what the mesh context needs (`ContextPass.read`, all of it);
- read: the second pass's reading, decoding and composing (`load_file`, and each step of a file's
  documents);
- model: resources from documents (`resources_of`);
- views: each resource's workload views and mesh source, less the facts they ask for
  (`ResourceSubjects`);
- facts: cached facts computed on first read (every `meshlint.memo.cached_property`: commands,
  environments, settings, classifications), wherever they are first asked for;
- rules: the rules' own code and the dispatch loop (`FileCheck.resource`, `FileCheck.result`, less
  everything above and below);
- fixes: the fixes rules attach to their findings (every function of `meshlint.fix`);
- findings: turning an issue into a finding (suppressions, source line, node path) and
  fingerprints;
- report: writing the report;
- engine: the rest of the run (planning, results, sorting).

The in-process clock costs something per wrapped call (a few hundred thousand calls on a 10k
tree); its total is printed beside the plain in-process run's. The shares are of the clocked run,
laid over the whole-process time less the start-up. Nothing here is a test, and nothing of meshlint is changed outside this process.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import functools
import gc
import importlib
import inspect
import os
import pkgutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any

from measure import measure
from run import Pair, floor, tool

ORDER = ("start-up", "collect", "first pass", "read", "model", "views", "facts", "rules", "fixes", "findings", "report", "engine")


class Clock:
    """Exclusive time per phase: entering a phase stops the clock of the one it is nested in. A
    phase marked whole keeps everything nested in it as its own."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.spent: collections.Counter[str] = collections.Counter()
        self.calls: collections.Counter[str] = collections.Counter()
        self.stack: list[tuple[str, bool]] = [("engine", False)]
        self.last = time.perf_counter()

    def enter(self, phase: str, whole: bool) -> None:
        now = time.perf_counter()
        top, top_whole = self.stack[-1]
        self.spent[top] += now - self.last
        self.last = now
        self.calls[phase] += 1
        self.stack.append((top, True) if top_whole else (phase, whole))

    def leave(self) -> None:
        now = time.perf_counter()
        self.spent[self.stack.pop()[0]] += now - self.last
        self.last = now


CLOCK = Clock()


def timed(phase: str, func: Callable[..., Any], whole: bool = False) -> Callable[..., Any]:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        CLOCK.enter(phase, whole)
        try:
            return func(*args, **kwargs)
        finally:
            CLOCK.leave()

    return wrapper


def timed_steps(phase: str, func: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
    """A generator whose every step is timed, and not what its caller does between steps."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Iterator[Any]:
        steps = func(*args, **kwargs)
        while True:
            CLOCK.enter(phase, False)
            try:
                item = next(steps)
            except StopIteration:
                return
            finally:
                CLOCK.leave()
            yield item

    return wrapper


def install() -> None:
    """Wrap the engine's phases (see the module's docstring)."""
    from meshlint import checking, memo
    from meshlint.engine import filecheck, firstpass
    from meshlint.source import loader, walk

    walk.collect = timed("collect", walk.collect, whole=True)
    firstpass.ContextPass.read = timed("first pass", firstpass.ContextPass.read, whole=True)
    filecheck.load_file = timed("read", loader.load_file)
    loader.LoadedFile.each_document = timed_steps("read", loader.LoadedFile.each_document)
    filecheck.resources_of = timed("model", filecheck.resources_of)
    filecheck.ResourceSubjects = timed("views", filecheck.ResourceSubjects)
    filecheck.FileCheck.resource = timed("rules", filecheck.FileCheck.resource)
    filecheck.FileCheck.result = timed("rules", filecheck.FileCheck.result)
    filecheck.FileCheck._found = timed("findings", filecheck.FileCheck._found)
    filecheck.fingerprinted = timed("findings", filecheck.fingerprinted)
    checking.write_reports = timed("report", checking.write_reports, whole=True)
    get = memo.cached_property.__get__

    def fact(self: Any, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        CLOCK.enter(f"facts:{type(instance).__name__}.{self.name}", False)
        try:
            return get(self, instance, owner)
        finally:
            CLOCK.leave()

    memo.cached_property.__get__ = fact
    import meshlint.fix

    for info in pkgutil.iter_modules(meshlint.fix.__path__, "meshlint.fix."):
        module = importlib.import_module(info.name)
        for name, value in list(vars(module).items()):
            if inspect.isfunction(value) and value.__module__ == module.__name__:
                setattr(module, name, timed("fixes", value))


def in_process(argv: list[str], clocked: bool) -> float:
    """One `meshlint check` in this process; its seconds from the call to its exit."""
    from meshlint import entry

    sys.argv = ["meshlint", *argv]
    if clocked:
        CLOCK.reset()
    start = time.perf_counter()
    with contextlib.suppress(SystemExit):  # the exit code is the run's, not ours
        entry.main()
    seconds = time.perf_counter() - start
    if clocked:
        CLOCK.spent[CLOCK.stack[-1][0]] += time.perf_counter() - CLOCK.last
    gc.collect()
    return seconds


def fold(counter: collections.Counter[str]) -> collections.Counter[str]:
    """Each fact's own figure counted under `facts` too."""
    folded = collections.Counter(counter)
    folded["facts"] += sum(value for name, value in counter.items() if name.startswith("facts:"))
    return folded


def main() -> None:
    parser = argparse.ArgumentParser(description="a --jobs 1 run's phases in floor units")
    parser.add_argument("tree")
    parser.add_argument("--runs", type=int, default=3, help="whole-process runs of each side, and clocked runs")
    parser.add_argument("--facts", type=int, default=12, help="how many of the costliest facts to list")
    args, options = parser.parse_known_args()
    check = ["check", args.tree, "--jobs", "1", "--no-cache", "-o", os.devnull, *options]
    meshlint = tool("meshlint")
    # The run's time is its median; the floor is what the median of the paired ratios makes of it, so
    # a machine that drifts between the runs moves both sides of each pair alike.
    pair = Pair("the whole run against the floor", [meshlint, *check], floor(args.tree), args.runs)
    whole = pair.a_time
    floor_time = whole / pair.wall
    with tempfile.TemporaryDirectory() as empty:
        open(os.path.join(empty, "empty.yaml"), "w").close()
        startup = statistics.median(measure([meshlint, "check", empty, "--jobs", "1", "--no-cache"]).seconds for _ in range(args.runs * 3))

    in_process(check, clocked=False)  # imports, lazily loaded modules
    plain = statistics.median(in_process(check, clocked=False) for _ in range(args.runs))
    install()
    spent: list[collections.Counter[str]] = []
    clocked = []
    for _ in range(args.runs):
        clocked.append(in_process(check, clocked=True))
        spent.append(CLOCK.spent.copy())
    calls = fold(CLOCK.calls)
    total = statistics.median(clocked)
    facts = {name: statistics.median(s[name] for s in spent) / total for name in CLOCK.spent if name.startswith("facts:")}
    spent = [fold(s) for s in spent]
    share = {phase: statistics.median(s[phase] for s in spent) / total for phase in ORDER}

    print(f"meshlint check {args.tree} --jobs 1 --no-cache {' '.join(options)}".rstrip())
    print(f"  whole process: meshlint {whole:.3f} s, floor {floor_time:.3f} s: {whole / floor_time:.2f} floor units (the median of {args.runs} paired ratios)")
    print(f"  in this process: plain {plain:.3f} s, clocked {total:.3f} s (the clock's own cost: {total / plain - 1:+.0%})")
    print(f"\n  {'phase':<12} {'seconds':>8} {'floor units':>12} {'share':>7} {'wrapped calls':>14}")
    rows = [("start-up", startup)] + [(phase, share[phase] * (whole - startup)) for phase in ORDER if phase != "start-up"]
    for phase, seconds in rows:
        print(f"  {phase:<12} {seconds:>8.3f} {seconds / floor_time:>12.2f} {seconds / whole:>7.1%} {calls.get(phase, 0):>14,}")
    print(f"  {'all':<12} {whole:>8.3f} {whole / floor_time:>12.2f}")
    print(f"\n  the facts that cost most (of {len(facts)}), each's own time:")
    for name, part in sorted(facts.items(), key=lambda item: -item[1])[: args.facts]:
        seconds = part * (whole - startup)
        print(f"    {name[len('facts:'):]:<48} {seconds:>6.3f} s {seconds / floor_time:>6.2f} floor units")
    rule_layer = sum(seconds for phase, seconds in rows if phase in ("views", "facts", "rules", "fixes", "findings"))
    print(
        f"\n  views + facts + rules + fixes + findings: {rule_layer / floor_time:.2f} floor units; the target (1.5) leaves "
        f"{1.5 - (whole - rule_layer) / floor_time:.2f} for them with everything else as it is"
    )


if __name__ == "__main__":
    main()
