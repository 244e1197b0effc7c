"""A TCP probe that the sidecar answers itself, so it passes whatever the app does.

## What it does
For pods with an Istio sidecar, reports each `tcpSocket` liveness, readiness or startup probe aimed at
a port the sidecar captures, when the probe is not rewritten: the pod annotation
`sidecar.istio.io/rewriteAppHTTPProbers` is `"false"`, the injector's Helm value
`sidecarInjectorWebhook.rewriteAppHTTPProbe` is false, the manifest is already injected
(`istioctl kube-inject` output), or the target Istio version is older than 1.12 (which never rewrote
TCP probes). Silent when nothing switches the rewrite off: it is on by default. Linkerd, which never
rewrites probes, has its own rule (ML511).

## Why is this bad?
The sidecar's iptables rules send every inbound connection to istio-proxy, which accepts it whether
or not the app listens behind it. A TCP probe that is not rewritten therefore checks only that the
proxy runs: a dead or hung app is never restarted (liveness), stays in its Service's endpoints
(readiness), or counts as started too early (startup). Istio's rewrite hands the probe to the agent,
which opens the connection to the app itself.

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: redis
spec:
  template:
    metadata:
      annotations:
        sidecar.istio.io/rewriteAppHTTPProbers: "false"
    spec:
      containers:
        - name: redis
          image: redis:7
          ports: [{name: redis, containerPort: 6379}]
          livenessProbe:
            tcpSocket: {port: redis}  # expect: ML107:warning
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: redis
spec:
  template:
    metadata:
      annotations:
        sidecar.istio.io/rewriteAppHTTPProbers: "false"
        proxy.istio.io/config: '{"holdApplicationUntilProxyStarts": true}'
    spec:
      containers:
        - name: redis
          image: redis:7
          ports: [{name: redis, containerPort: 6379}]
          livenessProbe:
            exec: {command: [redis-cli, ping]}
```
Or leave probe rewrite on (the default), and the agent checks the app's port for the kubelet.

## References
- https://istio.io/latest/docs/ops/configuration/mesh/app-health-check/ ("all TCP ports appear open")
- istio/istio `pkg/kube/inject/app_probe.go` (tcpSocket probes rewritten since 1.12)
- reference §15
"""

from __future__ import annotations

from collections.abc import Iterator

from meshlint.findings import Issue, Severity
from meshlint.mesh.setting import origins
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.rule import WORKLOAD, RuleContext, rule

# What a probe that always passes hides, by kind.
PASSING = {
    "livenessProbe": "a hung or dead app is never restarted",
    "readinessProbe": "the pod stays in rotation while the app cannot serve",
    "startupProbe": "the app counts as started before it is",
}


@rule(code="ML107", name="tcp-probe-always-passes", severity=Severity.WARNING, scope=WORKLOAD, kinds=WORKLOAD_KINDS)
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    for probe, why in workload.probes_to_sidecar:
        if probe.action != "tcpSocket":
            continue
        from meshlint.mesh.facts.probes import rewrite_fix  # loaded once a probe reaches the sidecar

        yield Issue(
            probe.position,
            f"{probe} is not rewritten ({why}), and istio-proxy captures port {probe.port}: the sidecar accepts "
            f"the kubelet's connection itself, so the probe passes as long as the proxy runs, whatever the app does: "
            f"{PASSING[probe.role]}",
            f"{rewrite_fix(probe, workload.probe_rewrite, workload.injected_proxy is not None)}; or use an exec probe "
            "that checks the app",
            related=origins(workload.probe_rewrite),
        )


RULE = check
