"""A Job, CronJob or run-to-completion Pod with a classic Linkerd proxy that is never told to shut down.

## What it does
For Linkerd-meshed Jobs, CronJobs, JobSets and Pods with `restartPolicy: Never` or `OnFailure` whose
proxy is classic, checks that some container releases the proxy when the work ends: runs under
`linkerd-await --shutdown` (`-S`), or POSTs to `localhost:4191/shutdown`. Native proxies (the default
from Linkerd 2.20, `--linkerd-version`) need neither. An Argo Workflow's pods are stopped by Argo's wait
container, which runs a shell in the sidecar unless `workflows.argoproj.io/kill-cmd-linkerd-proxy` names a
command: the linkerd-proxy image has no shell, so without the annotation such a pod never completes. Without a Linkerd version the proxy is assumed
classic and the finding is a warning, since 2.20 would make it native.

## Why is this bad?
A classic linkerd-proxy is a regular container that never exits by itself, and a pod completes only
when all its containers have exited. The work finishes, the proxy keeps running, the Job never
completes, and a CronJob piles up pods.

## Example
```yaml
# config: {"linkerd-version": "2.18"}
apiVersion: batch/v1
kind: Job
metadata:
  name: export
spec:
  template:
    metadata:  # expect: ML504:error
      annotations: {linkerd.io/inject: enabled}
    spec:
      restartPolicy: Never
      containers:
        - name: export
          image: export:1.0
          command: ["./export"]
```

## Use instead
```yaml
# config: {"linkerd-version": "2.18"}
apiVersion: batch/v1
kind: Job
metadata:
  name: export
spec:
  template:
    metadata:
      annotations:
        linkerd.io/inject: enabled
        config.alpha.linkerd.io/proxy-enable-native-sidecar: "true"
    spec:
      restartPolicy: Never
      containers:
        - name: export
          image: export:1.0
          command: ["./export"]
```

## References
- https://linkerd.io/2-edge/tasks/graceful-shutdown/ (Jobs: `linkerd-await --shutdown`, native sidecars)
- https://github.com/linkerd/linkerd-await (`--shutdown` sends POST /shutdown whatever the exit code)
- https://linkerd.io/2-edge/features/native-sidecars/
"""

from __future__ import annotations

from collections.abc import Iterator

from meshlint.findings import Issue, Severity
from meshlint.mesh.facts.linkerdproxy import native_annotation_for
from meshlint.mesh.linkerd import ADMIN_SHUTDOWN, SHUTDOWN_OFF_SINCE
from meshlint.mesh.linkerd import ARGO_KILL_COMMAND as KILL_COMMAND
from meshlint.mesh.options import at_least
from meshlint.mesh.setting import origins
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import BATCH_KINDS
from meshlint.rule import WORKLOAD, RuleContext, rule
from meshlint.wording import listing


@rule(code="ML504", name="linkerd-job-never-completes", severity=Severity.ERROR, scope=WORKLOAD, kinds=BATCH_KINDS | {"Pod"})
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    if not workload.classic_linkerd or not workload.template.runs_to_completion:
        return
    if workload.template.argo:
        yield from _argo(workload)
        return
    if any(call.shutdown for call in workload.linkerd_calls):
        return  # whether that call can work is ML505's and ML506's
    proxy = workload.linkerd_proxy
    apps = [repr(c.name) for c in workload.app_containers]
    after = f"{'containers' if len(apps) > 1 else 'container'} {listing(apps)} {'exit' if len(apps) > 1 else 'exits'}"
    endpoint = ""
    if proxy.version is None or at_least(proxy.version, SHUTDOWN_OFF_SINCE):
        endpoint = f" and, on Linkerd 2.16+, enable the endpoint with the pod annotation {ADMIN_SHUTDOWN}: enabled"
    yield Issue(
        workload.template.fix_position,
        f"{workload.template.title} never completes: its linkerd-proxy ({proxy.mode}) keeps running after "
        f"{after}, because nothing runs linkerd-await --shutdown or POSTs to localhost:4191/shutdown",
        f"enable native sidecars with the pod annotation {native_annotation_for(proxy.version)}, which Kubernetes stops when "
        f"the work ends; or run the program as `linkerd-await --shutdown -- <program>` (the binary in the app image){endpoint}",
        Severity.WARNING if proxy.native_assumed else None,
        related=origins(proxy.native),
    )


def _argo(workload: WorkloadView) -> Iterator[Issue]:
    """Argo's wait container stops an injected sidecar through a shell in its image (`kubectl exec ...
    /bin/sh -c 'kill 1'`) unless `workflows.argoproj.io/kill-cmd-linkerd-proxy` names a command; the
    linkerd-proxy image has no shell (reference §3.4, §18.2 H8)."""
    if KILL_COMMAND in workload.template.annotations():
        return
    proxy = workload.linkerd_proxy
    yield Issue(
        workload.template.fix_position,
        f"{workload.template.title} never completes: Argo stops an injected sidecar by running a shell in it, and the classic "
        f"linkerd-proxy ({proxy.mode}) has none, so it keeps running after the step ends (no {KILL_COMMAND} annotation names "
        "another command)",
        f"enable native sidecars with the pod annotation {native_annotation_for(proxy.version)} in the workflow's podMetadata, which "
        f"Kubernetes stops when the step ends; or keep workflow pods out of the mesh (linkerd.io/inject: disabled); or name a "
        f"command the proxy image has in {KILL_COMMAND}",
        Severity.WARNING if proxy.native_assumed else None,
        related=origins(proxy.native),
    )


RULE = check
