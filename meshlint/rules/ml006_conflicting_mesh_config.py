"""Mesh-wide sources that disagree where a workload looks, so meshlint cannot tell which one applies.

## What it does
For each workload, meshlint takes every mesh-wide setting (the drain, the hold, native sidecars, the
interception defaults, a Namespace's injection labels, a PeerAuthentication) from the nearest source on
the workload's own path: the same file, then its folder, then each parent folder; when nothing on its
path sets it, from its own deployment units (a root kustomization and what it reaches, a Helm chart),
else from the sources elsewhere in the run that lie in no unit, provided they all agree; another unit's
never apply. This rule reports where that breaks down, once per conflict at its first source in path
order, the other sources related (SARIF `relatedLocations`): two sources at the same distance that
disagree, or sources applied together (in one unit, or one's folder holding the other's) that
disagree. Sources never applied together (sibling overlays, two vendored installs side by side) are
alternatives, not a conflict, and so are versions of one object (one kind, namespace and name in several
files): they decide nothing for a workload that sees them. It names the field, the values and how many
workloads are affected. For those workloads meshlint uses none of them (the built-in default, or "not decided" for
injection), never the one it happened to read last.

## Why is this bad?
The findings for those workloads depend on a setting nobody can say applies: an IstioOperator for
`dev/` and one for `prod/` side by side in one folder, two samples' root-namespace
PeerAuthentications, one STRICT and one PERMISSIVE. In the cluster only one is real. Either the
manifests mix environments that will never meet, and each should sit with its own workloads, or two
teams configured one mesh twice, and one of them is wrong.

## Example
```yaml
# platform/istio-prod.yaml and platform/istio-dev.yaml sit side by side, each an IstioOperator;
# one says terminationDrainDuration: 45s, the other 5s, and the workloads in apps/ run under one.
apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata:
  name: prod
spec:
  meshConfig:
    defaultConfig:
      terminationDrainDuration: 45s  # expect: ML006:warning
---
apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata:
  name: dev
spec:
  meshConfig:
    defaultConfig:
      terminationDrainDuration: 5s  # the other source: related to the finding above
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    metadata:
      labels: {sidecar.istio.io/inject: "true"}
      annotations:
        proxy.istio.io/config: '{"holdApplicationUntilProxyStarts": true}'
    spec:
      containers: [{name: api, image: "api:1"}]
```

## Use instead
```yaml
# One source per place: keep each environment's IstioOperator in the folder of its workloads
# (dev/istio.yaml beside dev/apps/, prod/istio.yaml beside prod/apps/), or name the one that applies
# in `mesh.context` of the folder's .meshlint.yaml.
apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata:
  name: prod
spec:
  meshConfig:
    defaultConfig:
      terminationDrainDuration: 45s
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    metadata:
      labels: {sidecar.istio.io/inject: "true"}
      annotations:
        proxy.istio.io/config: '{"holdApplicationUntilProxyStarts": true}'
    spec:
      terminationGracePeriodSeconds: 60
      containers: [{name: api, image: "api:1"}]
```

## References
- wave-2 specification §W2 (the scope rule)
- https://istio.io/latest/docs/setup/upgrade/canary/ (one mesh, several control planes: keep them apart)
"""

from __future__ import annotations

from collections.abc import Iterator

from meshlint.findings import Issue, Severity
from meshlint.mesh.scope import Claim, Conflict, MeshRun
from meshlint.rule import RUN, RuleContext, rule
from meshlint.wording import counted, listing

HELP = (
    "keep one source per place: put each environment's mesh config beside its own workloads (the nearest "
    "source on a workload's path wins), or name the one that applies in mesh.context; remove the other"
)


@rule(code="ML006", name="conflicting-mesh-config", severity=Severity.WARNING, scope=RUN)
def check(run: MeshRun, ctx: RuleContext) -> Iterator[Issue]:
    for conflict, workloads in run.conflicts:
        # Once per conflict, at its first source in path order, with every other source related
        # (wave-3 spec V2.3): one decision to make, however many sources take part in it.
        claim = next((c for c in conflict.claims if c.setting.origin is not None), None)
        if claim is None or claim.setting.origin is None:
            continue
        mine = value_text(conflict, claim)
        others = [c for c in conflict.claims if c is not claim and value_text(conflict, c) != mine]
        yield Issue(
            claim.setting.origin,
            f"{field_name(conflict.field)} is {mine} here but {_others(conflict, others)}"
            f" {_where(conflict)}: {_looking(workloads)} none of them, and {_instead(conflict)}",
            HELP,
            related=tuple(c.setting.origin for c in conflict.claims if c is not claim and c.setting.origin is not None),
        )


def _others(conflict: Conflict, others: list[Claim]) -> str:
    """Each other value once, with the first source that gives it and how many more do:
    `50s (prod/istio.yaml:7)`, `"" (a.yaml:3 and 2 other places)`."""
    by_value: dict[str, list[Claim]] = {}
    for claim in others:
        by_value.setdefault(value_text(conflict, claim), []).append(claim)
    parts = []
    for value, claims in by_value.items():
        more = f" and {counted(len(claims) - 1, 'other place')}" if len(claims) > 1 else ""
        parts.append(f"{value} ({claims[0].setting.where}{more})")
    return listing(parts)


def field_name(field: str) -> str:
    """How the field is written in the sources: `defaultConfig.terminationDrainDuration`."""
    group, _, name = field.partition(".")
    if group == "proxy":
        return f"meshConfig.defaultConfig.{name}"
    if group == "proxyMetadata":
        return f"meshConfig.defaultConfig.proxyMetadata.{name}"
    if field.startswith("linkerd:"):
        return f"Linkerd Helm value {field[len('linkerd:'):]}"
    if field.startswith("helm.proxy."):
        return f"global.proxy.{field[len('helm.proxy.'):]}"
    if field == "helm.variant":
        return "global.variant"
    if group == "helm":  # another Helm value, written as its path (sidecarInjectorWebhook.rewriteAppHTTPProbe)
        return name
    if group == "mesh":
        return f"meshConfig.{name}"
    if group == "env":
        return name
    return field


def value_text(conflict: Conflict, claim: Claim) -> str:
    value = claim.setting.value
    if value is None:
        return "the default"
    if conflict.field.startswith("Namespace "):  # the labels and annotations that decide injection
        return "{" + ", ".join(f"{k}: {v}" for k, v in value) + "}" if value else "without injection labels"
    if conflict.field.startswith("PeerAuthentication "):  # (mode, port modes)
        mode, ports = value
        return f"{mode or 'UNSET'}" + (f" (ports {', '.join(f'{p}: {m}' for p, m in ports)})" if ports else "")
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value) if value != "" else '""'


def _looking(workloads: int) -> str:
    return f"{counted(workloads, 'workload')} {'gets' if workloads == 1 else 'get'}"


def _where(conflict: Conflict) -> str:
    if conflict.elsewhere is None:
        return "at the same distance from some of the workloads that look for it and off the paths of the others"
    if conflict.elsewhere:
        return "elsewhere in the run, off the paths of the workloads that look for it"
    return "at the same distance from the workloads that look for it"


def _instead(conflict: Conflict) -> str:
    if conflict.field.startswith("Namespace "):
        return "injection is decided as if the namespace were not among the inputs"
    if conflict.field.startswith("PeerAuthentication "):
        return "none of these policies is taken to apply"
    return "the built-in default applies instead"


RULE = check
