"""A `/quitquitquit` call while native sidecars are in effect: unnecessary, and the proxy restarts.

## What it does
Reports quit calls that would make the proxy exit (a POST that runs: not a comment, not one an
`exec` drops) in pods whose Istio sidecar is native (an init container with `restartPolicy: Always`),
as decided by the mesh context.

## Why is this bad?
Kubernetes stops native sidecars itself once the main containers have finished, so Jobs complete
without help. A native sidecar that quits early is restarted (its restart policy is `Always`), and
until it is back the containers that still run have no proxy.

## Example
```yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: export
spec:
  template:
    metadata:
      annotations:
        sidecar.istio.io/nativeSidecar: "true"
    spec:
      restartPolicy: Never
      containers:
        - name: export
          image: export:1.0
          command: ["sh", "-c", "./export; curl -X POST localhost:15020/quitquitquit"]  # expect: ML204:info
```

## Use instead
```yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: export
spec:
  template:
    metadata:
      annotations:
        sidecar.istio.io/nativeSidecar: "true"
    spec:
      restartPolicy: Never
      containers:
        - name: export
          image: export:1.0
          command: ["./export"]
```

## References
- https://kubernetes.io/docs/concepts/workloads/pods/sidecar-containers/#jobs-with-sidecar-containers
- KEP-753 (sidecars do not block pod completion)
"""

from __future__ import annotations

from collections.abc import Iterator

from meshlint.findings import Issue, Severity
from meshlint.mesh.setting import origins
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.rule import WORKLOAD, RuleContext, rule


@rule(code="ML204", name="quit-with-native-sidecar", severity=Severity.INFO, scope=WORKLOAD, kinds=WORKLOAD_KINDS)
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    if not workload.native_sidecar:
        return
    for call in workload.quit_calls:
        if not call.quits:
            continue
        yield Issue(
            call.position,
            f"container {call.container.name!r} quits the proxy (`{call.command}`), but the sidecar is native ({workload.native.cited}): Kubernetes stops it by itself and restarts it if it quits early",
            "remove the quit call",
            related=origins(workload.native),
        )


RULE = check
