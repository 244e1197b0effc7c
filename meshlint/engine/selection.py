"""From the configuration to the rules of a run: selectors, per-rule severities and options."""

from __future__ import annotations

import json
import re
from typing import Any

from meshlint.config import Config, ConfigError
from meshlint.findings import Severity
from meshlint.rule import Rule
from meshlint.schemas import fits
from meshlint.wording import closest

_PREFIX = re.compile(r"[A-Z]+[0-9]*")


def selects(rule: Rule, selector: str) -> bool:
    """A code, a code prefix (`ML1`), a rule name or `ALL`, in any case."""
    wanted = selector.strip().upper()
    if wanted in ("ALL", rule.code, rule.name.upper()):
        return True
    return _PREFIX.fullmatch(wanted) is not None and rule.code.startswith(wanted)


def unknown_selector(rules: list[Rule], selector: str) -> str | None:
    """Why `selector` selects no rule (with the rule it most likely meant), or None when it selects one."""
    if any(selects(r, selector) for r in rules):
        return None
    meant = meant_rule(rules, selector.strip())
    if meant is not None:
        return f"unknown rule selector {selector!r}; did you mean {meant}?"
    return f"unknown rule selector {selector!r}: not a rule code, code prefix or rule name"


# Letters a code's digits are mistyped as.
_AS_DIGITS = str.maketrans("OIL", "011")


def meant_rule(rules: list[Rule], word: str) -> str | None:
    """The rule a misspelt selector or key most likely meant: a name close to it, or the code it
    spells with a letter O for a zero (`ML1O1`). Other codes are not guessed at: one digit apart
    is another rule (ML101, ML102), not a typo."""
    if "-" in word or not any(c.isdigit() for c in word):
        return closest(word, [r.name for r in rules], fold_case=True)
    word = word.upper()
    letters = len(word) - len(word.lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
    code = word[:letters] + word[letters:].translate(_AS_DIGITS)
    return next((r.code for r in rules if r.code == code), None)


def active_rules(rules: list[Rule], config: Config) -> list[Rule]:
    """(`select`, default all but the opt-in rules, plus `extend-select`) minus (`ignore` plus
    `extend-ignore`). An opt-in rule runs only when a selector names it: its code, name, a prefix
    of its code, or ALL. (The command line's selectors are checked before the run, naming their
    option; an unknown one here is the config's.)"""
    _check_rule_keys(rules, config)
    ignore = config.ignore + config.extend_ignore
    listed = {"select": config.select or (), "extend-select": config.extend_select, "ignore": config.ignore, "extend-ignore": config.extend_ignore}
    for key, selectors in listed.items():
        for selector in selectors:
            problem = unknown_selector(rules, selector)
            if problem is not None:
                raise ConfigError(f"{config.at(key)}: {problem}")
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
        named = rule.code if key in config.rule_options.get(rule.code, {}) else rule.name
        where = config.at(f"rules.{named}.{key}")
        if spec is None:
            meant = closest(key, rule.options)
            known = f"did you mean {meant}?" if meant else f"{rule.code} takes: {', '.join(sorted(rule.options)) or 'none'}"
            raise ConfigError(f"{where}: unknown option; {known}")
        schema = {k: v for k, v in spec.items() if k not in ("default", "description")}
        if not fits(value, schema) and not _valid(value, schema):
            raise ConfigError(f"{where}: {value!r} is not valid; expected {_expected(schema)}")
        options[key] = value
    return options


def severity_for(rule: Rule, config: Config) -> Severity | None:
    return config.severity.get(rule.code) or config.severity.get(rule.name)


def _check_rule_keys(rules: list[Rule], config: Config) -> None:
    known = [*(r.code for r in rules), *(r.name for r in rules)]
    for table, keys in (("rules", config.rule_options), ("severity", config.severity)):
        for key in keys:
            if key not in known:
                meant = meant_rule(rules, key)
                expected = f"did you mean {meant}?" if meant else "expected a rule code or name"
                raise ConfigError(f"{config.at(f'{table}.{key}')}: unknown rule; {expected}")


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
