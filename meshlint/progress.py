"""How far a long run has got, for a person watching it: one line on a terminal's stderr, rewritten in
place, that appears only once the run has gone on for a while and is erased before anything else is
written. Never in a pipe, a file or a CI log (which would keep every version of the line), and never
on stdout, where the report's bytes go."""

from __future__ import annotations

import math
import os
import sys
import time
from typing import TextIO

# A run that ends sooner shows nothing. MESHLINT_PROGRESS_AFTER (seconds) changes it: the tests that
# look at the line on a pseudo-terminal cannot wait for a run that long.
SHOWN_AFTER = 2.0
# The line is rewritten no more often than this: a terminal that redraws for each file slows the run.
REDRAWN_EVERY = 0.1

ERASE = "\r\033[K"  # back to the line's start, and clear it


class Progress:
    """Called with each step's files done and files found; `clear()` takes the line away."""

    def __init__(self, stream: TextIO, after: float) -> None:
        self.stream = stream
        self.due = time.monotonic() + after
        self.shown = False

    def __call__(self, done: int, found: int, step: str) -> None:
        now = time.monotonic()
        if now < self.due:
            return
        self.due = now + REDRAWN_EVERY
        self.shown = self._write(f"{ERASE}meshlint: {step} {done:,} of {found:,} files")

    def clear(self) -> None:
        if self.shown:
            self.shown = not self._write(ERASE)

    def _write(self, text: str) -> bool:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            self.due = math.inf  # the terminal went away: the run goes on without it
            return False
        return True


def on_terminal() -> Progress | None:
    """A progress line for this run, when a person is watching it: stderr is a terminal that can
    rewrite a line, and no CI system is running it (they set CI; some give their logs a TTY)."""
    stream = sys.stderr
    if stream is None or os.environ.get("CI") or os.environ.get("TERM") == "dumb":
        return None
    try:
        if not stream.isatty():
            return None
    except (OSError, ValueError):
        return None
    return Progress(stream, _after())


def _after() -> float:
    try:
        after = float(os.environ.get("MESHLINT_PROGRESS_AFTER", SHOWN_AFTER))
    except ValueError:
        return SHOWN_AFTER
    return after if after >= 0 else SHOWN_AFTER
