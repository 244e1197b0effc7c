"""Rule docstrings are documentation that cannot rot: their examples are linted."""

from __future__ import annotations

import re

import pytest

from helpers import RULES, expectations, fixture_run

BLOCK = re.compile(r"```yaml\n(.*?)```", re.S)
HEADINGS = ("What it does", "Why is this bad?", "Example", "Use instead", "References")


def _block(rule, heading):
    match = BLOCK.search(rule.section(heading))
    assert match, f"{rule.code}: no yaml block under '## {heading}'"
    return match.group(1)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_docstring_has_every_section(rule):
    for heading in HEADINGS:
        assert rule.section(heading), f"{rule.code} has no '## {heading}' section"
    # A rule with a fix says when it is offered and whether it is safe; one without has nothing to say.
    assert bool(rule.section("Fix safety")) == bool(rule.fix), f"{rule.code}: fix={rule.fix!r} and its '## Fix safety' section disagree"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_example_fires_exactly_at_its_markers(rule, tmp_path):
    folder = tmp_path / rule.code
    folder.mkdir()
    path = folder / "example.yaml"
    path.write_text(_block(rule, "Example"), encoding="utf-8")
    expected, actual, _ = fixture_run(path)
    assert expected, f"{rule.code}: the Example has no '# expect: {rule.code}' marker"
    assert {e for e in actual if e[2] == rule.code} == {e for e in expected if e[2] == rule.code}


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_use_instead_lints_clean_against_every_rule(rule, tmp_path):
    """The docs teach fixes that are clean: no rule at all objects to a *Use instead*."""
    folder = tmp_path / rule.code
    folder.mkdir()
    path = folder / "good.yaml"
    path.write_text(_block(rule, "Use instead"), encoding="utf-8")
    assert not expectations(path, str(path))
    _, _, report = fixture_run(path)
    assert [(f.code, f.line, f.message) for f in report.findings] == []


@pytest.mark.parametrize("rule", [r for r in RULES if r.fix], ids=lambda r: r.code)
def test_fixes_make_the_example_clean_for_its_rule(rule, tmp_path, monkeypatch):
    """`--fix --unsafe-fixes` on a rule's *Example* leaves none of its findings (with target versions
    that let every fix apply: native sidecars need Istio 1.24+ and Kubernetes 1.29+)."""
    from click.testing import CliRunner

    from meshlint.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "example.yaml").write_text(_block(rule, "Example"), encoding="utf-8")
    versions = ["--istio-version", "1.24", "--kubernetes-version", "1.30"]
    result = CliRunner().invoke(main, ["check", "example.yaml", "--fix", "--unsafe-fixes", *versions, "--format", "json"])
    import json

    remaining = [f for f in json.loads(result.stdout)["findings"] if f["code"] == rule.code]
    assert remaining == [], result.stderr


def test_committed_rules_page_is_current():
    """docs/rules.md is `meshlint rules --format markdown`; regenerate it when a rule docstring changes."""
    from click.testing import CliRunner

    from helpers import ROOT
    from meshlint.cli import main

    generated = CliRunner().invoke(main, ["rules", "--format", "markdown"]).output
    committed = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert committed == generated, "docs/rules.md is stale: run `meshlint rules --format markdown > docs/rules.md`"


def test_rules_page_has_every_rule_once_with_its_sections():
    from meshlint.ruledocs import markdown

    page = markdown(RULES)
    for rule in RULES:
        assert page.count(f"\n## {rule.code} {rule.name}\n") == 1
        assert f"| [{rule.code}](#{rule.code.lower()}-{rule.name}) |" in page
    assert page.count("\n### Why is this bad?\n") == len(RULES)


def test_explain_is_coloured_only_when_asked():
    from meshlint.ruledocs import explain

    rule = next(r for r in RULES if r.code == "ML301")
    plain, coloured = explain(rule), explain(rule, color=True)
    assert "\033[" not in plain
    assert plain.startswith(
        "ML301 drain-exceeds-grace (default severity: error)\n"
        "Fix: unsafe (it changes behaviour beyond the finding), for some findings: `meshlint check --fix --unsafe-fixes` applies it.\n\n"
    )
    assert "\033[1m\033[36mWhy is this bad?\033[0m" in coloured
    assert "\033[32m          terminationDrainDuration: 45s  # expect: ML301:error\033[0m" in coloured
    assert "\033[" not in coloured.replace("\033[1m", "").replace("\033[36m", "").replace("\033[32m", "").replace("\033[2m", "").replace("\033[0m", "")
