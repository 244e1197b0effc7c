"""A sidecar that intercepts nothing: `interceptionMode: NONE`.

## What it does
For pods with an Istio sidecar, reads the effective interception mode: the pod-template annotation
`sidecar.istio.io/interceptionMode`, else `interceptionMode` in ProxyConfig (the pod's
`proxy.istio.io/config` over the mesh `defaultConfig`), else `REDIRECT`. Reports `NONE`.

## Why is this bad?
With `NONE` no iptables rules are installed: the proxy runs, but no traffic is sent through it unless
the application itself is written to address the proxy. Every connection in and out of the pod
skips mTLS, PeerAuthentication and AuthorizationPolicy, while the pod still looks meshed. On Istio 1.25
and earlier the injection template's `initContainers: []` for `NONE` also removed the pod's own init
containers (fixed in 1.26); the message says so when the pod has some and the target is not 1.26+.

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: raw-sockets
spec:
  template:
    metadata:
      annotations:
        sidecar.istio.io/interceptionMode: NONE  # expect: ML403:warning
    spec:
      containers: [{name: app, image: "app:1"}]
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: raw-sockets
spec:
  template:
    metadata:
      annotations:
        sidecar.istio.io/interceptionMode: TPROXY
        proxy.istio.io/config: '{"holdApplicationUntilProxyStarts": true}'
    spec:
      containers: [{name: app, image: "app:1"}]
```

## References
- https://istio.io/latest/docs/reference/config/annotations/#SidecarInterceptionMode
- istio/api `mesh/v1alpha1/proxy.proto` (`InboundInterceptionMode`: NONE "typically requires changes to user applications")
"""

from __future__ import annotations

from collections.abc import Iterator

from meshlint.findings import Issue, Severity
from meshlint.mesh.options import at_least
from meshlint.mesh.setting import origins
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.rule import WORKLOAD, RuleContext, rule


@rule(code="ML403", name="interception-disabled", severity=Severity.WARNING, scope=WORKLOAD, kinds=WORKLOAD_KINDS)
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    mode = workload.interception_mode
    if not workload.istio_sidecar or mode.value != "NONE":
        return
    explicit = workload.app_sends_to_proxy
    scope = (
        f"so only what the app sends to it itself ({explicit.note}) gets mTLS; what the pod receives gets no mTLS, PeerAuthentication or "
        "AuthorizationPolicy unless a Sidecar's ingress listener takes it"
        if explicit is not None else "so nothing this pod sends or receives gets mTLS, PeerAuthentication or AuthorizationPolicy"
    )
    istio = workload.options.versions.istio
    own_init = workload.app_init_containers
    if own_init and workload.injected_proxy is None and (istio is None or not at_least(istio, "1.26")):
        # The template's `initContainers: []` for NONE dropped the pod's own too until 1.26 (reference §18.1 R8).
        when = f"Istio {istio}" if istio is not None else "Istio 1.25 and earlier"
        names = ", ".join(f"'{c.name}'" for c in own_init)
        scope += f"; {when} also removes the pod's own init containers ({names}) when it injects with NONE"
    yield Issue(
        workload.point_at(mode),
        f"interception mode is NONE ({mode.note or 'interceptionMode'}, {mode.where}): istio-proxy captures no traffic, {scope}",
        "remove the setting (REDIRECT is the default), or use TPROXY to keep client source addresses",
        related=origins(mode),
    )


RULE = check
