"""`holdApplicationUntilProxyStarts` is set, but Helm `global.proxy.lifecycle` replaces its hook.

## What it does
Reports hold settings (mesh `defaultConfig`, Helm `global.proxy`, or the pod's `proxy.istio.io/config`)
when istiod's Helm values also set `global.proxy.lifecycle`.

## Why is this bad?
Hold works by a `postStart` hook (`pilot-agent wait`) on the proxy container. The injection template
uses `global.proxy.lifecycle` instead of that hook whenever it is set, so the hold you configured is
silently gone, unless the custom lifecycle runs `pilot-agent wait` itself, and the startup race is back.

## Example
```yaml
apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata:
  name: control-plane
spec:
  meshConfig:
    defaultConfig:
      holdApplicationUntilProxyStarts: true
  values:
    global:
      proxy:
        lifecycle:  # expect: ML105
          preStop:
            exec:
              command: ["sleep", "5"]
```

## Use instead
```yaml
apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata:
  name: control-plane
spec:
  meshConfig:
    defaultConfig:
      holdApplicationUntilProxyStarts: true
      terminationDrainDuration: 5s
```

## References
- istio/istio injection template: `if .Values.global.proxy.lifecycle ... else if $holdProxy` (postStart)
"""

from __future__ import annotations

from meshlint import proxyconfig
from meshlint.findings import Issue, Severity
from meshlint.model import MESH_CONFIG_KINDS, WORKLOAD_KINDS
from meshlint.rule import rule

HELP = "remove global.proxy.lifecycle, or make its postStart run `pilot-agent wait`"


@rule(
    code="ML105",
    name="hold-hook-overridden",
    severity=Severity.ERROR,
    scope="resource",
    kinds=WORKLOAD_KINDS | MESH_CONFIG_KINDS,
)
def check(resource, ctx):
    mesh = ctx.mesh
    lifecycle = mesh.helm_proxy.get("lifecycle")
    if lifecycle is None or not lifecycle.value:
        return
    if resource.is_workload:
        workload = mesh.workload(resource)
        body = workload.annotation.body if workload and workload.annotation else None
        hold = proxyconfig.normalized_fields(body).get("holdApplicationUntilProxyStarts") if body is not None else None
        if hold is not None and hold.value is True and workload.classic_sidecar:
            yield Issue(hold.pos, f"holdApplicationUntilProxyStarts has no effect: Helm global.proxy.lifecycle ({lifecycle.where}) replaces the hold hook", HELP)
        return
    source = mesh.source_for(resource)
    if source is None or source.helm_values is None:
        return
    node = source.helm_values.path("global", "proxy", "lifecycle")
    if not node.exists or not node.value:
        return
    holds = [s for s in (mesh.default_config.get("holdApplicationUntilProxyStarts"), mesh.helm_proxy.get("holdApplicationUntilProxyStarts")) if s is not None and s.value is True]
    if holds:
        yield Issue(
            node.key_pos or node.pos,
            f"global.proxy.lifecycle replaces the postStart hook that holdApplicationUntilProxyStarts ({holds[0].where}) relies on; the hold does nothing",
            HELP,
        )


RULE = check
