"""A pool of forked workers over plain pipes, for the runs that share a tree or a stream out.

Each worker takes the next task's number from one pipe that all of them read, runs it, and sends the
pickled result back on a pipe of its own; the parent gives the results in task order. multiprocessing's
pool cost the parent about 1.2 ms of CPU a task (its three handler threads, its queues, a condition that
each result wakes), which a tree of 64-file tasks paid 58 times over; here a result costs a `select`, two
reads and an unpickle. Forked workers inherit what the tasks read (the plan, the mesh context), so only
numbers go out and only results come back.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import selectors
import signal
import struct
from collections.abc import Callable, Iterator
from typing import TypeVar

T = TypeVar("T")

_NUMBER = struct.Struct("<I")  # a task's number, on the shared pipe
_FRAME = struct.Struct("<IQ?")  # a result's task number, its pickled length, and whether the task raised
# Up to PIPE_BUF bytes go into a pipe whole or not at all, so no worker ever reads half a number.
_FEED = 4096 // _NUMBER.size


class WorkerLost(RuntimeError):
    """A worker ended before sending back every task it took (killed, or out of memory)."""


def forked(task: Callable[[int], T], count: int, jobs: int) -> Iterator[T]:
    """`task(n)` for each n below `count`, worked out by `jobs` forked processes, yielded in order of n
    as they come (a result waits only for those before it). A task's exception is raised here."""
    numbers_out, numbers_in = os.pipe()
    workers: dict[int, int] = {}  # each worker's result pipe (the parent's end) and process id
    finished = False
    try:
        for _ in range(jobs):
            results_out, results_in = os.pipe()
            pid = os.fork()
            if pid == 0:  # the worker: it never returns
                os.close(results_out)
                os.close(numbers_in)  # else the shared pipe would never end for any worker
                for fd in workers:
                    os.close(fd)
                _work(task, numbers_out, results_in)
            os.close(results_in)
            workers[results_out] = pid
        os.close(numbers_out)
        yield from _gather(count, numbers_in, workers)
        finished = True
    finally:
        _close(numbers_in)
        _end(workers, finished)


def _gather(count: int, numbers_in: int, workers: dict[int, int]) -> Iterator[T]:
    """Feed the numbers, read the results, and give them in order."""
    os.set_blocking(numbers_in, False)
    fed = 0
    waiting: dict[int, T] = {}
    following = 0
    with selectors.DefaultSelector() as selector:
        selector.register(numbers_in, selectors.EVENT_WRITE)
        for fd in workers:
            selector.register(fd, selectors.EVENT_READ)
        while following < count:
            while following in waiting:
                yield waiting.pop(following)
                following += 1
            if following == count:
                break
            if len(selector.get_map()) == (1 if fed < count else 0):
                raise WorkerLost(f"a worker process ended with {count - following} of {count} tasks unfinished (killed, or out of memory?)")
            for key, _ in selector.select():
                if key.fd == numbers_in:
                    fed = _feed(numbers_in, fed, count)
                    if fed == count:
                        selector.unregister(numbers_in)
                        os.close(numbers_in)  # the workers stop at the pipe's end
                    continue
                frame = _read(key.fd, _FRAME.size)
                if not frame:
                    selector.unregister(key.fd)  # this worker is done (or lost: see above)
                    continue
                number, size, raised = _FRAME.unpack(frame)
                value = pickle.loads(_read(key.fd, size))
                if raised:
                    raise value
                waiting[number] = value


def _feed(numbers_in: int, fed: int, count: int) -> int:
    while fed < count:
        chunk = b"".join(_NUMBER.pack(n) for n in range(fed, min(fed + _FEED, count)))
        try:
            os.write(numbers_in, chunk)
        except BlockingIOError:
            break  # the workers have enough to go on with
        except BrokenPipeError:
            raise WorkerLost("every worker process ended before the work was handed out") from None
        fed += len(chunk) // _NUMBER.size
    return fed


def _work(task: Callable[[int], object], numbers_out: int, results_in: int) -> None:
    """A worker's whole life: tasks until the shared pipe ends, then out, with no clean-up of the
    parent's (its buffers, its exit handlers are the parent's to run)."""
    code = 0
    try:
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C: the parent speaks for the run
        gc.freeze()  # the parent's objects stay out of this worker's collections (and so shared)
        while True:
            number = os.read(numbers_out, _NUMBER.size)
            if not number:
                break
            (n,) = _NUMBER.unpack(number)
            try:
                value, raised = task(n), False
            except Exception as err:  # the parent raises it
                value, raised = err, True
            try:
                payload = pickle.dumps(value, pickle.HIGHEST_PROTOCOL)
            except Exception as err:
                payload, raised = pickle.dumps(RuntimeError(f"{type(value).__name__}: {value} ({err})")), True
            _write(results_in, _FRAME.pack(n, len(payload), raised) + payload)
    except BaseException:
        code = 1
    finally:
        os._exit(code)


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


def _close(fd: int) -> None:
    with contextlib.suppress(OSError):  # closed when the last number went out
        os.close(fd)


def _end(workers: dict[int, int], finished: bool) -> None:
    """Every worker reaped. After the last result they are leaving (the shared pipe has ended); a run
    that stopped early, or failed, kills those still at work first."""
    for fd, pid in workers.items():
        _close(fd)
        try:
            if not finished and os.waitpid(pid, os.WNOHANG)[0] == 0:
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
