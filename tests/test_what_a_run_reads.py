"""A finding's node path, fingerprint and fix are made only where something reads them (engine/plan.py
`Reads`): node paths and fingerprints for the JSON, SARIF and GitLab reports, the baseline, --fix and
the result cache; fixes for the reports that show or count them, --fix and the result cache."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from helpers import ROOT
from meshlint import checking, fingerprint
from meshlint.cli import main
from meshlint.engine.plan import Reads
from meshlint.report import FORMATS, READS_FIXES, READS_MARKS

EXAMPLES = str(ROOT / "examples")


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["check", EXAMPLES, "--no-cache", "--no-color", *args])
    return result.exit_code, result.stdout


@pytest.mark.parametrize("fmt", FORMATS)
def test_each_format_prints_the_same_whether_or_not_the_run_made_marks(fmt, monkeypatch):
    asked = run("--format", fmt)
    monkeypatch.setattr(checking, "_reads", lambda *_: Reads())
    assert run("--format", fmt) == asked and asked[0] == 1


def test_a_text_run_makes_no_fingerprint_and_a_json_run_does(monkeypatch):
    made: list[str] = []
    real = fingerprint.fingerprint

    def counted(*key):
        made.append(key[2])
        return real(*key)

    monkeypatch.setattr(fingerprint, "fingerprint", counted)
    assert run()[0] == 1 and made == []
    assert run("--format", "concise", "--output", "/dev/null", "--format", "gitlab")[0] == 1 and made
    assert {"json", "sarif", "gitlab"} == READS_MARKS


def test_a_baseline_or_a_cached_run_makes_marks_with_any_format(tmp_path, monkeypatch):
    made: list[str] = []
    real = fingerprint.fingerprint
    monkeypatch.setattr(fingerprint, "fingerprint", lambda *key: made.append(key[2]) or real(*key))
    CliRunner().invoke(main, ["check", EXAMPLES, "--no-cache", "--write-baseline", str(tmp_path / "baseline.json")])
    assert made
    made.clear()
    from meshlint.engine import cache

    monkeypatch.setattr(cache, "CACHE_FROM", 0)
    CliRunner().invoke(main, ["check", EXAMPLES, "--cache-dir", str(tmp_path / "cache")])
    assert made


def test_fixes_are_made_only_for_reports_that_show_or_count_them(tmp_path):
    import subprocess
    import sys

    show = (
        "import sys; from meshlint.cli import main\n"
        f"try: main(['check', {EXAMPLES!r}, '--no-cache', *sys.argv[1:]])\n"
        "except SystemExit: pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('meshlint.fix')))"
    )
    loaded = {}
    for fmt in ("github", "junit", "gitlab", "text", "json"):
        out = subprocess.run([sys.executable, "-c", show, "--format", fmt], cwd=tmp_path, capture_output=True, text=True, check=True).stdout
        loaded[fmt] = out.splitlines()[-1]
    assert loaded["github"] == loaded["junit"] == loaded["gitlab"] == "[]"
    assert "meshlint.fix.mapping" in loaded["text"] and "meshlint.fix.mapping" in loaded["json"]
    assert {"text", "concise", "json", "sarif"} == READS_FIXES
