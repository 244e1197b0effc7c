"""An HTTP or gRPC probe that the sidecar rejects, because it is not rewritten and mTLS is STRICT.

## What it does
For pods with an Istio sidecar whose probes are not rewritten, reports each `httpGet` or `grpc`
liveness, readiness or startup probe aimed at a port the sidecar captures, when a STRICT
PeerAuthentication (mesh-wide, namespace-wide, by selector, or on that port) covers the pod. Probes
are not rewritten when the pod annotation `sidecar.istio.io/rewriteAppHTTPProbers` is `"false"`, when
the injector's Helm value `sidecarInjectorWebhook.rewriteAppHTTPProbe` is false (IstioOperator
`spec.values`, istiod Helm values, the `istio-sidecar-injector` ConfigMap), in a manifest that is
already injected (`istioctl kube-inject` output), and for gRPC probes before Istio 1.13. Silent when
nothing in the run says mTLS is STRICT, or nothing switches the rewrite off (it is on by default):
both usually live outside an application's repository. Ports excluded from capture and exec probes
are fine.

## Why is this bad?
The kubelet sends probes in plaintext and has no Istio certificate. Istio normally rewrites probes to
the agent's status port (15020), which calls the app itself; without the rewrite the probe reaches the
sidecar, which under STRICT mTLS refuses any connection without a mesh certificate. The probe fails
forever: a readiness probe keeps the pod out of its Service, a liveness or startup probe has the
container restarted again and again.

## Example
```yaml
apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata:
  name: default
  namespace: shop
spec:
  mtls:
    mode: STRICT
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: cart
  namespace: shop
spec:
  template:
    metadata:
      annotations:
        sidecar.istio.io/rewriteAppHTTPProbers: "false"
    spec:
      containers:
        - name: cart
          image: cart:1
          ports: [{name: http, containerPort: 8080}]
          readinessProbe:
            httpGet: {path: /ready, port: http}  # expect: ML106:error
```

## Use instead
```yaml
apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata:
  name: default
  namespace: shop
spec:
  mtls:
    mode: STRICT
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: cart
  namespace: shop
spec:
  template:
    metadata:
      annotations:
        proxy.istio.io/config: '{"holdApplicationUntilProxyStarts": true}'
    spec:
      containers:
        - name: cart
          image: cart:1
          ports: [{name: http, containerPort: 8080}]
          readinessProbe:
            httpGet: {path: /ready, port: http}
```
If the rewrite must stay off, probe a port excluded from capture
(`traffic.sidecar.istio.io/excludeInboundPorts`, a port that serves nothing but health) or use an
exec probe.

## References
- https://istio.io/latest/docs/ops/configuration/mesh/app-health-check/
- istio/istio `pkg/kube/inject/app_probe.go` (`ShouldRewriteAppHTTPProbers`), `webhook.go` (`applyRewrite`)
- reference §15
"""

from __future__ import annotations

from collections.abc import Iterator

from meshlint.findings import Issue, Severity
from meshlint.mesh.setting import origins
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.rule import WORKLOAD, RuleContext, rule

# What the kubelet does when each kind of probe keeps failing.
FAILING = {
    "livenessProbe": "the kubelet restarts the container again and again",
    "readinessProbe": "the pod never becomes Ready and gets no traffic",
    "startupProbe": "the container never counts as started and is restarted",
}


@rule(code="ML106", name="probe-blocked-by-strict-mtls", severity=Severity.ERROR, scope=WORKLOAD, kinds=WORKLOAD_KINDS)
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    for probe, why in workload.probes_to_sidecar:
        if probe.action not in ("httpGet", "grpc"):
            continue
        mode = workload.mtls_mode(probe.port)
        if mode.value != "STRICT":
            continue
        from meshlint.mesh.facts.probes import rewrite_fix  # loaded once a probe reaches the sidecar

        yield Issue(
            probe.position,
            f"{probe} is not rewritten ({why}), and istio-proxy captures port {probe.port} under "
            f"PeerAuthentication STRICT ({mode.where}): the kubelet has no mesh certificate, so the sidecar "
            f"refuses the probe and it always fails: {FAILING[probe.role]}",
            f"{rewrite_fix(probe, workload.probe_rewrite, workload.injected_proxy is not None)}; or use an exec probe, "
            "or probe a port excluded from capture",
            related=origins(workload.probe_rewrite, mode),
        )


RULE = check
