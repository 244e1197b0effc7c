"""A tcpSocket probe on a Linkerd-meshed port: it passes whenever the proxy runs, whatever the app does.

## What it does
For Linkerd-meshed pods, reports `tcpSocket` liveness, readiness and startup probes of the app's
containers on a port that the proxy captures (one not in the skip-inbound ports).

## Why is this bad?
Linkerd does not rewrite probes, and the proxy accepts every TCP connection on a captured port itself:
"all ports are open at the TCP level", so the probe "will succeed as long as linkerd-proxy is alive"
(linkerd/linkerd2#7777). A hung or crashed app stays Ready and is never restarted; during startup it
gets traffic before it listens.

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: cache
spec:
  selector: {matchLabels: {app: cache}}
  template:
    metadata:
      labels: {app: cache}
      annotations: {linkerd.io/inject: enabled}
    spec:
      containers:
        - name: cache
          image: cache:1.0
          ports: [{containerPort: 6379, name: redis}]
          readinessProbe:
            tcpSocket: {port: redis}  # expect: ML511:warning
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: cache
spec:
  selector: {matchLabels: {app: cache}}
  template:
    metadata:
      labels: {app: cache}
      annotations: {linkerd.io/inject: enabled}
    spec:
      containers:
        - name: cache
          image: cache:1.0
          ports: [{containerPort: 6379, name: redis}]
          readinessProbe:
            exec: {command: ["redis-cli", "ping"]}
```

## References
- https://github.com/linkerd/linkerd2/issues/7777 (TCP probes always succeed on meshed pods)
- https://linkerd.io/2-edge/features/server-policy/ (probes pass through the proxy)
"""

from __future__ import annotations

from collections.abc import Iterator

from meshlint.findings import Issue, Severity
from meshlint.mesh.facts.linkerdproxy import probe_port
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.rule import WORKLOAD, RuleContext, rule

PROBES = ("livenessProbe", "readinessProbe", "startupProbe")


@rule(code="ML511", name="linkerd-tcp-probe-meaningless", severity=Severity.WARNING, scope=WORKLOAD, kinds=WORKLOAD_KINDS)
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    if not workload.linkerd:
        return
    proxy = workload.linkerd_proxy
    for container in workload.app_containers:
        for probe in PROBES:
            node = container.node.path(probe, "tcpSocket", "port")
            port = probe_port(container, node) if node.exists else None
            if port is None or proxy.skips_inbound(port):
                continue
            yield Issue(
                node.pos,
                f"{probe} of {container.label} is a tcpSocket probe on port {port}, which the Linkerd proxy captures ({proxy.assumed}): the proxy "
                "accepts the connection itself, so the probe passes whenever the proxy runs, even when the app does not listen",
                "probe the app itself: an httpGet on a health endpoint, a grpc probe, or an exec command",
            )


RULE = check
