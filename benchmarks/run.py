"""meshlint's speed as ratios against baselines measured in the same run (issues 6 and 19, spec §9).

    python benchmarks/run.py                 # every figure: 10k and 50k trees, streams, CRDs, cold start, cache
    python benchmarks/run.py --pairs 7       # more A/B pairs per figure
    python benchmarks/run.py --quick         # 2k and 10k documents, 3 pairs: a smoke test
    python benchmarks/run.py --only floor,cache
    python benchmarks/run.py --corpus DIR    # the corpus figure on DIR (else $MESHLINT_CORPUS, else ../shared/corpus)

Run it with the Python of a virtualenv where meshlint is installed non-editable (so its bytecode is
compiled) with the bench extra: `pip install '.[bench]'` (yamllint; PyYAML is a dependency).

Every figure is a pair of whole-process commands, A and B, run in turn (A B, B A, A B ...): each
ratio is the median of the per-pair ratios, so a machine that speeds up or slows down during the
run moves both sides of each pair alike, and neither side always runs first. The headline ratio is
CPU time (user + system, the workers a run waited for included): other work on a shared machine
stretches wall time far more than it moves CPU time. The wall ratio stands beside it, and each
figure says whether the machine was loaded: a run that uses one core and took more than 1.2 times
its CPU time in wall time waited for a core (`measure.py`). A speed-up across cores (the default
jobs against --jobs 1) is a wall figure by nature, and only an idle machine tests it.

Each command starts from `launch.py`, a bare interpreter, so its peak memory (the largest resident
size of its processes, its workers included) is its own: a process's peak starts at the size of
the one it was forked from, and from this harness no figure could read below the harness's size.
meshlint runs with `--no-cache` except where the cache is what is measured: a cold start meets a
fresh, empty cache folder on every run, a warm one a cache filled once. Nothing here is a test:
the suite never times anything.

The floor is PyYAML's C loader composing every document (`compose_floor.py`: libyaml with
positions, the least any Python YAML reader can cost); `compose_only.py`, ruamel.yaml's C composer,
is shown beside it for the record, and `phases.py` says where a `--jobs 1` run's time goes, phase by
phase, in floor units. Beside the jobs figure, `alone.py` says how long the parent works alone.

Targets (issue 19), in CPU time but for the speed-ups: --jobs 1 / floor <= 1.5 (10k, 50k); time
50k/10k <= 5.2; memory 50k/10k <= 2; stdin stream peak / same documents as a tree <= 2; default jobs
/ --jobs 1 >= 1.7 in wall time on two idle cores (and never below 1); cold start / yamllint <= 0.8
with and without a mesh.context file; warm cache / cold <= 0.3.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from generate import crd, generate, json_configmap, mesh_context, stream
from measure import Comparison, Measured, load_line, measure, paired

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.dirname(sys.executable)
# The corpus of real repositories lives beside the checkout (or beside the main checkout, for a git
# worktree); --corpus or this variable names another place.
CORPUS_VARIABLE = "MESHLINT_CORPUS"
CORPUS_BESIDE = os.path.join("..", "shared", "corpus")
SMALL = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: checkout
  namespace: shop
spec:
  template:
    metadata:
      labels: {app: checkout}
      annotations:
        proxy.istio.io/config: |
          holdApplicationUntilProxyStarts: true
    spec:
      containers:
        - name: checkout
          image: registry.example.com/shop/checkout:1.9.3
          env:
            - name: ORDERS_URL
              value: http://orders-api.shop.svc.cluster.local
"""


def tool(name: str) -> str:
    path = os.path.join(BIN, name)
    return path if os.path.exists(path) else (shutil.which(name) or name)


