"""`linkerd-await --shutdown` in a container that sets LINKERD_AWAIT_DISABLED or LINKERD_DISABLED.

## What it does
For pods with a classic Linkerd proxy, reports a `linkerd-await --shutdown` (or `-S`) wrapper in a
container whose env sets `LINKERD_AWAIT_DISABLED` or `LINKERD_DISABLED` to a non-empty value.

## Why is this bad?
Those variables are meant to skip the wait for the proxy (to run the image outside the mesh), but
linkerd-await then skips its whole await-and-shutdown branch and simply runs the program: it never
sends `/shutdown`, so the proxy keeps running and the Job never completes. Nothing says so in the logs.

## Example
```yaml
# config: {"linkerd-version": "2.15"}
apiVersion: batch/v1
kind: Job
metadata:
  name: backfill
spec:
  template:
    metadata:
      annotations: {linkerd.io/inject: enabled}
    spec:
      restartPolicy: Never
      containers:
        - name: backfill
          image: backfill:1.0
          command: ["linkerd-await", "-S", "--", "./backfill"]
          env:
            - name: LINKERD_AWAIT_DISABLED
              value: "true"  # expect: ML506:error
```

## Use instead
```yaml
# config: {"linkerd-version": "2.15"}
apiVersion: batch/v1
kind: Job
metadata:
  name: backfill
spec:
  template:
    metadata:
      annotations: {linkerd.io/inject: enabled}
    spec:
      restartPolicy: Never
      containers:
        - name: backfill
          image: backfill:1.0
          command: ["linkerd-await", "-S", "--", "./backfill"]
```

## References
- https://github.com/linkerd/linkerd-await (`src/main.rs`: with the variable set the command is exec'd)
- linkerd/linkerd-await PR #571 (`LINKERD_AWAIT_DISABLED` also skipped `--shutdown`)
"""

from __future__ import annotations

from collections.abc import Iterator

from meshlint.findings import Issue, Severity
from meshlint.mesh.facts.linkerdproxy import native_annotation_for
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.rule import WORKLOAD, RuleContext, rule


@rule(code="ML506", name="linkerd-await-disabled-by-env", severity=Severity.ERROR, scope=WORKLOAD, kinds=WORKLOAD_KINDS)
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    if not workload.classic_linkerd:
        return
    proxy = workload.linkerd_proxy
    for call in workload.linkerd_calls:
        disabled = call.disabled_by
        if not call.shutdown or disabled is None or disabled.origin is None:
            continue
        yield Issue(
            disabled.origin,
            f"{disabled.note} makes linkerd-await in {call.container.label} skip its whole wait-and-shutdown branch: "
            f"`{call.command}` runs the program and never sends /shutdown, so the classic Linkerd proxy ({proxy.assumed}) keeps "
            f"running after the work ends",
            f"remove {disabled.note.split('=')[0]} from this container; or enable native sidecars with the pod annotation "
            f"{native_annotation_for(proxy.version)}, which need no shutdown call",
        )


RULE = check
