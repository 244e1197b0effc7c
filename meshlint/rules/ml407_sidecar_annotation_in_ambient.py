"""A sidecar-only annotation on a pod in ambient mode, where nothing reads it.

## What it does
For pods enrolled in ambient mode (the pod label `istio.io/dataplane-mode: ambient`, or a Namespace
in the run so labelled, without a sidecar injection label), reports each pod-template annotation that
only a sidecar reads: `traffic.sidecar.istio.io/*`, `sidecar.istio.io/interceptionMode` and
`proxy.istio.io/config`. Silent when nothing in the run enrols the pod in ambient.

## Why is this bad?
An ambient pod has no sidecar. Its traffic is redirected on the node to ztunnel, and the node agent
reads only its own annotations (`ambient.istio.io/*`, `istio.io/reroute-virtual-interfaces`); the
sidecar's capture exclusions, interception mode and ProxyConfig are read by the sidecar injector and
the sidecar's iptables only. The annotations look like they exclude ports, change the drain or hold the
app until the proxy starts, and do none of it. Often they are left over from a migration to ambient,
and someone still relies on them.

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: search
spec:
  template:
    metadata:
      labels:
        istio.io/dataplane-mode: ambient
      annotations:
        traffic.sidecar.istio.io/excludeOutboundPorts: "5432"  # expect: ML407:info
    spec:
      containers:
        - name: search
          image: search:1
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: search
spec:
  template:
    metadata:
      labels:
        istio.io/dataplane-mode: ambient
    spec:
      containers:
        - name: search
          image: search:1
```

## References
- istio/istio `cni/pkg/nodeagent/net.go` (what the ambient node agent reads), `cni/pkg/plugin/sidecar_redirect.go`
- https://istio.io/latest/docs/ambient/architecture/traffic-redirection/
- reference §16.3
"""

from __future__ import annotations

from collections.abc import Iterator

from meshlint.findings import Issue, Severity
from meshlint.mesh.ambient import sidecar_only
from meshlint.mesh.setting import origins
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.rule import WORKLOAD, RuleContext, rule


@rule(code="ML407", name="sidecar-annotation-in-ambient", severity=Severity.INFO, scope=WORKLOAD, kinds=WORKLOAD_KINDS)
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    enrolment = workload.ambient_enrolment
    if enrolment is None:
        return
    for key, node in workload.template.annotations().items():
        if not sidecar_only(key):
            continue
        yield Issue(
            node.key_pos or node.pos,
            f"{key} does nothing on {workload.template.title}: the pod is in ambient mode ({enrolment.cited}), has no "
            "sidecar, and the ambient node agent reads none of the sidecar's annotations",
            "remove it; in ambient mode traffic is redirected to ztunnel on the node, and per-workload L7 settings "
            "belong to a waypoint",
            related=origins(enrolment),
        )


RULE = check
