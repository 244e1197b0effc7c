"""Outbound traffic that leaves around the sidecar, without mesh mTLS or identity.

## What it does
For pods with an Istio sidecar, reads the effective outbound capture settings: the pod-template
annotations `traffic.sidecar.istio.io/excludeOutboundPorts`, `excludeOutboundIPRanges` and
`includeOutboundIPRanges`, or, when a pod has no annotation, their mesh-wide Helm values
`global.proxy.excludeOutboundPorts`, `global.proxy.excludeIPRanges` and `global.proxy.includeIPRanges`
(an annotation replaces the mesh value; the two are never merged). Reports every excluded port or
range, and an include list narrower than `*`. It is an error when all outbound traffic bypasses the
proxy: `0.0.0.0/0` or `::/0` excluded, or an empty `includeOutboundIPRanges`. When an excluded port is
one the workload's env points at (a database URL, say), the message says so: that is the usual
workaround for the startup race. An excluded port is not reported when every Service of the run that
serves it (in the workload's namespace, unit and path) selects pods that opt out of injection
(`sidecar.istio.io/inject: "false"`, as a database kept outside the mesh often does): that traffic
was never going to carry mesh mTLS.

## Why is this bad?
Excluded packets never reach Envoy. The workload talks to those destinations without mesh mTLS and
without a client identity: a destination in STRICT mode refuses the connection, a PERMISSIVE one
accepts it as plaintext, and no AuthorizationPolicy can tell who called. Excluding the database port
so that the app can connect before its proxy is ready trades a startup race for an unencrypted,
unauthenticated database connection; holding the app until the proxy starts, or native sidecars, fix
the race and keep mTLS.

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: orders
spec:
  template:
    metadata:
      annotations:
        traffic.sidecar.istio.io/excludeOutboundPorts: "5432"  # expect: ML402:warning
    spec:
      containers:
        - name: orders
          image: orders:1
          env:
            - name: DATABASE_URL
              value: postgres://orders@postgres.data.svc.cluster.local:5432/orders
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: orders
spec:
  template:
    metadata:
      annotations:
        proxy.istio.io/config: |
          holdApplicationUntilProxyStarts: true
    spec:
      containers:
        - name: orders
          image: orders:1
          env:
            - name: DATABASE_URL
              value: postgres://orders@postgres.data.svc.cluster.local:5432/orders
```

## References
- https://istio.io/latest/docs/ops/best-practices/security/#understand-traffic-capture-limitations
- https://istio.io/latest/docs/setup/additional-setup/cni/#compatibility-with-application-init-containers
  ("application traffic sent to the configured IP/port will bypass the Istio sidecar")
- istio/istio `tools/istio-iptables/pkg/capture/run.go` (outbound port exclusions are the first rule)
"""

from __future__ import annotations

from collections.abc import Iterator

from meshlint.findings import Issue, Severity
from meshlint.mesh.facts.interception import covers_everything
from meshlint.mesh.setting import origins
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.rule import WORKLOAD, RuleContext, rule
from meshlint.wording import listing

LOSES = "that traffic leaves without mesh mTLS or a client identity (a STRICT destination refuses it, a PERMISSIVE one accepts it as plaintext)"
HOLD = "holdApplicationUntilProxyStarts: true (proxy.istio.io/config) or native sidecars"
INIT_FIX = "native sidecars (the proxy then starts before the init containers)"


@rule(code="ML402", name="outbound-mtls-bypass", severity=Severity.WARNING, scope=WORKLOAD, kinds=WORKLOAD_KINDS)
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    if not workload.istio_sidecar:
        return
    knobs = workload.interception
    ports = knobs["excludeOutboundPorts"]
    # A port whose Services all lead to pods that opt out of injection had no mTLS to lose.
    excluded = tuple(p for p in ports.parsed.items if not ctx.mesh.leads_outside_mesh(workload.template, p)) if ports.parsed.problem is None else ()
    if excluded:
        listed = listing(str(p) for p in excluded)
        noun, verb = ("ports", "bypass") if len(excluded) > 1 else ("port", "bypasses")
        race, init = _startup_race(workload, excluded)
        fix = INIT_FIX if init else HOLD
        if race and workload.native_sidecar:
            tail = (
                f"; this looks like a startup-race workaround ({race}), but the sidecar is already native "
                f"({workload.native.cited}) and starts first, so the exclusion only loses mTLS"
            )
            help_text = "remove the exclusion"
        elif race:
            tail = f"; this looks like a startup-race workaround ({race}): {fix} would fix the race without losing mTLS"
            help_text = f"remove the exclusion; to reach the service before the proxy is ready, use {fix}"
        else:
            tail, help_text = "", "remove the exclusion"
        yield Issue(
            workload.point_at(ports.setting),
            f"outbound {noun} {listed} {verb} istio-proxy, excluded by {ports.source}: {LOSES}{tail}",
            help_text,
            related=origins(ports.setting),
        )
    ranges = knobs["excludeOutboundIPRanges"]
    if ranges.parsed.problem is None and ranges.parsed.items:
        everything = [c for c in ranges.parsed.items if covers_everything(c)]
        what = f"all outbound traffic ({', '.join(everything)})" if everything else f"outbound traffic to {', '.join(ranges.parsed.items)}"
        yield Issue(
            workload.point_at(ranges.setting),
            f"{what} bypasses istio-proxy, excluded by {ranges.source}: {LOSES}",
            "remove the exclusion, or narrow it to addresses outside the mesh (a cloud metadata endpoint, say)",
            Severity.ERROR if everything else None,
            related=origins(ranges.setting),
        )
    include = knobs["includeOutboundIPRanges"]
    if include.parsed.problem is None and not include.parsed.everything:
        if not include.parsed.items:
            yield Issue(
                workload.point_at(include.setting),
                f"all outbound traffic bypasses istio-proxy, which captures none with {include.source}: {LOSES}",
                'set includeOutboundIPRanges to "*" (the default) or remove it',
                Severity.ERROR,
                related=origins(include.setting),
            )
        elif not any(covers_everything(c) for c in include.parsed.items):
            yield Issue(
                workload.point_at(include.setting),
                f"outbound traffic to addresses outside {', '.join(include.parsed.items)} bypasses istio-proxy, "
                f"which captures only what {include.source} lists: {LOSES}",
                'set includeOutboundIPRanges to "*" (the default), and exclude only destinations outside the mesh',
                related=origins(include.setting),
            )


def _startup_race(workload: WorkloadView, ports: tuple[int, ...]) -> tuple[str, bool]:
    """Which env values point at an excluded port ("container 'api' env DB_URL=... (line 17) uses 5432"),
    and whether an init container is among them (the hold does not help init containers)."""
    hits, init = [], False
    for container, port, evidence in workload.outbound_ports:
        if port in ports:
            hits.append(f"{container.label} {evidence} uses {port}")
            init = init or (container.init and not container.is_native_sidecar)
    return listing(hits), init


RULE = check
