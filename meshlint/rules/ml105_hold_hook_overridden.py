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
        lifecycle:  # expect: ML105:error
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

from collections.abc import Iterator

from meshlint.findings import Issue, Severity
from meshlint.mesh.scope import Place
from meshlint.mesh.setting import origins
from meshlint.mesh.sources import MeshSource, keeps_the_hold
from meshlint.mesh.workload import WorkloadView
from meshlint.rule import MESH_CONFIG, WORKLOAD, RuleContext, rule

HELP = "remove global.proxy.lifecycle, or make its postStart run `pilot-agent wait`"


@rule(code="ML105", name="hold-hook-overridden", severity=Severity.ERROR, scope=(WORKLOAD, MESH_CONFIG))
def check(subject: WorkloadView | MeshSource, ctx: RuleContext) -> Iterator[Issue]:
    if isinstance(subject, MeshSource):
        yield from _mesh_config(subject, ctx)
        return
    lifecycle, hold = subject.hold_override, subject.pod_hold
    if lifecycle is None or hold is None or hold.value is not True or not subject.classic_sidecar or hold.origin is None:
        return
    if keeps_the_hold(lifecycle.value):
        return
    yield Issue(hold.origin, f"holdApplicationUntilProxyStarts has no effect: Helm global.proxy.lifecycle ({lifecycle.where}) replaces the hold hook", HELP, related=origins(lifecycle))


def _mesh_config(source: MeshSource, ctx: RuleContext) -> Iterator[Issue]:
    settings = ctx.mesh.settings_at(Place.of(source.resource.path), source.revision)
    node, hold = source.proxy_lifecycle, settings.mesh_wide_hold
    if settings.proxy_lifecycle is not None and node is not None and hold is not None and not keeps_the_hold(node.value):
        yield Issue(
            node.key_pos or node.pos,
            f"global.proxy.lifecycle replaces the postStart hook that holdApplicationUntilProxyStarts ({hold.where}) relies on; the hold does nothing",
            HELP,
            related=origins(hold),
        )


RULE = check
