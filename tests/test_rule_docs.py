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


def _fenced_and_prose(text):
    """The fenced lines, and the other lines, of a markdown text."""
    fenced, prose, inside = [], [], False
    for line in text.splitlines():
        if line.startswith("```"):
            inside = not inside
            fenced.append(line)
        else:
            (fenced if inside else prose).append(line)
    return fenced, prose


@pytest.mark.parametrize("width", [40, 72, 100])
def test_explain_wraps_prose_at_the_width_and_keeps_examples_and_every_word(width):
    from meshlint.ruledocs import explain

    for rule in RULES:
        written, wrapped = explain(rule), explain(rule, width=width)
        (fenced_before, prose_before), (fenced_after, prose_after) = _fenced_and_prose(written), _fenced_and_prose(wrapped)
        assert fenced_after == fenced_before, rule.code  # examples line for line
        assert " ".join(prose_after).split() == " ".join(prose_before).split(), rule.code  # every word, in order
        head = prose_after[0]  # the title line stays one line
        for line in prose_after[1:]:
            # Longer only where nothing can break: one word, or a code span kept whole.
            words = re.sub(r"`[^`]*`", "x", re.sub(r"^\s*([-*+]|[0-9]+[.)])\s+", "", line)).split()
            unbreakable = len(words) == 1
            assert len(line) <= width or unbreakable, f"{rule.code}: {line!r}"
        assert head == written.splitlines()[0]


def test_reflow_keeps_code_blocks_tables_headings_and_code_spans_whole():
    from meshlint.reflow import reflow

    text = (
        "A paragraph of prose written at some width, with `a code span` in it,\nthen a second line.\n"
        "\n"
        "- a list item that is long enough to wrap\n  with its continuation\n- https://example.com/a/very/long/address/that/cannot/break\n"
        "\n"
        "| a | b that is a long cell |\n|---|---|\n"
        "## A heading longer than the width at all\n"
        "```yaml\nkey: a value longer than the width, never wrapped\n```\n"
    )
    assert reflow(text, 28) == (
        "A paragraph of prose written\nat some width, with\n`a code span` in it, then a\nsecond line.\n"
        "\n"
        "- a list item that is long\n  enough to wrap with its\n  continuation\n- https://example.com/a/very/long/address/that/cannot/break\n"
        "\n"
        "| a | b that is a long cell |\n|---|---|\n"
        "## A heading longer than the width at all\n"
        "```yaml\nkey: a value longer than the width, never wrapped\n```\n"
    )


def test_explain_wraps_to_columns_and_to_80_when_the_output_is_no_terminal(monkeypatch):
    import os
    import subprocess
    import sys

    from click.testing import CliRunner

    from meshlint.cli import main
    from meshlint.ruledocs import explain

    rule = next(r for r in RULES if r.code == "ML301")
    monkeypatch.setenv("COLUMNS", "60")
    assert CliRunner().invoke(main, ["explain", "ML301", "--no-color"]).output == explain(rule, width=60)
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "NO_COLOR", "FORCE_COLOR")}
    piped = subprocess.run([sys.executable, "-m", "meshlint", "explain", "ML301"], capture_output=True, text=True, env=env, check=True)
    assert piped.stdout == explain(rule, width=80)


def test_the_readmes_family_table_spans_every_rule_once():
    """The README's table of families names each family's first and last code: every registered rule
    falls in exactly one row, and each row starts and ends at a registered rule (a rule added past a
    family's end, or a row left behind by a removed rule, fails here)."""
    from helpers import ROOT

    codes = [r.code for r in RULES]
    rows = re.findall(r"^\| [^|]+ \| (ML\d{3})-(ML\d{3}) \|", (ROOT / "README.md").read_text(encoding="utf-8"), re.M)
    assert rows, "the README has no family table"
    assert all(first in codes and last in codes for first, last in rows), rows
    held = {code: [f"{first}-{last}" for first, last in rows if first <= code <= last] for code in codes}
    assert {code: spans for code, spans in held.items() if len(spans) != 1} == {}
