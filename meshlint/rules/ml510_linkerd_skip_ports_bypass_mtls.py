"""Linkerd skip ports or skip subnets: that traffic bypasses the proxy, so it has no mTLS and no policy.

## What it does
For Linkerd-meshed pods, reports `config.linkerd.io/skip-inbound-ports`, `skip-outbound-ports` and
`skip-subnets` (on the pod template or its namespace, or Helm `proxyInit.ignoreInboundPorts`,
`ignoreOutboundPorts`, `skipSubnets`) beyond the default `4567,4568` (none under the Linkerd CNI plugin,
Helm `cniEnabled: true`, whose redirect reads the annotations but not the `proxyInit` values). An error when
a Linkerd `Server` selecting the pod governs a skipped inbound port: its policy is never enforced there.
Committed `linkerd inject` output counts too: it keeps the annotations, and proxy-init skips those ports.

## Why is this bad?
Skipped ports "bypass the proxy entirely": iptables sends them around it. Inbound, the destination
controller stops advertising the port's TLS identity, so meshed clients send plaintext to it, and no
`Server` or `AuthorizationPolicy` applies because the proxy never sees the traffic. Outbound, the
calls leave without mTLS or identity. Skip ports are usually a workaround for protocol detection
(server-speaks-first protocols such as MySQL or SMTP) that `opaque-ports` solves while keeping mTLS.

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: mysql-client
spec:
  selector: {matchLabels: {app: mysql-client}}
  template:
    metadata:
      labels: {app: mysql-client}
      annotations:
        linkerd.io/inject: enabled
        config.linkerd.io/skip-outbound-ports: "3306"  # expect: ML510:warning
    spec:
      containers:
        - name: client
          image: client:1.0
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: mysql-client
spec:
  selector: {matchLabels: {app: mysql-client}}
  template:
    metadata:
      labels: {app: mysql-client}
      annotations:
        linkerd.io/inject: enabled
        config.linkerd.io/opaque-ports: "3306"
    spec:
      containers:
        - name: client
          image: client:1.0
```

## References
- https://linkerd.io/2-edge/features/automatic-mtls/ (Caveats: skip ports are not mTLS'd)
- https://linkerd.io/2-edge/features/protocol-detection/ (opaque ports keep mTLS)
- linkerd/linkerd2 `controller/api/destination/endpoint_translator.go` (no TLS identity for skipped inbound ports)
"""

from __future__ import annotations

from collections.abc import Iterator

from meshlint.findings import Issue, Severity
from meshlint.mesh.facts.linkerdproxy import port_ranges, said
from meshlint.mesh.linkerd import OPAQUE_PORTS, SKIP_INBOUND, SKIP_SUBNETS
from meshlint.mesh.setting import Setting, origins
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.rule import WORKLOAD, RuleContext, rule


@rule(code="ML510", name="linkerd-skip-ports-bypass-mtls", severity=Severity.WARNING, scope=WORKLOAD, kinds=WORKLOAD_KINDS)
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    if not workload.linkerd:
        return
    proxy = workload.linkerd_proxy
    inbound = _beyond_default(proxy.skip_inbound, proxy.default_skip_ports, proxy.own_ports)
    if inbound:
        governed = _governed(workload, ctx, proxy.skip_inbound.value)
        policy = f"; Server {governed} governs a skipped port, and its policy is never enforced there" if governed else ""
        yield Issue(
            workload.point_at(proxy.skip_inbound),
            f"{said(proxy.skip_inbound)}: inbound traffic to {inbound} bypasses the Linkerd proxy ({proxy.assumed}): meshed clients "
            f"send it plaintext, and no Server or AuthorizationPolicy applies{policy}",
            f'if the port speaks a server-first protocol, mark it opaque instead ({OPAQUE_PORTS}: "{inbound}"), which keeps mTLS; '
            f"otherwise remove {SKIP_INBOUND}, which is meant for debugging",
            Severity.ERROR if governed else None,
            related=origins(proxy.skip_inbound),
        )
    outbound = _beyond_default(proxy.skip_outbound, proxy.default_skip_ports, proxy.own_ports)
    if outbound:
        yield Issue(
            workload.point_at(proxy.skip_outbound),
            f"{said(proxy.skip_outbound)}: calls to {outbound} bypass the Linkerd proxy ({proxy.assumed}) and leave without mTLS "
            "or workload identity",
            f'mark the port opaque instead ({OPAQUE_PORTS}: "{outbound}" on the server\'s pods), which keeps mTLS; if the skip '
            "lets an init container reach the network, native sidecars start the proxy before init containers",
            related=origins(proxy.skip_outbound),
        )
    subnets = proxy.skip_subnets
    if subnets.value and subnets.value.strip():
        yield Issue(
            workload.point_at(subnets),
            f"{said(subnets)}: traffic to {subnets.value} bypasses the Linkerd proxy ({proxy.assumed}) in both directions, without "
            "mTLS or policy",
            f"remove {SKIP_SUBNETS} unless those networks are outside the mesh on purpose (a node-local DNS or metadata service)",
            related=origins(subnets),
        )


def _beyond_default(setting: Setting[str], default: str, own: frozenset[int]) -> str:
    """The written ports and ranges that the defaults (proxy-init's 4567,4568, none under the CNI
    plugin, and the proxy's own) do not already skip."""
    skipped = {p for low, high in port_ranges(default) for p in range(low, high + 1)} | own
    parts = []
    for low, high in port_ranges(setting.value):
        if not all(p in skipped for p in range(low, high + 1)):
            parts.append(f"{low}-{high}" if high != low else str(low))
    return ",".join(parts)


def _governed(workload: WorkloadView, ctx: RuleContext, skipped: str | None) -> str:
    """A Server selecting this pod whose port is skipped inbound (by number, or by container port name)."""
    ranges = port_ranges(skipped)
    named = {name: number for c in workload.template.containers for number, name, _ in c.ports if name}
    for server in ctx.mesh.linkerd_servers_for(workload.template):
        port = named.get(server.port) if isinstance(server.port, str) else server.port
        if isinstance(port, int) and any(low <= port <= high for low, high in ranges):
            return server.name
    return ""


RULE = check
