"""The forked pool: results in task order whatever order they finish in, a task's error raised in the
parent, a lost worker reported instead of waited for, and no worker left behind."""

from __future__ import annotations

import os
import time

import pytest

from meshlint.engine import forked as pool

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the pool forks")


def test_results_come_in_task_order_whatever_order_they_finish_in():
    def task(n):
        time.sleep(0.02 if n % 3 == 0 else 0)  # every third task finishes after those behind it
        return n * n, os.getpid()

    results = list(pool.forked(task, 12, 2))
    assert [value for value, _ in results] == [n * n for n in range(12)]
    workers = {pid for _, pid in results}
    assert os.getpid() not in workers and 1 <= len(workers) <= 2


def test_more_tasks_than_one_write_of_numbers_holds():
    count = pool._FEED * 3 + 5  # fed to the workers over several writes
    assert list(pool.forked(lambda n: n, count, 2)) == list(range(count))


def test_a_result_bigger_than_a_pipe_comes_whole():
    big = bytes(range(256)) * 8192  # 2 MiB, many times a pipe's buffer
    assert list(pool.forked(lambda n: big[n:], 3, 2)) == [big, big[1:], big[2:]]


def test_a_tasks_error_is_raised_in_the_parent():
    def task(n):
        if n == 5:
            raise ValueError(f"task {n} went wrong")
        return n

    with pytest.raises(ValueError, match=r"^task 5 went wrong$"):
        list(pool.forked(task, 10, 2))


def test_a_result_that_cannot_be_pickled_is_an_error_not_a_hang():
    with pytest.raises(RuntimeError, match=r"^generator: "):
        list(pool.forked(lambda n: (i for i in range(n)), 2, 2))


def test_a_worker_that_dies_is_reported_not_waited_for():
    def task(n):
        if n == 3:
            os._exit(9)  # as if the kernel killed it
        return n

    with pytest.raises(pool.WorkerLost, match=r"^a worker process ended with \d+ of 8 tasks unfinished \(killed, or out of memory\?\)$"):
        list(pool.forked(task, 8, 2))


def test_a_run_stopped_early_leaves_no_worker_behind():
    results = pool.forked(lambda n: (time.sleep(0.01), os.getpid())[1], 200, 2)
    pids = {next(results), next(results)}
    results.close()  # the report stopped reading: the workers still at work are killed and reaped
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
