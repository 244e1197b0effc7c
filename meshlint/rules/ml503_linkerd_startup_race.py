"""A Linkerd-meshed workload whose app can start before its proxy is ready: proxy-await is off.

## What it does
For pods that Linkerd meshes, reports `config.linkerd.io/proxy-await: disabled` (on the pod template
or inherited from the namespace) and Helm `proxy.await: false`, unless every app container runs its
program under a `linkerd-await` wrapper. Evidence that the app calls out as soon as it starts (the
same as ML101) makes it an error. A proxy that `linkerd inject` already rendered is judged by what it
has: the postStart hook or the startupProbe.

## Why is this bad?
Linkerd orders startup by default: a classic proxy is injected first with a postStart hook that runs
`linkerd-await`, and a native proxy gets a startupProbe. Turning await off removes both: the classic
proxy is appended last with no hook, the native one has no startupProbe, and the app's first
connections (a database, a config server) fail until the proxy is up. Unlike Istio, native sidecars do
not fix this on their own, because Linkerd's startupProbe *is* the await setting.

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: orders
spec:
  selector: {matchLabels: {app: orders}}
  template:
    metadata:
      labels: {app: orders}
      annotations:
        linkerd.io/inject: enabled
        config.linkerd.io/proxy-await: disabled  # expect: ML503:error
    spec:
      containers:
        - name: orders
          image: orders:2.1
          env:
            - {name: DATABASE_URL, value: "postgres://db.orders.svc:5432/orders"}
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: orders
spec:
  selector: {matchLabels: {app: orders}}
  template:
    metadata:
      labels: {app: orders}
      annotations:
        linkerd.io/inject: enabled
    spec:
      containers:
        - name: orders
          image: orders:2.1
          env:
            - {name: DATABASE_URL, value: "postgres://db.orders.svc:5432/orders"}
```

## References
- linkerd/linkerd2 `charts/patch/templates/patch.json` (await off: the proxy is appended last) and
  `charts/partials/templates/_proxy.tpl` (native startupProbe only with await)
- https://github.com/linkerd/linkerd-await
"""

from __future__ import annotations

from collections.abc import Iterator

from meshlint.findings import Issue, Severity
from meshlint.mesh.facts.linkerdproxy import said
from meshlint.mesh.linkerd import AWAIT
from meshlint.mesh.setting import origins
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.rule import WORKLOAD, RuleContext, rule
from meshlint.wording import listing


@rule(code="ML503", name="linkerd-startup-race", severity=Severity.WARNING, scope=WORKLOAD, kinds=WORKLOAD_KINDS)
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    if not workload.linkerd:
        return
    proxy = workload.linkerd_proxy
    disabled = proxy.await_disabled
    if disabled is None:
        return
    wrapped = {call.container.name for call in workload.linkerd_calls if call.waits and call.disabled_by is None}
    unwrapped = [c for c in workload.app_containers if c.name not in wrapped]
    if not unwrapped:
        return
    names = {c.name for c in unwrapped}
    # The whole pod's evidence (a Job's work is done at startup) unless some containers are wrapped.
    evidence = workload.startup_evidence if len(unwrapped) == len(workload.app_containers) else [e for c in unwrapped for e in workload.evidence(c)]
    native = proxy.native.value
    what = "the native proxy's startupProbe" if native else "the classic proxy's postStart linkerd-await hook"
    message = (
        f"{workload.template.title} can start before its Linkerd proxy is ready ({proxy.assumed}, "
        f"{'native' if native else 'classic'} proxy): {said(disabled)} leaves out {what}, and "
        f"{listing(repr(n) for n in sorted(names))} {'run' if len(names) > 1 else 'runs'} without a linkerd-await wrapper"
    )
    if evidence:
        message += "; it calls out at startup: " + listing(str(e) for e in evidence[:5])
    yield Issue(
        workload.point_at(disabled),
        message,
        f"remove {AWAIT}: disabled (or write enabled) and leave Helm proxy.await at its default true, or run the program "
        "as `linkerd-await -- <program>` (the binary must be in the app image)",
        Severity.ERROR if evidence else None,
        related=origins(disabled),
    )


RULE = check
