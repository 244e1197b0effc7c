"""What rendering costs: a tree of N overlays of one base, checked with `--render auto` against `--render
never`, and a pre-commit run naming one overlay's patch, A and B alternating run by run.

    python benchmarks/overlays.py [--overlays 20] [--pairs 5]

Each figure is the median over the pairs, CPU (user + system, the renderer's own processes included) and
wall time, with the ratio auto / never. Needs `kustomize` or `kubectl` on PATH (or beside this Python).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: app{n}
spec:
  template:
    metadata:
      labels: {{app: app{n}, sidecar.istio.io/inject: "true"}}
    spec:
      containers:
        - name: app{n}
          image: app{n}
          command: ["sh", "-c", "curl -sf http://config/seed && exec app{n}"]
"""
PATCH = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: app0
spec:
  template:
    spec:
      terminationGracePeriodSeconds: {grace}
"""


def write(root: str, overlays: int, deployments: int) -> str:
    """The tree, and the patch file of its first overlay (what a pre-commit run names)."""
    base = os.path.join(root, "app", "base")
    os.makedirs(base)
    names = [f"deploy{n}.yaml" for n in range(deployments)]
    for n, name in enumerate(names):
        with open(os.path.join(base, name), "w") as out:
            out.write(DEPLOYMENT.format(n=n))
    with open(os.path.join(base, "kustomization.yaml"), "w") as out:
        out.write("resources: [" + ", ".join(names) + "]\n")
    for n in range(overlays):
        folder = os.path.join(root, "app", "overlays", f"env{n}")
        os.makedirs(folder)
        with open(os.path.join(folder, "kustomization.yaml"), "w") as out:
            out.write(f"resources: [../../base]\nnamespace: env{n}\npatches:\n  - path: patch.yaml\n")
        with open(os.path.join(folder, "patch.yaml"), "w") as out:
            out.write(PATCH.format(grace=10 + n))
    return os.path.join("app", "overlays", "env0", "patch.yaml")


def timed(command: list[str], cwd: str) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--overlays", type=int, default=20)
    parser.add_argument("--deployments", type=int, default=10)
    parser.add_argument("--pairs", type=int, default=5)
    args = parser.parse_args()
    meshlint = [sys.executable, "-m", "meshlint", "check", "--no-cache", "-q"]
    with tempfile.TemporaryDirectory(prefix="meshlint-overlays-") as root:
        named = write(root, args.overlays, args.deployments)
        kustomization = os.path.join(os.path.dirname(named), "kustomization.yaml")
        cases = {
            f"tree of {args.overlays} overlays": ["."],
            "pre-commit, one overlay's patch": [named, kustomization],
        }
        print(f"{args.overlays} overlays of a base of {args.deployments} Deployments; median of {args.pairs} alternated pairs")
        for label, paths in cases.items():
            runs: dict[str, list[tuple[float, float]]] = {"never": [], "auto": []}
            for _ in range(args.pairs):
                for mode in ("never", "auto"):
                    runs[mode].append(timed([*meshlint, "--render", mode, *paths], root))
            cpu = {m: statistics.median(c for c, _ in r) for m, r in runs.items()}
            wall = {m: statistics.median(w for _, w in r) for m, r in runs.items()}
            print(
                f"{label}: never {cpu['never']:.2f} s CPU ({wall['never']:.2f} s wall), auto {cpu['auto']:.2f} s CPU "
                f"({wall['auto']:.2f} s wall): {cpu['auto'] / cpu['never']:.2f} times the CPU, {wall['auto'] / wall['never']:.2f} the wall"
            )


if __name__ == "__main__":
    main()
