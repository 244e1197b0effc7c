"""Two `Sidecar` resources that both apply to the same pods: which one wins is undefined.

## What it does
Reports Istio `Sidecar` resources that Istio leaves undefined between:
- two Sidecars without a `workloadSelector` in one namespace, each reported citing the other;
- two Sidecars of one namespace whose selectors match the same pods, one selector's labels holding
  the other's (or equal), each reported likewise;
- a pod template that two Sidecars of its namespace select by different labels, reported at the pod.
Sidecars count as applied together when they lie in the same folder; a pod meets the Sidecars of its
namespace nearest on its path, else those elsewhere in the run when they lie in one folder (wave-2
spec §W2). One object (a namespace and a name) written twice is one Sidecar, not two.

## Why is this bad?
istiod picks one Sidecar per proxy: the oldest matching one with a selector, else the namespace's one
without. With two candidates the choice follows creation time, which nobody controls in a GitOps
repository: a re-created object, a restored cluster or a second cluster picks the other one, and the
pod's egress imports and outbound policy change with it. Istio's documentation calls this undefined
behaviour, and `istioctl analyze` reports it (IST0110, IST0111).

## Example
```yaml
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata:
  name: default  # expect: ML603:error
  namespace: shop
spec:
  egress:
    - hosts: ["./*", "istio-system/*"]
---
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata:
  name: restrict  # expect: ML603:error
  namespace: shop
spec:
  egress:
    - hosts: ["./*"]
```

## Use instead
```yaml
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata:
  name: default
  namespace: shop
spec:
  egress:
    - hosts: ["./*", "istio-system/*"]
```

## References
- istio/api `networking/v1alpha3/sidecar.proto` (NOTE 1: undefined behaviour)
- istio/istio `pilot/pkg/model/push_context.go` (`doGetSidecarScope`)
- `istioctl analyze` IST0110 ConflictingSidecarWorkloadSelectors, IST0111 MultipleSidecarsWithoutSelectors
- reference §13.2
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from meshlint.findings import Issue, Severity
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.model.resource import Resource
from meshlint.rule import RESOURCE, WORKLOAD, RuleContext, rule
from meshlint.wording import listing

if TYPE_CHECKING:
    from meshlint.mesh.sidecars import SidecarConfig


@rule(code="ML603", name="sidecar-selection-ambiguous", severity=Severity.ERROR, scope=(WORKLOAD, RESOURCE), kinds=WORKLOAD_KINDS | {"Sidecar"})
def check(subject: WorkloadView | Resource, ctx: RuleContext) -> Iterator[Issue]:
    if isinstance(subject, WorkloadView):
        yield from _workload(subject, ctx)
    else:
        yield from _sidecar(subject, ctx)


def _sidecar(resource: Resource, ctx: RuleContext) -> Iterator[Issue]:
    sidecar = ctx.mesh.sidecar_of(resource)
    if sidecar is None:
        return
    others = ctx.mesh.sidecar_clashes(sidecar)
    if not others:
        return
    namespace = sidecar.namespace or "(unset)"
    if sidecar.selector is None:
        what = f"Sidecar {sidecar.name} and {listing(s.title for s in others)} have no workloadSelector in namespace {namespace}"
    else:
        shared = listing(f"Sidecar {o.name} ({_labels(o)}, {o.position.path}:{o.position.line})" for o in others)
        what = f"Sidecar {sidecar.name} ({_labels(sidecar)}) shares the pods it selects with {shared} in namespace {namespace}"
    yield Issue(
        sidecar.position,
        f"{what}: which one scopes such a pod is undefined (istiod takes the oldest), so its egress imports can change "
        "whenever the objects are re-created",
        "keep one Sidecar per namespace without a selector, and selectors that no pod matches twice; merge their egress hosts",
        related=tuple(o.position for o in others),
    )


def _workload(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    if not workload.istio_sidecar or not ctx.mesh.sidecars:
        return
    from meshlint.mesh.sidecars import nested

    scope = workload.sidecar_scope
    selecting = [s for s in scope.ambiguous if s.selector is not None]
    # Selectors of which one holds the other's labels are reported at the Sidecars themselves.
    if len(selecting) < 2 or all(nested(a, b) for a in selecting for b in selecting if a is not b):
        return
    yield Issue(
        workload.template.fix_position,
        f"{workload.template.title} is selected by {len(selecting)} Sidecars of namespace {workload.owner.namespace or '(unset)'}: "
        f"{listing(f'{s.title} by {_labels(s)}' for s in selecting)}; which one scopes its proxy is undefined (istiod takes the oldest)",
        "make the selectors disjoint (one Sidecar per pod), or merge the Sidecars into one",
        related=tuple(s.selector_position or s.position for s in selecting),
    )


def _labels(sidecar: SidecarConfig) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted((sidecar.selector or {}).items())) or "every pod"


RULE = check