class Pair:
    """A and B run in turn; ratios taken pair by pair."""

    def __init__(self, label: str, a: list[str], b: list[str], pairs: int, also: list[str] | None = None, single_core: str = "ab", **options: object) -> None:
        """`also`: a third command run after each pair, for a figure that must see the same moments
        of the machine as the pair (`also_time`: the median of its ratios to B). `single_core`: the
        sides ("a", "b") whose command uses one core, whose wall time over CPU time says whether the
        machine was loaded."""
        self.label = label
        before_a = options.pop("before_a", None)
        before_b = options.pop("before_b", None)
        stdin_b = options.pop("stdin_b", options.get("stdin"))
        print(f"\n{label}\n  A $ {' '.join(a)}\n  B $ {' '.join(b)}")
        # Warm the disk cache and the bytecode: neither side pays for it in the figures.
        measure(a, before=before_a, **options)  # type: ignore[arg-type]
        measure(b, before=before_b, **{**options, "stdin": stdin_b})  # type: ignore[arg-type]
        self.a: list[Measured] = []
        self.b: list[Measured] = []
        # A B, then B A: whichever runs first in a pair was 2-3% faster on this machine (40-file runs,
        # 41 pairs: 0.974 with default jobs first, 0.976 with --jobs 1 first), so the order alternates.
        def run_a() -> None:
            self.a.append(measure(a, before=before_a, **options))  # type: ignore[arg-type]

        def run_b() -> None:
            self.b.append(measure(b, before=before_b, **{**options, "stdin": stdin_b}))  # type: ignore[arg-type]

        self.also: list[Measured] = []
        if also is not None:
            print(f"  C $ {shlex.join(also)}")
        for n in range(pairs):
            for step in (run_a, run_b) if n % 2 == 0 else (run_b, run_a):
                step()
            if also is not None:
                self.also.append(measure(also, **options))  # type: ignore[arg-type]
        single = [run for side, runs in (("a", self.a), ("b", self.b)) if side in single_core for run in runs]
        self.comparison = Comparison.of(self.a, self.b, single)
        self.cpu, self.wall, self.memory = self.comparison.cpu, self.comparison.wall, self.comparison.memory
        self.also_time = paired([c.seconds for c in self.also], [y.seconds for y in self.b]) if self.also else 0.0
        self.also_cpu = paired([c.cpu for c in self.also], [y.cpu for y in self.b]) if self.also else 0.0
        self.a_time, self.b_time = statistics.median(r.seconds for r in self.a), statistics.median(r.seconds for r in self.b)
        self.a_peak, self.b_peak = max(r.peak for r in self.a), max(r.peak for r in self.b)
        codes = sorted({r.code for r in self.a}), sorted({r.code for r in self.b})
        for side, runs, peak, code in (("A", self.a, self.a_peak, codes[0]), ("B", self.b, self.b_peak, codes[1])):
            cpu, wall = statistics.median(r.cpu for r in runs), statistics.median(r.seconds for r in runs)
            print(f"  {side}: median CPU {cpu:.3f} s, wall {wall:.3f} s, peak {peak:.1f} MiB, exit {code}")
        print(f"  {self.comparison.headline(pairs)}")
        if self.comparison.load is not None:
            LOAD_READINGS.append(self.comparison.load)
            print(f"  machine {load_line(self.comparison.load)}")


class Verdicts:
    def __init__(self) -> None:
        self.rows: list[tuple[str, float, str, bool]] = []

    def at_most(self, label: str, value: float, target: float) -> None:
        self._add(label, value, f"<= {target}", value <= target)

    def at_least(self, label: str, value: float, target: float) -> None:
        self._add(label, value, f">= {target}", value >= target)

    def _add(self, label: str, value: float, target: str, ok: bool) -> None:
        self.rows.append((label, value, target, ok))
        print(f"  => {label}: {value:.2f} (target {target}) {'MET' if ok else 'MISSED'}")


# Set by --before: the meshlint measured predates --no-cache and --cache-dir (the figures before issue 19).
BEFORE = False
# Each figure's reading of the machine (a single-core run's wall time over its CPU time), for the summary.
LOAD_READINGS: list[float] = []


def meshlint(*args: str) -> list[str]:
    if BEFORE:
        args = tuple(a for a in args if a != "--no-cache")
    return [tool("meshlint"), "check", *args, "-o", os.devnull]


def floor(target: str) -> list[str]:
    return [sys.executable, os.path.join(HERE, "compose_floor.py"), target]


def same_output(cmd_a: list[str], cmd_b: list[str], stdin: str | None = None) -> bool:
    """Do two meshlint commands write the same JSON report, byte for byte?"""
    outputs = []
    with tempfile.TemporaryDirectory() as out:
        for n, cmd in enumerate((cmd_a, cmd_b)):
            path = os.path.join(out, f"{n}.json")
            measure([c if c != os.devnull else path for c in cmd] + ["--format", "json"], stdin=stdin)
            with open(path, "rb") as handle:
                outputs.append(handle.read())
    return outputs[0] == outputs[1] and bool(outputs[0])


def main_checkout(checkout: str) -> str | None:
    """The checkout that holds the repository's shared git folder: the main one, for a worktree."""
    try:
        common = subprocess.run(["git", "-C", checkout, "rev-parse", "--path-format=absolute", "--git-common-dir"], capture_output=True, text=True, check=False)
    except OSError:  # no git: the checkout itself is all there is to look beside
        return None
    return os.path.dirname(common.stdout.strip()) if common.returncode == 0 and common.stdout.strip() else None


