"""A Job, CronJob or run-to-completion Pod with a classic Istio sidecar that is never told to exit.

## What it does
For Jobs, CronJobs, JobSets and Pods with `restartPolicy: Never` or `OnFailure` that get a classic
(non-native) Istio sidecar, checks that some container POSTs to the proxy's `/quitquitquit` (agent port
15020, or Envoy admin 15000) from localhost once the work is done: with curl, wget, a `python -c`,
`node -e` or `perl -e` one-liner, or the `scuttle` wrapper with `ISTIO_QUIT_API` set. Commands are read
as the shell runs them, so a quit call in a comment, in a trap on `INT`/`TERM` only (which a script
that ends by itself never fires), in an `EXIT` trap that a later `exec prog` drops (the program
replaces the shell), to another port (15021 is the health port), or through `pilot-agent` from an app
container (the binary is only in the istio-proxy image) does not count, and the message says which. Argo workflow pods are different: Argo's wait
container stops injected sidecars itself, through a shell in the sidecar's image or with the command
the pod annotation `workflows.argoproj.io/kill-cmd-istio-proxy` names; so for them the rule fires only
when the proxy image has no shell (Istio's distroless variant: Helm `global.variant: distroless`, or a
distroless `sidecar.istio.io/proxyImage`) and the annotation is missing.

## Why is this bad?
A classic istio-proxy never exits by itself, and a pod completes only when all its containers have
exited. The app container finishes, the proxy keeps running, the Job never completes, and a CronJob
piles up pods that hold their resources forever. `EXIT_ON_ZERO_ACTIVE_CONNECTIONS` does not help: it
only acts after SIGTERM, which nothing sends.

## Example
```yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: export
spec:
  template:
    metadata:  # expect: ML201:error
      labels: {app: export, sidecar.istio.io/inject: "true"}
    spec:
      restartPolicy: Never
      containers:
        - name: export
          image: export:1.0
          command: ["./export"]
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
      labels: {app: export, sidecar.istio.io/inject: "true"}
    spec:
      restartPolicy: Never
      containers:
        - name: export
          image: export:1.0
          command:
            - sh
            - -c
            - |
              trap 'curl -fsS -X POST http://localhost:15020/quitquitquit' EXIT
              ./export
```

## References
- https://istio.io/latest/blog/2023/native-sidecars/ (native sidecars let Jobs complete)
- istio/istio `pilot/cmd/pilot-agent/status/server.go` `handleQuit` (POST from localhost only)
- https://kubernetes.io/docs/concepts/workloads/pods/sidecar-containers/#jobs-with-sidecar-containers
- argoproj/argo-workflows `docs/sidecar-injection.md` (how Argo stops injected sidecars)
"""

from __future__ import annotations

from collections.abc import Iterator

from meshlint.findings import Issue, Severity
from meshlint.mesh.istio import ARGO_KILL_COMMAND, ARGO_KILL_COMMAND_ANNOTATION
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import BATCH_KINDS
from meshlint.rule import WORKLOAD, RuleContext, rule
from meshlint.wording import listing

NATIVE_FIRST = (
    'enable native sidecars (pod annotation sidecar.istio.io/nativeSidecar: "true", Istio 1.24+ and Kubernetes 1.29+), '
    "which Kubernetes stops when the work ends"
)
TRAP_QUIT = "or end the container's script with `trap 'curl -fsS -X POST http://localhost:15020/quitquitquit' EXIT`"


@rule(code="ML201", name="job-never-completes", severity=Severity.ERROR, scope=WORKLOAD, kinds=BATCH_KINDS | {"Pod"})
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    if not workload.classic_sidecar or not workload.template.runs_to_completion:
        return
    if workload.template.argo:
        yield from _argo(workload)
        return
    if any(call.quits for call in workload.quit_calls):
        return
    apps = [repr(c.name) for c in workload.app_containers]
    after = f"{'containers' if len(apps) > 1 else 'container'} {listing(apps)} {'exit' if len(apps) > 1 else 'exits'}"
    failed = [c for c in workload.quit_calls if c.why_not is not None]
    tail = f"; its quit call on line {failed[0].position.line} {failed[0].why_not}" if failed else ""
    dropped_by_exec = bool(failed) and "replaces the shell" in (failed[0].dropped or "")
    fix = "or run the program without `exec`, so the shell and its EXIT trap outlive it" if dropped_by_exec else TRAP_QUIT
    yield Issue(
        workload.template.fix_position,
        f"{workload.template.title} never completes: its classic istio-proxy sidecar keeps running after "
        f"{after}, because nothing POSTs to localhost:15020/quitquitquit{tail}",
        f"{NATIVE_FIRST}, {fix}",
    )


def _argo(workload: WorkloadView) -> Iterator[Issue]:
    """Argo's wait container stops injected sidecars itself, through a shell in their image or with
    the pod's kill-command annotation (reference §3.4); a distroless proxy has no shell."""
    no_shell = workload.proxy_without_shell
    if no_shell is None or workload.argo_kill_command is not None:
        return
    yield Issue(
        workload.template.fix_position,
        f"{workload.template.title} never completes: Argo stops an injected istio-proxy through a shell in its "
        f"image, and this proxy image has none ({no_shell.value}, {no_shell.where}), so the pod keeps running after the step",
        f"add the pod annotation {ARGO_KILL_COMMAND_ANNOTATION}: '{ARGO_KILL_COMMAND}' (the quit runs inside the proxy "
        "container, where pilot-agent is), or keep workflow pods out of the mesh",
    )


RULE = check
