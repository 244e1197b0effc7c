"""The forked pool: results in task order whatever order they finish in, the parent working as the last
of the jobs, a task's error raised in the parent, a lost worker reported at once instead of waited for,
and no worker or pipe left behind."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time

import pytest

from meshlint.engine import forked as pool

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="the pool forks; its pipes are counted in /proc")


@pytest.fixture(autouse=True)
def no_hang():
    """A pool that would wait forever fails its test instead of stopping the suite."""

    def stuck(*_):
        raise TimeoutError("the pool hung")

    previous = signal.signal(signal.SIGALRM, stuck)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def is_open(fd):
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def failing(call, nth, error):
    """`call`, but its `nth` call raises `error` (a fork or a pipe the system refuses)."""
    calls = []

    def maybe():
        calls.append(1)
        if len(calls) == nth:
            raise error
        return call()

    return maybe


def open_fds():
    return sorted(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None


def test_results_come_in_task_order_whatever_order_they_finish_in():
    def task(n):
        time.sleep(0.02 if n % 3 == 0 else 0)  # every third task finishes after those behind it
        return n * n, os.getpid()

    results = list(pool.forked(task, 12, 2))
    assert [value for value, _ in results] == [n * n for n in range(12)]
    assert len({pid for _, pid in results}) == 2  # one worker, and this process


def test_the_parent_is_the_last_job_and_keeps_the_pipe_short():
    here = os.getpid()

    def task(n):
        time.sleep(0.01)
        return os.getpid()

    pids = list(pool.forked(task, 30, 3))
    assert len(set(pids)) == 3 and here in pids  # two workers and this process
    # The first numbers go to the pipe (three a worker), the next is this process's own.
    assert pids[6] == here and here not in pids[:6]


def test_more_numbers_than_a_pipe_holds_are_fed_as_the_workers_take_them():
    count = 40_000  # 160 KB of task numbers: the pipe fills, and the parent feeds it between results
    assert list(pool.forked(lambda n: n, count, 2)) == list(range(count))


def test_a_result_bigger_than_a_pipe_comes_whole():
    big = bytes(range(256)) * 8192  # 2 MiB, many times a pipe's buffer
    assert list(pool.forked(lambda n: big[n:], 3, 2)) == [big, big[1:], big[2:]]


def test_no_tasks_one_task_one_job_or_no_fork_run_in_this_process(monkeypatch):
    here = os.getpid()
    assert list(pool.forked(lambda n: n, 0, 2)) == []
    assert list(pool.forked(lambda n: (n, os.getpid()), 1, 8)) == [(0, here)]
    assert list(pool.forked(lambda n: (n, os.getpid()), 3, 1)) == [(0, here), (1, here), (2, here)]
    monkeypatch.delattr(os, "fork")  # as on Windows
    assert list(pool.forked(lambda n: (n, os.getpid()), 3, 2)) == [(0, here), (1, here), (2, here)]


def test_a_tasks_error_is_raised_in_the_parent_with_where_it_was_raised():
    here = os.getpid()

    def task(n):
        if os.getpid() != here:
            raise ValueError(f"task {n} went wrong")
        return n

    with pytest.raises(ValueError, match=r"^task 0 went wrong$") as raised:
        list(pool.forked(task, 10, 2))
    assert isinstance(raised.value.__cause__, pool.WorkerTraceback)
    assert 'raise ValueError(f"task {n} went wrong")' in str(raised.value.__cause__)


def test_a_task_of_the_parents_own_raises_as_it_would_without_workers():
    here = os.getpid()

    def task(n):
        if os.getpid() == here:
            raise ValueError(f"task {n} went wrong here")
        time.sleep(0.05)
        return n

    with pytest.raises(ValueError, match=r"^task 3 went wrong here$") as raised:
        list(pool.forked(task, 10, 2))
    assert raised.value.__cause__ is None


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_the_error_raised_is_the_first_in_task_order_whatever_the_jobs(jobs):
    """As one process running the tasks in order: every result before it is given, then its error
    (here, in a worker or in this process alike, whichever raised first in time)."""

    def task(n):
        if n >= 10:
            raise ValueError(f"task {n} failed")
        return n

    given = []
    with pytest.raises(ValueError, match=r"^task 10 failed$"):
        for value in pool.forked(task, 30, jobs):
            given.append(value)
    assert given == list(range(10))

    def always(n):
        raise ValueError(f"task {n} failed")

    with pytest.raises(ValueError, match=r"^task 0 failed$"):
        list(pool.forked(always, 30, jobs))


@pytest.mark.parametrize("count", [2, 3, 4])
def test_this_process_takes_its_share_of_a_few_tasks(count):
    here = os.getpid()
    ran_here = sum(pid == here for pid in pool.forked(lambda n: (time.sleep(0.1), os.getpid())[1], count, 2))
    # The worker is given one at a time, not all of them at once; the odd one goes to whoever is free.
    assert count // 2 <= ran_here <= (count + 1) // 2


class TwoArguments(Exception):
    def __init__(self, first, second):
        super().__init__(f"{first} and {second}")


def test_an_error_that_cannot_be_unpickled_comes_as_its_words():
    def task(n):
        raise TwoArguments("this", "that")

    with pytest.raises(RuntimeError, match=r"^TwoArguments: this and that$"):
        list(pool.forked(task, 2, 2))


def test_an_exit_in_a_task_is_raised_in_the_parent():
    with pytest.raises(SystemExit) as raised:
        list(pool.forked(lambda n: sys.exit(3), 2, 2))
    assert raised.value.code == 3


def test_a_result_that_cannot_be_pickled_is_an_error_not_a_hang():
    with pytest.raises(TypeError, match=r"^cannot pickle 'generator' object$"):
        list(pool.forked(lambda n: (i for i in range(n)), 2, 2))


def test_a_worker_that_dies_is_reported_at_once(tmp_path):
    ran = tmp_path / "ran"
    ran.write_text("")

    here = os.getpid()

    def task(n):
        if n == 0 and os.getpid() != here:
            os._exit(9)  # as if the kernel killed it
        with open(ran, "a") as log:
            log.write(f"{n}\n")
        time.sleep(0.2)
        return n

    with pytest.raises(pool.WorkerLost, match=r"^a worker process ended with \d+ of 20 tasks unfinished \(killed, or out of memory\?\)$"):
        list(pool.forked(task, 20, 2))
    assert len(ran.read_text().split()) < 19  # the other worker was not waited for


def test_a_run_stopped_early_kills_its_workers_and_leaves_no_pipe_open():
    before = open_fds()
    started = time.monotonic()
    here = os.getpid()
    results = pool.forked(lambda n: (time.sleep(0 if n < 2 or os.getpid() == here else 30), os.getpid())[1], 8, 2)
    assert next(results) != here
    results.close()  # the report stopped reading: the workers still at work are killed and reaped
    assert time.monotonic() - started < 20
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)  # no child of this process is left, running or unreaped
    assert open_fds() == before


def test_no_pipe_left_open_after_a_run_an_error_or_a_fork_that_fails(monkeypatch, tmp_path):
    before = open_fds()
    results = pool.forked(lambda n: n, 50, 2)
    next(results)
    with open(tmp_path / "report", "w") as report:  # a file the consumer opens while the workers run
        assert list(results) == list(range(1, 50))
        os.fstat(report.fileno())  # still its own: the pool closed only its pipes
    assert open_fds() == before
    with pytest.raises(ZeroDivisionError):
        list(pool.forked(lambda n: 1 // 0, 4, 2))
    assert open_fds() == before
    monkeypatch.setattr(os, "fork", failing(os.fork, 2, BlockingIOError(11, "Resource temporarily unavailable")))
    with pytest.raises(BlockingIOError):
        list(pool.forked(lambda n: n, 4, 3))
    assert open_fds() == before
    monkeypatch.undo()
    monkeypatch.setattr(os, "pipe", failing(os.pipe, 3, OSError(24, "Too many open files")))
    with pytest.raises(OSError, match="Too many open files"):
        list(pool.forked(lambda n: n, 4, 3))
    assert open_fds() == before
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)


def test_a_pool_started_inside_another_holds_none_of_its_pipes():
    with contextlib.closing(pool.forked(lambda n: n, 40_000, 2)) as outer:  # still being fed
        assert next(outer) == 0
        theirs = set(pool._OPEN)
        assert theirs  # the outer pool's ends: its number pipe, its workers' result pipes
        here = os.getpid()
        seen = list(pool.forked(lambda n: (os.getpid(), [fd for fd in sorted(theirs) if is_open(fd)]), 6, 3))
        assert [open_here for pid, open_here in seen if pid != here] == [[]] * sum(pid != here for pid, _ in seen) != []
        assert list(outer) == list(range(1, 40_000))


def test_what_the_parent_had_written_comes_out_once():
    script = (
        "import sys, time\n"
        "from meshlint.engine.forked import forked\n"
        "sys.stdout.write('before the pool\\n')\n"  # held in the buffer: stdout is a pipe here
        # Task 0 keeps the worker busy while this process takes the rest.
        "print(list(forked(lambda n: time.sleep(0.3) or n if n == 0 else n, 4, 2)))\n"
    )
    buffered = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True, env=buffered)
    assert done.stdout == "before the pool\n[0, 1, 2, 3]\n"


def test_the_feed_writes_whole_numbers_until_the_pipe_is_full_then_waits():
    out, into = os.pipe()
    try:
        os.set_blocking(into, False)
        fed = pool._feed(into, 0, 1_000_000)  # far more than a pipe holds
        assert 0 < fed < 1_000_000
        os.set_blocking(out, False)
        held = b""
        with contextlib.suppress(BlockingIOError):
            while chunk := os.read(out, 1 << 16):
                held += chunk
        assert [n for (n,) in pool._NUMBER.iter_unpack(held)] == list(range(fed))
        assert pool._feed(into, fed, fed + 10) == fed + 10  # room again: the rest goes in
    finally:
        os.close(out)
        os.close(into)


def test_a_short_write_to_the_feed_is_an_error_not_a_split_number(monkeypatch):
    monkeypatch.setattr(pool.os, "write", lambda fd, data: len(data) - 1)
    with pytest.raises(pool.WorkerLost, match=r"a pipe took \d+ of \d+ bytes, which would split a task's number"):
        pool._feed(-1, 0, 10)


def test_a_feed_no_worker_reads_any_more_is_a_lost_worker():
    out, into = os.pipe()
    os.close(out)
    previous = signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # as Python sets it: EPIPE, not a signal
    try:
        with pytest.raises(pool.WorkerLost, match="every worker process ended before the work was handed out"):
            pool._feed(into, 0, 10)
    finally:
        signal.signal(signal.SIGPIPE, previous)
        os.close(into)


@pytest.fixture
def stop_signals_handled():
    """Ctrl-C raising KeyboardInterrupt and SIGTERM a handler of Python's, as in a meshlint run, whatever
    this suite inherited (a shell's background job starts with SIGINT ignored, and Python leaves it so)."""

    def terminated(*_):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, signal.default_int_handler), signal.signal(signal.SIGTERM, terminated)
    yield terminated
    signal.signal(signal.SIGINT, previous[0])
    signal.signal(signal.SIGTERM, previous[1])


