"""An `istio.io/rev` naming no revision or tag the run declares: no webhook matches, nothing injects.

## What it does
When the run declares its control-plane revisions (IstioOperator `spec.revision`, Helm `revision` or
`revisionTags`, a ConfigMap `istio-<rev>`, a webhook `istio-revision-tag-<tag>` or
`istio-sidecar-injector-<rev>`), reports a Namespace or a pod template whose `istio.io/rev` names none
of them. Silent when the run declares no revision at all, or declares one as a template's placeholder
(`revision: $REVISION`, for envsubst: the real names are not known), and for a Namespace that also has
`istio-injection`, which decides alone (ML007 reports the label it shadows). Such pods get no sidecar, so the sidecar
rules leave them alone.

## Why is this bad?
A revision label that matches no webhook injects nothing, and the API server says nothing either: the
webhook is never called, so there is no event. A typo (`canry`), or a revision removed after an upgrade,
quietly takes the pods out of the mesh: no mTLS, no policy.

## Example
```yaml
apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata:
  name: canary
spec:
  revision: canary
---
apiVersion: v1
kind: Namespace
metadata:
  name: orders
  labels:
    istio.io/rev: canry  # expect: ML008:warning
```

## Use instead
```yaml
apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata:
  name: canary
spec:
  revision: canary
---
apiVersion: v1
kind: Namespace
metadata:
  name: orders
  labels:
    istio.io/rev: canary
```

## References
- reference §12.1-§12.3 (objects per revision, revision tags, which webhook injects)
- `istioctl tag list`, `istioctl x check-inject`
"""

from __future__ import annotations

from collections.abc import Iterator

from meshlint.findings import Issue, Position, Severity
from meshlint.mesh.context import MeshContext
from meshlint.mesh.istio import NAMESPACE_INJECTION_LABEL, REV_LABEL
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.model.resource import Resource
from meshlint.rule import RESOURCE, WORKLOAD, RuleContext, rule
from meshlint.source.document import Node
from meshlint.wording import listing


@rule(code="ML008", name="unknown-revision", severity=Severity.WARNING, scope=(WORKLOAD, RESOURCE), kinds=WORKLOAD_KINDS | {"Namespace"})
def check(subject: WorkloadView | Resource, ctx: RuleContext) -> Iterator[Issue]:
    if isinstance(subject, Resource):
        label = subject.labels.get(REV_LABEL) if subject.kind == "Namespace" else None
        # istio-injection, whatever its value, decides alone: the revision label is never read (ML007).
        if label is not None and NAMESPACE_INJECTION_LABEL not in subject.labels and ctx.mesh.revision_of(label.text or "") is None:
            yield _issue(ctx.mesh, label, f"Namespace {subject.name}", "any pod in it")
        return
    label = subject.classification.unknown_revision
    # A namespace's label is reported once, at the Namespace; here only the pod's own.
    if label is not None and label is subject.template.labels().get(REV_LABEL):
        yield _issue(ctx.mesh, label, subject.template.title, "it")


def _issue(mesh: MeshContext, label: Node, what: str, whom: str) -> Issue:
    known = sorted({*mesh.revisions, *mesh.tags})
    return Issue(
        label.key_pos or label.pos,
        f"{REV_LABEL}={label.text} on {what} names no revision or tag of this run (it declares {listing(known)}): no "
        f"webhook matches, so nothing injects {whom}, and nothing says so",
        f"use one of {listing(known, 'or')}, or declare the revision (istioctl tag set {label.text} --revision REV)",
        related=_declared(mesh),
    )


def _declared(mesh: MeshContext) -> tuple[Position, ...]:
    return tuple(sorted({*mesh.revisions.values(), *(t.origin for t in mesh.tags.values())}))


RULE = check
