"""From the configuration to the rules of a run: selectors, per-rule severities and options."""

from __future__ import annotations

import json
import re
from typing import Any

from meshlint.config import Config, ConfigError
from meshlint.findings import Severity
from meshlint.rule import Rule
from meshlint.schemas import fits

_PREFIX = re.compile(r"[A-Z]+[0-9]*")


def selects(rule: Rule, selector: str) -> bool:
    """A code, a code prefix (`ML1`), a rule name or `ALL`, in any case."""
    wanted = selector.strip().upper()
    if wanted in ("ALL", rule.code, rule.name.upper()):
        return True
    return _PREFIX.fullmatch(wanted) is not None and rule.code.startswith(wanted)


def active_rules(rules: list[Rule], config: Config) -> list[Rule]:
    """(`select`, default all but the opt-in rules, plus `extend-select`) minus (`ignore` plus
    `extend-ignore`). An opt-in rule runs only when a selector names it: its code, name, a prefix
    of its code, or ALL."""
    _check_rule_keys(rules, config)
    ignore = config.ignore + config.extend_ignore
    for selector in (config.select or ()) + config.extend_select + ignore:
        if not any(selects(r, selector) for r in rules):
            raise ConfigError(f"unknown rule selector {selector!r}: not a rule code, code prefix or rule name")
    chosen = []
    for rule in rules:
        by_default = config.select is None and rule.default_enabled
        selected = by_default or any(selects(rule, s) for s in (config.select or ()) + config.extend_select)
        if selected and not any(selects(rule, s) for s in ignore):
            chosen.append(rule)
    return chosen


def rule_options(rule: Rule, config: Config) -> dict[str, Any]:
    """The rule's options: its defaults, then the config's, each validated against its schema."""
    options = rule.default_options()
    given = dict(config.rule_options.get(rule.code, {}))
    given.update(config.rule_options.get(rule.name, {}))
    for key, value in given.items():
        spec = rule.options.get(key)
        where = f"{config.path or 'config'}: rules.{rule.code}.{key}"
        if spec is None:
            known = ", ".join(sorted(rule.options)) or "none"
            raise ConfigError(f"{where}: unknown option; {rule.code} takes: {known}")
        schema = {k: v for k, v in spec.items() if k not in ("default", "description")}
        if not fits(value, schema) and not _valid(value, schema):
            raise ConfigError(f"{where}: {value!r} is not valid; expected {_expected(schema)}")
        options[key] = value
    return options


def severity_for(rule: Rule, config: Config) -> Severity | None:
    return config.severity.get(rule.code) or config.severity.get(rule.name)


def _check_rule_keys(rules: list[Rule], config: Config) -> None:
    known = {r.code for r in rules} | {r.name for r in rules}
    for key in list(config.rule_options) + list(config.severity):
        if key not in known:
            raise ConfigError(f"{config.path or 'config'}: {key}: unknown rule; expected a rule code or name")


def _valid(value: Any, schema: dict[str, Any]) -> bool:
    """jsonschema's verdict, for the values the quick check does not accept."""
    import jsonschema

    return bool(jsonschema.validators.validator_for(schema)(schema).is_valid(value))


def _expected(schema: dict[str, Any]) -> str:
    if schema.get("type") == "boolean":
        return "true or false"
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(v) for v in schema["enum"])
    if schema.get("type") == "integer":
        bounds = [f"at least {schema['minimum']}" if "minimum" in schema else "", f"at most {schema['maximum']}" if "maximum" in schema else ""]
        return "a whole number" + (" " + " and ".join(b for b in bounds if b) if any(bounds) else "")
    return f"a value matching {json.dumps(schema)}"
