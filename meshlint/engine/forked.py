"""A pool of forked workers over plain pipes, for the runs that share a tree or a stream out.

Each worker takes the next task's number from one pipe that all of them read, runs it, and sends the
pickled result back on a pipe of its own; the parent gives the results in task order. The parent is the
last of the jobs: it keeps only a few numbers in the pipe, and whenever no result waits to be read it
runs the next task itself, so two jobs are one worker and the parent (a parent that only gathered
still took CPU from the two workers, and half the results were pickled, sent and unpickled for
nothing). multiprocessing's pool cost the parent CPU on every task (its three handler threads, its
queues, a condition that each result wakes), a cost a big tree's many tasks added up; here a result
costs a `select`, two reads and an unpickle. Forked workers inherit what the tasks read (the plan, the
mesh context), so only numbers go out and only results come back.
"""

import contextlib
import gc
import os
import pickle
import select
import selectors
import signal
import struct
import sys
import traceback
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Any, NamedTuple, TypeVar

T = TypeVar("T")

_NUMBER = struct.Struct("<I")  # a task's number, on the shared pipe
_FRAME = struct.Struct("<IQ?")  # a result's task number, its pickled length, and whether the task raised
# A write of up to PIPE_BUF bytes goes into a pipe whole or not at all: the shared pipe only ever holds
# whole numbers, so a worker's read of one number never gets part of it.
_FEED = getattr(select, "PIPE_BUF", 512) // _NUMBER.size  # POSIX's least, where select has none (Windows)

# The parent's ends of the pipes of every pool still running, closed in each new worker: a worker that
# kept a pool's number pipe open (its own pool's too) would keep that pool's workers from seeing its end,
# and they would wait to be killed instead of leaving.
_OPEN: set[int] = set()


class WorkerLost(RuntimeError):
    """A worker ended before sending back every task it took (killed, or out of memory)."""


class WorkerTraceback(Exception):
    """Where a task raised, in its worker: the cause of the error raised in the parent."""


def forked(task: Callable[[int], T], count: int, jobs: int, meanwhile: Callable[[], object] | None = None) -> Generator[T, None, None]:
    """`task(n)` for each n below `count`, worked out by this process and `jobs - 1` forked ones, yielded
    in order of n as they come (a result waits only for those before it). A task's exception is raised
    here. One job, one task, or a system that cannot fork (Windows): this process runs them, one after
    another. `meanwhile` is called in this process once the workers are at work (so they do not inherit
    what it does), before any task of its own, and not at all without workers."""
    if jobs < 2 or count < 2 or not hasattr(os, "fork"):
        yield from map(task, range(count))
        return
    pool = _Pool()
    # This process collects nothing while the pool works: the results are plain values without cycles,
    # and a file's check leaves next to none (no file of the public corpus does), while collections
    # would sweep every result that came again and again, with CPU taken from the tasks. The pool's
    # garbage is collected once at its end, and what is left, the results, frozen out of later
    # collections. A worker collects as one process would.
    collecting = gc.isenabled()
    gc.disable()
    if collecting:
        gc.freeze()  # what this process holds now: out of the pool's collection, and shared with the workers
    try:
        pool.start(task, min(jobs, count) - 1, collecting)
        yield from pool.gather(task, count, meanwhile)
    finally:
        if collecting:
            gc.collect(0)  # what the tasks here left in cycles (frozen, it would stay for good): all in the youngest
            gc.freeze()
            gc.enable()
        pool.end()


class _Raised(NamedTuple):
    """A task's error, kept until the results before it are given; `where` it was raised, from a worker."""

    error: BaseException
    where: str | None

    def throw(self) -> None:
        if self.where is None:
            raise self.error
        raise self.error from WorkerTraceback(self.where)


