"""A drain setting on a pod whose Istio sidecar is native, which never waits on it.

## What it does
For pods whose Istio sidecar runs as a native sidecar (an init container with `restartPolicy:
Always`), reports the drain settings the pod's own `proxy.istio.io/config` writes:
`terminationDrainDuration`, and in `proxyMetadata` `EXIT_ON_ZERO_ACTIVE_CONNECTIONS: "true"` and
`MINIMUM_DRAIN_DURATION`. Native sidecars are in effect as ML101 and ML104 read them: an injected
native `istio-proxy`, `sidecar.istio.io/nativeSidecar`, `ENABLE_NATIVE_SIDECARS`, or Istio's `auto`
default on the target versions. Silent where the native drain hook is not in place: Helm
`global.proxy.lifecycle` replaces it, `status.sidecar.istio.io/port: "0"` breaks it, and Istio before
1.21 had none. The same settings made mesh-wide are left alone: they still serve classic sidecars.

## Why is this bad?
Since Istio 1.21 a native sidecar gets a preStop hook that starts the proxy's drain as soon as the
pod begins terminating, and the SIGTERM it receives after the app containers have exited makes the
agent exit at once ("Agent already drained, exiting immediately"). The drain duration, the
exit-on-zero-connections mode and its minimum drain are never consulted: what bounds the proxy's
shutdown is the pod's `terminationGracePeriodSeconds`, shared with the app. A setting that looks like
it protects connections does nothing, and tuning it hides where the real budget is.

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
        sidecar.istio.io/nativeSidecar: "true"
        proxy.istio.io/config: |
          terminationDrainDuration: 45s  # expect: ML305:info
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
        sidecar.istio.io/nativeSidecar: "true"
    spec:
      terminationGracePeriodSeconds: 60
      containers:
        - name: api
          image: api:1
```

## References
- istio/istio `pkg/envoy/agent.go` (`terminate`: "Agent already drained, exiting immediately"), injection template (native preStop `pilot-agent request POST drain`)
- https://kubernetes.io/docs/concepts/workloads/pods/sidecar-containers/ (sidecars stop after the app containers)
- reference §14.3, §14.4
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from meshlint.findings import Issue, Severity
from meshlint.mesh.istio import EXIT_ON_ZERO, MINIMUM_DRAIN
from meshlint.mesh.setting import Setting, origins
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.rule import WORKLOAD, RuleContext, rule


@rule(code="ML305", name="drain-setting-ignored-native", severity=Severity.INFO, scope=WORKLOAD, kinds=WORKLOAD_KINDS)
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    drain = workload.native_drain
    if drain is None:
        return
    native = workload.native
    for name, setting in _pod_settings(workload):
        yield Issue(
            workload.point_at(setting),
            f"{name} ({setting.where}) is ignored: istio-proxy runs as a native sidecar ({native.cited}); "
            f"{drain.note}, and the agent exits at once on the SIGTERM that follows the app's exit, so the setting is never waited on",
            f"remove it; terminationGracePeriodSeconds (now {workload.grace_period.value}) is what bounds the shutdown "
            "of the app and its proxy together",
            related=origins(native, drain),
        )


def _pod_settings(workload: WorkloadView) -> Iterator[tuple[str, Setting[Any]]]:
    """The drain settings the pod itself writes, as written."""
    drain = workload.proxy_config.get("terminationDrainDuration")
    if drain is not None and drain.local:
        yield f"terminationDrainDuration {drain.value}", drain
    exit_on_zero = workload.exit_on_zero
    if exit_on_zero is not None and exit_on_zero.local:
        yield f"{EXIT_ON_ZERO}={exit_on_zero.value}", exit_on_zero
    minimum = workload.proxy_metadata.get(MINIMUM_DRAIN)
    if minimum is not None and minimum.local:
        yield f"{MINIMUM_DRAIN}={minimum.value}", minimum


RULE = check
