"""A run stopped from outside: Ctrl-C (SIGINT) or SIGTERM (a CI job cancelled, `timeout`, a container
stopping). Either ends the run with one line on stderr and no traceback, and the process then dies of
the same signal, so that its parent sees what stopped it: a shell says 130 (Ctrl-C) or 143 (SIGTERM),
and a shell loop or script around meshlint stops too, as it would not for a plain exit with that code."""

from __future__ import annotations

import os
import sys
from types import FrameType
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    import signal as _signal
else:
    # The interpreter's own module, loaded already: `signal` would cost every run an enum's making.
    import _signal

SIGNAL_EXIT = 128  # a shell's exit status for a process that died of signal n is 128 + n


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the run is, as Ctrl-C raises KeyboardInterrupt: every place that lets a
    Ctrl-C through at once (the worker pool stops, temporary files go) lets this through too."""

    def __init__(self) -> None:
        super().__init__("terminated")


class Stopped(SystemExit):
    """The run was stopped by `signum` and has said so: the process exits 128 + signum. The console
    entry point (meshlint/entry.py) dies of the signal instead, once everything has unwound."""

    def __init__(self, signum: int) -> None:
        super().__init__(SIGNAL_EXIT + signum)
        self.signum = signum


def catch_termination() -> None:
    """SIGTERM raises `Terminated` from now on, unless whoever started meshlint chose to ignore it."""
    if _signal.getsignal(_signal.SIGTERM) == _signal.SIG_DFL:
        _signal.signal(_signal.SIGTERM, _terminated)


def _terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated


def stopped(stop: KeyboardInterrupt) -> Stopped:
    """Say what stopped the run (one line on stderr) and give the exit that ends it."""
    signum = _signal.SIGTERM if isinstance(stop, Terminated) else _signal.SIGINT
    stream = sys.stderr
    if stream is not None:
        try:
            if stream.isatty():
                stream.write("\r\033[K")  # over the terminal's "^C" and any progress line
            stream.write("meshlint: interrupted\n" if signum == _signal.SIGINT else "meshlint: terminated\n")
            stream.flush()
        except (OSError, ValueError):
            pass  # nowhere to say it
    return Stopped(signum)


def die_of(stop: Stopped) -> NoReturn:
    """End this process by the signal that stopped the run (where the system has such signals);
    what is buffered for stdout and stderr is written first, as a normal exit would."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    if os.name != "nt":
        _signal.signal(stop.signum, _signal.SIG_DFL)
        _signal.pthread_sigmask(_signal.SIG_UNBLOCK, {stop.signum})
        os.kill(os.getpid(), stop.signum)
    sys.exit(stop.code)  # where the signal did not end the process