def find_corpus(named: str | None, environ: Mapping[str, str], checkout: str) -> tuple[str | None, list[str]]:
    """The corpus folder (None where there is none) and the places looked in: the one named by
    --corpus or the environment, else ../shared/corpus beside the checkout and beside its main checkout."""
    named = named or environ.get(CORPUS_VARIABLE)
    if named:
        places = [os.path.abspath(named)]
    else:
        tops = [checkout, main_checkout(checkout)]
        places = list(dict.fromkeys(os.path.realpath(os.path.join(top, CORPUS_BESIDE)) for top in tops if top))
    return next((place for place in places if os.path.isdir(place)), None), places


def corpus_missing(places: list[str]) -> str:
    return f"corpus: not measured: no folder at {' nor '.join(places)} (name one with --corpus DIR or {CORPUS_VARIABLE}=DIR)"


def main() -> None:
    parser = argparse.ArgumentParser(description="meshlint benchmarks (ratios against baselines measured in the same run)")
    parser.add_argument("--pairs", type=int, default=5, help="A/B pairs per figure (medians of per-pair ratios)")
    parser.add_argument("--quick", action="store_true", help="2k and 10k documents, 3 pairs")
    parser.add_argument("--workdir", help="where to generate the trees (default: a temporary folder)")
    parser.add_argument("--only", help="comma-separated figures: floor,growth,jobs,stream,crd,json,cold,cache,corpus")
    parser.add_argument("--before", action="store_true", help="the meshlint installed predates the cache: no cache options, no cache figure")
    parser.add_argument("--corpus", help=f"the corpus of real repositories (default: ${CORPUS_VARIABLE}, else {CORPUS_BESIDE} beside the checkout)")
    args = parser.parse_args()
    global BEFORE
    BEFORE = args.before
    corpus, corpus_places = find_corpus(args.corpus, os.environ, os.path.dirname(HERE))
    if corpus is None and (args.corpus or os.environ.get(CORPUS_VARIABLE)):
        parser.error(corpus_missing(corpus_places))  # a folder named on purpose must be there
    pairs = 3 if args.quick else args.pairs
    small, large = (2000, 10000) if args.quick else (10000, 50000)
    only = set(args.only.split(",")) if args.only else None
    wanted = lambda name: only is None or name in only  # noqa: E731
    verdicts = Verdicts()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"meshlint benchmarks: python {sys.version.split()[0]}, {cores} cores, meshlint at {tool('meshlint')}")
    print("(the headline of each figure is its CPU ratio, user + system time, which other work on the machine barely moves;")
    print(" the wall ratio stands beside it, and each figure says whether its single-core runs waited for a core)")
    print(f"(every command starts from a bare interpreter, benchmarks/launch.py: no peak below {measure(['true']).peak:.1f} MiB can be read)")
    if args.workdir:
        os.makedirs(args.workdir, exist_ok=True)  # a folder named for the trees need not exist yet
    with tempfile.TemporaryDirectory(dir=args.workdir) as work:
        trees = {}
        for size in (small, large):
            trees[size] = os.path.join(work, f"tree-{size}")
            files, documents = generate(trees[size], size)
            print(f"generated {trees[size]}: {files} files, {documents} documents (python benchmarks/generate.py DIR --documents {size})")

        single: dict[int, Pair] = {}
        if wanted("floor") or wanted("growth"):
            for size in (small, large):
                single[size] = Pair(f"--jobs 1 / floor, {size} documents", meshlint(trees[size], "--jobs", "1", "--no-cache"), floor(trees[size]), pairs)
                verdicts.at_most(f"--jobs 1 / floor, {size} documents, CPU", single[size].cpu, 1.5)
            ruamel = Pair(f"for the record: ruamel.yaml's C composer / floor, {small} documents", [sys.executable, os.path.join(HERE, "compose_only.py"), trees[small]], floor(trees[small]), pairs)
            print(f"  (the ruamel.yaml composer meshlint read with before costs {ruamel.cpu:.2f}x the floor's CPU)")
            # What stands in the way of the floor target: where a --jobs 1 run's time goes, phase by phase.
            print(f"\nwhere --jobs 1's time goes, {small} documents (python benchmarks/phases.py TREE)")
            sys.stdout.flush()
            subprocess.run([sys.executable, os.path.join(HERE, "phases.py"), trees[small], "--runs", str(max(3, pairs // 2))], check=False)
        if wanted("growth") and single:
            # As many pairs as the other figures: over three, one slow run on a busy machine moved
            # this figure by a tenth (5.42 and 5.70 against 4.74; 4.31 to 5.49 over four full runs).
            growth = Pair(f"growth: {large} / {small} documents, --jobs 1", meshlint(trees[large], "--jobs", "1", "--no-cache"), meshlint(trees[small], "--jobs", "1", "--no-cache"), pairs)
            verdicts.at_most(f"growth in CPU time, {large}/{small} documents", growth.cpu, 5.2)
            verdicts.at_most(f"growth in peak memory, {large}/{small} documents", growth.memory, 2.0)
            if small in single and large in single:
                # The floor does the same work per document at either size: where its own growth
                # strays from the documents' ratio, the machine moved, not meshlint.
                floor_growth = statistics.median(r.cpu for r in single[large].b) / statistics.median(r.cpu for r in single[small].b)
                print(f"  for the record: the floor's own growth in CPU, from its medians above: {floor_growth:.2f} ({large / small:.2f}x the documents)")

        if wanted("jobs"):
            # What the machine itself allows, in the same rounds (C): two independent --jobs 1 runs at
            # once against one alone. Cores that share caches, memory bandwidth or a busy host make
            # each of the two slower than the one, and no split of the work into two processes beats
            # 2 / that ratio. Measured in a pair of its own, minutes apart, it read 1.52 and 1.97 on
            # the same machine within the hour: only the same rounds say what the cores gave the pair.
            single_cmd = " ".join(shlex.quote(a) for a in meshlint(trees[small], "--jobs", "1", "--no-cache"))
            # A speed-up across cores is a wall-time figure by nature: on a loaded machine it does not test the target.
            jobs = Pair(f"default jobs / --jobs 1, {small} documents", meshlint(trees[small], "--no-cache"), meshlint(trees[small], "--jobs", "1", "--no-cache"), pairs,
                        also=["sh", "-c", f"{single_cmd} & {single_cmd}; wait"], single_core="b")
            verdicts.at_least("speed-up of the default jobs over --jobs 1 (two idle cores), wall", 1 / jobs.wall, 1.7)
            ceiling = 2 / jobs.also_time
            used = statistics.median(c.seconds / (2 * a.seconds) for a, c in zip(jobs.a, jobs.also, strict=True))
            print(f"  C, two --jobs 1 runs at once, in the same rounds: at most {ceiling:.2f}x one; round by round, the default jobs reach {used:.0%} of that")
            print(f"  C's two runs spend {jobs.also_cpu / 2:.2f}x the CPU of one each: what sharing the cores costs any two processes here")
            if ceiling < 1.9:
                print(f"  these cores were not idle: two independent runs gained only {ceiling:.2f}x, so the figure above does not test the target")
            # What the parent does alone (start-up, the walk, merging the first pass, the report) is
            # not shared out: with everything else shared as C's two runs share the cores, no split
            # beats B / (alone + (B - alone) / C's gain).
            measured = subprocess.run([sys.executable, os.path.join(HERE, "alone.py"), trees[small], "--runs", str(max(3, pairs // 2))], capture_output=True, text=True, check=False)
            alone = next((float(line.split("=", 1)[1]) for line in measured.stdout.splitlines() if line.startswith("alone_seconds=")), None)
            if alone is None:
                print(f"  (benchmarks/alone.py failed: {measured.stderr.strip()[-300:]})")
            else:
                bound = jobs.b_time / (alone + (jobs.b_time - alone) / ceiling)
                print(f"  the parent works alone {alone:.3f} s (benchmarks/alone.py) of B's {jobs.b_time:.3f} s: at most {bound:.2f}x with the rest shared as C shares it")
            # What the split itself costs: CPU the default jobs spend beyond --jobs 1's (on the 10k
            # tree: the parent unpickles every result, a few tens of ms; the first pass has a pool of
            # its own; two busy cores slow each other). Shared perfectly over two cores, the default
            # jobs can be at most 2 / that ratio faster.
            print(f"  the default jobs use {jobs.cpu:.2f}x the CPU of --jobs 1: at most {2 / jobs.cpu:.2f}x on two cores")
            identical = same_output(meshlint(trees[small], "--jobs", "1", "--no-cache"), meshlint(trees[small], "--no-cache"))
            print(f"  default jobs and --jobs 1 write the same bytes: {'yes' if identical else 'NO'}")
            verdicts.at_least("default jobs and --jobs 1 agree (1 = byte for byte)", float(identical), 1.0)
            few = os.path.join(work, "few")
            os.makedirs(few)
            for name in sorted(os.listdir(os.path.join(trees[small], "teams", "team-1")))[:40]:
                shutil.copy(os.path.join(trees[small], "teams", "team-1", name), few)
            # A run this short needs many pairs for its median to stand above the machine's noise.
            small_run = Pair("default jobs / --jobs 1, 40 files (a pre-commit run's size)", meshlint(few, "--no-cache"), meshlint(few, "--jobs", "1", "--no-cache"), max(pairs * 4, 21), single_core="b")
            verdicts.at_least("default jobs never slower than --jobs 1 (40 files): speed-up, wall", 1 / small_run.wall, 0.95)

        if wanted("stream"):
            path = os.path.join(work, "stream.yaml")
            with open(path, "w") as handle:
                handle.write(stream(trees[small]))
            streamed = Pair(f"stdin stream / the same documents as a tree, {small} documents, --jobs 1", meshlint("-", "--jobs", "1", "--no-cache"), meshlint(trees[small], "--jobs", "1", "--no-cache"), pairs, stdin=path, stdin_b=None)
            verdicts.at_most("stdin stream peak memory / tree's", streamed.memory, 2.0)
            shared = Pair("stdin stream, default jobs / --jobs 1", meshlint("-", "--no-cache"), meshlint("-", "--jobs", "1", "--no-cache"), pairs, single_core="b", stdin=path)
            print(f"  a stream shared among workers: {1 / shared.wall:.2f}x the speed of one job in wall time")
            identical = same_output(meshlint("-", "--jobs", "1", "--no-cache"), meshlint("-", "--no-cache"), stdin=path)
            print(f"  and the same bytes: {'yes' if identical else 'NO'}")
            verdicts.at_least("stream shared among workers agrees with one job (1 = byte for byte)", float(identical), 1.0)
            if wanted("floor"):
                stream_floor = Pair("stdin stream, --jobs 1 / floor on the same file", meshlint("-", "--jobs", "1", "--no-cache"), floor(path), pairs, stdin=path, stdin_b=None)
                print(f"  stream --jobs 1 / floor: CPU {stream_floor.cpu:.2f}, wall {stream_floor.wall:.2f}")

        if wanted("crd"):
            crds = os.path.join(work, "crds")
            os.makedirs(crds)
            for n in range(5):
                with open(os.path.join(crds, f"crd-{n}.yaml"), "w") as handle:
                    handle.write(crd(n, 2 << 20))
            shutil.copytree(os.path.join(trees[small], "platform"), os.path.join(crds, "platform"))
            crd_pair = Pair("five 2 MB CRDs, --jobs 1 / floor", meshlint(crds, "--jobs", "1", "--no-cache"), floor(crds), pairs)
            print(f"  CRD tree --jobs 1 / floor: CPU {crd_pair.cpu:.2f}, wall {crd_pair.wall:.2f}")

        if wanted("json"):
            json_dir = os.path.join(work, "json")
            os.makedirs(json_dir)
            with open(os.path.join(json_dir, "dashboards.yaml"), "w") as handle:
                handle.write(json_configmap(10 << 20))
            json_pair = Pair("a 10 MB ConfigMap of JSON block scalars, --jobs 1 / floor", meshlint(json_dir, "--jobs", "1", "--no-cache"), floor(json_dir), pairs)
            print(f"  JSON ConfigMap --jobs 1 / floor: CPU {json_pair.cpu:.2f}, wall {json_pair.wall:.2f}")

        if wanted("cold"):
            cold_start(work, pairs, verdicts)

        if wanted("cache") and not BEFORE:
            cache_dir = os.path.join(work, "cache")
            warm_cmd = meshlint(trees[small], "--cache-dir", cache_dir)
            measure(warm_cmd)  # fill the cache once; every warm run reads it
            fresh = os.path.join(work, "fresh-cache")
            cache = Pair(f"warm cache / cold, {small} documents", warm_cmd, meshlint(trees[small], "--cache-dir", fresh), pairs, single_core="", before_b=empty_folder(fresh))
            verdicts.at_most("warm cached run / cold run, CPU", cache.cpu, 0.3)
            identical = same_output(warm_cmd, meshlint(trees[small], "--no-cache"))
            print(f"  a cached run writes the same bytes as an uncached one: {'yes' if identical else 'NO'}")
            verdicts.at_least("cached and uncached runs agree (1 = byte for byte)", float(identical), 1.0)

    if wanted("corpus"):
        if corpus is None:
            print(f"\n{corpus_missing(corpus_places)}")
        else:
            corpus_pair = Pair(f"corpus ({corpus}), --jobs 1 / floor", meshlint(corpus, "--jobs", "1", "--no-cache"), floor(corpus), pairs)
            print(f"  corpus --jobs 1 / floor: CPU {corpus_pair.cpu:.2f}, wall {corpus_pair.wall:.2f}")

    missed = [row for row in verdicts.rows if not row[3]]
    print(f"\n{len(verdicts.rows) - len(missed)} of {len(verdicts.rows)} targets met")
    for label, value, target, ok in verdicts.rows:
        print(f"  {'met   ' if ok else 'MISSED'} {label}: {value:.2f} ({target})")
    if wanted("corpus") and corpus is None:
        print(f"  {corpus_missing(corpus_places)}")
    if LOAD_READINGS:
        print(f"the machine was {load_line(statistics.median(LOAD_READINGS))} (the median of {len(LOAD_READINGS)} figures' readings)")
    sys.exit(1 if missed else 0)


def cold_start(work: str, pairs: int, verdicts: Verdicts) -> None:
    """One small manifest, as a pre-commit hook passes it, with and without a 200-document
    mesh.context file in the config; yamllint on the same file is the yardstick."""
    yamllint = tool("yamllint")
    if shutil.which(yamllint) is None and not os.path.exists(yamllint):
        print("\nyamllint is not installed (pip install '.[bench]'); cold start not measured")
        return
    for with_context in (False, True):
        folder = cold_start_folder(work, with_context)
        for cache in cache_modes(folder):
            label = f"cold start / yamllint, {'a 200-document mesh.context' if with_context else 'no mesh.context'}, {cache.label}"
            # A cache filled once is filled by the pair's first run, the one that warms the disk cache.
            pair = Pair(label, [tool("meshlint"), "check", "checkout.yaml", *cache.options], [yamllint, "checkout.yaml"], max(pairs * 4, 21), cwd=folder, before_a=cache.before)
            verdicts.at_most(f"{label}, CPU", pair.cpu, 0.8)
    base = Pair("for the record: yamllint / python -c pass", [tool("yamllint"), "--version"], [sys.executable, "-c", "pass"], max(pairs * 2, 11))
    print(f"  (yamllint's start-up costs {base.cpu:.2f}x a bare interpreter's CPU)")


def cold_start_folder(work: str, with_context: bool) -> str:
    """A folder with the small manifest and a config, with or without a 200-document mesh.context."""
    folder = os.path.join(work, f"cold-{'context' if with_context else 'plain'}")
    os.makedirs(folder)
    with open(os.path.join(folder, "checkout.yaml"), "w") as handle:
        handle.write(SMALL)
    config = "fail-on: error\nmesh:\n  default-injection: enabled\n"
    if with_context:
        with open(os.path.join(folder, "platform.yaml"), "w") as handle:
            handle.write(mesh_context(200))
        config += "  context: [platform.yaml]\n"
    with open(os.path.join(folder, ".meshlint.yaml"), "w") as handle:
        handle.write(config)
    return folder


@dataclass(frozen=True)
class CacheMode:
    """How a measured run meets the result cache: its label, meshlint's options for it, and what
    runs before each run (outside the measurement)."""

    label: str
    options: list[str]
    before: Callable[[], None] | None = None


def empty_folder(path: str) -> Callable[[], None]:
    """Something to run before each run that must find `path` as a fresh, empty folder."""

    def empty() -> None:
        shutil.rmtree(path, ignore_errors=True)
        os.makedirs(path)

    return empty


def cache_modes(folder: str) -> list[CacheMode]:
    """A start-up without the cache, with an empty cache folder made afresh for every run (what a
    first run meets), and with a cache filled once and read by every run after."""
    if BEFORE:  # the meshlint measured has no cache, nor options for one
        return [CacheMode("before the cache", [])]
    empty, filled = os.path.join(folder, ".cache-empty"), os.path.join(folder, ".cache-filled")
    return [
        CacheMode("no cache", ["--no-cache"]),
        CacheMode("an empty cache each run", ["--cache-dir", empty], empty_folder(empty)),
        CacheMode("a cache filled once", ["--cache-dir", filled]),
    ]


if __name__ == "__main__":
    main()
