"""A run stopped from outside (Ctrl-C, SIGTERM) ends with one line on stderr, no traceback and no
worker left, and the process dies of the signal (a shell says 130 or 143), with the forked pool at work
or a stream being read from stdin. Each child signalled here gets the default handling of SIGINT and
SIGTERM back before it starts, whatever the suite inherited (a shell runs a background job with
SIGINT ignored, and a process keeps what it was started with)."""

from __future__ import annotations

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

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals as POSIX has them, and /proc to see the workers")

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


def workers_of(process) -> list[str]:
    """The pids of the processes `process` forked and has not reaped (Linux's /proc)."""
    try:
        with open(f"/proc/{process.pid}/task/{process.pid}/children") as children:
            return children.read().split()
    except FileNotFoundError:
        return []


def frozen_in_the_pool(process) -> None:
    """meshlint's group stopped (SIGSTOP) the moment its forked pool has a worker: whatever is sent
    now is handled, on SIGCONT, while the pool works. (A FIFO once held the run; a walk passes FIFOs
    over now.)"""
    while not workers_of(process):
        assert process.poll() is None, "the run ended before its pool started"
        time.sleep(0.002)
    os.killpg(process.pid, signal.SIGSTOP)


def ended(process):
    out, err = process.communicate(timeout=60)
    return process.returncode, out, err


def living_in_group(pgid: int) -> list[int]:
    """The processes of group `pgid` that have not yet died (a zombie has; /proc of Linux)."""
    living = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        state, group = fields[0], int(fields[2])
        if group == pgid and state not in "ZX":
            living.append(int(entry))
    return living


def none_left_of(process):
    """No process of meshlint's group is alive once it has died: its workers were ended with it (a
    zombie has died; init reaps it)."""
    return not living_in_group(process.pid)


@pytest.mark.parametrize(
    "signum, whom, said",
    [
        (signal.SIGINT, "group", b"meshlint: interrupted\n"),  # Ctrl-C: the terminal signals the whole foreground job
        (signal.SIGINT, "parent", b"meshlint: interrupted\n"),  # kill -INT <pid>: the workers are the parent's to end
        (signal.SIGTERM, "group", b"meshlint: terminated\n"),
    ],
)
def test_a_run_stopped_while_the_forked_pool_works_dies_of_the_signal_with_one_line(tmp_path, signum, whom, said):
    forked_tree(tmp_path)
    process = start(["check", "tree", "--jobs", "2", "--no-cache"], tmp_path)
    frozen_in_the_pool(process)
    if whom == "group":
        os.killpg(process.pid, signum)
    else:
        os.kill(process.pid, signum)
    os.killpg(process.pid, signal.SIGCONT)
    status, out, err = ended(process)
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
