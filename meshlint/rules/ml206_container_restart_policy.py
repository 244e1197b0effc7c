"""A regular container with its own `restartPolicy`: rejected before Kubernetes 1.35, never a sidecar.

## What it does
Reports a `restartPolicy` on a container under `containers` (KEP-5307, container restart rules):
- on a Kubernetes version before 1.34, or 1.34 where the `ContainerRestartRules` gate is alpha and off
  by default, the API server rejects the pod (error);
- `Always` in a pod that runs to completion (a Job, a CronJob, `restartPolicy: Never`/`OnFailure`) keeps
  the pod from completing, whatever the version (error);
- `Always` while the Kubernetes version is unknown (warning): rejected before 1.35, and not a sidecar
  where accepted.

## Why is this bad?
Only an init container with `restartPolicy: Always` is a sidecar: it starts before the app, stays up
beside it and is stopped after it. The same field on a regular container (beta in Kubernetes 1.35) only
tells the kubelet to restart that container in place: it starts with the app, in no order, and a
container that is always restarted never lets a Job's pod complete. Before the feature, the API server
refuses the field on a regular container, so the workload gets no pods at all. A proxy or helper moved
there "to make it a sidecar" does neither.

## Example
```yaml
# config: {"kubernetes-version": "1.33"}
apiVersion: batch/v1
kind: Job
metadata:
  name: export
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: export
          image: export:1
        - name: log-shipper
          image: shipper:1
          restartPolicy: Always  # expect: ML206:error
```

## Use instead
```yaml
# config: {"kubernetes-version": "1.33"}
apiVersion: batch/v1
kind: Job
metadata:
  name: export
spec:
  template:
    spec:
      restartPolicy: Never
      initContainers:
        - name: log-shipper
          image: shipper:1
          restartPolicy: Always
      containers:
        - name: export
          image: export:1
```

## References
- https://github.com/kubernetes/enhancements/issues/5307 (container restart rules: alpha 1.34, beta 1.35)
- https://kubernetes.io/docs/concepts/workloads/pods/sidecar-containers/ (a sidecar is an init container with `restartPolicy: Always`)
- reference §2.1, §18.1 R6, §18.2 H12
"""

from __future__ import annotations

from collections.abc import Iterator

from meshlint.findings import Issue, Severity
from meshlint.mesh.options import at_least
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.rule import WORKLOAD, RuleContext, rule

MOVE = "move it to initContainers with restartPolicy: Always, which makes it a sidecar (Kubernetes 1.29+)"


@rule(code="ML206", name="container-restart-policy", severity=Severity.ERROR, scope=WORKLOAD, kinds=WORKLOAD_KINDS)
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    kubernetes = workload.options.versions.kubernetes
    completes = workload.template.runs_to_completion
    for container in workload.template.containers:
        policy = container.restart_policy
        if policy is None:
            continue
        where = container.restart_policy_position
        label = f"{container.label} has restartPolicy: {policy}"
        if kubernetes is not None and not at_least(kubernetes, "1.35"):
            gate = " unless the ContainerRestartRules feature gate (alpha) is on" if at_least(kubernetes, "1.34") else ""
            sidecar = f"; if it is meant as a sidecar, {MOVE}" if policy == "Always" else ""
            yield Issue(
                where,
                f"{label}, which Kubernetes {kubernetes} rejects on a regular container{gate}: the workload gets no pods{sidecar}",
                f"remove it{', or ' + MOVE if policy == 'Always' else ''}",
            )
        elif policy == "Always" and completes:
            yield Issue(
                where,
                f"{label} in {workload.template.title}, which runs to completion: Kubernetes restarts it whenever it exits, so the pod "
                "never completes; a regular container is no sidecar, whatever its restartPolicy",
                MOVE,
            )
        elif policy == "Always" and kubernetes is None:
            yield Issue(
                where,
                f"{label}: Kubernetes rejects that on a regular container before 1.35 (1.34 with the ContainerRestartRules gate), "
                "and where it is accepted the container is restarted in place but is no sidecar (it starts with the app, in no order)",
                MOVE,
                Severity.WARNING,
            )


RULE = check
