"""meshlint's speed, measured side by side with its baselines in one run (issue 6, spec §9).

    python benchmarks/run.py                 # generated 10k and 50k trees, cold start, corpus
    python benchmarks/run.py --repeat 5      # more runs per figure
    python benchmarks/run.py --quick         # 2k and 10k documents, for a smoke test

Tree figures are the best of `--repeat` runs; the cold start is the median of alternating runs.
Run it with the Python of a virtualenv where meshlint (non-editable, so its bytecode is compiled)
and yamllint are installed: `pip install '.[bench]'`. Every figure is a ratio against a baseline
measured in the same run on the same machine; each command is printed before its figures. Nothing
here is a test: the suite never times anything.

1. throughput: `meshlint check` on the 10k tree / ruamel.yaml's C composer alone on it (target ≤ 1.5)
2. growth: 50k time / 10k time (≤ 5.5); 50k peak memory / 10k peak memory, one process (≤ 2)
3. cold start: `meshlint check` on one small manifest with a .meshlint.yaml / `yamllint` on it (≤ 1.0)
4. parallel: `--jobs 1` and the default (one per core) write the same bytes; the speed-up
The same figures follow for ../shared/corpus when it is there.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from generate import generate  # noqa: E402

BIN = os.path.dirname(sys.executable)
CORPUS = os.path.join(HERE, "..", "..", "shared", "corpus")
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


def measure(cmd: list[str], cwd: str | None = None) -> tuple[float, int, int]:
    """Wall seconds, peak resident memory in MiB (the largest process of the run), exit code."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return elapsed, usage.ru_maxrss // 1024, proc.returncode


def best_run(cmd: list[str], repeat: int, cwd: str | None = None) -> tuple[float, int]:
    """The fastest of `repeat` runs (the one least disturbed by the rest of the machine, as timeit
    reports) and the largest peak memory seen."""
    runs = [measure(cmd, cwd) for _ in range(repeat)]
    return min(r[0] for r in runs), max(r[1] for r in runs)


def show(cmd: list[str]) -> None:
    print("  $ " + " ".join(cmd))


class Verdicts:
    def __init__(self) -> None:
        self.rows: list[tuple[str, float, float, bool]] = []

    def ratio(self, label: str, value: float, target: float) -> None:
        ok = value <= target
        self.rows.append((label, value, target, ok))
        print(f"  => {label}: {value:.2f} (target ≤ {target}) {'PASS' if ok else 'MISS'}")


def tree_figures(tree: str, label: str, repeat: int, verdicts: Verdicts | None) -> dict:
    meshlint = tool("meshlint")
    base_cmd = [sys.executable, os.path.join(HERE, "compose_only.py"), tree]
    default_cmd = [meshlint, "check", tree, "-o", os.devnull]
    single_cmd = [*default_cmd, "--jobs", "1"]
    print(f"\n{label}: {tree}")
    show(base_cmd)
    base, base_mem = best_run(base_cmd, repeat)
    print(f"  composer alone: {base:.2f} s, {base_mem} MiB")
    show(default_cmd)
    default, default_mem = best_run(default_cmd, repeat)
    print(f"  meshlint, default jobs ({os.cpu_count()} cores): {default:.2f} s, {default_mem} MiB")
    show(single_cmd)
    single, single_mem = best_run(single_cmd, repeat)
    print(f"  meshlint --jobs 1: {single:.2f} s, {single_mem} MiB")
    print(f"  ratios: default/composer {default / base:.2f}, --jobs 1/composer {single / base:.2f}, speed-up from jobs {single / default:.2f}x")
    with tempfile.TemporaryDirectory() as out:
        outputs = []
        for jobs in ("1", "0"):
            path = os.path.join(out, f"jobs{jobs}.json")
            cmd = [meshlint, "check", tree, "--format", "json", "--jobs", jobs, "-o", path]
            show(cmd)
            measure(cmd)
            with open(path, "rb") as handle:
                outputs.append(handle.read())
        same = outputs[0] == outputs[1]
        print(f"  parallel output identical to --jobs 1: {'yes' if same else 'NO'} ({len(outputs[0])} bytes)")
    if verdicts is not None and not same:
        verdicts.rows.append((f"{label} parallel output identical", 0.0, 0.0, False))
    return {"base": base, "default": default, "single": single, "single_mem": single_mem}


