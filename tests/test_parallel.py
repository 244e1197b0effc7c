"""When a run forks workers, and how many it may use."""

from __future__ import annotations

import os
from itertools import pairwise

import pytest

from meshlint.engine import parallel


def files(tmp_path, count, size):
    paths = []
    for n in range(count):
        path = tmp_path / f"f{n}.yaml"
        path.write_bytes(b"a: 1\n" * (size // 5))
        paths.append(str(path))
    return paths


def test_one_job_never_forks(tmp_path):
    assert not parallel.worth_forking(files(tmp_path, 64, 40_000), 1)


def test_many_small_files_are_checked_in_process(tmp_path):
    assert not parallel.worth_forking(files(tmp_path, 64, 1_000), 2)


def test_enough_files_and_bytes_fork(tmp_path):
    assert parallel.worth_forking(files(tmp_path, 64, 40_000), 2)


def test_few_big_files_are_checked_in_process(tmp_path):
    assert not parallel.worth_forking(files(tmp_path, parallel.PARALLEL_FROM - 1, 200_000), 2)


def test_cgroup_v2_quota(tmp_path):
    (tmp_path / "cpu.max").write_text("150000 100000\n")
    assert parallel._cgroup_quota(str(tmp_path)) == 1.5
    (tmp_path / "cpu.max").write_text("max 100000\n")
    assert parallel._cgroup_quota(str(tmp_path)) is None


def test_cgroup_v1_quota(tmp_path):
    (tmp_path / "cpu").mkdir()
    (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text("50000\n")
    (tmp_path / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    assert parallel._cgroup_quota(str(tmp_path)) == 0.5
    (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text("-1\n")
    assert parallel._cgroup_quota(str(tmp_path)) is None


def test_usable_cores_follow_the_quota(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda _: {0, 1, 2, 3})
    monkeypatch.setattr(parallel, "_cgroup_quota", lambda: 1.5)
    assert parallel.usable_cores() == 2
    monkeypatch.setattr(parallel, "_cgroup_quota", lambda: None)
    assert parallel.usable_cores() == 4
    monkeypatch.setattr(parallel, "_cgroup_quota", lambda: 0.2)
    assert parallel.usable_cores() == 1


def test_shares_cover_every_file_once_and_shrink_towards_the_end():
    bounds = parallel.shares(3696, 2)
    sizes = [b - a for a, b in pairwise(bounds)]
    assert bounds[0] == 0 and bounds[-1] == 3696
    assert sizes[0] == 64 and max(sizes) == 64
    assert sizes == sorted(sizes, reverse=True)
    assert sizes[-2:] == [4, 2]  # the last tasks are a few files, not 64


def test_shares_of_few_files():
    assert parallel.shares(10, 2) == [0, 4, 8, 10]
    assert parallel.shares(1, 2) == [0, 1]
    assert parallel.shares(0, 2) == [0]
    assert parallel.shares(40, 2, most=512, least=16) == [0, 16, 32, 40]


# Run in a fresh interpreter: the lazily loaded modules a check of every fixture loads after the
# warm-up (a forked worker loads these itself, once per worker).
_LOADS_AFTER_WARMUP = """
import json, sys
from meshlint.engine import execution
from meshlint.engine.warmup import load_for_checks

load_for_checks()
check_file = execution.check_file
loaded = set()

def watched(*args):
    before = set(sys.modules)
    result = check_file(*args)
    loaded.update(set(sys.modules) - before)
    return result

execution.check_file = watched
from meshlint.cli import main
sys.argv = ["meshlint", "check", "testdata", "--jobs", "1", "--no-cache", "-o", "/dev/null"]
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted(loaded)))
"""


def test_warm_up_loads_what_checks_load_lazily():
    import json
    import subprocess
    import sys

    from meshlint.engine.warmup import RARE

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    done = subprocess.run([sys.executable, "-c", _LOADS_AFTER_WARMUP], cwd=here, capture_output=True, text=True, check=True)
    loaded = json.loads(done.stdout.splitlines()[-1])
    heavy = ("meshlint.", "tree_sitter", "hashlib", "packaging")
    # A module named here is loaded by each worker of a big tree: add it to warmup.MODULES (or RARE).
    assert [m for m in loaded if m.startswith(heavy) and m not in RARE] == []


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_run_keeps_nothing_of_itself_once_it_is_over(monkeypatch, jobs):
    """A process that runs many checks (--fix rounds, a library user) holds no run's configs or mesh
    context once the run is over: file checks kept per-config tables in their module, keyed by the
    config, and each run's stayed for good; and a pool that freezes what came must not keep it."""
    import gc
    import weakref

    from helpers import ROOT, config_from
    from meshlint.engine import run as engine
    from meshlint.registry import load_rules

    monkeypatch.setattr(parallel, "PARALLEL_FROM", 2)  # the examples fork with two jobs
    monkeypatch.setattr(parallel, "PARALLEL_BYTES", 1)
    meshes = []
    bind = engine.bind
    monkeypatch.setattr(engine, "bind", lambda governed, mesh: meshes.append(weakref.ref(mesh)) or bind(governed, mesh))
    rules = load_rules()
    for _ in range(2):
        report = engine.run([str(ROOT / "examples")], config_from(), rules, jobs=jobs)
        assert report.findings
        del report
    gc.collect()
    assert meshes and [ref() for ref in meshes] == [None] * len(meshes)
