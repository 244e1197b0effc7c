"""What a rule is: a pure check function plus metadata. Its module docstring is its documentation."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, NamedTuple

from meshlint.findings import Issue, Severity

CODE_PATTERN = re.compile(r"^[A-Z]{1,8}[0-9]{3,4}$")
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
SCOPES = ("file", "resource", "workload")


class RuleContext(NamedTuple):
    """What a check may read besides its subject: the mesh context and its own options (read-only)."""

    mesh: Any
    options: dict[str, Any]


@dataclass(frozen=True, eq=False, repr=False)
class Rule:
    code: str
    name: str
    severity: Severity
    scope: str
    check: Callable[[Any, RuleContext], Iterable[Issue]]
    doc: str
    kinds: frozenset[str] | None = None
    options: dict[str, dict] = field(default_factory=dict)  # JSON Schema per option, with "default"

    @property
    def summary(self) -> str:
        return self.doc.strip().splitlines()[0].strip() if self.doc.strip() else self.name

    def section(self, heading: str) -> str:
        """The text under `## heading` in the documentation."""
        match = re.search(rf"^## {re.escape(heading)}\s*$(.*?)(?=^## |\Z)", self.doc, re.M | re.S)
        return match.group(1).strip() if match else ""

    def default_options(self) -> dict[str, Any]:
        return {key: spec.get("default") for key, spec in self.options.items()}


def rule(
    *,
    code: str,
    name: str,
    severity: Severity,
    scope: str,
    kinds: Iterable[str] | None = None,
    options: dict[str, dict] | None = None,
) -> Callable[[Callable], Rule]:
    """Declare a check function as a rule; the documentation is the docstring of its module."""

    def wrap(check: Callable) -> Rule:
        module = sys.modules.get(check.__module__)
        doc = (module.__doc__ if module is not None else None) or check.__doc__ or ""
        return Rule(
            code=code,
            name=name,
            severity=severity,
            scope=scope,
            check=check,
            doc=doc,
            kinds=frozenset(kinds) if kinds is not None else None,
            options=dict(options or {}),
        )

    return wrap
