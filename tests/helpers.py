"""Shared test helpers: lint text or paths in-process and read `# expect:` markers."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from meshlint.config import Config, load_config
from meshlint.configset import ConfigSet
from meshlint.engine.run import run
from meshlint.registry import load_rules

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "testdata"
# `# expect: ML101:error` (code and severity), optionally with the column: `# expect: ML404:error:61`;
# several findings on one line are separated by commas.
_MARK = r"[A-Z]+[0-9]+(?::[a-z]+)?(?::[0-9]+)?"
EXPECT = re.compile(rf"#\s*expect:\s*({_MARK}(?:\s*,\s*{_MARK})*)")
CONFIG_COMMENT = re.compile(r"^#\s*config:\s*(\{.*\})\s*$", re.M)

RULES = load_rules()
# Each rule folder's file of whole findings (tests/test_fixture_outputs.py): not a fixture itself.
EXPECTED = "findings.expected"
# Settings for tests about rules, not about who meshes a pod: every workload gets an Istio sidecar
# unless something in it says otherwise (the default, `auto`, needs a sign of Istio in the run).
MESHED = {"mesh": {"default-injection": "enabled"}}
# A Deployment with an Istio sidecar, nothing that holds the app until it is ready and a peer it may
# dial as it starts: one ML100 at 7:5.
RACE = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    metadata:
      labels: {app: web, sidecar.istio.io/inject: "true"}
    spec:
      containers:
        - name: web
          image: web:1
          env: [{name: API_URL, value: "http://api:8080"}]
"""


def config_from(settings: dict | None = None, base: str = ".") -> Config:
    """A Config as the file would give it, from a dict of file settings (validated like a file)."""
    config = Config(base=base)
    if settings:
        from meshlint.config import _build, validate_config

        validate_config(settings, "<test>")
        config = _build(settings, os.path.join(base, ".meshlint.yaml"))
    return config


def lint(paths, settings: dict | None = None, mesh_config=(), base: str = ".", beyond: bool = True):
    return run([str(p) for p in paths], config_from(settings, base), RULES, [str(p) for p in mesh_config], beyond=beyond)


def lint_text(tmp_path: Path, text: str, settings: dict | None = None, name: str = "manifest.yaml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return lint([path], settings, base=str(tmp_path))


def expectations(path: Path, display: str) -> set[tuple[str, int, str, str | None, int | None]]:
    """(path, line, code, severity, column) of every marker; severity or column None when not written."""
    found = set()
    for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
        match = EXPECT.search(line)
        if not match:
            continue
        for item in match.group(1).split(","):
            code, severity, column = _parts(item.strip())
            found.add((display, number, code, severity, column))
    return found


def _parts(item: str) -> tuple[str, str | None, int | None]:
    code, *rest = item.split(":")
    severity = next((r for r in rest if not r.isdigit()), None)
    column = next((int(r) for r in rest if r.isdigit()), None)
    return code, severity, column


def fixture_run(fixture: Path):
    """Lint a fixture (a file, or a directory as one run) and return (expected, actual) sets."""
    if fixture.is_dir():
        files = sorted(p for p in fixture.rglob("*") if p.suffix in (".yaml", ".yml", ".json") and not p.name.startswith("."))
        config_file = fixture / ".meshlint.yaml"
        config = load_config(str(config_file)) if config_file.exists() else Config(base=str(fixture))
        report = run([str(fixture)], ConfigSet(config), RULES, [])  # nested configs in it count
    else:
        files = [fixture]
        match = CONFIG_COMMENT.search(fixture.read_text(encoding="utf-8", errors="replace"))
        # A fixture file is a world of its own: the files beside it are other fixtures.
        report = lint([fixture], json.loads(match.group(1)) if match else None, base=str(fixture.parent), beyond=False)
    expected = set()
    for path in files:
        expected |= expectations(path, str(path))
    codes = {fixture.parent.name} | {e[2] for e in expected}
    actual = set()
    for f in report.findings:
        if f.code not in codes:
            continue
        marker = next((e for e in expected if e[:3] == (f.path, f.line, f.code)), None)
        severity = str(f.severity) if marker is None or marker[3] is not None else None
        column = f.column if marker is not None and marker[4] is not None else None
        actual.add((f.path, f.line, f.code, severity, column))
    return expected, actual, report


def git(repo: Path, *args: str) -> str:
    """Run git in `repo` as a test repository's owner, without the user's or the system's config."""
    import subprocess

    env = dict(os.environ, GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="t",
               GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True)
    return done.stdout
