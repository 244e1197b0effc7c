"""A container's environment as Kubernetes builds it: `env` entries, then what `envFrom` brings from
ConfigMaps and Secrets in the inputs (`env` wins over `envFrom`; a later `envFrom` over an earlier).

Values are known where the manifest says them: a literal `value` (with Kubernetes' `$(VAR)` expansion
of variables defined before it), a `configMapKeyRef` or `envFrom` ConfigMap value that looks like a
network address. Secrets contribute names only; their values are never read.
"""

from typing import NamedTuple

from meshlint.findings import Position
from meshlint.mesh.envsources import EnvSource, EnvSources
from meshlint.mesh.facts.shellwords import kubernetes_expand
from meshlint.model.pod import Container
from meshlint.source.document import Node


class EnvVar(NamedTuple):
    name: str
    value: str | None  # None when the manifest does not say it (a Secret, a fieldRef, a ConfigMap not in the inputs)
    position: Position  # the value, or the name when there is no value to point at
    source: str | None = None  # `ConfigMap app-config`, `Secret db`: where an envFrom variable comes from
    elsewhere: bool = False  # `position` is in another file than the container
    cut: str | None = None  # why its `$(VAR)` expansion stopped short (see `kubernetes_expand`)


class Environment:
    """The variables a container starts with, in the order Kubernetes sets them."""

    def __init__(self, container: Container, sources: EnvSources | None = None, namespace: str = "", path: str = "") -> None:
        self.variables: list[EnvVar] = []
        known: dict[str, str] = {}
        depths: dict[str, int] = {}  # how many variables deep each known value's references go
        from_sources: list[EnvVar] = []
        for item in container.node.get("envFrom").elements():
            for kind, field in (("ConfigMap", "configMapRef"), ("Secret", "secretRef")):
                reference = item.get(field)
                name = reference.get("name").text
                source = sources.find(kind, name, namespace, path) if sources is not None and name else None
                if source is not None:
                    from_sources.extend(_from(source, item.get("prefix").text or "", path))
        for variable in from_sources:
            if variable.value is not None:
                known[variable.name] = variable.value
        for item in container.node.get("env").elements():
            name = item.get("name").text or ""
            value = item.get("value")
            if not name:
                continue
            if value.exists and value.text is not None:
                expanded = kubernetes_expand(value.text, known.get, lambda name: depths.get(name, 0))
                if expanded.cut is not None:  # its value is not all there: not known, as a Secret's
                    self.variables.append(EnvVar(name, None, value.pos, cut=expanded.cut))
                    known.pop(name, None)
                    continue
                self.variables.append(EnvVar(name, expanded.text, value.pos))
                known[name], depths[name] = expanded.text, expanded.depth
                continue
            variable = _value_from(name, item.get("valueFrom"), item.get("name").pos, sources, namespace, path)
            self.variables.append(variable)
            depths.pop(name, None)
            if variable.value is not None:
                known[name] = variable.value
            else:
                known.pop(name, None)
        written = {v.name for v in self.variables}
        self.variables.extend(v for v in from_sources if v.name not in written)
        self._values = known

    def value(self, name: str) -> str | None:
        """The variable's value when the manifest says it."""
        return self._values.get(name)

    def names(self) -> set[str]:
        return {v.name for v in self.variables}


def _from(source: EnvSource, prefix: str, path: str) -> list[EnvVar]:
    elsewhere = source.path != path
    found = []
    for key in source.keys:
        position = key.value_position if key.value_position is not None else key.position
        found.append(EnvVar(prefix + key.name, key.value, position, source.title, elsewhere))
    return found


def _value_from(name: str, value_from: Node, name_position: Position, sources: EnvSources | None, namespace: str, path: str) -> EnvVar:
    """`valueFrom.configMapKeyRef` reads the ConfigMap when the inputs hold it; the others are not known."""
    reference = value_from.get("configMapKeyRef")
    map_name, key = reference.get("name").text, reference.get("key").text
    if sources is not None and map_name and key:
        source = sources.find("ConfigMap", map_name, namespace, path)
        entry = next((k for k in source.keys if k.name == key), None) if source is not None else None
        if source is not None and entry is not None and entry.value is not None and entry.value_position is not None:
            return EnvVar(name, entry.value, entry.value_position, source.title, source.path != path)
    return EnvVar(name, None, name_position)
