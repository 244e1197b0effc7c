"""A container's environment as Kubernetes builds it from its `env` entries.

Values are known where the manifest says them: a literal `value`, with Kubernetes' `$(VAR)` expansion
of variables defined before it. A `valueFrom` variable has a name but no value here.
"""

from __future__ import annotations

from typing import NamedTuple

from meshlint.findings import Position
from meshlint.mesh.facts.shell import kubernetes_expand
from meshlint.model.pod import Container


class EnvVar(NamedTuple):
    name: str
    value: str | None  # None when the manifest does not say it (a Secret, a fieldRef, a ConfigMap not in the inputs)
    position: Position  # the value, or the name when there is no value to point at
    source: str | None = None  # `ConfigMap app-config`, `Secret db`: where an envFrom variable comes from
    elsewhere: bool = False  # `position` is in another file than the container


class Environment:
    """The variables a container starts with, in the order Kubernetes sets them."""

    def __init__(self, container: Container) -> None:
        self.variables: list[EnvVar] = []
        known: dict[str, str] = {}
        for item in container.node.get("env").elements():
            name = item.get("name").text or ""
            value = item.get("value")
            if not name:
                continue
            if value.exists and value.text is not None:
                text, _ = kubernetes_expand(value.text, known.get)
                self.variables.append(EnvVar(name, text, value.pos))
                known[name] = text
                continue
            self.variables.append(EnvVar(name, None, item.get("name").pos))
            known.pop(name, None)
        self._values = known

    def value(self, name: str) -> str | None:
        """The variable's value when the manifest says it."""
        return self._values.get(name)

    def names(self) -> set[str]:
        return {v.name for v in self.variables}

