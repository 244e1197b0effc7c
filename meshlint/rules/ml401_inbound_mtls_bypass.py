"""Inbound ports that skip the sidecar, and with it mTLS and AuthorizationPolicy.

## What it does
For pods with an Istio sidecar, reads the effective inbound capture settings: the pod-template
annotations `traffic.sidecar.istio.io/excludeInboundPorts` and `includeInboundPorts`, or, when a pod has
no annotation, their mesh-wide Helm values `global.proxy.excludeInboundPorts` and
`global.proxy.includeInboundPorts` (an annotation replaces the mesh value; the two are never merged).
Reports excluded ports, an empty include list, and an include list that leaves out ports the
containers declare. Istio's own ports 15090, 15021 and 15020 are always excluded and never reported.
It is an error when a STRICT PeerAuthentication (mesh-wide, namespace-wide, by selector, or on that
port) covers the pod, or when a Service selecting the pod targets the port (by number or by name).
A port that only Services an admission webhook of the run calls send to is left alone: its one client,
the API server, is outside the mesh.

## Why is this bad?
Excluded traffic never reaches Envoy, and Envoy is what enforces mesh security. On those ports the
application accepts plaintext connections from anyone who can reach the pod: no mTLS, no peer identity,
and no AuthorizationPolicy. A STRICT PeerAuthentication looks like it protects the workload, but it is
not enforced on a port the sidecar never sees. Worse for a port a Service sends to: meshed clients still
originate mTLS to it (auto mTLS goes by the destination pod being meshed), the app receives TLS it cannot
read, and their calls fail unless a DestinationRule disables TLS for that port (Istio FAQ, reference §18.2 H11).

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: orders
spec:
  template:
    metadata:
      labels: {app: orders}
      annotations:
        traffic.sidecar.istio.io/excludeInboundPorts: "9000"  # expect: ML401:warning
    spec:
      containers:
        - name: orders
          image: orders:1
          ports: [{containerPort: 8080}, {containerPort: 9000}]
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
      labels: {app: orders}
    spec:
      containers:
        - name: orders
          image: orders:1
          ports: [{containerPort: 8080}, {containerPort: 9000}]
```
If a client outside the mesh must reach a port, a PeerAuthentication `portLevelMtls` entry with mode
`PERMISSIVE` for it keeps the port behind the sidecar (AuthorizationPolicy still applies).

## References
- https://istio.io/latest/docs/ops/best-practices/security/#understand-traffic-capture-limitations
- https://istio.io/latest/docs/reference/config/annotations/ (`traffic.sidecar.istio.io/*`)
- istio/istio `tools/istio-iptables/pkg/capture/run.go` (exclusions are RETURN rules ahead of capture)
"""

from __future__ import annotations

from collections.abc import Iterator

from meshlint.findings import Issue, Position, Severity
from meshlint.mesh.facts.interception import Interception
from meshlint.mesh.istio import ALWAYS_EXCLUDED_INBOUND
from meshlint.mesh.setting import origins
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.rule import WORKLOAD, RuleContext, rule
from meshlint.wording import listing

LOSES = "connections reach the app directly, in plaintext, without mTLS identity or AuthorizationPolicy"
OUTSIDE = "for clients outside the mesh, set the port PERMISSIVE with PeerAuthentication portLevelMtls instead of bypassing the proxy"
UNEXCLUDE = f"remove the port from the exclusion so the sidecar enforces mTLS and AuthorizationPolicy on it; {OUTSIDE}"
INCLUDE_ALL = f'set includeInboundPorts to "*" (the default) so the sidecar captures every port; {OUTSIDE}'


@rule(code="ML401", name="inbound-mtls-bypass", severity=Severity.WARNING, scope=WORKLOAD, kinds=WORKLOAD_KINDS)
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    if not workload.istio_sidecar:
        return
    include = workload.interception["includeInboundPorts"]
    exclude = workload.interception["excludeInboundPorts"]
    declared = _declared_ports(workload)
    if include.parsed.problem is None and not include.parsed.everything:
        if not include.parsed.items:
            declared_text = f" (declared: {', '.join(map(str, declared))})" if declared else ""
            yield _issue(workload, include, declared, f"every inbound port{declared_text} bypasses istio-proxy, which captures none with {include.source}", INCLUDE_ALL)
        else:
            missing = [p for p in declared if p not in include.parsed.items]
            if missing:
                ports, verb = _ports(missing)
                yield _issue(workload, include, missing, f"declared {ports} {verb} istio-proxy, which captures only what {include.source} lists", INCLUDE_ALL)
        return  # exclusions only act when every port is captured
    if exclude.parsed.problem is not None:
        return  # the injector rejects the pod; ML404 reports it
    # An admission webhook's port: its one client, the API server, is outside the mesh and cannot speak mTLS.
    admission = ctx.mesh.admission_ports(workload.template)
    bypassed = [p for p in exclude.parsed.items if p not in ALWAYS_EXCLUDED_INBOUND and p not in admission]
    if bypassed:
        ports, verb = _ports(bypassed)
        yield _issue(workload, exclude, bypassed, f"inbound {ports} {verb} istio-proxy, excluded by {exclude.source}", UNEXCLUDE)


def _issue(workload: WorkloadView, setting: Interception, ports: list[int], what: str, help_text: str) -> Issue:
    reasons = []
    for port in ports:
        mode = workload.mtls_mode(port)
        if mode.value == "STRICT":
            reasons.append(f"PeerAuthentication STRICT ({mode.where}) is not enforced on port {port}")
    for port in ports:
        for service in workload.service_targets.get(port, ()):
            reasons.append(
                f"{service.value} sends traffic to port {port} ({service.where}), and its meshed clients still send mTLS there (auto "
                "mTLS sees a meshed pod), which the app cannot read: their calls fail unless a DestinationRule for the Service sets "
                f"tls.mode: DISABLE on port {port}"
            )
    tail = "; " + "; ".join(reasons) if reasons else ""
    return Issue(
        workload.point_at(setting.setting),
        f"{what}: {LOSES}{tail}",
        help_text,
        Severity.ERROR if reasons else None,
        related=_cited(workload, setting, ports),
    )


def _cited(workload: WorkloadView, setting: Interception, ports: list[int]) -> tuple[Position, ...]:
    """The origins the message cites: the knob, the STRICT PeerAuthentications, the Services."""
    modes = [m for m in (workload.mtls_mode(port) for port in ports) if m.value == "STRICT"]
    services = [s for port in ports for s in workload.service_targets.get(port, ())]
    return origins(setting.setting, *modes, *services)


def _declared_ports(workload: WorkloadView) -> list[int]:
    """The app's TCP ports, in order, without Istio's own (which are never captured anyway)."""
    ports: list[int] = []
    for container in workload.app_containers:
        for number, _, protocol in container.ports:
            if protocol == "TCP" and number not in ports and number not in ALWAYS_EXCLUDED_INBOUND:
                ports.append(number)
    return ports


def _ports(ports: list[int]) -> tuple[str, str]:
    """("port 9000", "bypasses") or ("ports 9000, 9100", "bypass")."""
    listed = listing(str(p) for p in ports)
    return (f"ports {listed}", "bypass") if len(ports) > 1 else (f"port {listed}", "bypasses")


RULE = check