class _Pool:
    def __init__(self) -> None:
        self.fds: set[int] = set()  # the parent's open ends, closed once each
        self.numbers_in = -1  # the parent's end of the shared pipe of numbers
        self.workers: dict[int, int] = {}  # each worker's result pipe (the parent's end) and process id

    def pipe(self) -> tuple[int, int]:
        out, into = os.pipe()
        self.fds.update((out, into))
        _OPEN.update((out, into))
        return out, into

    def close(self, fd: int) -> None:
        if fd in self.fds:
            self.fds.discard(fd)
            _OPEN.discard(fd)
            os.close(fd)

    def start(self, task: Callable[[int], object], workers: int, collecting: bool) -> None:
        numbers_out, self.numbers_in = self.pipe()
        for stream in (sys.stdout, sys.stderr):  # else what they hold would come out once more per worker
            with contextlib.suppress(Exception):
                stream.flush()
        for _ in range(workers):
            results_out, results_in = self.pipe()
            _widen(results_in)
            # Ctrl-C and SIGTERM are held back until the worker has let go of the parent's stack and
            # exits on them.
            held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
            pid = -1
            try:
                pid = os.fork()
                if pid == 0:
                    _worker(task, numbers_out, results_in, held, collecting)
                # Known before a held-back Ctrl-C can end the run, so that end() reaps it too.
                self.workers[results_out] = pid
            finally:
                if pid != 0:
                    signal.pthread_sigmask(signal.SIG_SETMASK, held)
            self.close(results_in)
        self.close(numbers_out)

    def gather(self, task: Callable[[int], object], count: int, meanwhile: Callable[[], object] | None) -> Iterator[Any]:
        """Hand out the numbers, run some here, read the workers' results, and give them all in order.
        The pipe holds only a few numbers ahead of the workers: the rest stay here, and this process
        takes the next of them whenever no result is waiting to be read. `meanwhile` is done once the
        workers have their first numbers (before, they waited for it, idle).
        A task's error is raised in its turn, once every task before it has given its result, as
        one process running them in order would raise it: the error does not depend on the jobs."""
        os.set_blocking(self.numbers_in, False)
        workers = len(self.workers)
        handed = 0  # numbers handed out: into the pipe, or taken here
        given = received = 0  # numbers into the pipe, and the workers' results read
        failed = count  # the first task known to have raised: nothing from it on is handed out
        waiting: dict[int, object] = {}
        following = 0
        with selectors.DefaultSelector() as selector:
            for fd in self.workers:
                selector.register(fd, selectors.EVENT_READ)
            while True:
                while following in waiting:
                    value = waiting.pop(following)
                    if isinstance(value, _Raised):
                        value.throw()
                    yield value
                    following += 1
                if following == count:
                    break
                # Numbers at work in a worker or in the pipe: three a worker, enough for a task
                # here, but never more than the workers' share of what is left, so that this
                # process takes its share of a few tasks, and of the last ones.
                out = given - received
                most = min(3 * workers, max(workers, (count - handed + out) * workers // (workers + 1)))
                if handed < failed and out < most:
                    fed = _feed(self.numbers_in, handed, min(failed, handed + most - out))
                    given, handed = given + fed - handed, fed
                if handed == count:
                    self.close(self.numbers_in)  # the workers stop at the pipe's end
                if meanwhile is not None:
                    meanwhile()
                    meanwhile = None
                    continue
                events = selector.select(0 if handed < failed else None)
                if not events and handed < failed:
                    n, handed = handed, handed + 1
                    waiting[n] = self._run_here(task, n)
                    if isinstance(waiting[n], _Raised):
                        failed = min(failed, n)
                    continue
                for key, _ in events:
                    frame = _read(key.fd, _FRAME.size)
                    if frame:
                        number, size, raised = _FRAME.unpack(frame)
                        value = pickle.loads(_read(key.fd, size))
                        if raised:
                            value = _Raised(*value)
                            failed = min(failed, number)
                        waiting[number] = value
                        received += 1
                        continue
                    selector.unregister(key.fd)
                    # A worker leaves without an error only once every number is handed out, and
                    # after sending the result of each it took.
                    status = os.waitpid(self.workers.pop(key.fd), 0)[1]
                    self.close(key.fd)
                    if status != 0 or handed < count or (not self.workers and received < given):
                        unfinished = count - following - len(waiting)
                        raise WorkerLost(f"a worker process ended with {unfinished} of {count} tasks unfinished (killed, or out of memory?)")

    @staticmethod
    def _run_here(task: Callable[[int], object], n: int) -> object:
        """Task n, in this process: its value, or its error (raised in its turn)."""
        try:
            return task(n)
        except KeyboardInterrupt:
            raise  # Ctrl-C stops the run now, not in its turn
        except BaseException as err:
            return _Raised(err, None)

    def end(self) -> None:
        """Every pipe closed and every worker reaped. A worker still there (at work when the run stopped
        early or failed, or still leaving after the last result) is killed: it has nothing more to
        give, and nothing here waits on one."""
        for fd in list(self.fds):
            self.close(fd)
        for pid in self.workers.values():
            with contextlib.suppress(ChildProcessError):
                if os.waitpid(pid, os.WNOHANG)[0] == 0:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)


def _feed(numbers_in: int, fed: int, count: int) -> int:
    """Numbers from `fed` up to `count` into the pipe, as far as it has room: how far it got."""
    while fed < count:
        chunk = b"".join(_NUMBER.pack(n) for n in range(fed, min(fed + _FEED, count)))
        try:
            written = os.write(numbers_in, chunk)
        except BlockingIOError:
            break  # the workers have enough to go on with
        except BrokenPipeError:
            raise WorkerLost("every worker process ended before the work was handed out") from None
        if written != len(chunk):
            raise WorkerLost(f"a pipe took {written} of {len(chunk)} bytes, which would split a task's number")
        fed += len(chunk) // _NUMBER.size
    return fed


def _widen(fd: int) -> None:
    """A result pipe that holds a worker's results while this process runs a task of its own (Linux
    lets a pipe grow to 1 MiB; elsewhere a worker waits for the parent's task to end)."""
    with contextlib.suppress(ImportError, AttributeError, OSError):
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, 1 << 20)


