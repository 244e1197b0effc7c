"""How the benchmark measures one command, and how it compares two.

A command runs under `launch.py`, so its peak memory is its own and not the harness's. Two sides,
A and B, are compared pair by pair: the headline is the ratio of their CPU time (user + system,
workers included), which another process on the machine barely moves; the wall-time ratio stands
beside it. A single-core run whose wall time exceeds its CPU time by more than LOADED_ABOVE waited
for a core: the machine was loaded, and wall figures say more about the machine than about meshlint.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

LAUNCHER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "launch.py")
# Past this, a run that uses one core spent a sixth of its time or more waiting for one.
LOADED_ABOVE = 1.2
# CPU clocks tick in microseconds; a ratio never divides by a run that read zero.
LEAST_CPU = 1e-6


@dataclass(frozen=True)
class Measured:
    """One whole-process run: wall seconds, CPU seconds (user + system, the workers it waited for
    included), peak resident MiB (its largest process), exit code."""

    seconds: float
    cpu: float
    peak: float
    code: int


def measure(cmd: list[str], cwd: str | None = None, stdin: str | None = None, before: Callable[[], None] | None = None) -> Measured:
    """Run `cmd` once under the launcher; `before` runs first, outside the measurement."""
    if before is not None:
        before()
    with open(stdin or os.devnull, "rb") as source:
        launched = subprocess.run([sys.executable, "-I", "-S", LAUNCHER, *cmd], cwd=cwd, stdin=source, capture_output=True, check=False)
    return parse_report(launched.stdout.decode(), cmd, launched.stderr.decode())


def parse_report(report: str, cmd: list[str], why: str = "") -> Measured:
    """The launcher's line as figures; a command that could not start is an error, not a figure."""
    if report.startswith("error="):
        raise RuntimeError(f"could not measure {' '.join(cmd)}: {report.removeprefix('error=').strip()}")
    fields = dict(part.split("=", 1) for part in report.split() if "=" in part)
    if "wall" not in fields:
        raise RuntimeError(f"could not measure {' '.join(cmd)}: {why.strip()[-300:] or 'the launcher reported nothing'}")
    return Measured(float(fields["wall"]), float(fields["cpu"]), int(fields["peak_kib"]) / 1024, int(fields["exit"]))


def paired(numerators: Sequence[float], denominators: Sequence[float]) -> float:
    """The median of the per-pair ratios: a machine that drifts moves both sides of a pair alike."""
    return statistics.median(n / max(d, LEAST_CPU) for n, d in zip(numerators, denominators, strict=True))


def wall_per_cpu(runs: Sequence[Measured]) -> float:
    """How much longer single-core runs took than the CPU they used (1.0: never waited for a core)."""
    return statistics.median(run.seconds / max(run.cpu, LEAST_CPU) for run in runs)


@dataclass(frozen=True)
class Comparison:
    """A against B: CPU (the headline), wall and peak-memory ratios, and how loaded the machine read
    in the runs of the sides that use one core (None where neither does)."""

    cpu: float
    wall: float
    memory: float
    load: float | None

    @classmethod
    def of(cls, a: Sequence[Measured], b: Sequence[Measured], single_core: Sequence[Measured]) -> Comparison:
        return cls(
            cpu=paired([r.cpu for r in a], [r.cpu for r in b]),
            wall=paired([r.seconds for r in a], [r.seconds for r in b]),
            memory=paired([r.peak for r in a], [r.peak for r in b]),
            load=wall_per_cpu(single_core) if single_core else None,
        )

    def headline(self, pairs: int) -> str:
        return f"A/B: CPU {self.cpu:.2f} (median of {pairs} pairs), wall {self.wall:.2f}, peak memory {self.memory:.2f}"


def load_line(load: float) -> str:
    """Whether the machine was loaded, as a single-core run's wall time over its CPU time says."""
    if load > LOADED_ABOVE:
        return f"loaded: single-core runs took {load:.2f}x their CPU time in wall time (above {LOADED_ABOVE}); the wall ratios are the machine's, the CPU ones meshlint's"
    return f"not loaded: single-core runs took {load:.2f}x their CPU time in wall time ({LOADED_ABOVE} or below)"
