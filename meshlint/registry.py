"""Finds rules through the `meshlint.rules` entry-point group: built-in rules and plugins alike."""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points
from typing import Iterable

from meshlint.rule import CODE_PATTERN, NAME_PATTERN, SCOPES, Rule

GROUP = "meshlint.rules"


class RegistryError(Exception):
    """A plugin (or built-in rule) that cannot be registered: exit 2 with this message."""


def load_rules(points: Iterable[EntryPoint] | None = None) -> list[Rule]:
    """Every registered rule, sorted by code; duplicate or malformed codes are refused."""
    if points is None:
        points = entry_points(group=GROUP)
    by_code: dict[str, tuple[Rule, str]] = {}
    by_name: dict[str, str] = {}
    for point in sorted(points, key=lambda p: (p.name, p.value)):
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
