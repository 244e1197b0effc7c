"""Mesh config keys that Istio silently ignores: proxy settings outside `defaultConfig`, unknown fields.

## What it does
Reads the mesh config of an IstioOperator (`spec.meshConfig`), istiod Helm values (`meshConfig`) and
the `istio` ConfigMap (`data.mesh`). It reports `holdApplicationUntilProxyStarts` and
`terminationDrainDuration` at the top level of the mesh config, where they are not MeshConfig fields,
and keys under `defaultConfig` that are not ProxyConfig fields (with the closest known name).

## Why is this bad?
Istio applies mesh config with unknown fields allowed, so a misplaced or misspelt key is dropped
without an error. The mesh then runs without the hold or the drain you configured, and every
workload that relies on it has the startup race or the short drain you meant to remove.

## Example
```yaml
apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata:
  name: control-plane
  namespace: istio-system
spec:
  meshConfig:
    holdApplicationUntilProxyStarts: true  # expect: ML004:warning
    defaultConfig:
      terminationDrainDuraton: 20s  # expect: ML004:warning
```

## Use instead
```yaml
apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata:
  name: control-plane
  namespace: istio-system
spec:
  meshConfig:
    defaultConfig:
      holdApplicationUntilProxyStarts: true
      terminationDrainDuration: 20s
```

## Fix safety
Moving `holdApplicationUntilProxyStarts` under `defaultConfig` (made where the key stands when there is
none) is safe. Moving `terminationDrainDuration` is unsafe: it changes how every pod of the mesh shuts
down, including pods outside the run. Renaming a misspelt `defaultConfig` key to its one "did you
mean" is safe. An `istio` ConfigMap's `data.mesh` is edited inside its literal block. When
`defaultConfig` already says otherwise there is no fix.

## References
- istio/api `mesh/v1alpha1/config.proto` (field 53 `termination_drain_duration` is reserved)
- istio/istio `pkg/config/mesh/mesh.go` (`ApplyMeshConfig` allows unknown fields)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from meshlint.findings import Issue, Severity, recipe
from meshlint.mesh.facts import proxyconfig
from meshlint.mesh.sources import MeshSource
from meshlint.mesh.workload import HOLD
from meshlint.rule import MESH_CONFIG, RuleContext, rule
from meshlint.source.document import Node

if TYPE_CHECKING:
    from meshlint.fix.edits import Fix
    from meshlint.fix.mapping import Change

_PROXY_ONLY = (HOLD, "terminationDrainDuration")


@rule(code="ML004", name="ignored-mesh-config-field", severity=Severity.WARNING, scope=MESH_CONFIG, fix="mixed")
def check(source: MeshSource, ctx: RuleContext) -> Iterator[Issue]:
    if source.mesh_config is None:
        return
    for key, node in source.mesh_config.items():
        name = proxyconfig.camel_case(str(key))
        if name in _PROXY_ONLY:
            yield Issue(
                node.key_pos or node.pos,
                f"meshConfig.{key} is not a MeshConfig field; Istio ignores it silently",
                f"move it under meshConfig.defaultConfig.{name}",
                fix=recipe(_move, source, source.mesh_config, str(key), name),
            )
    for problem in source.default_config_problems:
        if not problem.unknown_key:
            continue
        hint = problem.suggestion
        tail = f"; did you mean {hint!r}?" if hint else ""
        yield Issue(
            problem.position,
            f"defaultConfig.{problem.field} is not a ProxyConfig field; Istio ignores it silently{tail}",
            f"rename it to {hint!r}" if hint else "remove it, or check the ProxyConfig reference for the field you meant",
            fix=recipe(_rename, source, problem.field, hint) if hint else None,
        )


def _move(source: MeshSource, mesh: Node, key: str, name: str) -> Fix | None:
    """Into defaultConfig (made where the key stands when there is none); when defaultConfig already
    sets the field to the same value, the ignored copy only goes. The hold is safe to move (it only
    makes pods wait for their proxy); a drain is not: it changes how every pod of the mesh shuts down,
    including pods outside this run."""
    from meshlint.fix import mapping, proxy_config
    from meshlint.fix.edits import SAFE, UNSAFE

    default = mesh.get("defaultConfig")
    change: Change | None
    if not default.exists:
        change = mapping.wrap(mesh, key, "defaultConfig")
    elif not default.is_map:
        return None
    elif (present := proxyconfig.normalized_fields(default).get(name)) is not None:
        if present.value != mesh.get(key).value:
            return None  # which of the two was meant is for a person to say
        change = mapping.remove(mesh, key)
    else:
        content = mapping.lift(mesh, key)
        change = mapping.merged(mapping.add(default, content), mapping.remove(mesh, key)) if content is not None else None
    title = f"move meshConfig.{key} under meshConfig.defaultConfig"
    return mapping.as_fix(title, mesh, proxy_config.in_source(source, change), SAFE if name == HOLD else UNSAFE)


def _rename(source: MeshSource, key: str, hint: str) -> Fix | None:
    from meshlint.fix import mapping, proxy_config

    default = source.default_config
    if default is None:
        return None
    change = proxy_config.rename_field(default, key, hint)
    return mapping.as_fix(f"rename defaultConfig.{key} to {hint}", default, proxy_config.in_source(source, change))


RULE = check
