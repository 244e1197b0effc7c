"""A finding's node path and fingerprint are made only where something reads them: the JSON, SARIF
and GitLab reports, the baseline, --fix, and the result cache (engine/plan.py `Plan.marks`)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from helpers import ROOT
from meshlint import checking, fingerprint
from meshlint.cli import main
from meshlint.report import FORMATS, READS_MARKS

EXAMPLES = str(ROOT / "examples")


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["check", EXAMPLES, "--no-cache", "--no-color", *args])
    return result.exit_code, result.stdout


@pytest.mark.parametrize("fmt", FORMATS)
def test_each_format_prints_the_same_whether_or_not_the_run_made_marks(fmt, monkeypatch):
    asked = run("--format", fmt)
    monkeypatch.setattr(checking, "_reads_marks", lambda *_: True)
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
    assert set(READS_MARKS) == {"json", "sarif", "gitlab"}


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
