"""Shared test helpers: lint text or paths in-process and read `# expect:` markers."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from meshlint.config import Config, load_config
from meshlint.engine.run import run
from meshlint.registry import load_rules

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "testdata"
EXPECT = re.compile(r"#\s*expect:\s*([A-Z]+[0-9]+(?::[0-9]+)?(?:\s*,\s*[A-Z]+[0-9]+(?::[0-9]+)?)*)")
CONFIG_COMMENT = re.compile(r"^#\s*config:\s*(\{.*\})\s*$", re.M)

RULES = load_rules()


def config_from(settings: dict | None = None, base: str = ".") -> Config:
    """A Config as the file would give it, from a dict of file settings (validated like a file)."""
    config = Config(base=base)
    if settings:
        from meshlint.config import _build, validate_config

        validate_config(settings, "<test>")
        config = _build(settings, os.path.join(base, ".meshlint.yaml"))
    return config


def lint(paths, settings: dict | None = None, mesh_config=(), base: str = "."):
    return run([str(p) for p in paths], config_from(settings, base), RULES, [str(p) for p in mesh_config])


def lint_text(tmp_path: Path, text: str, settings: dict | None = None, name: str = "manifest.yaml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return lint([path], settings, base=str(tmp_path))


def expectations(path: Path, display: str) -> set[tuple]:
    found = set()
    for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
        match = EXPECT.search(line)
        if not match:
            continue
        for item in match.group(1).split(","):
            code, _, column = item.strip().partition(":")
            found.add((display, number, code, int(column) if column else None))
    return found


def fixture_run(fixture: Path):
    """Lint a fixture (a file, or a directory as one run) and return (expected, actual) sets."""
    if fixture.is_dir():
        files = sorted(p for p in fixture.rglob("*") if p.suffix in (".yaml", ".yml", ".json") and not p.name.startswith("."))
        config_file = fixture / ".meshlint.yaml"
        config = load_config(str(config_file)) if config_file.exists() else Config(base=str(fixture))
        report = run([str(fixture)], config, RULES, [])
    else:
        files = [fixture]
        match = CONFIG_COMMENT.search(fixture.read_text(encoding="utf-8", errors="replace"))
        report = lint([fixture], json.loads(match.group(1)) if match else None, base=str(fixture.parent))
    expected = set()
    for path in files:
        expected |= expectations(path, str(path))
    codes = {fixture.parent.name} | {e[2] for e in expected}
    actual = set()
    for f in report.findings:
        if f.code not in codes:
            continue
        column = next((e[3] for e in expected if e[:3] == (f.path, f.line, f.code) and e[3] is not None), None)
        actual.add((f.path, f.line, f.code, f.column if column is not None else None))
    return expected, actual, report
