"""A classic Linkerd proxy that refuses requests while the app's preStop sleep waits out endpoint removal.

## What it does
For pods with a classic (non-native) Linkerd proxy that a Service in the run selects, compares each app
container's preStop sleep (exec `sleep N`, a script's sure sleeps, or the `preStop.sleep` action) with the
proxy's own wait before it exits, `config.alpha.linkerd.io/proxy-wait-before-exit-seconds` (pod or
namespace, Helm `proxy.waitBeforeExitSeconds`; none by default). Reports a sleep longer than the wait.

## Why is this bad?
The kubelet sends SIGTERM to every container at once, after each one's preStop. A classic Linkerd proxy
"will immediately begin a graceful shutdown where it refuses all new requests": the app's preStop sleep,
there to keep serving while the endpoint removal reaches every client, is spent behind a proxy that
turns the late requests away, and the app's own calls during shutdown fail too. The rollout's 503s are
exactly what the sleep was meant to prevent. A wait before exit at least as long as the sleep keeps the
proxy serving through it.

## Example
```yaml
# config: {"linkerd-version": "2.19"}
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    metadata:
      labels: {app: web}
      annotations:
        linkerd.io/inject: enabled
    spec:
      containers:
        - name: web
          image: web:1
          ports: [{containerPort: 8080}]
          lifecycle:
            preStop:
              exec:
                command: ["sleep", "15"]  # expect: ML508:warning
```

## Use instead
```yaml
# config: {"linkerd-version": "2.19"}
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    metadata:
      labels: {app: web}
      annotations:
        linkerd.io/inject: enabled
        config.alpha.linkerd.io/proxy-wait-before-exit-seconds: "20"
    spec:
      terminationGracePeriodSeconds: 45
      containers:
        - name: web
          image: web:1
          ports: [{containerPort: 8080}]
          lifecycle:
            preStop:
              exec:
                command: ["sleep", "15"]
```

## References
- https://linkerd.io/2-edge/tasks/graceful-shutdown/ ("refuses all new requests")
- linkerd/linkerd2 `charts/partials/templates/_proxy.tpl` (the wait is the classic proxy's preStop sleep)
- reference §11.4, §14.1, §18.2 H7
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from meshlint.findings import Issue, Severity
from meshlint.mesh.facts.linkerdproxy import said
from meshlint.mesh.linkerd import PROXY_CONTAINER, WAIT_BEFORE_EXIT
from meshlint.mesh.setting import origins
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.rule import WORKLOAD, RuleContext, rule


@rule(code="ML508", name="linkerd-refuses-during-prestop", severity=Severity.WARNING, scope=WORKLOAD, kinds=WORKLOAD_KINDS)
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    if not workload.classic_linkerd or workload.template.runs_to_completion or not workload.service_targets:
        return
    proxy = workload.linkerd_proxy
    wait = proxy.wait_before_exit
    waits = wait.value if wait is not None and isinstance(wait.value, int) else 0
    if wait is not None and wait.value is None:
        return  # not a number: ML507's to report
    grace = workload.grace_period
    for sleep in workload.prestop_sleeps:
        if sleep.container.name == PROXY_CONTAINER or sleep.seconds <= waits or math.isinf(sleep.seconds):
            continue  # an endless sleep is ML303's to report
        before = f"after its wait of {waits}s ({said(wait)})" if wait is not None else f"at once (no {WAIT_BEFORE_EXIT})"
        yield Issue(
            sleep.position,
            f"{sleep}, but the classic linkerd-proxy ({proxy.mode}) gets SIGTERM {before} and then refuses new requests: "
            "requests still routed to the pod during the rest of the sleep, and the app's own calls, fail",
            f'set {WAIT_BEFORE_EXIT}: "{_ceil(sleep.seconds)}" or more (below terminationGracePeriodSeconds {grace.value}, which '
            "must leave the app time to shut down after it), or use native sidecars, which stop after the app",
            related=origins(wait) if wait is not None else (),
        )


def _ceil(seconds: float) -> int:
    whole = int(seconds)
    return whole if whole == seconds else whole + 1


RULE = check
