"""The console entry point. A plain `meshlint check` line (the one pre-commit and CI write) runs without
loading click; any other line, and any line the plain reading refuses, goes to click (meshlint/cli.py),
which runs it or says what is wrong with it exactly as for every line."""

from __future__ import annotations

import os
import sys


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["check"] and _plain_console():
        from meshlint.options import read_plain, report_flags

        values = read_plain(args[1:])
        if values is not None:
            from meshlint import checking

            try:
                checking.check(report_flags(args[1:]), **values)
            except checking.UsageProblem:
                pass  # click reads the line again and shows the problem with its usage line
            except (EOFError, KeyboardInterrupt):
                checking.echo("", err=True)  # as click does: a blank line closes the terminal's ^C
                checking.echo("Aborted!", err=True)
                sys.exit(1)
    from meshlint.cli import main as command_line

    command_line()


def _plain_console() -> bool:
    """click expands wildcards in a Windows command line and answers shell-completion requests
    (`_MESHLINT_COMPLETE=...`): both are click's to do."""
    return os.name != "nt" and not any(name.startswith("_") and name.endswith("_COMPLETE") for name in os.environ)
