"""A quit call that also runs on failure, in a pod whose failed container is retried in place.

## What it does
For pods with `restartPolicy: OnFailure` and a classic Istio sidecar (or a classic Linkerd proxy),
reports a call that makes the proxy exit (`/quitquitquit` on 15020, Linkerd's `/shutdown` on 4191) and
that runs however the work ends: in a `trap … EXIT`, or after a step whose failure does not stop the
script (`./work; curl -X POST …`).

## Why is this bad?
Under `OnFailure` the kubelet restarts a failed container in the same pod; a classic sidecar that has
exited is not restarted with it (the pod is not restarted, and the proxy's own exit code was 0). A quit
that runs on failure stops the proxy at the first failed attempt, and every retry then runs without it:
its calls are refused (nothing listens on the port the traffic is redirected to) or leave without mTLS.
The maintainers' advice is to quit on success only under `OnFailure` (istio/istio#45627).

## Example
```yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: import
spec:
  template:
    metadata:
      annotations:
        proxy.istio.io/config: '{"holdApplicationUntilProxyStarts": true}'
    spec:
      restartPolicy: OnFailure
      containers:
        - name: import
          image: import:1
          command:
            - sh
            - -c
            - |
              trap 'curl -fsS -X POST http://localhost:15020/quitquitquit' EXIT  # expect: ML205:warning
              ./import
```

## Use instead
```yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: import
spec:
  template:
    metadata:
      annotations:
        proxy.istio.io/config: '{"holdApplicationUntilProxyStarts": true}'
    spec:
      restartPolicy: OnFailure
      containers:
        - name: import
          image: import:1
          command:
            - sh
            - -c
            - ./import && curl -fsS -X POST http://localhost:15020/quitquitquit
```

## References
- istio/istio#45627 (a maintainer on quitting only on success under `OnFailure`)
- https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#restart-policy
- reference §18.2 H6, §18.3.10
"""

from __future__ import annotations

from collections.abc import Iterator

from meshlint.findings import Issue, Severity
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.rule import WORKLOAD, RuleContext, rule


@rule(code="ML205", name="quit-before-retries", severity=Severity.WARNING, scope=WORKLOAD, kinds=WORKLOAD_KINDS)
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    if workload.template.restart_policy != "OnFailure":
        return
    if workload.classic_sidecar:
        calls, proxy, endpoint = workload.quit_calls, "istio-proxy", "localhost:15020/quitquitquit"
    elif workload.classic_linkerd:
        calls, proxy, endpoint = workload.linkerd_shutdown_calls, "linkerd-proxy", "localhost:4191/shutdown"
    else:
        return
    for call in calls:
        if not (call.quits and call.runs_on_failure):
            continue
        how = "in a trap on EXIT" if call.in_exit_trap else "whether or not the work before it succeeded"
        yield Issue(
            call.position,
            f"container {call.container.name!r} stops the classic {proxy} {how} (`{call.command}`), under restartPolicy: OnFailure: "
            f"the first failed attempt stops the proxy, which is not restarted, and every retry of the container runs without it",
            f"quit on success only (`./work && curl -fsS -X POST http://{endpoint}`), so retries keep the proxy; or use native sidecars",
        )


RULE = check
