"""A classic Istio sidecar whose drain does not fit in the pod's termination grace period.

## What it does
For pods with a classic (non-native) Istio sidecar, and for Istio gateways (whose proxy is the
workload), compares the proxy's effective
`terminationDrainDuration` (the pod's `proxy.istio.io/config` over the mesh `defaultConfig`, default
5s) with the pod's `terminationGracePeriodSeconds` (default 30). With `proxyMetadata`
`EXIT_ON_ZERO_ACTIVE_CONNECTIONS: "true"` the agent ignores `terminationDrainDuration` and waits at least
`MINIMUM_DRAIN_DURATION` (default 5s) instead, so that is the number compared. A grace period of 0 asks
for immediate deletion, without any graceful shutdown, and is left alone.

## Why is this bad?
On SIGTERM the agent stops accepting inbound connections, waits the whole drain duration and only then
stops Envoy. The kubelet does not wait that long: when the grace period ends it kills every container
that is still running. A drain longer than the grace period is therefore cut short by SIGKILL, and the
connections it was meant to let finish are reset, which shows up as 503s and resets during every
rollout. (At equality the agent's own stop and the kubelet's kill coincide: nothing is cut short.) The default grace period is 30 seconds; a drain raised to 45s "to be safe" never gets there.

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: payments
spec:
  template:
    metadata:
      annotations:
        proxy.istio.io/config: |
          terminationDrainDuration: 45s  # expect: ML301:error
    spec:
      containers:
        - name: payments
          image: payments:1.4
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: payments
spec:
  template:
    metadata:
      annotations:
        proxy.istio.io/config: |
          holdApplicationUntilProxyStarts: true
          terminationDrainDuration: 45s
    spec:
      terminationGracePeriodSeconds: 60
      containers:
        - name: payments
          image: payments:1.4
```

## Fix safety
Unsafe: `--fix --unsafe-fixes` raises `terminationGracePeriodSeconds` (or adds it to the pod spec) to the
drain plus 5s, rounded up to a multiple of 5 (and beyond the longest preStop sleep). A longer grace
period slows every rollout and node drain; lowering the drain instead is for a person to weigh.

## References
- istio/api `mesh/v1alpha1/proxy.proto` (`terminationDrainDuration`, default 5s)
- istio/istio `pkg/envoy/agent.go` `terminate()` (drain, wait, then stop Envoy; `EXIT_ON_ZERO_ACTIVE_CONNECTIONS`)
- https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-termination
- istio/istio#25575 (a 310s drain cut off at 30s), istio/istio#34855
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from meshlint.findings import Issue, Severity, recipe
from meshlint.mesh.facts.durations import format_seconds
from meshlint.mesh.istio import EXIT_ON_ZERO, MINIMUM_DRAIN
from meshlint.mesh.setting import Setting, origins
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.rule import WORKLOAD, RuleContext, rule

if TYPE_CHECKING:
    from meshlint.fix.edits import Fix


@rule(code="ML301", name="drain-exceeds-grace", severity=Severity.ERROR, scope=WORKLOAD, kinds=WORKLOAD_KINDS, fix="unsafe")
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    grace = workload.grace_period
    # A grace period of 0 asks for no graceful shutdown at all (delete immediately): nothing to cut short.
    if not workload.classic_istio_proxy or grace.value is None or grace.value == 0:
        return
    exit_on_zero = workload.exit_on_zero
    if exit_on_zero is not None:
        drain, name = workload.minimum_drain, MINIMUM_DRAIN
        mode = f", with {EXIT_ON_ZERO} ({exit_on_zero.where}) the agent waits at least that long before it may exit"
    else:
        drain, name, mode = workload.drain, "terminationDrainDuration", ""
    if drain.value is None or drain.value <= grace.value:
        return  # an invalid duration is ML002's to report
    yield Issue(
        workload.point_at(drain, grace),
        f"{name} {format_seconds(drain.value)} ({drain.where}) > terminationGracePeriodSeconds {grace.value} "
        f"({grace.where}){mode}: the kubelet kills istio-proxy at the deadline, so its drain is cut short by "
        f"{format_seconds(drain.value - grace.value)} and the connections still open are reset",
        f"set terminationGracePeriodSeconds above {format_seconds(drain.value)} plus the app's own shutdown time, "
        f"or lower {name} below the grace period",
        related=origins(drain, grace, exit_on_zero),
        fix=recipe(_longer_grace, workload, drain),
    )


def _longer_grace(workload: WorkloadView, drain: Setting[Any]) -> Fix | None:
    """Unsafe: a longer grace period slows every rollout and node drain down. The new value leaves 5s
    after the drain (and after the longest preStop sleep), rounded up to a multiple of 5."""
    from meshlint.fix import mapping

    template = workload.template
    if template.argo or not template.spec.is_map:
        return None
    sleeps = [s.seconds for s in workload.prestop_sleeps if not math.isinf(s.seconds)]
    seconds = math.ceil((max([drain.value, *sleeps]) + 5) / 5) * 5
    node = template.spec.get("terminationGracePeriodSeconds")
    if node.exists:
        change = mapping.replace_scalar(node, str(seconds))
    else:
        change = mapping.add(template.spec, mapping.entry("terminationGracePeriodSeconds", str(seconds)), first=True)
    return mapping.as_fix(f"set terminationGracePeriodSeconds to {seconds}", template.node, change, "unsafe")


RULE = check
