"""A `Sidecar` in the root namespace with a `workloadSelector`, which is never the mesh-wide default.

## What it does
Reports an Istio `Sidecar` in the mesh's root namespace (`mesh.root-namespace`, default
`istio-system`) that has a `workloadSelector`.

## Why is this bad?
A Sidecar without a selector in the root namespace is the default for every namespace that has no
Sidecar of its own. With a selector it is not: istiod keeps only the root namespace's selector-less
Sidecar as the mesh default, so a selector there matches pods of the root namespace alone (usually
none but the control plane). Whoever wrote it meant to scope workloads across the mesh, and none of
them is scoped: their proxies still hold the configuration of every service.

## Example
```yaml
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata:
  name: default
  namespace: istio-system
spec:
  workloadSelector:  # expect: ML604:warning
    labels:
      tier: backend
  egress:
    - hosts: ["./*", "istio-system/*"]
```

## Use instead
```yaml
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata:
  name: default
  namespace: istio-system
spec:
  egress:
    - hosts: ["./*", "istio-system/*"]
```
To scope selected workloads only, put a Sidecar with the selector in each of their namespaces.

## References
- istio/api `networking/v1alpha3/sidecar.proto` (NOTE 2: the root namespace Sidecar "should not have any workloadSelector")
- istio/istio `pilot/pkg/model/push_context.go` (`initSidecarScopes`: the mesh default is the root namespace's Sidecar without a selector)
- reference §13.2
"""

from __future__ import annotations

from collections.abc import Iterator

from meshlint.findings import Issue, Severity
from meshlint.model.resource import Resource
from meshlint.rule import RESOURCE, RuleContext, rule


@rule(code="ML604", name="root-sidecar-has-selector", severity=Severity.WARNING, scope=RESOURCE, kinds={"Sidecar"})
def check(resource: Resource, ctx: RuleContext) -> Iterator[Issue]:
    sidecar = ctx.mesh.sidecar_of(resource)
    root = ctx.mesh_options.root_namespace
    if sidecar is None or sidecar.namespace != root or sidecar.selector is None or sidecar.selector_position is None:
        return
    labels = ", ".join(f"{k}={v}" for k, v in sorted(sidecar.selector.items())) or "every pod"
    yield Issue(
        sidecar.selector_position,
        f"Sidecar {sidecar.name} is in the root namespace {root} but has a workloadSelector ({labels}): it is not the "
        f"mesh-wide default and scopes only matching pods of {root} itself, so no other namespace's proxies are scoped by it",
        "remove the workloadSelector to make it the default for every namespace without a Sidecar, or move it to the "
        "namespaces of the pods it should select",
    )


RULE = check
