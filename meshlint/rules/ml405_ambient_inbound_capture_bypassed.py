"""An ambient pod whose inbound traffic skips ztunnel, and with it mTLS and AuthorizationPolicy.

## What it does
For pods enrolled in ambient mode (the pod label `istio.io/dataplane-mode: ambient`, or a Namespace
in the run so labelled, without a sidecar injection label), reports the annotation
`ambient.istio.io/bypass-inbound-capture` when it reads as true. It is an error when a STRICT
PeerAuthentication covers the pod. Silent when nothing in the run enrols the pod in ambient: the
Namespace's labels often live outside an application's repository.

## Why is this bad?
With inbound capture bypassed, "only outbound traffic will be captured": connections to the pod
reach the app directly, in plaintext, without a peer identity, and ztunnel's L4 AuthorizationPolicy
never sees them. A STRICT PeerAuthentication cannot apply, so the pod accepts plaintext from anyone
who can reach it while the namespace looks locked down. The annotation is meant only for workloads
that receive traffic exclusively from clients outside the mesh (an ingress controller, say). Before
Istio 1.29 it also made inbound HBONE connections from meshed clients time out (istio/istio#58546).

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: reports
spec:
  template:
    metadata:
      labels:
        istio.io/dataplane-mode: ambient
      annotations:
        ambient.istio.io/bypass-inbound-capture: "true"  # expect: ML405:warning
    spec:
      containers:
        - name: reports
          image: reports:1
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: reports
spec:
  template:
    metadata:
      labels:
        istio.io/dataplane-mode: ambient
    spec:
      containers:
        - name: reports
          image: reports:1
```

## References
- istio/api `annotation/annotations.yaml` (`ambient.istio.io/bypass-inbound-capture`, Alpha, 1.24)
- https://istio.io/latest/news/releases/1.24.x/announcing-1.24/change-notes/
- istio/istio `cni/pkg/nodeagent/net.go` (read with `strconv.ParseBool`)
- reference §16.4
"""

from __future__ import annotations

from collections.abc import Iterator

from meshlint.findings import Issue, Severity
from meshlint.mesh.ambient import BYPASS_INBOUND_CAPTURE
from meshlint.mesh.options import at_least
from meshlint.mesh.setting import origins
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.rule import WORKLOAD, RuleContext, rule


@rule(code="ML405", name="ambient-inbound-capture-bypassed", severity=Severity.WARNING, scope=WORKLOAD, kinds=WORKLOAD_KINDS)
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    node = workload.bypass_inbound_capture
    enrolment = workload.ambient_enrolment
    istio = workload.options.versions.istio
    if enrolment is None or node is None or (istio is not None and not at_least(istio, "1.24")):
        return
    mode = workload.mtls_mode()
    strict = mode.value == "STRICT"
    tail = f"; PeerAuthentication STRICT ({mode.where}) cannot apply to it" if strict else ""
    if istio is None or not at_least(istio, "1.29"):
        # Before 1.29 the annotation also broke the mesh's own HBONE connections to the pod (reference §18.1 R5).
        when = f"on Istio {istio}" if istio is not None else "before Istio 1.29"
        tail += f"; {when} inbound HBONE connections from meshed clients also time out (istio/istio#58546)"
    yield Issue(
        node.pos,
        f'{BYPASS_INBOUND_CAPTURE}: "{node.text}" on {workload.template.title}, in ambient mode ({enrolment.cited}): '
        f"inbound connections skip ztunnel and reach the app directly, in plaintext, without mTLS identity or "
        f"AuthorizationPolicy{tail}",
        "remove the annotation unless only clients outside the mesh ever call this workload; to admit such clients "
        "alongside mesh traffic, set the port PERMISSIVE with PeerAuthentication portLevelMtls instead",
        Severity.ERROR if strict else None,
        related=origins(enrolment, mode) if strict else origins(enrolment),
    )


RULE = check
