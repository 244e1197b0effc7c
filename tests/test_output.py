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
    assert out.count("\n") > 20 and out.endswith("1 assumed meshed (the run shows Istio: proxy.istio.io/config on Deployment checkout, examples/apps/checkout.yaml:18)\n")
    # The same for stderr, and for a file: files are always UTF-8.
    result = meshlint("check", "examples/", "-o", str(tmp_path / "out.txt"), env={"PYTHONIOENCODING": "ascii"}, cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (1, b"", b"")
    assert "≥" in (tmp_path / "out.txt").read_text(encoding="utf-8")


def test_a_closed_pipe_ends_quietly_with_the_usual_exit_code(tmp_path):
    # Enough findings that the report is far bigger than a pipe's buffer, so writes fail after `head` exits.
    for n in range(150):
        shutil.copy(ROOT / "examples" / "apps" / "orders-api.yaml", tmp_path / f"orders-{n:03}.yaml")
    script = f'set -o pipefail; "{sys.executable}" -m meshlint check . -j 1 | head -1; echo "exit=${{PIPESTATUS[0]}}" >&2'
    result = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert result.stdout.count("\n") == 1 and result.stdout.startswith("orders-000.yaml:")
    assert result.stderr == "exit=1\n"  # no traceback, no "Exception ignored", and findings still exit 1
    clean = subprocess.run(["bash", "-c", f'"{sys.executable}" -m meshlint rules | head -1; echo "exit=${{PIPESTATUS[0]}}" >&2'], capture_output=True, text=True, check=False)
    assert clean.stderr == "exit=0\n"


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
