"""Every fixture under testdata/<CODE>/ fires exactly where its `# expect:` markers say."""

from __future__ import annotations

import pytest

from helpers import EXPECTED, RULES, TESTDATA, expectations, fixture_run

# testdata/fix/ holds the --fix fixtures (tests/test_fix_fixtures.py), not findings' fixtures.
FIXTURES = sorted(
    p for d in TESTDATA.iterdir() if d.is_dir() and d.name != "fix" for p in d.iterdir() if not p.name.startswith(".") and p.name != EXPECTED
)


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixture_findings_match_markers(fixture):
    expected, actual, _ = fixture_run(fixture)
    assert actual == expected


def _marked(fixture, code) -> bool:
    files = [fixture] if fixture.is_file() else [p for p in fixture.rglob("*") if p.is_file()]
    return any(e[2] == code for f in files for e in expectations(f, str(f)))


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_every_rule_has_fixtures_that_fire_and_stay_silent(rule):
    folder = TESTDATA / rule.code
    assert folder.is_dir(), f"testdata/{rule.code}/ is missing"
    fixtures = [p for p in folder.iterdir() if not p.name.startswith(".") and p.name != EXPECTED]
    assert any(_marked(f, rule.code) for f in fixtures), "no fixture fires"
    assert any(not _marked(f, rule.code) for f in fixtures), "no fixture stays silent"


def test_every_marker_names_the_severity_it_expects():
    """`# expect: ML101:error`: an evidence-raised error and a plain warning are different findings."""
    import re

    from helpers import ROOT

    sources = [p for p in TESTDATA.rglob("*") if p.is_file() and p.name != EXPECTED] + sorted((ROOT / "meshlint" / "rules").glob("ml*.py"))
    bare = []
    for path in sources:
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
            if "expect:" not in line:
                continue
            for item in re.split(r"\s*,\s*", line.split("expect:", 1)[1].strip()):
                if not re.fullmatch(r"[A-Z]+[0-9]+:(error|warning|info)(:[0-9]+)?", item):
                    bare.append(f"{path.relative_to(ROOT)}:{number}: {item}")
    assert bare == []
