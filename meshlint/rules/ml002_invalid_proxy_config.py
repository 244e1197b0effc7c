"""`proxy.istio.io/config` that Istio rejects (wrong type, bad YAML) or silently ignores (unknown key).

## What it does
Parses the pod template's `proxy.istio.io/config` annotation (YAML or JSON) and validates it against
the ProxyConfig schema shipped with meshlint. A body that does not parse, or a field of the wrong type
(a quoted `"true"` for a boolean, a bare number for a duration, an unquoted `true` inside
`proxyMetadata`) is an error. An unknown key is a warning, with the closest known field. The mesh-wide
`meshConfig.defaultConfig` (IstioOperator, Helm values, the `istio` ConfigMap) is checked for the same
type errors; its unknown keys are ML004's.

## Why is this bad?
The injector validates the annotation before injecting: a type error makes it refuse the pod, so the
ReplicaSet never gets its pods. An unknown key is worse in a quiet way: Istio drops it without a word,
so a typo such as `holdApplicationUntilProxyStart` leaves the setting you meant off.

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata:
      labels: {app: web}
      annotations:
        proxy.istio.io/config: |
          holdApplicationUntilProxyStarts: "true"  # expect: ML002:error
          terminationDrainDuration: 20  # expect: ML002:error
          proxyMetdata:  # expect: ML002:warning
            ISTIO_META_DNS_CAPTURE: "true"
    spec:
      containers:
        - name: web
          image: web:1.0
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata:
      labels: {app: web}
      annotations:
        proxy.istio.io/config: |
          holdApplicationUntilProxyStarts: true
          terminationDrainDuration: 20s
          proxyMetadata:
            ISTIO_META_DNS_CAPTURE: "true"
    spec:
      containers:
        - name: web
          image: web:1.0
```

## Fix safety
Safe: an unknown key is renamed to its one "did you mean" when that field is not set already and the
value is of its type; a boolean written in quotes (`"true"`) loses them. Unsafe: a bare number for a
duration becomes that many seconds (`20` as `20s`), a guess at the unit. Either is left out when the
setting it brings into effect would make another finding (a drain longer than the grace period).

## References
- istio/api `mesh/v1alpha1/proxy.proto` (ProxyConfig fields and types)
- istio/istio `pkg/util/protomarshal` (`ApplyYAML`: strict first, then unknown fields allowed)
- istio/istio `pkg/kube/inject/inject.go` ("Injection failed due to invalid annotations")
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from meshlint.findings import Issue, Position, Severity, recipe
from meshlint.mesh.facts.proxyconfig import ProxyConfigAnnotation
from meshlint.mesh.sources import MeshSource
from meshlint.mesh.workload import WorkloadView
from meshlint.rule import MESH_CONFIG, WORKLOAD, RuleContext, rule

if TYPE_CHECKING:
    from meshlint.fix.edits import Fix

_RETYPE = "give the field the type ProxyConfig declares (see `meshlint explain ML002`)"


@rule(code="ML002", name="invalid-proxy-config", severity=Severity.ERROR, scope=(WORKLOAD, MESH_CONFIG), fix="mixed")
def check(subject: WorkloadView | MeshSource, ctx: RuleContext) -> Iterator[Issue]:
    if isinstance(subject, MeshSource):
        # Type errors in the mesh-wide defaultConfig; unknown keys there are reported by ML004.
        for problem in subject.default_config_problems:
            if not problem.unknown_key:
                fix = recipe(_retype_mesh, subject, problem.field)
                yield Issue(problem.position, f"defaultConfig: {problem.message}; Istio cannot parse this mesh config", _RETYPE, fix=fix)
        return
    annotation = subject.annotation
    if annotation is None:
        return
    if annotation.problem is not None:
        syntax = annotation.problem
        yield Issue(
            Position(annotation.node.pos.path, syntax.line, syntax.column),
            f"proxy.istio.io/config is not valid YAML or JSON ({syntax.message}); the injector rejects the pod",
            "write the annotation as a YAML block (`proxy.istio.io/config: |`) or as one JSON object",
        )
        return
    for schema_problem in annotation.problems:
        if schema_problem.unknown_key:
            hint = schema_problem.suggestion
            help_text = f"rename it to {hint!r}" if hint else "remove it, or check the ProxyConfig reference for the field you meant"
            renamed = recipe(_rename, annotation, schema_problem.field, hint) if hint else None
            yield Issue(schema_problem.position, schema_problem.message, help_text, Severity.WARNING, fix=renamed)
        else:
            fix = recipe(_retype, annotation, schema_problem.field)
            yield Issue(schema_problem.position, f"{schema_problem.message}; the injector rejects the pod", _RETYPE, fix=fix)


def _rename(annotation: ProxyConfigAnnotation, key: str, hint: str) -> Fix | None:
    from meshlint.fix import mapping, proxy_config

    assert annotation.body is not None
    change = proxy_config.inside(annotation.node, proxy_config.rename_field(annotation.body, key, hint))
    return mapping.as_fix(f"rename {key} to {hint}", annotation.node, change)


def _retype(annotation: ProxyConfigAnnotation, field: str) -> Fix | None:
    """`"true"` for a boolean unquoted (safe); `20` for a duration as `20s` (unsafe: seconds is a guess)."""
    from meshlint.fix import mapping, proxy_config
    from meshlint.fix.edits import SAFE, UNSAFE

    assert annotation.body is not None
    host = annotation.node
    found = proxy_config.retype_field(annotation.body, field, host if host.style != "|" else None)
    if found is None:
        return None
    change, safe = found
    return mapping.as_fix(_retitle(field, safe), host, proxy_config.inside(host, change), SAFE if safe else UNSAFE)


def _retype_mesh(source: MeshSource, field: str) -> Fix | None:
    from meshlint.fix import mapping, proxy_config
    from meshlint.fix.edits import SAFE, UNSAFE

    body = source.default_config
    if body is None:
        return None
    host = source.resource.root.path("data", "mesh") if source.resource.kind == "ConfigMap" else None
    found = proxy_config.retype_field(body, field, host if host is not None and host.style != "|" else None)
    if found is None:
        return None
    change, safe = found
    placed = proxy_config.inside(host, change) if host is not None else change
    return mapping.as_fix(_retitle(field, safe), body, placed, SAFE if safe else UNSAFE)


def _retitle(field: str, safe: bool) -> str:
    return f"write {field} as a boolean, without quotes" if safe else f"write {field} as a duration in seconds"


RULE = check