def _worker(task: Callable[[int], object], numbers_out: int, results_in: int, held: Iterable[int], collecting: bool) -> None:
    """A worker's whole life: tasks until the shared pipe ends, then out with only its own output
    flushed (the parent's was flushed before the fork; its exit handlers are the parent's to run)."""
    code = 1
    try:
        # Ctrl-C and SIGTERM (sent to the whole process group): the parent speaks for the run. A
        # signal its starter chose to ignore stays ignored.
        for signum in (signal.SIGINT, signal.SIGTERM):
            if callable(signal.getsignal(signum)):
                signal.signal(signum, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
        for fd in _OPEN - {numbers_out, results_in}:
            os.close(fd)
        _OPEN.intersection_update({numbers_out, results_in})  # a pool a task starts knows what is open
        gc.freeze()  # the parent's objects stay out of this worker's collections (and so shared)
        if collecting:
            gc.enable()
        while number := _read(numbers_out, _NUMBER.size):
            (n,) = _NUMBER.unpack(number)
            _write(results_in, _result(task, n))
        code = 0
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _result(task: Callable[[int], object], n: int) -> bytes:
    """Task n's result as a frame, or the error it raised (with where, in this worker)."""
    try:
        payload = pickle.dumps(task(n), pickle.HIGHEST_PROTOCOL)
        return _FRAME.pack(n, len(payload), False) + payload
    except BaseException as err:  # sys.exit() in a task too: the parent raises it as the task would have
        where = "".join(traceback.format_exception(type(err), err, err.__traceback__))
        try:
            payload = pickle.dumps((err, where), pickle.HIGHEST_PROTOCOL)
            pickle.loads(payload)  # an exception with arguments of its own may not come back
        except Exception:
            payload = pickle.dumps((RuntimeError(f"{type(err).__name__}: {err}"), where), pickle.HIGHEST_PROTOCOL)
        return _FRAME.pack(n, len(payload), True) + payload


def _read(fd: int, size: int) -> bytes:
    """Exactly `size` bytes, or none at the pipe's end: a worker writes each result whole."""
    chunks: list[bytes] = []
    while size:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            if chunks:
                raise WorkerLost("a worker process ended in the middle of sending a result")
            return b""
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
