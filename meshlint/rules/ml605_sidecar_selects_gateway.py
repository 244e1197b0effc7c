"""A `Sidecar` whose `workloadSelector` picks an Istio gateway, to which a Sidecar never applies.

## What it does
For each Istio gateway in the run (a pod asking for the `gateway` injection template, or whose only
container is `istio-proxy`, as the gateway chart and `istioctl` installs write them), reports a `Sidecar`
of its namespace whose `workloadSelector` selects it. A namespace-wide Sidecar (no selector) is left
alone: it is meant for the namespace's other pods.

## Why is this bad?
"A `Sidecar` is not applicable to gateways": istiod builds a gateway's configuration from its
`Gateway` and route resources and ignores Sidecars. The egress hosts, outbound traffic policy, ingress
listeners or connection pool settings someone wrote for the gateway do nothing, and a scope meant to
shrink the gateway's configuration leaves it holding the whole mesh.

## Example
```yaml
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata:
  name: ingress-scope
  namespace: istio-ingress
spec:
  workloadSelector:  # expect: ML605:warning
    labels:
      istio: ingressgateway
  egress:
    - hosts: ["./*", "shop/*"]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: istio-ingressgateway
  namespace: istio-ingress
spec:
  template:
    metadata:
      labels: {istio: ingressgateway}
      annotations: {inject.istio.io/templates: gateway}
    spec:
      containers:
        - name: istio-proxy
          image: auto
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: istio-ingressgateway
  namespace: istio-ingress
spec:
  template:
    metadata:
      labels: {istio: ingressgateway}
      annotations: {inject.istio.io/templates: gateway}
    spec:
      containers:
        - name: istio-proxy
          image: auto
```

## References
- istio/api `networking/v1alpha3/sidecar.proto` (NOTE 3: "A Sidecar is not applicable to gateways")
- reference §13.2, §18.2 H9
"""

from __future__ import annotations

from collections.abc import Iterator

from meshlint.findings import Issue, Severity
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.rule import WORKLOAD, RuleContext, rule


@rule(code="ML605", name="sidecar-selects-gateway", severity=Severity.WARNING, scope=WORKLOAD, kinds=WORKLOAD_KINDS)
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    if not workload.istio_gateway or not ctx.mesh.sidecars:
        return
    sidecar = workload.sidecar_scope.sidecar
    if sidecar is None or not sidecar.selector or sidecar.selector_position is None:
        return  # the namespace-wide Sidecar is meant for the namespace's other pods
    yield Issue(
        sidecar.selector_position,
        f"{sidecar.title} selects {workload.template.title}, an Istio gateway ({workload.classification.reason}): a Sidecar "
        "is not applicable to gateways, so nothing it says reaches this gateway's proxy",
        "remove the Sidecar, or point its workloadSelector at the app pods it was meant for; configure the gateway through "
        "its Gateway and route resources",
    )


RULE = check
