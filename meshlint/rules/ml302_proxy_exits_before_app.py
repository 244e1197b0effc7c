"""An app container's preStop sleep outlasts the classic Istio sidecar's drain.

## What it does
For pods with a classic (non-native) Istio sidecar, compares each app container's preStop sleep (exec
`sleep N` or `/bin/sleep N`, the sleeps a `sh -c` script surely runs, or the `preStop.sleep.seconds`
action) with the proxy's effective `terminationDrainDuration` (default 5s). Under `proxyMetadata`
`EXIT_ON_ZERO_ACTIVE_CONNECTIONS: "true"` the drain duration is not used: the agent waits
`MINIMUM_DRAIN_DURATION` (default 5s) and then exits as soon as no connection is open, so the sleep is
compared with that minimum instead.

## Why is this bad?
When a pod terminates, the kubelet signals every container at once: the app starts its preStop sleep
(usually to keep serving while endpoints are removed), and the classic istio-proxy starts its drain at
the same moment. When the drain ends, the agent stops Envoy, whether or not the app is still sleeping.
From then on the requests that still reach the pod and the app's own outbound calls during shutdown
have no proxy to go through, and fail. The sleep that was meant to make rollouts smooth is exactly what
causes the 503s.

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: storefront
spec:
  template:
    metadata:
      labels: {app: storefront, sidecar.istio.io/inject: "true"}
    spec:
      containers:
        - name: web
          image: nginx:1.27
          lifecycle:
            preStop:
              exec:
                command: ["sleep", "10"]  # expect: ML302:warning
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: storefront
spec:
  template:
    metadata:
      labels: {app: storefront, sidecar.istio.io/inject: "true"}
      annotations:
        proxy.istio.io/config: |
          holdApplicationUntilProxyStarts: true
          terminationDrainDuration: 20s
    spec:
      containers:
        - name: web
          image: nginx:1.27
          lifecycle:
            preStop:
              exec:
                command: ["sleep", "10"]
```

## References
- istio/istio `pkg/envoy/agent.go` `terminate()` (drain inbound, wait `terminationDrainDuration`, stop Envoy)
- https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-termination (preStop, then TERM)
- https://istio.io/latest/blog/2023/native-sidecars/ (native sidecars stop after the app)
"""

from __future__ import annotations

from collections.abc import Iterator

from meshlint.findings import Issue, Severity
from meshlint.mesh.facts.durations import format_seconds
from meshlint.mesh.istio import EXIT_ON_ZERO, MINIMUM_DRAIN, PROXY_CONTAINER
from meshlint.mesh.setting import origins
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.rule import WORKLOAD, RuleContext, rule


@rule(code="ML302", name="proxy-exits-before-app", severity=Severity.WARNING, scope=WORKLOAD, kinds=WORKLOAD_KINDS)
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    drain = workload.drain
    if not workload.classic_sidecar:
        return
    grace = workload.grace_period
    if grace.value == 0:
        return  # no graceful shutdown is asked for (delete immediately): no drain to outlast
    if workload.exit_on_zero is not None:
        yield from _exit_on_zero(workload)
        return
    if drain.value is None:
        return
    for sleep in workload.prestop_sleeps:
        if sleep.container.name == PROXY_CONTAINER or sleep.seconds < drain.value:
            continue
        if grace.value is not None and sleep.seconds >= grace.value:
            # The drain must stay below the grace period (ML301), so the grace period has to grow first.
            raise_drain = (
                f"raise terminationGracePeriodSeconds (now {grace.value}) above {sleep.text} plus the app's shutdown "
                "time, then terminationDrainDuration above the sleep and below the new grace period"
            )
        else:
            raise_drain = (
                f"raise terminationDrainDuration above {sleep.text} plus the app's shutdown time (and below "
                f"terminationGracePeriodSeconds {grace.value})"
            )
        yield Issue(
            sleep.position,
            f"{sleep} ≥ terminationDrainDuration {format_seconds(drain.value)} ({drain.where}): istio-proxy stops "
            "while the app is still sleeping, so requests still routed to the pod and the app's outbound calls "
            "during shutdown fail",
            f'{raise_drain}; or set proxyMetadata EXIT_ON_ZERO_ACTIVE_CONNECTIONS: "true"; '
            "or use native sidecars, which Kubernetes stops after the app",
            related=origins(drain),
        )


def _exit_on_zero(workload: WorkloadView) -> Iterator[Issue]:
    """Exit-on-zero (reference §3.2, §18.2 H2): after MINIMUM_DRAIN_DURATION the agent exits the moment no
    connection is open, which a pod whose endpoints are being removed soon reaches, while the app sleeps on."""
    minimum, exit_on_zero = workload.minimum_drain, workload.exit_on_zero
    if minimum.value is None or exit_on_zero is None:
        return  # an invalid duration is ML002's to report
    for sleep in workload.prestop_sleeps:
        if sleep.container.name == PROXY_CONTAINER or sleep.seconds <= minimum.value:
            continue
        yield Issue(
            sleep.position,
            f"{sleep} > {MINIMUM_DRAIN} {format_seconds(minimum.value)} ({minimum.where}): with {EXIT_ON_ZERO} "
            f"({exit_on_zero.where}) istio-proxy may exit as soon as that minimum has passed and no connection is open, "
            "while the app still sleeps, so requests routed to the pod late and the app's outbound calls during shutdown fail",
            f"raise {MINIMUM_DRAIN} above {sleep.text} (and below terminationGracePeriodSeconds {workload.grace_period.value}); "
            "or use native sidecars, which Kubernetes stops after the app",
            related=origins(minimum, exit_on_zero),
        )


RULE = check
