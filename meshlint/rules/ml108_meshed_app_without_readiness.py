"""A meshed app container that a Service sends traffic to, without a readiness probe.

## What it does
For meshed pods that run continuously (an Istio sidecar or a Linkerd proxy, where the run says so: not
a pod only assumed meshed) and that a Service in the run selects, reports each app container that serves a port the Service targets and has no
`readinessProbe`. Off by default: a missing readiness probe is a general best practice that the
generic linters already report, and many teams choose it on purpose; select `ML108` (or
`meshed-app-without-readiness`) to run it.

## Why is this bad?
A pod is Ready when all its containers are. Without a probe the app container counts as ready as soon as
it starts, so the pod's readiness is the proxy's: the proxy is up in a second or two, the endpoint goes
live, and requests reach a proxy whose app is not listening yet. Meshed clients then get 503s ("upstream
connect error ... connection refused") during every rollout and restart, with the proxy looking to blame.

## Example
```yaml
# config: {"select": ["ML108"]}
apiVersion: v1
kind: Service
metadata:
  name: api
spec:
  selector: {app: api}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    metadata:
      labels: {app: api, sidecar.istio.io/inject: "true"}
    spec:
      containers:
        - name: api  # expect: ML108:warning
          image: api:1
          ports: [{containerPort: 8080}]
```

## Use instead
```yaml
# config: {"select": ["ML108"]}
apiVersion: v1
kind: Service
metadata:
  name: api
spec:
  selector: {app: api}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    metadata:
      labels: {app: api, sidecar.istio.io/inject: "true"}
    spec:
      containers:
        - name: api
          image: api:1
          ports: [{containerPort: 8080}]
          readinessProbe:
            httpGet: {path: /ready, port: 8080}
```

## References
- https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#container-probes (a container without a readiness probe is ready)
- reference §18.2 H10
"""

from __future__ import annotations

from collections.abc import Iterator

from meshlint.findings import Issue, Severity
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.rule import WORKLOAD, RuleContext, rule


@rule(
    code="ML108",
    name="meshed-app-without-readiness",
    severity=Severity.WARNING,
    scope=WORKLOAD,
    kinds=WORKLOAD_KINDS,
    default_enabled=False,
)
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    if not (workload.istio_sidecar or workload.linkerd) or workload.template.runs_to_completion:
        return
    if workload.classification.assumed:
        return  # a general best practice: only where the run says the pod is meshed, never by assumption
    targets = workload.service_targets
    if not targets:
        return
    proxy = "istio-proxy" if workload.istio_sidecar else "linkerd-proxy"
    for container in workload.app_containers:
        served = [number for number, _, _ in container.ports if number in targets]
        if not served or container.node.get("readinessProbe").exists:
            continue
        service = targets[served[0]][0]
        yield Issue(
            container.position,
            f"{container.label} has no readinessProbe, though {service.value} sends traffic to its port {served[0]} ({service.where}): "
            f"the pod is Ready as soon as {proxy} is, and requests reach the app before it listens (503s during rollouts)",
            f"give it a readinessProbe on port {served[0]} that answers only once the app can serve",
            related=(service.origin,) if service.origin is not None else (),
        )


RULE = check
