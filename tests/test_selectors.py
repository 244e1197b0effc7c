"""Selectors in any case, ALL, extend-select/extend-ignore; unknown and unused suppressions."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from helpers import RULES, config_from
from meshlint.cli import main
from meshlint.engine.selection import active_rules

RACE = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    metadata:
      labels: {app: web, sidecar.istio.io/inject: "true"}
    spec:
      terminationGracePeriodSeconds: 4
      containers:
        - name: web
          image: web:1
          lifecycle: {preStop: {sleep: {seconds: 10}}}
          env: [{name: API_URL, value: "http://api:8080"}]
"""


def codes(settings):
    return [r.code for r in active_rules(RULES, config_from(settings))]


def family(*prefixes: str, but: tuple[str, ...] = ()) -> list[str]:
    """The registered codes under these prefixes, in the registry's order: the lists below follow the
    rule set when a rule is added, and name by hand only what a selector leaves out."""
    return [r.code for r in RULES if r.code.startswith(prefixes) and r.code not in but]


@pytest.mark.parametrize(
    "settings, expected",
    [
        ({"select": ["ml10"]}, family("ML10")),
        (
            {"select": "ML1", "ignore": ["Startup-Race", "ml102,ML103", "ML106", "tcp-probe-always-passes"]},
            family("ML1", but=("ML101", "ML102", "ML103", "ML106", "ML107")),
        ),
        ({"select": ["all"], "ignore": ["ML0", "ML1", "ML2", "ml3", "ML5", "ML6"]}, family("ML4")),
        ({"select": ["ML00"], "extend-select": ["ml101", "job-never-completes"]}, [*family("ML00"), "ML101", "ML201"]),
        ({"ignore": ["ML1", "ML2", "ML3", "ML4", "ML5", "ML6"], "extend-ignore": ["ML00"]}, []),
        ({"ignore": ["ML1", "ML2", "ML3", "ML4", "ML5", "ML6", "ML0"], "extend-select": ["ML101"]}, []),  # ignore wins
    ],
)
def test_selectors_in_config(settings, expected):
    assert codes(settings) == expected


@pytest.mark.parametrize(
    "settings, on",
    [
        ({}, False),  # the default: every rule but the opt-in ones
        ({"ignore": ["ML1"]}, False),
        ({"select": ["ML6"]}, True),
        ({"select": ["ml601"]}, True),
        ({"select": ["Unscoped-Sidecar-Config"]}, True),
        ({"select": ["ALL"]}, True),
        ({"select": ["ML"]}, True),  # a prefix names it too
        ({"extend-select": ["ML601"]}, True),
        ({"select": ["ALL"], "ignore": ["ML601"]}, False),
        ({"select": ["ML60"], "extend-ignore": ["unscoped-sidecar-config"]}, False),
    ],
)
def test_opt_in_rule_runs_only_when_a_selector_names_it(settings, on):
    active = codes(settings)
    assert ("ML601" in active) is on
    if not settings:
        assert active == [r.code for r in RULES if r.code not in ("ML108", "ML601")]


def test_rules_listing_says_which_rules_are_off_by_default():
    lines = [line for line in invoke("rules").stdout.splitlines() if "off by default" in line]
    assert [line.split()[0] for line in lines] == ["ML108", "ML601"]
    assert all(line.endswith("(off by default: select it to run it)") for line in lines)


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "web.yaml").write_text(RACE)
    return tmp_path


def invoke(*args):
    return CliRunner().invoke(main, list(args))


def found(result):
    return sorted({line.split()[2] for line in result.stdout.splitlines() if line.startswith("web.yaml:")})


def test_selectors_on_the_command_line(project):
    (project / ".meshlint.yaml").write_text("select: [ML1]\nignore: [ML100]\nextend-ignore: [ML102]\n")
    assert found(invoke("check", "web.yaml", "--format", "concise")) == []
    assert found(invoke("check", "web.yaml", "--format", "concise", "--ignore", "ML102")) == ["ML100"]  # --ignore replaces
    assert found(invoke("check", "web.yaml", "--format", "concise", "--extend-select", "ml3")) == ["ML301", "ML302", "ML303"]
    assert found(invoke("check", "web.yaml", "--format", "concise", "--select", "ALL", "--extend-ignore", "ML3")) == []
    result = invoke("check", "web.yaml", "--extend-select", "ML9")
    assert (result.exit_code, result.stderr) == (2, "meshlint: error: --extend-select: unknown rule selector 'ML9': not a rule code, code prefix or rule name\n")


def test_suppressions_in_any_case_and_unknown_entries_are_noted(project):
    text = RACE.replace("    metadata:\n      labels", "    # meshlint: disable=startup-RACE-mesh-wide,ML9O1 -- typo in the code\n    metadata:\n      labels")
    text = text.replace("  name: web\n", "  name: web\n  annotations: {meshlint.io/ignore: 'ml303, prestop-too-long'}\n")
    (project / "web.yaml").write_text(text)
    result = invoke("check", "web.yaml", "--select", "ML100,ML303")
    assert result.exit_code == 0
    assert result.stdout.endswith(" 2 suppressed, 0 skipped, 0 assumed meshed\n")
    assert result.stderr == (
        "meshlint: web.yaml:8: unknown rule 'ML9O1' in comment; `meshlint rules` lists codes and names\n"
        "meshlint: web.yaml:5: unknown rule 'prestop-too-long' in meshlint.io/ignore annotation; `meshlint rules` lists codes and names\n"
    )
    assert invoke("check", "web.yaml", "-q", "--select", "ML100,ML303").stderr == ""


def test_report_unused_suppressions(project):
    text = RACE.replace("    metadata:\n      labels", "    # meshlint: disable=ML100,ML102,ML401 -- all three?\n    metadata:\n      labels")
    text = text.replace("      terminationGracePeriodSeconds: 4\n", "      # meshlint: disable=ML303\n      terminationGracePeriodSeconds: 4\n")
    (project / "web.yaml").write_text(text)
    assert invoke("check", "web.yaml", "--ignore", "ML303").stderr == ""  # only when asked
    result = invoke("check", "web.yaml", "--report-unused-suppressions", "--ignore", "ML102")
    assert result.stderr == (
        "meshlint: web.yaml:7: unused suppression: 'ML401' in comment silenced no finding\n"
        "meshlint: web.yaml:11: unused suppression: 'ML303' in comment silenced no finding\n"  # ML303 points at the preStop sleep
    )
