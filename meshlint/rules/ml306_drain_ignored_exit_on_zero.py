"""A `terminationDrainDuration` the pod sets while exit-on-zero makes the classic sidecar ignore it.

## What it does
For pods with a classic Istio sidecar under `proxyMetadata` `EXIT_ON_ZERO_ACTIVE_CONNECTIONS: "true"`
(the pod's own `proxy.istio.io/config`, or the mesh's `defaultConfig`), reports the
`terminationDrainDuration` the pod's own `proxy.istio.io/config` writes. The same pair made mesh-wide is
left alone: one mesh-wide decision, not a fact of each pod.

## Why is this bad?
In exit-on-zero mode the agent does not use `terminationDrainDuration` at all: after SIGTERM it waits
`MINIMUM_DRAIN_DURATION` (default 5s) and then exits as soon as no connection is open, or is killed at
`terminationGracePeriodSeconds`. A team that raised the drain to cover its slow clients gets none of it:
the number that bounds the proxy's stay is the minimum drain. ML302 compares the app's preStop sleep with
that minimum.

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    metadata:
      annotations:
        proxy.istio.io/config: |
          holdApplicationUntilProxyStarts: true
          terminationDrainDuration: 45s  # expect: ML306:info
          proxyMetadata:
            EXIT_ON_ZERO_ACTIVE_CONNECTIONS: "true"
    spec:
      terminationGracePeriodSeconds: 60
      containers:
        - name: api
          image: api:1
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    metadata:
      annotations:
        proxy.istio.io/config: |
          holdApplicationUntilProxyStarts: true
          proxyMetadata:
            EXIT_ON_ZERO_ACTIVE_CONNECTIONS: "true"
            MINIMUM_DRAIN_DURATION: 45s
    spec:
      terminationGracePeriodSeconds: 60
      containers:
        - name: api
          image: api:1
```

## References
- istio/istio `pilot/cmd/pilot-agent/options/options.go` (`EXIT_ON_ZERO_ACTIVE_CONNECTIONS`, `MINIMUM_DRAIN_DURATION`)
- istio/istio `pkg/envoy/agent.go` `terminate()` (the minimum drain, then polling for zero connections)
- reference §3.2, §18.2 H3
"""

from __future__ import annotations

from collections.abc import Iterator

from meshlint.findings import Issue, Severity
from meshlint.mesh.facts.durations import format_seconds
from meshlint.mesh.istio import EXIT_ON_ZERO, MINIMUM_DRAIN
from meshlint.mesh.setting import origins
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.rule import WORKLOAD, RuleContext, rule


@rule(code="ML306", name="drain-ignored-exit-on-zero", severity=Severity.INFO, scope=WORKLOAD, kinds=WORKLOAD_KINDS)
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    exit_on_zero = workload.exit_on_zero
    drain = workload.proxy_config.get("terminationDrainDuration")
    if not workload.classic_sidecar or exit_on_zero is None or drain is None or not drain.local:
        return
    minimum = workload.minimum_drain
    waits = format_seconds(minimum.value) if minimum.value is not None else str(minimum.value)
    yield Issue(
        workload.point_at(drain),
        f"terminationDrainDuration {drain.value} ({drain.where}) is never waited on: with {EXIT_ON_ZERO} ({exit_on_zero.where}) "
        f"the classic istio-proxy waits {MINIMUM_DRAIN} {waits} ({minimum.where}) and then exits as soon as no connection is open",
        f"remove terminationDrainDuration; to keep the proxy longer, raise {MINIMUM_DRAIN} (below terminationGracePeriodSeconds "
        f"{workload.grace_period.value})",
        related=origins(exit_on_zero, minimum),
    )


RULE = check
