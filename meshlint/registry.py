"""Finds rules through the `meshlint.rules` entry-point group: built-in rules and plugins alike."""

import importlib
import os
import re
import sys
from collections.abc import Iterable
from typing import Any, NamedTuple

from meshlint.rule import CODE_PATTERN, FIX_KINDS, NAME_PATTERN, SCOPES, Rule

GROUP = "meshlint.rules"


class RegistryError(Exception):
    """A plugin (or built-in rule) that cannot be registered: exit 2 with this message."""


class Point(NamedTuple):
    """An entry point as installed (`name = module:attr`), loadable like importlib.metadata's."""

    name: str
    value: str

    def load(self) -> Any:
        module, _, attrs = self.value.partition(":")
        obj = importlib.import_module(module.strip())
        for attr in attrs.split("[", 1)[0].strip().split(".") if attrs else ():
            obj = getattr(obj, attr)
        return obj


def installed_points(group: str = GROUP) -> list[Point]:
    """The group's entry points of every distribution on sys.path, read from its entry_points.txt.

    What importlib.metadata.entry_points(group=...) returns, found without importing it: that import
    alone is a costly part of a pre-commit run's start-up. The first distribution of a name wins, as
    with importlib.metadata.
    """
    seen: set[str] = set()
    points: list[Point] = []
    for base in sys.path:
        try:
            # The standard library's folder has hundreds of entries and no distribution: filter, then sort.
            entries = sorted((e for e in os.scandir(base or ".") if e.name.endswith((".dist-info", ".egg-info"))), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            dist = re.sub(r"[-_.]+", "-", re.split(r"-\d", entry.name.rsplit(".", 1)[0], maxsplit=1)[0]).lower()
            if dist in seen:
                continue
            seen.add(dist)
            try:
                with open(os.path.join(entry.path, "entry_points.txt"), encoding="utf-8") as handle:
                    text = handle.read()
            except OSError:
                continue
            points.extend(_section(text, group))
    return points


def _section(text: str, group: str) -> list[Point]:
    points, current = [], None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1].strip()
        elif current == group and "=" in line:
            name, _, value = line.partition("=")
            points.append(Point(name.strip(), value.strip()))
    return points


def load_rules(points: Iterable[Any] | None = None) -> list[Rule]:
    """Every registered rule, sorted by code; duplicate or malformed codes are refused.

    An entry point names one Rule (its name must be the rule's code) or a collection of Rules (the
    built-in set is one such entry point)."""
    if points is None:
        points = installed_points()
    by_code: dict[str, tuple[Rule, str]] = {}
    by_name: dict[str, str] = {}
    for point in sorted(points, key=lambda p: (p.name, p.value)):  # importlib.metadata's or Point
        origin = f"entry point {point.name!r} ({point.value})"
        try:
            obj = point.load()
        except Exception as err:  # a broken plugin must not look like a meshlint crash
            raise RegistryError(f"{origin}: cannot load: {err}") from err
        if isinstance(obj, Rule):
            if point.name != obj.code:
                raise RegistryError(f"{origin}: entry point name {point.name!r} must equal the rule code {obj.code!r}")
            rules: Iterable[Any] = (obj,)
        elif isinstance(obj, (list, tuple)):
            rules = obj
        else:
            raise RegistryError(f"{origin}: is not a meshlint Rule (declare it with meshlint.rule.rule)")
        for rule in rules:
            if not isinstance(rule, Rule):
                raise RegistryError(f"{origin}: {rule!r} is not a meshlint Rule (declare it with meshlint.rule.rule)")
            _validate(rule, origin)
            if rule.code in by_code:
                raise RegistryError(f"{origin}: rule code {rule.code} is already registered by {by_code[rule.code][1]}")
            if rule.name in by_name:
                raise RegistryError(f"{origin}: rule name {rule.name!r} is already used by {by_name[rule.name]}")
            by_code[rule.code] = (rule, origin)
            by_name[rule.name] = rule.code
    return [by_code[code][0] for code in sorted(by_code)]


def _validate(rule: Rule, origin: str) -> None:
    if not CODE_PATTERN.match(rule.code):
        raise RegistryError(f"{origin}: bad rule code {rule.code!r}: expected capital letters then 3 or 4 digits, like ML101")
    if not NAME_PATTERN.match(rule.name):
        raise RegistryError(f"{origin}: bad rule name {rule.name!r}: expected kebab-case")
    unknown = [s for s in rule.scopes if s not in SCOPES]
    if unknown or not rule.scopes:
        raise RegistryError(f"{origin}: unknown scope {', '.join(map(repr, unknown)) or '(none)'}; one of {', '.join(SCOPES)}")
    if not rule.doc.strip():
        raise RegistryError(f"{origin}: rule {rule.code} has no documentation (module docstring)")
    if rule.fix not in FIX_KINDS:
        raise RegistryError(f"{origin}: rule {rule.code} has fix={rule.fix!r}; one of {', '.join(map(repr, FIX_KINDS))}")
