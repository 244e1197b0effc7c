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

## References
- istio/api `mesh/v1alpha1/config.proto` (field 53 `termination_drain_duration` is reserved)
- istio/istio `pkg/config/mesh/mesh.go` (`ApplyMeshConfig` allows unknown fields)
"""

from __future__ import annotations

from collections.abc import Iterator

from meshlint.findings import Issue, Severity
from meshlint.mesh.facts import proxyconfig
from meshlint.mesh.sources import MeshSource
from meshlint.rule import MESH_CONFIG, RuleContext, rule

_PROXY_ONLY = ("holdApplicationUntilProxyStarts", "terminationDrainDuration")


@rule(code="ML004", name="ignored-mesh-config-field", severity=Severity.WARNING, scope=MESH_CONFIG)
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
        )


RULE = check
