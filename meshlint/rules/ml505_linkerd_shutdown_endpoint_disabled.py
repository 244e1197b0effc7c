"""A call to the Linkerd proxy's /shutdown, which answers 404 since Linkerd 2.16 unless it is enabled.

## What it does
For pods with a classic Linkerd proxy, reports `linkerd-await --shutdown` and `POST
localhost:4191/shutdown` when the target Linkerd is 2.16 or later (or unknown) and nothing enables the
endpoint: no `config.linkerd.io/proxy-admin-shutdown: enabled` on the pod template or its namespace,
no Helm `proxy.enableShutdownEndpoint: true` in the control plane's values.

## Why is this bad?
Linkerd 2.16 switched the proxy's shutdown endpoint off by default. The call gets `404 shutdown
endpoint is not enabled`, the proxy keeps running, and the Job that "quits its proxy correctly" hangs
exactly as if it made no call at all (linkerd/linkerd2#12951).

## Example
```yaml
# config: {"linkerd-version": "2.16"}
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
spec:
  template:
    metadata:
      annotations: {linkerd.io/inject: enabled}
    spec:
      restartPolicy: Never
      containers:
        - name: migrate
          image: migrate:1.0
          command: ["linkerd-await", "--shutdown", "--", "./migrate"]  # expect: ML505:error
```

## Use instead
```yaml
# config: {"linkerd-version": "2.16"}
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
spec:
  template:
    metadata:
      annotations:
        linkerd.io/inject: enabled
        config.linkerd.io/proxy-admin-shutdown: enabled
    spec:
      restartPolicy: Never
      containers:
        - name: migrate
          image: migrate:1.0
          command: ["linkerd-await", "--shutdown", "--", "./migrate"]
```

## Fix safety
Unsafe. `--fix --unsafe-fixes` adds the pod annotation `config.linkerd.io/proxy-admin-shutdown:
enabled` (or sets it to `enabled`). It opens the proxy's shutdown endpoint to every process in the
pod, which Linkerd closed by default on purpose; native sidecars, which need no shutdown call, are the
better change, and a person's to make.

## References
- linkerd/linkerd2 commit 35fb2d6d1 "feat!: Add config to disable proxy /shutdown admin endpoint" (2.16)
- linkerd/linkerd2-proxy `linkerd/app/admin/src/server.rs` (404 "shutdown endpoint is not enabled")
- https://linkerd.io/2-edge/tasks/graceful-shutdown/
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from meshlint.findings import Issue, Severity, recipe
from meshlint.mesh.facts.linkerdproxy import native_annotation_for
from meshlint.mesh.linkerd import ADMIN_SHUTDOWN
from meshlint.mesh.setting import origins
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.rule import WORKLOAD, RuleContext, rule

if TYPE_CHECKING:
    from meshlint.fix.edits import Fix


@rule(code="ML505", name="linkerd-shutdown-endpoint-disabled", severity=Severity.ERROR, scope=WORKLOAD, kinds=WORKLOAD_KINDS, fix="unsafe")
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    if not workload.classic_linkerd:
        return  # a native proxy needs no shutdown call (reference §11.3.4)
    proxy = workload.linkerd_proxy
    endpoint = proxy.shutdown_endpoint
    if endpoint.value:
        return
    for call in workload.linkerd_calls:
        if not call.shutdown:
            continue
        assumed = f"{proxy.assumed}: assuming 2.16 or later" if proxy.version is None else proxy.assumed
        yield Issue(
            call.position,
            f"{call.container.label} asks its Linkerd proxy to shut down ({call.command}), but the proxy answers 404 and keeps "
            f"running: {endpoint.cited} ({assumed}), so {workload.template.title} never completes",
            f"enable native sidecars with the pod annotation {native_annotation_for(proxy.version)}, which need no shutdown call; "
            f"or add the pod annotation {ADMIN_SHUTDOWN}: enabled (or Helm proxy.enableShutdownEndpoint: true)",
            related=origins(endpoint),
            fix=recipe(_enable, workload),
        )


def _enable(workload: WorkloadView) -> Fix | None:
    """Unsafe: the pod annotation opens the proxy's shutdown endpoint to every process in the pod,
    which Linkerd closed by default on purpose; native sidecars are the better change, and a person's."""
    from meshlint.fix import annotation, mapping
    from meshlint.fix.edits import UNSAFE

    quote = annotation.pod_quote(workload.template)
    present = workload.template.annotations().get(ADMIN_SHUTDOWN)
    if present is not None:
        written = f"{quote}enabled{quote}" if present.style in ('"', "'") else "enabled"
        change = mapping.replace_scalar(present, written)
    else:
        change = annotation.add_to_pod(workload.template, mapping.entry(ADMIN_SHUTDOWN, "enabled"))
    return mapping.as_fix(f"add the pod annotation {ADMIN_SHUTDOWN}: enabled", workload.template.node, change, UNSAFE)


RULE = check
