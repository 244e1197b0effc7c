"""The console entry point. A plain `meshlint check` line (the one pre-commit and CI write) runs without
loading click; any other line, and any line the plain reading refuses, goes to click (meshlint/cli.py),
which runs it or says what is wrong with it exactly as for every line."""

from __future__ import annotations

import contextlib
import os
import sys


def main() -> None:
    from meshlint import stops

    _hold_standard_descriptors()
    stops.catch_termination()
    try:
        _command_line()
    except stops.Stopped as stop:
        stops.die_of(stop)
    except KeyboardInterrupt as stop:  # before a command started (its imports): said the same way
        stops.die_of(stops.stopped(stop))


def _command_line() -> None:
    args = sys.argv[1:]
    if args[:1] == ["check"] and _plain_console():
        from meshlint.options import read_plain, report_flags

        values = read_plain(args[1:])
        if values is not None:
            from meshlint import checking, console

            # A problem with the line: click reads it again and shows the problem with its usage line.
            with contextlib.suppress(console.UsageProblem):
                checking.check(report_flags(args[1:]), **values)
    from meshlint.cli import main as command_line

    command_line()


def _plain_console() -> bool:
    """click expands wildcards in a Windows command line and answers shell-completion requests
    (`_MESHLINT_COMPLETE=...`): both are click's to do."""
    return os.name != "nt" and not any(name.startswith("_") and name.endswith("_COMPLETE") for name in os.environ)


def _hold_standard_descriptors() -> None:
    """A closed stdin, stdout or stderr (`meshlint check x.yaml >&-`) is left as the interpreter found
    it (sys.stdout is None, say: meshlint/checking.py says so where it has a report to write), but its
    descriptor is taken by the null device, so that no file or pipe the run opens gets its number,
    where a write meant for stdout, or a child process, would find it."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            os.open(os.devnull, os.O_RDWR)  # the lowest free number: this one, the lower ones being open
