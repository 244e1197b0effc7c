"""The console entry point reads a plain `check` line without click: it must read it exactly as click
does, hand every other line to click, and keep click out of the process when it can."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from meshlint import cli
from meshlint.options import read_plain, report_flags

RACE = """apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  template:
    metadata:
      annotations: {sidecar.istio.io/inject: "true"}
    spec:
      containers:
        - name: api
          image: api
          env: [{name: DATABASE_URL, value: "postgres://db:5432/app"}]
"""

PLAIN_LINES = [
    [],
    ["race.yaml"],
    ["race.yaml", "--no-cache", "-q"],
    ["-", "--stdin-filename", "rendered.yaml"],
    ["--format", "json", "-o", "out.json", "--format=text", "race.yaml"],
    ["--output=report.txt", "--format", "sarif", "."],
    ["--select", "ML1,ML2", "--select=ML301", "--ignore", "ML4", "--extend-ignore", "ML5", "--extend-select", "ML6"],
    ["--jobs", "3", "race.yaml", "-j", "007"],
    ["--fail-on", "error", "--exit-zero", "--fail-on-skipped", "--statistics", "--report-unused-suppressions"],
    ["--color", "always", "--no-color", "--mesh-config", "race.yaml", "--mesh-config=missing.yaml"],
    ["--config", "missing.yaml", "--cache-dir", "cache", "--baseline", "b.json", "--write-baseline", "w.json"],
    ["--diff-base", "main", "--kubernetes-version", "1.30", "--istio-version=1.24", "--linkerd-version", "2.16"],
    ["--fix", "--unsafe-fixes", "race.yaml"],
    ["--diff", "race.yaml", "--output", "--format"],  # a value that looks like an option is still the value
    ["--output="],
]

# Lines the plain reading leaves to click: click reads them (its own spellings) or refuses them.
CLICKS_LINES = [
    ["-qj4", "race.yaml"],
    ["-j4"],
    ["-oout.txt"],
    ["--", "-odd-name.yaml"],
    ["--help"],
    ["-h"],
    ["--format", "nope"],
    ["--format=TEXT"],
    ["--jobs", "x"],
    ["--jobs=-1"],
    ["--jobs", "+2"],
    ["--jobs", "1" * 5000],  # int() would refuse it with a traceback
    ["--quiet=yes"],
    ["--output"],
    ["--qiet"],
    ["--config", "."],
    ["-x"],
]


@pytest.fixture()
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "race.yaml").write_text(RACE)
    return tmp_path


def _what_click_gives(monkeypatch, line: list[str]) -> tuple[int, dict | None]:
    seen: dict = {}

    def capture(flags, **values):
        seen.update(values, report_flags=flags)

    monkeypatch.setattr(cli.checking, "check", capture)
    result = CliRunner().invoke(cli.main, ["check", *line])
    return result.exit_code, (seen or None)


@pytest.mark.parametrize("line", PLAIN_LINES, ids=" ".join)
def test_a_plain_line_is_read_as_click_reads_it(project, monkeypatch, line):
    exit_code, by_click = _what_click_gives(monkeypatch, line)
    assert exit_code == 0 and by_click is not None
    plain = read_plain(line)
    assert plain is not None
    assert {**plain, "report_flags": report_flags(line)} == by_click


@pytest.mark.parametrize("line", CLICKS_LINES, ids=" ".join)
def test_every_other_line_is_left_to_click(project, monkeypatch, line):
    assert read_plain(line) is None


def test_an_unreadable_path_is_left_to_click(project, monkeypatch):
    (project / "secret.yaml").write_text(RACE)
    monkeypatch.setattr(os, "access", lambda path, mode: path != "secret.yaml")  # as for a file of another user's
    assert read_plain(["secret.yaml"]) is None
    assert read_plain(["missing.yaml", "race.yaml"]) is not None
    assert read_plain(["--mesh-config", "secret.yaml"]) is None


def _meshlint(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "meshlint", *args], capture_output=True, text=True, check=False, env=env)


def test_a_plain_run_never_loads_click(project):
    code = "import sys\nsys.argv = ['meshlint', 'check', '--no-cache', 'race.yaml']\nfrom meshlint.entry import main\n" \
           "try:\n    main()\nexcept SystemExit:\n    pass\nprint('click' in sys.modules, file=sys.stderr)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.stdout.startswith("race.yaml:6:5: error ML101")
    assert result.stderr.strip().splitlines()[-1] == "False"


def test_a_plain_line_that_cannot_run_gets_clicks_usage_message(project):
    result = _meshlint("check", "race.yaml", "--istio-version", "banana")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "Usage: python -m meshlint check [OPTIONS] [PATHS]...\nTry 'python -m meshlint check --help' for help.\n\n"
        "Error: Invalid value for --istio-version: 'banana' is not a version such as 1.24 or 1.22.3\n"
    )
    result = _meshlint("check", "race.yaml", "--format", "json", "--format", "text")
    assert result.returncode == 2
    assert result.stderr.endswith("Error: only one report can go to stdout (--format json and --format text); give the others an --output\n")


def test_both_readings_give_the_same_run(project):
    plain = _meshlint("check", "--no-cache", "race.yaml", "--format", "json")
    by_click = _meshlint("check", "--no-cache", "race.yaml", "--format", "json", "--")  # `--`: click's to read
    assert plain.returncode == by_click.returncode == 1
    assert plain.stdout == by_click.stdout and '"code": "ML101"' in plain.stdout
    assert plain.stderr == by_click.stderr == ""


def test_a_control_character_on_stderr_shows_as_its_escape(capsys):
    from meshlint.console import echo

    echo("meshlint: w\x1b[2J.yaml: skipped: a Helm template", err=True)
    echo("\x1b[31merror\x1b[0m", nl=False)  # stdout is the report's: it escaped what it had to
    captured = capsys.readouterr()
    assert (captured.err, captured.out) == ("meshlint: w\\x1b[2J.yaml: skipped: a Helm template\n", "\x1b[31merror\x1b[0m")