def test_ctrl_c_is_the_parents_to_handle_and_is_not_held_back_after_the_fork(stop_signals_handled):
    here = os.getpid()
    stops = (signal.SIGINT, signal.SIGTERM)

    def task(_):
        handlers = tuple(signal.getsignal(s) for s in stops)
        blocked = any(s in signal.pthread_sigmask(signal.SIG_BLOCK, set()) for s in stops)
        return os.getpid() == here, handlers == ((signal.default_int_handler, stop_signals_handled) if os.getpid() == here else (signal.SIG_DFL,) * 2), blocked

    before = signal.pthread_sigmask(signal.SIG_BLOCK, set())
    seen = set(pool.forked(task, 8, 2))  # a worker dies of Ctrl-C or SIGTERM, silently; this process raises it
    assert seen == {(False, True, False), (True, True, False)}
    assert signal.pthread_sigmask(signal.SIG_BLOCK, set()) == before
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == (signal.default_int_handler, stop_signals_handled)


def test_a_stop_signal_ignored_by_whoever_started_the_run_stays_ignored_in_the_workers():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN), signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        assert set(pool.forked(lambda _: (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)), 8, 2)) == {(signal.SIG_IGN, signal.SIG_IGN)}
    finally:
        signal.signal(signal.SIGINT, previous[0])
        signal.signal(signal.SIGTERM, previous[1])


