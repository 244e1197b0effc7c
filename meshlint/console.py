"""Talking to the terminal: the exit codes, one-line errors, output that never breaks a run (a character
the console cannot encode, a reader that goes away, a stdout that is closed or full), and color."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterable
from typing import Any, NoReturn

EXIT_CLEAN, EXIT_FINDINGS, EXIT_TROUBLE = 0, 1, 2


# The reader of stdout went away (`| head -1`): the report did not reach it whole, so the run is no
# success, and its verdict is not what the reader saw; a program that dies of SIGPIPE, as most command
# line tools do, exits so (128 + 13), which is how shells and `set -o pipefail` already read it.
EXIT_READER_GONE = 141


class UsageProblem(Exception):
    """A command line that cannot run (two reports on stdout, a version that is none): click shows it
    with the usage line and exits 2."""

    def __init__(self, message: str, *, option: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.option = option


def echo(text: str, *, err: bool = False, nl: bool = True) -> None:
    """Write to stdout (stderr) and flush, so the two interleave as they are written. On stderr, which
    only a person reads, a control character shows as its escape (a note naming a file called "\\e[2J"
    does not clear the screen); the reports on stdout escape what they must themselves (a diff or a
    JSON report is written as it is)."""
    stream = sys.stderr if err else sys.stdout
    if stream is None:  # no console at all (pythonw)
        return
    if nl:
        text += "\n"
    if err:
        from meshlint.report import visible

        try:
            stream.write(visible(text))
            stream.flush()
        except OSError:
            pass  # stderr is full or gone: there is nowhere to say anything, and the exit code still tells
        return
    stream.write(text)
    stream.flush()


def fail(message: str) -> NoReturn:
    echo(f"meshlint: error: {message}", err=True)
    sys.exit(EXIT_TROUBLE)


def guarded(func: Callable[..., None]) -> Callable[..., None]:
    """Known errors are one line on stderr and exit 2; anything else too, traceback only on request."""

    def wrapper(*args: Any, **kwargs: Any) -> None:
        from meshlint.config import ConfigError
        from meshlint.registry import RegistryError
        from meshlint.source.inputs import InputError

        _robust_output()
        try:
            func(*args, **kwargs)
        except (ConfigError, InputError, RegistryError) as err:
            fail(str(err))
        except (UsageProblem, SystemExit):
            raise
        except KeyboardInterrupt as stop:  # Ctrl-C or SIGTERM: one line, and the signal's exit
            from meshlint.stops import stopped

            raise stopped(stop) from None
        except BrokenPipeError:
            reader_gone()
        except Exception as err:  # never a traceback unless MESHLINT_DEBUG=1
            if os.environ.get("MESHLINT_DEBUG") == "1":
                import traceback

                traceback.print_exc()
            forked = sys.modules.get("meshlint.engine.forked")  # loaded only where a run forked
            if forked is not None and isinstance(err, forked.WorkerLost):
                fail(str(err))  # killed, or out of memory: the machine's doing, not a fault of meshlint's
            fail(f"internal error: {type(err).__name__}: {err} (set MESHLINT_DEBUG=1 for details)")

    wrapper.__name__ = func.__name__
    wrapper.__doc__ = func.__doc__
    return wrapper


# What a console that cannot encode a character shows instead (Windows code pages, `LANG=C` runners).
_ASCII = {"≥": ">=", "≤": "<=", "≠": "!=", "→": "->", "←": "<-", "…": "...", "—": "--", "–": "-", "‘": "'", "’": "'",
          "“": '"', "”": '"', "×": "x", "•": "*", "\u00a0": " "}


def _ascii_fallback(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    import unicodedata

    def plain(char: str) -> str:
        return _ASCII.get(char) or unicodedata.normalize("NFKD", char).encode("ascii", "ignore").decode() or "?"

    return "".join(plain(c) for c in error.object[error.start:error.end]), error.end


def _robust_output() -> None:
    """Characters stdout or stderr cannot encode are written as ASCII (`≥` as `>=`), never an error."""
    import codecs

    codecs.register_error("meshlint-ascii", _ascii_fallback)
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(Exception):
                reconfigure(errors="meshlint-ascii")


def stdout_closed() -> None:
    """stdout cannot be written any more (its reader went away, its disk is full): what is still
    buffered goes to the null device, so the interpreter's last flush is quiet too."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def reader_gone() -> NoReturn:
    """`meshlint check . | head -1`: the reader has what it wanted, and nothing more is said."""
    stdout_closed()
    sys.exit(EXIT_READER_GONE)


def stdout_open(what: str) -> None:
    """A run whose `what` goes to stdout fails before it starts when there is no stdout (`>&-`)."""
    if sys.stdout is None:
        fail(f"stdout is closed: nowhere to write the {what}")


def use_color(choice: str, is_tty: bool) -> bool:
    """`always`/`never` as asked; `auto`: off with NO_COLOR, on with FORCE_COLOR (both when set and not
    empty, NO_COLOR first), off on TERM=dumb, else on a terminal only."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return os.environ.get("TERM") != "dumb" and is_tty


def write_out(text: str) -> None:
    """One whole output (a rules page) to stdout, as a report is written: in pieces smaller than the
    stream's buffer, because a single larger write goes straight to the system, and a reader that
    leaves during it (`| head -1`) cuts it short without an error."""
    echo_all(text[start : start + 4096] for start in range(0, len(text), 4096))


def echo_all(pieces: Iterable[str]) -> None:
    """Write to stdout, flushed once at the end (a report of a big tree is thousands of pieces, and a
    flush each was a system call each; nothing goes to stderr meanwhile). A reader that goes away
    early (`| head`) ends the run quietly; a stdout that cannot take the report ends it with an error."""
    try:
        write = sys.stdout.write
        for piece in pieces:
            write(piece)
        sys.stdout.flush()
    except BrokenPipeError:
        reader_gone()
    except OSError as err:  # `> /dev/full`, a disk that filled up, a quota: the report is lost
        stdout_closed()
        fail(f"cannot write the report to stdout: {err.strerror or err}")
