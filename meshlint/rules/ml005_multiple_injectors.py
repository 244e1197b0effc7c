"""A pod two injectors are asked to mesh: Istio and Linkerd, or an Istio sidecar and ambient mode.

## What it does
Reports a pod that both Istio's and Linkerd's injectors would mesh (Istio's injection labels together
with `linkerd.io/inject`, on the pod or its namespace), a pod template that asks for ambient mode
(`istio.io/dataplane-mode: ambient`) while its own labels ask for a sidecar, and a Namespace that asks
for both at once (Istio's and Linkerd's injection, or a sidecar injection label with ambient mode).
meshlint checks such a pod as having an Istio sidecar, which is what wins when both are asked.

## Why is this bad?
Two proxies in one pod capture each other's traffic; which one a pod gets depends on the order the
webhooks run, and changes when one of them is reinstalled. Between a sidecar and ambient mode the
sidecar always wins (Istio's ambient node agent skips pods that carry a sidecar), so the ambient
intent is silently ignored and the pod keeps every sidecar hazard.

## Example
```yaml
apiVersion: v1
kind: Namespace
metadata:
  name: payments
  labels:
    istio-injection: enabled  # expect: ML005:warning
    istio.io/dataplane-mode: ambient
```

## Use instead
```yaml
apiVersion: v1
kind: Namespace
metadata:
  name: payments
  labels:
    istio.io/dataplane-mode: ambient
```

## References
- reference §16.2 (a sidecar always wins over ambient), §11.1 (Linkerd's injector)
- `istioctl analyze` IST0123 NamespaceMultipleInjectionLabels
"""

from __future__ import annotations

from collections.abc import Iterator

from meshlint.findings import Issue, Severity
from meshlint.mesh.istio import DATAPLANE_MODE, INJECT, NAMESPACE_INJECTION_LABEL, REV_LABEL
from meshlint.mesh.linkerd import INJECT_ANNOTATION as LINKERD_INJECT
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.model.resource import Resource
from meshlint.rule import RESOURCE, WORKLOAD, RuleContext, rule
from meshlint.source.document import Node

CHOOSE = "choose one mesh for it: remove the other's injection setting"


@rule(code="ML005", name="multiple-injectors", severity=Severity.WARNING, scope=(WORKLOAD, RESOURCE), kinds=WORKLOAD_KINDS | {"Namespace"})
def check(subject: WorkloadView | Resource, ctx: RuleContext) -> Iterator[Issue]:
    if isinstance(subject, Resource):
        if subject.kind == "Namespace":
            yield from _namespace(subject)
        return
    also = subject.classification.also_linkerd
    if also is not None and subject.istio_sidecar:
        yield Issue(
            subject.template.fix_position,
            f"{subject.template.title} is meshed twice: Istio injects it ({subject.classification.reason}) and Linkerd "
            f"would too ({also.reason}); which proxy it gets depends on the order the webhooks run. meshlint checks it as Istio",
            CHOOSE,
        )
    labels = subject.template.labels()
    ambient, sidecar = labels.get(DATAPLANE_MODE), labels.get(INJECT)
    if ambient is not None and ambient.text == "ambient" and sidecar is not None and sidecar.text == "true":
        yield Issue(
            ambient.key_pos or ambient.pos,
            f"{subject.template.title} asks for ambient mode and, with {INJECT}: \"true\", for a sidecar: the sidecar wins "
            "and ambient mode is ignored",
            f"remove {INJECT} to run it in ambient mode, or {DATAPLANE_MODE} to keep the sidecar",
        )


def _namespace(namespace: Resource) -> Iterator[Issue]:
    labels, annotations = namespace.labels, namespace.annotations
    istio = _sidecar_label(labels)
    if istio is None:
        return
    linkerd, ambient = annotations.get(LINKERD_INJECT), labels.get(DATAPLANE_MODE)
    if linkerd is not None and linkerd.text in ("enabled", "ingress"):
        yield Issue(
            istio.key_pos or istio.pos,
            f"Namespace {namespace.name} asks Istio ({_said(istio)}) and Linkerd ({LINKERD_INJECT}: {linkerd.text}) to mesh every pod in it",
            CHOOSE,
        )
    if ambient is not None and ambient.text == "ambient":
        yield Issue(
            istio.key_pos or istio.pos,
            f"Namespace {namespace.name} asks for sidecars ({_said(istio)}) and for ambient mode ({DATAPLANE_MODE}: ambient): "
            "every pod gets a sidecar and ambient mode skips them all",
            f"remove {istio.text and _key(istio, labels)} to run the namespace in ambient mode, or {DATAPLANE_MODE} to keep sidecars",
        )


def _sidecar_label(labels: dict[str, Node]) -> Node | None:
    injection = labels.get(NAMESPACE_INJECTION_LABEL)
    if injection is not None and injection.text == "enabled":
        return injection
    return labels.get(REV_LABEL)


def _key(node: Node, labels: dict[str, Node]) -> str:
    return next(k for k, v in labels.items() if v is node)


def _said(node: Node) -> str:
    return f"{'istio-injection' if node.text == 'enabled' else REV_LABEL}={node.text}"


RULE = check