_DONE_MEANWHILE: list[int] = []


def test_meanwhile_runs_here_once_after_the_workers_fork():
    _DONE_MEANWHILE.clear()
    seen = list(pool.forked(lambda n: (n, len(_DONE_MEANWHILE), os.getpid()), 6, 2, lambda: _DONE_MEANWHILE.append(os.getpid())))
    parent = os.getpid()
    assert [parent] == _DONE_MEANWHILE
    assert [n for n, _, _ in seen] == list(range(6))
    assert {(done, pid == parent) for _, done, pid in seen} == {(0, False), (1, True)}  # only this process saw it


def test_the_workers_have_tasks_while_meanwhile_runs():
    here = os.getpid()
    ended = []
    seen = list(pool.forked(lambda n: (os.getpid(), time.monotonic()), 6, 2, lambda: time.sleep(0.3) or ended.append(time.monotonic())))
    assert [started < ended[0] for pid, started in seen if pid != here][:3] == [True] * 3  # the three numbers fed first


def test_no_meanwhile_without_workers():
    _DONE_MEANWHILE.clear()
    assert list(pool.forked(lambda n: n, 3, 1, lambda: _DONE_MEANWHILE.append(1))) == [0, 1, 2]
    assert _DONE_MEANWHILE == []


def test_no_collection_in_this_process_while_results_come():
    import gc

    was = gc.isenabled()
    gc.enable()
    try:
        frozen = gc.get_freeze_count()
        during = [gc.isenabled() for _ in pool.forked(lambda n: [n], 4, 2)]
        assert during == [False] * 4
        here = os.getpid()
        tasks = set(pool.forked(lambda n: (os.getpid() == here, gc.isenabled()), 8, 2))
        assert tasks == {(True, False), (False, True)}  # a worker collects as one process; here, once the pool is done
        assert gc.isenabled()
        assert gc.get_freeze_count() > frozen  # what came meanwhile is kept out of later collections
        gc.disable()  # a process that was not collecting is left so
        assert [gc.isenabled() for _ in pool.forked(lambda n: [n], 4, 2)] == [False] * 4
        assert set(pool.forked(lambda n: (os.getpid() == here, gc.isenabled()), 8, 2)) == {(True, False), (False, False)}
        assert not gc.isenabled()
    finally:
        gc.unfreeze()
        if was:
            gc.enable()
        else:
            gc.disable()


class _Cycle:
    pass


def test_what_a_task_here_leaves_in_cycles_is_collected_not_frozen():
    """The pool freezes what came, to keep it out of later collections: garbage among it (a cycle a
    task here left) is collected first, or it would stay for good (a --fix session runs many pools)."""
    import gc
    import weakref

    left: list[weakref.ref] = []

    def task(n):
        first, second = _Cycle(), _Cycle()
        first.other, second.other = second, first  # garbage once the task returns, but for the collector
        left.append(weakref.ref(first))  # in this process, only this process's tasks
        time.sleep(0.01)
        return n

    was = gc.isenabled()
    gc.enable()
    try:
        assert list(pool.forked(task, 12, 2)) == list(range(12))
        gc.collect()
        assert left and [ref() for ref in left] == [None] * len(left)
    finally:
        gc.unfreeze()
        if not was:
            gc.disable()
