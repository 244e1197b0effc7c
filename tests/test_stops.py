"""A run stopped from outside (Ctrl-C, SIGTERM) ends with one line on stderr, no traceback and no
worker left, and the process dies of the signal (a shell says 130 or 143), with the forked pool at work
or a stream being read from stdin. Each child signalled here gets the default handling of SIGINT and
SIGTERM back before it starts, whatever the suite inherited (a shell runs a background job with
SIGINT ignored, and a process keeps what it was started with)."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from helpers import ROOT
from meshlint.cli import main
from meshlint.engine import parallel

pytestmark = pytest.mark.skipif(not hasattr(os, "fork") or not hasattr(os, "mkfifo"), reason="signals and FIFOs as POSIX has them")

MANIFEST = (ROOT / "examples" / "apps" / "orders-api.yaml").read_text()


def forked_tree(tmp_path):
    """Enough files and bytes that a run with --jobs 2 reads and checks them in the forked pool."""
    tree = tmp_path / "tree"
    tree.mkdir()
    copies = parallel.PARALLEL_BYTES // parallel.PARALLEL_FROM // len(MANIFEST) + 1
    for n in range(parallel.PARALLEL_FROM + 8):
        (tree / f"app-{n:02}.yaml").write_text("---\n".join([MANIFEST] * copies))
    return tree


def start(args, cwd, **settings):
    """meshlint in a session (a process group) of its own, as a terminal's foreground job is, with
    SIGINT and SIGTERM handled as by default, whatever this process inherited."""

    def default_handling():
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)

    return subprocess.Popen(
        [sys.executable, "-m", "meshlint", *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        preexec_fn=default_handling, start_new_session=True, **settings,  # noqa: PLW1509 (no thread of the suite's runs meanwhile)
    )


def open_for_writing_once_read(fifo, process):
    """The FIFO's writing end, once meshlint has opened it for reading: from then on, whoever opened
    it (a worker, or the parent working as the last of the jobs) waits for its text, mid-run."""
    while True:
        try:
            return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as err:
            if err.errno != errno.ENXIO:  # ENXIO: no reader yet
                raise
        assert process.poll() is None, process.stderr.read()
        time.sleep(0.01)


def ended(process):
    out, err = process.communicate(timeout=60)
    return process.returncode, out, err


def none_left_of(process):
    """No process of meshlint's group is left: its workers were ended and reaped with it."""
    try:
        os.killpg(process.pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.parametrize(
    "signum, whom, said",
    [
        (signal.SIGINT, "group", b"meshlint: interrupted\n"),  # Ctrl-C: the terminal signals the whole foreground job
        (signal.SIGINT, "parent", b"meshlint: interrupted\n"),  # kill -INT <pid>: the workers are the parent's to end
        (signal.SIGTERM, "group", b"meshlint: terminated\n"),
    ],
)
def test_a_run_stopped_while_the_forked_pool_works_dies_of_the_signal_with_one_line(tmp_path, signum, whom, said):
    tree = forked_tree(tmp_path)
    os.mkfifo(tree / "zz-last.yaml")  # read last, by the pool's last range: the run waits there for a writer
    process = start(["check", "tree", "--jobs", "2", "--no-cache"], tmp_path)
    held = open_for_writing_once_read(tree / "zz-last.yaml", process)
    try:
        if whom == "group":
            os.killpg(process.pid, signum)
        else:
            os.kill(process.pid, signum)
        status, out, err = ended(process)
    finally:
        os.close(held)
    assert (status, out, err) == (-signum, b"", said)  # a shell reads this as 128 + signum: 130, 143
    assert none_left_of(process)


def test_ctrl_c_while_a_stream_is_read_from_stdin(tmp_path):
    process = start(["check", "-", "--jobs", "2", "--no-cache"], tmp_path, stdin=subprocess.PIPE)
    # More than a pipe holds: once it is written, meshlint is reading its stdin, and waits for the rest.
    process.stdin.write(("---\n".join([MANIFEST] * 400)).encode())
    process.stdin.flush()
    os.killpg(process.pid, signal.SIGINT)
    status, out, err = ended(process)
    assert (status, out, err) == (-signal.SIGINT, b"", b"meshlint: interrupted\n")


@pytest.mark.parametrize("stop, code, said", [(KeyboardInterrupt, 130, "meshlint: interrupted\n"), ("terminated", 143, "meshlint: terminated\n")])
def test_the_exit_code_of_a_stopped_run_is_128_and_the_signal(monkeypatch, tmp_path, stop, code, said):
    """In process (click's runner), where nothing dies of a signal: the exit code a shell would see."""
    from meshlint.engine import run
    from meshlint.stops import Terminated

    raised = Terminated() if stop == "terminated" else KeyboardInterrupt()

    def interrupted(*args, **kwargs):
        raise raised

    monkeypatch.chdir(tmp_path)
    (tmp_path / "web.yaml").write_text(MANIFEST)
    monkeypatch.setattr(run, "run", interrupted)
    result = CliRunner().invoke(main, ["check", "web.yaml", "--no-cache"])
    assert (result.exit_code, result.stdout, result.stderr) == (code, "", said)
