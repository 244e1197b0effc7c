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
      annotations:
        proxy.istio.io/config: '{"holdApplicationUntilProxyStarts": true}'
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

## Fix safety
Unsafe: `--fix --unsafe-fixes` adds the pod annotation `sidecar.istio.io/nativeSidecar: "true"` when the
target versions are known to take it (`--istio-version` 1.24+ and `--kubernetes-version` 1.29+), no
container makes a quit call already, and the proxy's startup probe is on. Native sidecars change how the
whole pod starts and stops, not only how it ends. For an Argo workflow pod the fix is safe: it adds the
`workflows.argoproj.io/kill-cmd-istio-proxy` annotation, which Argo runs only when the step is done.

## References
- https://istio.io/latest/blog/2023/native-sidecars/ (native sidecars let Jobs complete)
- istio/istio `pilot/cmd/pilot-agent/status/server.go` `handleQuit` (POST from localhost only)
- https://kubernetes.io/docs/concepts/workloads/pods/sidecar-containers/#jobs-with-sidecar-containers
- argoproj/argo-workflows `docs/sidecar-injection.md` (how Argo stops injected sidecars)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from meshlint.findings import Issue, Severity, recipe
from meshlint.mesh.istio import ARGO_KILL_COMMAND, ARGO_KILL_COMMAND_ANNOTATION, NATIVE_ANNOTATION
from meshlint.mesh.options import at_least
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import BATCH_KINDS
from meshlint.rule import WORKLOAD, RuleContext, rule
from meshlint.wording import listing

if TYPE_CHECKING:
    from meshlint.fix.edits import Fix

NATIVE_FIRST = (
    'enable native sidecars (pod annotation sidecar.istio.io/nativeSidecar: "true", Istio 1.24+ and Kubernetes 1.29+), '
    "which Kubernetes stops when the work ends"
)
TRAP_QUIT = "or end the container's script with `trap 'curl -fsS -X POST http://localhost:15020/quitquitquit' EXIT`"


@rule(code="ML201", name="job-never-completes", severity=Severity.ERROR, scope=WORKLOAD, kinds=BATCH_KINDS | {"Pod"}, fix="mixed")
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
    advice = "or run the program without `exec`, so the shell and its EXIT trap outlive it" if dropped_by_exec else TRAP_QUIT
    if workload.agent_only:  # grpc-agent keeps its agent a regular container whatever native says (reference §18.3.2)
        yield Issue(
            workload.template.fix_position,
            f"{workload.template.title} never completes{workload.classification.assumed_note}: its agent-only istio-proxy "
            f'(inject.istio.io/templates: "grpc-agent", a regular container even where native sidecars are on) keeps running after '
            f"{after}, because nothing POSTs to localhost:15020/quitquitquit{tail}",
            f"{advice.removeprefix('or ')}; native sidecars do not help here, the grpc-agent template never makes its agent one",
        )
        return
    yield Issue(
        workload.template.fix_position,
        f"{workload.template.title} never completes{workload.classification.assumed_note}: its classic istio-proxy sidecar keeps running after "
        f"{after}, because nothing POSTs to localhost:15020/quitquitquit{tail}",
        f"{NATIVE_FIRST}, {advice}",
        fix=recipe(_native, workload),
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
        fix=recipe(_kill_command, workload),
    )


def _native(workload: WorkloadView) -> Fix | None:
    """Unsafe: native sidecars change how the whole pod starts and stops, not only how it ends.
    Offered only when the target versions are known to take the annotation (Istio 1.24+, Kubernetes
    1.29+), and not when a container already makes a quit call (with a native sidecar that call is
    needless, ML204) or the proxy's startup probe is off (ML103)."""
    from meshlint.fix import annotation, mapping
    from meshlint.fix.edits import UNSAFE

    versions = workload.options.versions
    if not (at_least(versions.istio, "1.24") and at_least(versions.kubernetes, "1.29")):
        return None
    if workload.quit_calls or workload.startup_probe_off is not None or workload.injected_proxy is not None:
        return None
    quote = annotation.pod_quote(workload.template)
    value = f"{quote}true{quote}"
    present = workload.template.annotations().get(NATIVE_ANNOTATION)
    if present is not None:
        change = mapping.replace_scalar(present, value)
    else:
        change = annotation.add_to_pod(workload.template, mapping.entry(NATIVE_ANNOTATION, value))
    return mapping.as_fix(f"add the pod annotation {NATIVE_ANNOTATION}: {value}", workload.template.node, change, UNSAFE)


def _kill_command(workload: WorkloadView) -> Fix | None:
    """Safe: Argo runs the command only when the step is done, to stop the proxy."""
    from meshlint.fix import annotation, mapping

    content = mapping.entry(ARGO_KILL_COMMAND_ANNOTATION, f"'{ARGO_KILL_COMMAND}'")
    change = annotation.add_to_pod(workload.template, content)
    return mapping.as_fix(f"add the pod annotation {ARGO_KILL_COMMAND_ANNOTATION}: '{ARGO_KILL_COMMAND}'", workload.template.node, change)


RULE = check
