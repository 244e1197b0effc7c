"""When a run forks workers, and how many it may use."""

from __future__ import annotations

import os

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