def cold_start(repeat: int, verdicts: Verdicts) -> None:
    meshlint, yamllint = tool("meshlint"), tool("yamllint")
    with tempfile.TemporaryDirectory() as work:
        with open(os.path.join(work, "checkout.yaml"), "w") as handle:
            handle.write(SMALL)
        with open(os.path.join(work, ".meshlint.yaml"), "w") as handle:
            handle.write("fail-on: error\nmesh:\n  default-injection: enabled\n")
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "meshlint": [meshlint, "check", "checkout.yaml"],
            "yamllint": [yamllint, "checkout.yaml"],
        }
        print("\ncold start: one small manifest, .meshlint.yaml present; runs alternate, medians")
        for cmd in commands.values():
            show(cmd)
        if shutil.which(yamllint) is None and not os.path.exists(yamllint):
            print("  yamllint is not installed (pip install yamllint); cold-start ratio not measured")
            return
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(max(repeat * 7, 21)):
            for name, cmd in commands.items():
                times[name].append(measure(cmd, cwd=work)[0])
        medians = {name: statistics.median(values) for name, values in times.items()}
        for name, value in medians.items():
            print(f"  {name}: {value * 1000:.1f} ms")
        verdicts.ratio("cold start meshlint/yamllint", medians["meshlint"] / medians["yamllint"], 1.0)


def main() -> None:
    parser = argparse.ArgumentParser(description="meshlint benchmarks (ratios against baselines measured in the same run)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (the best is reported; cold start: medians)")
    parser.add_argument("--quick", action="store_true", help="2k and 10k documents instead of 10k and 50k")
    parser.add_argument("--workdir", help="where to generate the trees (default: a temporary folder)")
    args = parser.parse_args()
    small, large = (2000, 10000) if args.quick else (10000, 50000)
    verdicts = Verdicts()
    print(f"meshlint benchmarks: python {sys.version.split()[0]}, {os.cpu_count()} cores, meshlint at {tool('meshlint')}")
    with tempfile.TemporaryDirectory(dir=args.workdir) as work:
        trees = {}
        for size in (small, large):
            path = os.path.join(work, f"tree-{size}")
            files, documents = generate(path, size)
            print(f"generated {path}: {files} files, {documents} documents (python benchmarks/generate.py {path} --documents {size})")
            trees[size] = path
        first = tree_figures(trees[small], f"{small} documents", args.repeat, verdicts)
        second = tree_figures(trees[large], f"{large} documents", args.repeat, verdicts)
    print("\ntargets")
    verdicts.ratio(f"throughput meshlint/composer, {small} documents", first["default"] / first["base"], 1.5)
    verdicts.ratio(f"growth in time, {large}/{small} documents", second["default"] / first["default"], 5.5)
    verdicts.ratio(f"growth in peak memory (--jobs 1), {large}/{small} documents", second["single_mem"] / first["single_mem"], 2.0)
    cold_start(args.repeat, verdicts)
    if os.path.isdir(CORPUS):
        corpus = tree_figures(os.path.abspath(CORPUS), "corpus (../shared/corpus)", args.repeat, None)
        print(f"  corpus throughput meshlint/composer: {corpus['default'] / corpus['base']:.2f} (default jobs), {corpus['single'] / corpus['base']:.2f} (--jobs 1)")
    else:
        print("\n../shared/corpus is not beside the checkout; corpus figures skipped")
    missed = [row for row in verdicts.rows if not row[3]]
    print(f"\n{len(verdicts.rows) - len(missed)} of {len(verdicts.rows)} targets met")
    sys.exit(1 if missed else 0)


if __name__ == "__main__":
    main()
