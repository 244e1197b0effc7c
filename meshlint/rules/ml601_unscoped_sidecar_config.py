"""A sidecar-injected namespace with no `Sidecar` resource in a large mesh: every proxy holds it all.

## What it does
Off by default: select it (`select: [ML601]`, its name, `ML6`, or `ALL`) to run it. Reports a
Namespace that injects Istio sidecars (`istio-injection: enabled` or `istio.io/rev`) when no `Sidecar`
applies to its proxies (none without a `workloadSelector` in the namespace, none in the root
namespace) while the inputs hold at least `min-services` Services (default 100), counting only
Services of namespaces that MeshConfig `discoverySelectors` lets istiod see, when it is set. The
finding is on the Namespace: one Sidecar there scopes all its workloads. Namespaces not defined in
the run are not judged.

## Why is this bad?
By default istiod sends every proxy the configuration for every service in the mesh: clusters,
endpoints and routes for all of them, whether the app calls two services or none. The proxy's memory,
and istiod's push work, then grow with the size of the mesh rather than with the app, and every change
anywhere is pushed to every proxy. Istio publishes no per-service memory figure, and none is given
here; its performance page says only that a proxy's memory depends on the configuration it holds (the
number of listeners, clusters and routes). Figures you may meet elsewhere (so many MB per hundred
services) come from third-party blogs. A Sidecar that imports what the namespace calls keeps each
proxy's configuration proportional to its dependencies.

## Example
```yaml
# config: {"select": ["ML601"], "rules": {"ML601": {"min-services": 2}}}
apiVersion: v1
kind: Namespace
metadata:
  name: orders
  labels:
    istio-injection: enabled  # expect: ML601:info
---
apiVersion: v1
kind: Service
metadata: {name: orders, namespace: orders}
spec: {selector: {app: orders}, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: payments, namespace: payments}
spec: {selector: {app: payments}, ports: [{port: 80}]}
```

## Use instead
```yaml
# config: {"select": ["ML601"], "rules": {"ML601": {"min-services": 2}}}
apiVersion: v1
kind: Namespace
metadata:
  name: orders
  labels:
    istio-injection: enabled
---
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata:
  name: default
  namespace: orders
spec:
  egress:
    - hosts: ["./*", "payments/payments.payments.svc.cluster.local", "istio-system/*"]
---
apiVersion: v1
kind: Service
metadata: {name: orders, namespace: orders}
spec: {selector: {app: orders}, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: payments, namespace: payments}
spec: {selector: {app: payments}, ports: [{port: 80}]}
```
A Sidecar in the root namespace without a selector is the default for every namespace without one.

## References
- https://istio.io/latest/docs/ops/configuration/mesh/configuration-scoping/
- https://istio.io/latest/docs/ops/deployment/performance-and-scalability/ ("The memory consumption of the proxy depends on the total configuration state the proxy holds")
- istio/api `networking/v1alpha3/sidecar.proto`
- reference §13.1, §13.5, §13.6
"""

from __future__ import annotations

from collections.abc import Iterator

from meshlint.findings import Issue, Severity
from meshlint.mesh.istio import NAMESPACE_INJECTION_LABEL, NEVER_INJECTED_NAMESPACES, REV_LABEL
from meshlint.mesh.scope import Place
from meshlint.model.resource import Resource
from meshlint.rule import RESOURCE, RuleContext, rule

MIN_SERVICES = {
    "type": "integer",
    "minimum": 1,
    "default": 100,
    "description": "how many Services the inputs must hold before an unscoped namespace is reported",
}
NO_FIGURE = (
    "Istio publishes no per-service memory figure; its docs say only that a proxy's memory depends on the "
    "configuration it holds"
)


@rule(
    code="ML601",
    name="unscoped-sidecar-config",
    severity=Severity.INFO,
    scope=RESOURCE,
    kinds={"Namespace"},
    options={"min-services": MIN_SERVICES},
    default_enabled=False,
)
def check(resource: Resource, ctx: RuleContext) -> Iterator[Issue]:
    injection, rev = resource.labels.get(NAMESPACE_INJECTION_LABEL), resource.labels.get(REV_LABEL)
    label = injection if injection is not None else rev
    if label is None or (injection is not None and injection.text != "enabled") or resource.name in NEVER_INJECTED_NAMESPACES:
        return
    revision = "" if injection is not None or rev is None else ctx.mesh.revision_of(rev.text or "")
    if revision is None:
        return  # a revision the run does not declare: nothing injects its pods (ML008)
    place = Place.of(resource.path)
    root = ctx.mesh_options.root_namespace
    scope = ctx.mesh.sidecar_scope(resource.name, None, place, root)
    if scope.sidecar is not None or scope.ambiguous or scope.undecided or not ctx.mesh.discovered(resource.name, place, revision):
        return
    count = ctx.mesh.service_count(place, revision)
    if count < ctx.options["min-services"]:
        return
    selectors = ctx.mesh.settings_at(place, revision).discovery_selectors
    counted = f"{count} Services in the inputs" + (f", counting the namespaces discoverySelectors selects, {selectors.where}" if selectors else "")
    yield Issue(
        label.key_pos or label.pos,
        f"Namespace {resource.name} injects sidecars ({label_text(label.text, injection is not None)}) and no Sidecar scopes "
        f"its proxies (none without a workloadSelector in {resource.name} or in the root namespace {root}): each proxy "
        f"holds the configuration of every Service in the mesh ({counted}), so its memory and istiod's pushes grow with "
        f"the mesh, not with what the app calls. {NO_FIGURE}",
        f'add a Sidecar to namespace {resource.name} that imports what its workloads call (egress hosts such as "./*" and '
        f'"istio-system/*" plus each namespace they call), or a default Sidecar without a selector in {root}',
    )


def label_text(value: str | None, legacy: bool) -> str:
    return f"{NAMESPACE_INJECTION_LABEL}={value}" if legacy else f"{REV_LABEL}={value}"


RULE = check
