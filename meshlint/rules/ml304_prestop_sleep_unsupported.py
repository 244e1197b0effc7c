"""A `preStop.sleep` action that the target Kubernetes version drops or rejects.

## What it does
With `--kubernetes-version` (or `kubernetes-version:` in the config), reports each container's
`lifecycle.preStop.sleep` action on Kubernetes older than 1.30, and `sleep: {seconds: 0}` on
Kubernetes older than 1.33. Applies to every pod, meshed or not. Silent when no Kubernetes version is
given.

## Why is this bad?
The sleep action is behind the `PodLifecycleSleepAction` feature gate: alpha (off) in 1.29, on by
default from 1.30, GA in 1.34; before 1.29 the field does not exist. Where the gate is off, the API
server drops the sleep (and a preStop holding nothing else) without an error, so the pod gets SIGTERM
at once while its endpoints are still being removed, which is exactly what the sleep was there to
cover: requests still routed to the pod fail during every rollout. A zero-second sleep needs
`PodLifecycleSleepActionAllowZero` (on by default from 1.33); before that the API server rejects the
pod ("must be greater than 0").

## Example
```yaml
# config: {"kubernetes-version": "1.29"}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
        - name: web
          image: nginx:1.27
          lifecycle:
            preStop:
              sleep: {seconds: 10}  # expect: ML304:error
```

## Use instead
```yaml
# config: {"kubernetes-version": "1.29"}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
        - name: web
          image: nginx:1.27
          lifecycle:
            preStop:
              exec:
                command: ["sleep", "10"]
```
An exec sleep needs a `sleep` binary in the image; on 1.30 and later the sleep action needs none.

## References
- https://kubernetes.io/docs/concepts/containers/container-lifecycle-hooks/#hook-handler-implementations
- Kubernetes feature gates `PodLifecycleSleepAction` (alpha 1.29, beta 1.30, GA 1.34) and `PodLifecycleSleepActionAllowZero` (alpha 1.32, beta 1.33, GA 1.34)
- kubernetes/kubernetes `pkg/api/pod/util.go` (`dropPodLifecycleSleepAction`); KEP-4818
- reference §14.2
"""

from __future__ import annotations

from collections.abc import Iterator

from meshlint.findings import Issue, Severity
from meshlint.mesh.options import at_least
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.rule import WORKLOAD, RuleContext, rule

DROPPED = "the pod gets SIGTERM at once, while its endpoints are still being removed, and requests still routed to it fail"


@rule(code="ML304", name="prestop-sleep-unsupported", severity=Severity.ERROR, scope=WORKLOAD, kinds=WORKLOAD_KINDS)
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    version = workload.options.versions.kubernetes
    if version is None:
        return
    for sleep in workload.prestop_sleeps:
        if not sleep.action:
            continue
        if not at_least(version, "1.29"):
            what = f"Kubernetes {version} does not know the preStop sleep action (added in 1.29), so the hook never sleeps: {DROPPED}"
        elif not at_least(version, "1.30"):
            what = (
                f"Kubernetes {version} drops the preStop sleep action without an error (the PodLifecycleSleepAction gate is "
                f"alpha and off in 1.29, on from 1.30): {DROPPED}"
            )
        elif sleep.seconds == 0 and not at_least(version, "1.33"):
            what = (
                f"Kubernetes {version} rejects the pod: a zero-second sleep needs the PodLifecycleSleepActionAllowZero gate, "
                "on by default from 1.33 (before, the seconds must be greater than 0)"
            )
        else:
            continue
        yield Issue(
            sleep.position,
            f"{sleep.container.label} preStop `{sleep.form}`: {what}",
            "remove the zero-second sleep, which waits for nothing"
            if sleep.seconds == 0
            else f'use an exec hook (`exec: {{command: ["sleep", "{sleep.seconds:g}"]}}`, which needs a sleep binary in the image), '
            "or target Kubernetes 1.30 or later",
        )


RULE = check
