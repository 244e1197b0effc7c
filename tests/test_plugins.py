"""Rules are found through the `meshlint.rules` entry points, built-in and third-party alike."""

from __future__ import annotations

import sys
from importlib.metadata import EntryPoint, entry_points

import pytest

from meshlint.config import Config
from meshlint.engine import run as engine
from meshlint.registry import GROUP, RegistryError, load_rules

PLUGIN = '''"""Every ConfigMap named forbidden is reported.

## What it does
Reports ConfigMaps named forbidden.
"""
from meshlint.findings import Issue, Severity
from meshlint.rule import rule


@rule(code="ACME101", name="forbidden-configmap", severity=Severity.ERROR, scope="resource", kinds=["ConfigMap"])
def check(resource, ctx):
    yield Issue(resource.metadata.get("name").pos, "this ConfigMap is forbidden", "rename it")


RULE = check
DUPLICATE = RULE.__class__(**{**RULE.__dict__, "name": "other-name"})
BAD = RULE.__class__(**{**RULE.__dict__, "code": "acme-1", "name": "bad-code"})
NOT_RULES = (RULE, "a string")
'''


@pytest.fixture
def plugin_module(tmp_path, monkeypatch):
    (tmp_path / "acme_meshlint.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    sys.modules.pop("acme_meshlint", None)


def builtin_points():
    return list(entry_points(group=GROUP))


def test_builtin_rules_come_from_one_entry_point_naming_every_rule_module():
    """A built-in rule is its module (and its fixtures): no list of rules to keep in step."""
    from helpers import ROOT

    assert [(p.name, p.value) for p in builtin_points()] == [("builtin", "meshlint.rules:BUILTIN")]
    modules = sorted(p.name for p in (ROOT / "meshlint" / "rules").glob("ml[0-9]*.py"))
    assert [r.code for r in load_rules()] == [name.split("_")[0].upper() for name in modules]


def test_an_entry_point_holding_something_other_than_rules_is_a_clear_error(plugin_module):
    with pytest.raises(RegistryError, match=r"'ACME-SET'.*is not a meshlint Rule"):
        load_rules([EntryPoint("ACME-SET", "acme_meshlint:NOT_RULES", GROUP)])


def test_a_plugin_registers_and_runs_like_a_builtin(plugin_module, tmp_path):
    points = [*builtin_points(), EntryPoint("ACME101", "acme_meshlint:RULE", GROUP)]
    rules = load_rules(points)
    assert "ACME101" in [r.code for r in rules]
    manifest = tmp_path / "cm.yaml"
    manifest.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: forbidden\n")
    report = engine.run([str(manifest)], Config(base=str(tmp_path)), rules)
    assert [(f.code, f.line, f.column, f.message) for f in report.findings] == [("ACME101", 4, 9, "this ConfigMap is forbidden")]


def test_duplicate_code_is_a_clear_error(plugin_module):
    points = [*builtin_points(), EntryPoint("ACME101", "acme_meshlint:RULE", GROUP), EntryPoint("ACME101", "acme_meshlint:DUPLICATE", GROUP)]
    with pytest.raises(RegistryError, match="rule code ACME101 is already registered by entry point 'ACME101'"):
        load_rules(points)


def test_bad_code_is_a_clear_error(plugin_module):
    with pytest.raises(RegistryError, match="bad rule code 'acme-1'"):
        load_rules([EntryPoint("acme-1", "acme_meshlint:BAD", GROUP)])


def test_entry_point_name_must_match_code(plugin_module):
    with pytest.raises(RegistryError, match="entry point name 'ACME999' must equal the rule code 'ACME101'"):
        load_rules([EntryPoint("ACME999", "acme_meshlint:RULE", GROUP)])


def test_broken_plugin_is_a_clear_error():
    with pytest.raises(RegistryError, match="cannot load"):
        load_rules([EntryPoint("ACME102", "no_such_module_xyz:RULE", GROUP)])


def test_installed_points_match_importlib_metadata():
    from meshlint.registry import installed_points

    assert sorted((p.name, p.value) for p in installed_points()) == sorted((p.name, p.value) for p in builtin_points())


def test_a_plugin_distribution_on_sys_path_is_discovered(plugin_module, tmp_path):
    dist = tmp_path / "acme_meshlint-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-meshlint\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[console_scripts]\nacme = acme_meshlint:main\n\n[meshlint.rules]\nACME101 = acme_meshlint:RULE\n")
    assert ("ACME101", "acme_meshlint:RULE") in [(p.name, p.value) for p in entry_points(group=GROUP)]
    rules = load_rules()
    assert [r.code for r in rules if r.code.startswith("ACME")] == ["ACME101"]


def test_rule_options_are_validated_against_their_declared_schema():
    from meshlint.config import ConfigError
    from meshlint.engine.selection import rule_options
    from meshlint.findings import Severity
    from meshlint.rule import rule

    @rule(
        code="ACME201",
        name="many-things",
        severity=Severity.INFO,
        scope="resource",
        options={
            "threshold": {"type": "integer", "minimum": 1, "default": 100, "description": "how many"},
            "mode": {"enum": ["strict", "loose"], "default": "loose"},
        },
    )
    def check(resource, ctx):
        return iter(())

    def options(**given):
        return rule_options(check, Config(path=".meshlint.yaml", rule_options={"ACME201": given}))

    assert options() == {"threshold": 100, "mode": "loose"}
    assert options(threshold=5, mode="strict") == {"threshold": 5, "mode": "strict"}
    with pytest.raises(ConfigError, match=r"^\.meshlint\.yaml: rules\.ACME201\.threshold: 'many' is not valid; expected a whole number at least 1$"):
        options(threshold="many")
    with pytest.raises(ConfigError, match=r"rules\.ACME201\.threshold: 0 is not valid; expected a whole number at least 1$"):
        options(threshold=0)
    with pytest.raises(ConfigError, match=r"rules\.ACME201\.mode: 'fast' is not valid; expected one of \"strict\", \"loose\"$"):
        options(mode="fast")
