"""`proxy-wait-before-exit-seconds` that cuts the grace period, or that native sidecars ignore or reject.

## What it does
For Linkerd-meshed pods, reads `config.alpha.linkerd.io/proxy-wait-before-exit-seconds` (pod template
or namespace) or Helm `proxy.waitBeforeExitSeconds`, and reports:
- with a classic proxy, a wait at or above `terminationGracePeriodSeconds` (error);
- with native sidecars on Linkerd 2.20+, that the wait is ignored (warning);
- with native sidecars on Linkerd 2.15-2.19, that the injector rejects the pod (error).
Native sidecars are the default from 2.20, so give `--linkerd-version`. Committed `linkerd inject` output
counts too: a classic proxy's preStop `/bin/sleep N` is the wait it rendered.

## Why is this bad?
The wait is a preStop `sleep` on the classic proxy that delays its SIGTERM, so the app can finish its
requests first; it "must be smaller than terminationGracePeriodSeconds". At or above the grace period
the kubelet kills the proxy mid-sleep, with the app's last connections. A native proxy gets no preStop:
2.20 silently drops the setting (existing annotations stop working on upgrade, since native became the
default), and 2.15-2.19 fail the injection ("proxy.nativeSidecar and waitBeforeExitSeconds cannot be
used simultaneously"), so the pod is not created.

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  selector: {matchLabels: {app: api}}
  template:
    metadata:
      labels: {app: api}
      annotations:
        linkerd.io/inject: enabled
        config.alpha.linkerd.io/proxy-wait-before-exit-seconds: "40"  # expect: ML509:error
    spec:
      containers:
        - name: api
          image: api:1.0
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  selector: {matchLabels: {app: api}}
  template:
    metadata:
      labels: {app: api}
      annotations:
        linkerd.io/inject: enabled
        config.alpha.linkerd.io/proxy-wait-before-exit-seconds: "20"
    spec:
      terminationGracePeriodSeconds: 45
      containers:
        - name: api
          image: api:1.0
```

## References
- linkerd/linkerd2 `pkg/k8s/labels.go` ("Must be smaller than terminationGracePeriodSeconds")
- linkerd/linkerd2 `charts/partials/templates/_proxy.tpl` (preStop only when not native; `fail` in 2.15-2.19)
- linkerd/linkerd2 commit 009a25fa3 (2.20: native by default, the wait ignored when native)
"""

from __future__ import annotations

from collections.abc import Iterator

from meshlint.findings import Issue, Severity
from meshlint.mesh.facts.linkerdproxy import said
from meshlint.mesh.linkerd import NATIVE_DEFAULT_SINCE, WAIT_BEFORE_EXIT
from meshlint.mesh.options import at_least
from meshlint.mesh.setting import origins
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.rule import WORKLOAD, RuleContext, rule


@rule(code="ML509", name="linkerd-wait-before-exit", severity=Severity.ERROR, scope=WORKLOAD, kinds=WORKLOAD_KINDS)
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    if not workload.linkerd:
        return
    proxy = workload.linkerd_proxy
    wait = proxy.wait_before_exit
    if wait is None or wait.value is None:
        return  # not set, or not a number (ML507)
    native = proxy.native
    where = workload.point_at(wait)
    # Rendered native by `linkerd inject`: the injector took the pod, so it is a release that ignores the wait.
    ignored = proxy.injected is not None or (proxy.version is not None and at_least(proxy.version, NATIVE_DEFAULT_SINCE))
    if native.value and ignored:
        yield Issue(
            where,
            f"{said(wait)}: {proxy.assumed if proxy.version is not None else 'Linkerd'} ignores proxy-wait-before-exit-seconds for native sidecars ({proxy.mode}), so the "
            "proxy gets no preStop delay",
            "drop it: a native proxy is stopped only after the app containers have exited; to give the app time to drain, "
            "give the app container its own preStop sleep within terminationGracePeriodSeconds",
            Severity.WARNING,
            related=origins(wait, native),
        )
        return
    if native.value:
        fails = "fails" if proxy.version is not None else "(2.15-2.19; 2.20+ ignores the wait) fails"
        yield Issue(
            where,
            f"{said(wait)} with native sidecars ({proxy.mode}): Linkerd {fails} the injection (\"proxy.nativeSidecar and "
            "waitBeforeExitSeconds cannot be used simultaneously\"), so the pod is rejected",
            f"remove {WAIT_BEFORE_EXIT} (a native proxy is stopped after the app exits), or keep the classic proxy",
            related=origins(wait, native),
        )
        return
    grace = workload.grace_period
    if grace.value is not None and wait.value >= grace.value:
        yield Issue(
            where,
            f"{said(wait)} is not below terminationGracePeriodSeconds {grace.value} ({grace.where}): the kubelet kills the classic "
            f"Linkerd proxy ({proxy.assumed}) while it still waits, together with the app's last connections",
            f"raise terminationGracePeriodSeconds above {wait.value} (and the app's own shutdown time), or lower the wait",
            related=origins(wait, grace),
        )


RULE = check
