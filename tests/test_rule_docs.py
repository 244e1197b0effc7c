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
def test_use_instead_is_silent(rule, tmp_path):
    folder = tmp_path / rule.code
    folder.mkdir()
    path = folder / "good.yaml"
    path.write_text(_block(rule, "Use instead"), encoding="utf-8")
    assert not expectations(path, str(path))
    _, _, report = fixture_run(path)
    assert [f for f in report.findings if f.code == rule.code] == []
