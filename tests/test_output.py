"""Output never breaks a run: consoles that cannot encode a character, a reader that goes away, an
--output into a folder that does not exist; colour as the environment asks."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner

from helpers import ROOT
from meshlint.cli import main, use_color

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")


def meshlint(*args, env=None, cwd=ROOT):
    full = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "meshlint", *args], cwd=cwd, env=full, capture_output=True, check=False)


SLEEPY = """apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  terminationGracePeriodSeconds: 20
  containers:
    - name: web
      image: web
      lifecycle: {preStop: {exec: {command: [sleep, "20"]}}}
"""


def test_a_console_that_cannot_encode_a_character_gets_ascii(tmp_path):
    (tmp_path / "examples").mkdir()
    shutil.copytree(ROOT / "examples", tmp_path / "examples", dirs_exist_ok=True)
    (tmp_path / "examples" / "sleepy.yaml").write_text(SLEEPY)  # ML303 says "waits 20s ≥ terminationGracePeriodSeconds 20"
    result = meshlint("check", "examples/", env={"PYTHONIOENCODING": "cp1252"}, cwd=tmp_path)
    assert (result.returncode, result.stderr) == (1, b"")
    out = result.stdout.decode("cp1252")
    assert "preStop `sleep 20` waits 20s >= terminationGracePeriodSeconds 20" in out
    assert "≥" not in out
    assert out.count("\n") > 20 and out.endswith("1 assumed meshed (Istio shown by mesh-wide Istio settings from elsewhere in the run, examples/platform/istio-operator.yaml:14)\n")
    # The same for stderr, and for a file: files are always UTF-8.
    result = meshlint("check", "examples/", "-o", str(tmp_path / "out.txt"), env={"PYTHONIOENCODING": "ascii"}, cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (1, b"", b"")
    assert "≥" in (tmp_path / "out.txt").read_text(encoding="utf-8")


def test_a_closed_pipe_ends_quietly_with_the_exit_code_of_a_tool_sigpipe_ended(tmp_path):
    """The reader has what it wanted, and nothing more is said; but it did not get the whole report,
    which is no success, and not what a findings exit code would judge: 141, as for `cat big | head`."""
    # Enough findings that the report is far bigger than a pipe's buffer, so writes fail after `head` exits.
    for n in range(150):
        shutil.copy(ROOT / "examples" / "apps" / "orders-api.yaml", tmp_path / f"orders-{n:03}.yaml")
    script = f'set -o pipefail; "{sys.executable}" -m meshlint check . -j 1 | head -1; echo "exit=${{PIPESTATUS[0]}}" >&2'
    result = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert result.stdout.count("\n") == 1 and result.stdout.startswith("orders-000.yaml:")
    assert result.stderr == "exit=141\n"  # no traceback, no "Exception ignored"
    # The markdown list is larger than a pipe's buffer: a shorter output could all be written before
    # `head` exits, and then exit 0 is the right answer.
    rules = subprocess.run(["bash", "-c", f'"{sys.executable}" -m meshlint rules --format markdown | head -1; echo "exit=${{PIPESTATUS[0]}}" >&2'],
                           capture_output=True, text=True, check=False)
    assert rules.stderr == "exit=141\n"


def closed(fd):
    """For a child process: `fd` closed before meshlint starts (`>&-`, `<&-`)."""
    return lambda: os.close(fd)


@pytest.mark.parametrize(
    "args, said",
    [
        (["check", "web.yaml"], "stdout is closed: nowhere to write the text report (give it an --output FILE)"),
        (["check", "web.yaml", "--format", "sarif", "-o", "web.sarif", "--format", "json"], "stdout is closed: nowhere to write the json report (give it an --output FILE)"),
        (["check", "web.yaml", "--diff"], "stdout is closed: nowhere to write the diff"),
        (["rules"], "stdout is closed: nowhere to write the list of rules"),
        (["explain", "ML301"], "stdout is closed: nowhere to write the explanation"),
    ],
)
def test_a_closed_stdout_is_an_error_before_the_run_not_a_lost_report(tmp_path, args, said):
    (tmp_path / "web.yaml").write_text(SLEEPY)
    result = subprocess.run([sys.executable, "-m", "meshlint", *args], cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=closed(1), check=False)
    assert (result.returncode, result.stderr.decode()) == (2, f"meshlint: error: {said}\n")
    assert not (tmp_path / "web.sarif").exists()  # nothing written: the run did not start


def test_a_closed_stdout_is_no_matter_when_every_report_goes_to_a_file(tmp_path):
    (tmp_path / "web.yaml").write_text(SLEEPY)
    result = subprocess.run([sys.executable, "-m", "meshlint", "check", "web.yaml", "-o", "report.txt"], cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=closed(1), check=False)
    assert (result.returncode, result.stderr) == (1, b"")
    assert (tmp_path / "report.txt").read_text().startswith("web.yaml:")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
@pytest.mark.parametrize("fmt, fail_on", [("text", "never"), ("json", "warning")])
def test_a_full_disk_under_stdout_is_an_error_not_a_success(tmp_path, fmt, fail_on):
    """Whether the run would exit 0 (no finding counts) or 1, the report is lost: 2."""
    (tmp_path / "web.yaml").write_text(SLEEPY)
    with open("/dev/full", "w") as full:
        result = subprocess.run([sys.executable, "-m", "meshlint", "check", "web.yaml", "--format", fmt, "--fail-on", fail_on], cwd=tmp_path, stdout=full, stderr=subprocess.PIPE, check=False)
    assert (result.returncode, result.stderr) == (2, b"meshlint: error: cannot write the report to stdout: No space left on device\n")


def test_a_closed_stdin_read_as_a_path_is_one_line_naming_it(tmp_path):
    result = subprocess.run([sys.executable, "-m", "meshlint", "check", "-"], cwd=tmp_path, capture_output=True, preexec_fn=closed(0), check=False)
    assert (result.returncode, result.stdout, result.stderr) == (2, b"", b"meshlint: error: <stdin>: cannot read: stdin is closed\n")


def test_output_into_a_missing_directory_is_one_line_naming_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "web.yaml").write_text("apiVersion: v1\nkind: Service\nmetadata: {name: web}\n")
    result = CliRunner().invoke(main, ["check", "web.yaml", "--format", "sarif", "-o", "reports/meshlint.sarif"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == "meshlint: error: reports/meshlint.sarif: cannot write the report: no such directory reports/\n"
    result = CliRunner().invoke(main, ["check", "web.yaml", "-o", "."])
    assert result.stderr == "meshlint: error: .: cannot write the report: it is a directory\n"


@pytest.mark.parametrize(
    "choice, env, tty, expected",
    [
        ("auto", {}, True, True),
        ("auto", {}, False, False),
        ("auto", {"NO_COLOR": "1"}, True, False),
        ("auto", {"NO_COLOR": ""}, True, True),  # no-color.org: set and not empty
        ("auto", {"FORCE_COLOR": "1"}, False, True),
        ("auto", {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False, False),
        ("auto", {"TERM": "dumb"}, True, False),
        ("auto", {"TERM": "dumb", "FORCE_COLOR": "1"}, True, True),
        ("always", {"NO_COLOR": "1"}, False, True),
        ("never", {"FORCE_COLOR": "1"}, True, False),
    ],
)
def test_colour_follows_the_flag_then_the_environment(monkeypatch, choice, env, tty, expected):
    for name in ("NO_COLOR", "FORCE_COLOR", "TERM"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert use_color(choice, tty) is expected


def test_colour_flags_on_the_command_line(monkeypatch):
    monkeypatch.chdir(ROOT)
    for name in ("NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)

    def coloured(*args):
        return "\033[" in CliRunner().invoke(main, ["check", "examples/", *args]).stdout

    assert not coloured()  # not a terminal
    assert coloured("--color", "always")
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert coloured()
    assert not coloured("--no-color")
    assert not coloured("--format", "concise")  # only the text report is coloured
    assert "\033[" not in CliRunner().invoke(main, ["explain", "ML101", "--color", "never"]).stdout
