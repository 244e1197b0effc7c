"""A long run's progress: on a terminal's stderr only (never in a pipe, a CI log or the report), shown
once the run has gone on for a while, counted as each file is read and checked (in the parent, as
the forked pool's results come), and erased before anything else is written."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys

import pytest

from helpers import ROOT, RULES, config_from
from meshlint import progress as progress_line
from meshlint.engine import parallel
from meshlint.engine.run import run

MANIFEST = (ROOT / "examples" / "apps" / "orders-api.yaml").read_text()
ERASE = "\r\033[K"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_line_waits_then_is_redrawn_at_most_so_often_and_erased_once(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(progress_line.time, "monotonic", clock)
    stream = io.StringIO()
    shown = progress_line.Progress(stream, after=2.0)
    shown.clear()  # nothing shown: nothing to erase
    shown(1, 3_700, "read")
    clock.now += 1.9
    shown(2, 3_700, "read")
    assert stream.getvalue() == ""  # a run that ends sooner shows nothing
    clock.now += 0.1
    shown(1_200, 3_700, "checked")
    shown(1_201, 3_700, "checked")  # too soon after the last drawing
    clock.now += progress_line.REDRAWN_EVERY
    shown(1_500, 3_700, "checked")
    shown.clear()
    shown.clear()
    assert stream.getvalue() == f"{ERASE}meshlint: checked 1,200 of 3,700 files{ERASE}meshlint: checked 1,500 of 3,700 files{ERASE}"


def tree(tmp_path, count):
    folder = tmp_path / "tree"
    folder.mkdir()
    for n in range(count):
        (folder / f"app-{n:02}.yaml").write_text(MANIFEST)
    return folder


@pytest.mark.parametrize("jobs", [1, 2])
def test_each_file_is_counted_as_it_is_read_and_as_its_result_comes(monkeypatch, tmp_path, jobs):
    monkeypatch.setattr(parallel, "PARALLEL_BYTES", 1)  # a small tree is worth the pool: a quick test
    count = parallel.PARALLEL_FROM + 8
    folder = tree(tmp_path, count)
    files = sorted(str(p) for p in folder.iterdir())
    assert parallel.worth_forking(files, 2)  # with two jobs, both passes are the forked pool's
    told = []
    run([str(folder)], config_from(base=str(tmp_path)), RULES, jobs=jobs, progress=lambda done, found, step: told.append((step, done, found)))
    assert told == [("read", n, count) for n in range(1, count + 1)] + [("checked", n, count) for n in range(1, count + 1)]


def meshlint(tmp_path, stderr, **env):
    """meshlint on a small tree, its report in a file, progress shown from the start when it is shown."""
    settings = {k: v for k, v in os.environ.items() if k not in ("CI", "NO_COLOR", "FORCE_COLOR")}
    settings.update({"MESHLINT_PROGRESS_AFTER": "0", "TERM": "xterm"}, **env)
    with open(tmp_path / "report", "wb") as report:
        process = subprocess.Popen([sys.executable, "-m", "meshlint", "check", "tree", "--no-cache"], cwd=tmp_path, stdout=report, stderr=stderr, env=settings)
    return process


def on_a_terminal(tmp_path, **env):
    """The run's stderr on a pseudo-terminal: all that was written to it, and the exit code."""
    pty = pytest.importorskip("pty")
    controller, terminal = pty.openpty()
    try:
        process = meshlint(tmp_path, terminal, **env)
        os.close(terminal)
        terminal = -1
        written = b""
        while True:
            try:
                chunk = os.read(controller, 1 << 16)
            except OSError:  # EIO: the run ended, and the terminal with it
                break
            if not chunk:
                break
            written += chunk
        return process.wait(timeout=60), written.decode()
    finally:
        os.close(controller)
        if terminal >= 0:
            os.close(terminal)


def test_on_a_terminal_the_line_shows_and_is_gone_before_the_report(tmp_path):
    tree(tmp_path, 3)
    status, written = on_a_terminal(tmp_path)
    report = (tmp_path / "report").read_text()
    assert status == 1
    assert re.fullmatch(r"(\r\033\[Kmeshlint: read [123] of 3 files)+(\r\033\[Kmeshlint: checked [123] of 3 files)*\r\033\[K", written)
    assert written.startswith(f"{ERASE}meshlint: read 1 of 3 files")  # shown at once: MESHLINT_PROGRESS_AFTER=0
    piped = meshlint(tmp_path, subprocess.PIPE)
    assert (piped.wait(timeout=60), piped.stderr.read()) == (1, b"")  # never in a pipe
    piped.stderr.close()
    assert (tmp_path / "report").read_text() == report  # and never in the report's bytes
    assert report.startswith("tree/app-00.yaml:")


def test_a_ci_system_never_gets_the_line_even_on_a_terminal(tmp_path):
    tree(tmp_path, 3)
    assert on_a_terminal(tmp_path, CI="true") == (1, "")
