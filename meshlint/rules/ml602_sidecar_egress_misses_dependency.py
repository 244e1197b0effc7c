"""A Service the app is configured to call that its `Sidecar` does not import.

## What it does
For pods with an Istio sidecar scoped by a `Sidecar` resource (the one of its namespace whose
`workloadSelector` matches it, else the namespace's one without a selector, else the root
namespace's), reads the Services its startup evidence names (as ML101 reads it: env values, also from
`envFrom` ConfigMaps in the inputs, and the addresses its commands dial): cluster DNS names
(`orders.shop.svc.cluster.local`), and short names (`orders`, `orders.shop`) when a Service of that
name is in the run. Only containers whose traffic the proxy carries count (an init container before a
classic proxy does not). Reports each one that no egress listener of
the Sidecar imports (`namespace/dnsName` hosts: `*`, `.` and wildcards as istiod reads them; a
listener with a port imports only that port). An error when outbound traffic policy is REGISTRY_ONLY
(the Sidecar's `outboundTrafficPolicy`, else the mesh's). Silent for pods no Sidecar scopes, for
names no Service of the run answers to (external hosts), and when two Sidecars leave the choice
undefined (ML603).

## Why is this bad?
A Sidecar scopes which services a proxy knows about; it is not a firewall. A destination it does not
import is unknown to the proxy: under the default `ALLOW_ANY` the connection goes out through the
passthrough cluster as plain TCP to the Service's IP, with no mTLS and no client identity (a STRICT
destination refuses it, an AuthorizationPolicy on principals denies it) and none of the
VirtualService or DestinationRule settings meant for it; under `REGISTRY_ONLY` the proxy drops it.
Either way the app fails, or runs unprotected, only after the Sidecar is applied.

## Example
```yaml
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata:
  name: default
  namespace: shop
spec:
  egress:
    - hosts: ["./*", "istio-system/*"]
---
apiVersion: v1
kind: Service
metadata:
  name: payments
  namespace: billing
spec:
  selector: {app: payments}
  ports: [{port: 8080}]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: checkout
  namespace: shop
spec:
  template:
    spec:
      containers:
        - name: checkout
          image: checkout:1
          env:
            - name: PAYMENTS_URL
              value: http://payments.billing:8080  # expect: ML602:warning
```

## Use instead
```yaml
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata:
  name: default
  namespace: shop
spec:
  egress:
    - hosts: ["./*", "istio-system/*", "billing/payments.billing.svc.cluster.local"]
---
apiVersion: v1
kind: Service
metadata:
  name: payments
  namespace: billing
spec:
  selector: {app: payments}
  ports: [{port: 8080}]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: checkout
  namespace: shop
spec:
  template:
    metadata:
      annotations:
        proxy.istio.io/config: '{"holdApplicationUntilProxyStarts": true}'
    spec:
      containers:
        - name: checkout
          image: checkout:1
          env:
            - name: PAYMENTS_URL
              value: http://payments.billing:8080
```

## References
- istio/api `networking/v1alpha3/sidecar.proto` ("restricting the configuration amounts to blocking the traffic" is "a common misunderstanding")
- istio/istio `pilot/pkg/model/sidecar.go` (how egress hosts import services), `push_context.go` (`doGetSidecarScope`)
- https://istio.io/latest/docs/reference/config/networking/sidecar/
- reference §13.3, §13.4
"""

from __future__ import annotations

from collections.abc import Iterator

from meshlint.findings import Issue, Severity
from meshlint.mesh.istio import CLUSTER_DOMAIN
from meshlint.mesh.setting import Setting, origins
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.rule import WORKLOAD, RuleContext, rule
from meshlint.wording import listing

PASSTHROUGH = (
    "the proxy does not know it, so the connection goes out through the passthrough cluster as plain TCP: no mTLS, "
    "no client identity (a STRICT destination refuses it), no VirtualService or DestinationRule"
)


@rule(code="ML602", name="sidecar-egress-misses-dependency", severity=Severity.WARNING, scope=WORKLOAD, kinds=WORKLOAD_KINDS)
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    if not workload.istio_sidecar or not ctx.mesh.sidecars:
        return
    sidecar = workload.sidecar_scope.sidecar
    if sidecar is None:
        return
    policy = workload.outbound_policy
    registry_only = policy.value == "REGISTRY_ONLY"
    reported: set[tuple[str, str]] = set()
    for dependency in workload.dependencies:
        name, namespace, evidence = dependency.service, dependency.namespace, dependency.evidence
        if (name, namespace) in reported or sidecar.imports(namespace, name, dependency.port, workload.owner.namespace) is not None:
            continue
        reported.add((name, namespace))  # once a Service, where it is first named
        service = ctx.mesh.service(name, namespace)
        port = f" on port {dependency.port}" if dependency.port is not None else ""
        mode = f"outboundTrafficPolicy {policy.value} ({policy.where})"
        effect = f"under {mode} the proxy drops it" if registry_only else f"under {mode} {PASSTHROUGH}"
        fqdn = f"{name}.{namespace}.svc.{CLUSTER_DOMAIN}"
        hosts = listing(sidecar.host_entries) or "none"
        # Evidence read from a ConfigMap in another file is cited there, and the finding stays with the pod.
        yield Issue(
            workload.template.fix_position if evidence.elsewhere else evidence.position,
            f"{workload.template.title} calls Service {name} of namespace {namespace}{port} ({evidence if evidence.elsewhere else evidence.what}), which "
            f"{sidecar.title} does not import (egress hosts: {hosts}; it scopes this pod because {workload.sidecar_scope.how}): {effect}",
            f'add "{namespace}/{fqdn}" (or "{namespace}/*") to the egress hosts of Sidecar {sidecar.name}',
            Severity.ERROR if registry_only else None,
            related=(sidecar.position, *origins(policy, *([Setting(name, service.position)] if service is not None else [])), *((evidence.position,) if evidence.elsewhere else ())),
        )


RULE = check
