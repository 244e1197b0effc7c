"""A container's preStop sleep uses up the pod's whole termination grace period.

## What it does
Compares each container's preStop sleep (exec `sleep N` or `/bin/sleep N`, a `sh -c` script that
sleeps, or the `preStop.sleep.seconds` action) with the pod's `terminationGracePeriodSeconds`
(default 30). The sleeps a script surely runs add up (not one in an `if` branch, a loop or the
background), and a length from the container's env (`sleep $DRAIN`) counts. Applies to every pod,
meshed or not, except the preStop sleep `linkerd inject` renders on its proxy, which ML509 reports.

## Why is this bad?
The grace period starts counting before the preStop hook runs, and the container gets SIGTERM only
after its preStop has finished. A sleep as long as the grace period leaves the application only the
kubelet's one-off 2-second extension to shut down before it is killed, so in-flight work is lost and
connections are reset. A `preStop.sleep.seconds` longer than the grace period is worse: the API server
rejects the pod.

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: frontend
spec:
  template:
    metadata:
      labels: {app: frontend}
    spec:
      containers:
        - name: frontend
          image: frontend:2
          lifecycle:
            preStop:
              exec:
                command: ["sleep", "30"]  # expect: ML303:error
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: frontend
spec:
  template:
    metadata:
      labels: {app: frontend}
    spec:
      terminationGracePeriodSeconds: 60
      containers:
        - name: frontend
          image: frontend:2
          lifecycle:
            preStop:
              exec:
                command: ["sleep", "30"]
```

## References
- https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-termination
- Kubernetes API reference, `Lifecycle.preStop` ("The Pod's termination grace period countdown begins before the PreStop hook is executed")
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from meshlint.findings import Issue, Severity
from meshlint.mesh.setting import origins
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.rule import WORKLOAD, RuleContext, rule


@rule(code="ML303", name="prestop-exceeds-grace", severity=Severity.ERROR, scope=WORKLOAD, kinds=WORKLOAD_KINDS)
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    grace = workload.grace_period
    if grace.value is None:
        return
    # The preStop sleep `linkerd inject` rendered is Linkerd's wait before exit: ML509 says it.
    linkerd_wait = workload.linkerd_proxy.wait_before_exit if workload.linkerd else None
    for sleep in workload.prestop_sleeps:
        if sleep.seconds <= 0 or sleep.seconds < grace.value:
            continue
        if linkerd_wait is not None and linkerd_wait.origin == sleep.position:
            continue
        if sleep.action and sleep.seconds > grace.value:
            effect = "the API server rejects the pod: a preStop sleep action may not be longer than the grace period"
        else:
            effect = (
                "the grace period runs during preStop, so when the sleep ends the container is left about 2 s "
                "(the kubelet's one-off extension) to shut down before it is killed"
            )
        yield Issue(
            sleep.position,
            f"{sleep} ≥ terminationGracePeriodSeconds {grace.value} ({grace.where}): {effect}",
            "replace the endless sleep with a bounded one, shorter than the grace period"
            if math.isinf(sleep.seconds)
            else f"set terminationGracePeriodSeconds above {sleep.text} plus the app's shutdown time, or shorten the sleep",
            related=origins(grace),
        )


RULE = check
