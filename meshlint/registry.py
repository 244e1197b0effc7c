"""Finds rules through the `meshlint.rules` entry-point group: built-in rules and plugins alike."""

from __future__ import annotations

import importlib
import os
import re
import sys
from typing import Any, Iterable, NamedTuple

from meshlint.rule import CODE_PATTERN, NAME_PATTERN, SCOPES, Rule

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
    alone costs a pre-commit run a fifth of its start-up. The first distribution of a name wins, as
    with importlib.metadata.
    """
    seen: set[str] = set()
    points: list[Point] = []
    for base in sys.path:
        try:
            entries = sorted(os.scandir(base or "."), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if not entry.name.endswith((".dist-info", ".egg-info")):
                continue
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
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1].strip()
        elif current == group and "=" in line:
            name, _, value = line.partition("=")
            points.append(Point(name.strip(), value.strip()))
    return points


def load_rules(points: Iterable[Any] | None = None) -> list[Rule]:
    """Every registered rule, sorted by code; duplicate or malformed codes are refused."""
    if points is None:
        points = installed_points()
    by_code: dict[str, tuple[Rule, str]] = {}
    by_name: dict[str, str] = {}
    for point in sorted(points, key=lambda p: (p.name, p.value)):  # importlib.metadata's or Point
        origin = f"entry point {point.name!r} ({point.value})"
        try:
            obj = point.load()
        except Exception as err:  # noqa: BLE001 - a broken plugin must not look like a meshlint crash
            raise RegistryError(f"{origin}: cannot load: {err}") from err
        if not isinstance(obj, Rule):
            raise RegistryError(f"{origin}: is not a meshlint Rule (declare it with meshlint.rule.rule)")
        _validate(obj, point.name, origin)
        if obj.code in by_code:
            raise RegistryError(f"{origin}: rule code {obj.code} is already registered by {by_code[obj.code][1]}")
        if obj.name in by_name:
            raise RegistryError(f"{origin}: rule name {obj.name!r} is already used by {by_name[obj.name]}")
        by_code[obj.code] = (obj, origin)
        by_name[obj.name] = obj.code
    return [by_code[code][0] for code in sorted(by_code)]


def _validate(rule: Rule, entry_name: str, origin: str) -> None:
    if not CODE_PATTERN.match(rule.code):
        raise RegistryError(f"{origin}: bad rule code {rule.code!r}: expected capital letters then 3 or 4 digits, like ML101")
    if entry_name != rule.code:
        raise RegistryError(f"{origin}: entry point name {entry_name!r} must equal the rule code {rule.code!r}")
    if not NAME_PATTERN.match(rule.name):
        raise RegistryError(f"{origin}: bad rule name {rule.name!r}: expected kebab-case")
    if rule.scope not in SCOPES:
        raise RegistryError(f"{origin}: unknown scope {rule.scope!r}; one of {', '.join(SCOPES)}")
    if not rule.doc.strip():
        raise RegistryError(f"{origin}: rule {rule.code} has no documentation (module docstring)")
