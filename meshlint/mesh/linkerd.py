"""Linkerd's names, and whether its proxy injector meshes a pod (reference §6.4, §11.1)."""

from __future__ import annotations

from typing import NamedTuple

from meshlint.findings import Position
from meshlint.model.pod import Container, PodTemplate
from meshlint.source.document import Node

PROXY_CONTAINER = "linkerd-proxy"
INIT_CONTAINERS = frozenset(("linkerd-init", "linkerd-network-validator"))
INJECT_ANNOTATION = "linkerd.io/inject"
INJECT_VALUES = frozenset(("enabled", "disabled", "ingress"))
NEVER_INJECTED_NAMESPACES = frozenset(("kube-system", "cert-manager"))
WEBHOOK_OFF_LABEL = "config.linkerd.io/admission-webhooks"
CONTROL_PLANE_LABELS = ("linkerd.io/control-plane-component", "linkerd.io/cni-resource")
OTHER_SIDECARS = frozenset((PROXY_CONTAINER, "istio-proxy"))


class LinkerdDecision(NamedTuple):
    """Would Linkerd's injector mesh the pod, why, and which key decided it."""

    injects: bool
    reason: str
    origin: Position | None = None
    decided: bool = True  # False when no Linkerd setting was seen at all


def injected_proxy(template: PodTemplate) -> Container | None:
    """A `linkerd-proxy` already in the manifest (`linkerd inject` output), classic or native."""
    for container in template.all_containers:
        if container.name == PROXY_CONTAINER and (not container.init or container.is_native_sidecar):
            return container
    return None


def decide(
    template: PodTemplate,
    namespace_annotations: dict[str, Node] | None,
    namespace_labels: dict[str, Node] | None,
) -> LinkerdDecision:
    """The proxy injector's verdict, following `disabledByAnnotation` and `Injectable()` (§11.1.2-4).

    The injector reads the annotation (never the label) from the pod and from its namespace; an
    invalid value on the namespace un-meshes every pod in it, even pods annotated `enabled`."""
    namespace = template.owner.namespace
    pod = template.annotations().get(INJECT_ANNOTATION)
    ns = (namespace_annotations or {}).get(INJECT_ANNOTATION)
    pod_value, ns_value = _text(pod), _text(ns)
    if pod is None and ns is None:
        return LinkerdDecision(False, "no linkerd.io/inject annotation on the pod or its namespace", decided=False)
    if template.spec.get("hostNetwork").value is True:
        return LinkerdDecision(False, "Linkerd never injects hostNetwork pods")
    if namespace in NEVER_INJECTED_NAMESPACES:
        return LinkerdDecision(False, f"Linkerd never injects namespace {namespace}")
    if _text((namespace_labels or {}).get(WEBHOOK_OFF_LABEL)) == "disabled":
        return LinkerdDecision(False, f"namespace {namespace} has {WEBHOOK_OFF_LABEL}=disabled")
    if any(label in template.labels() for label in CONTROL_PLANE_LABELS):
        return LinkerdDecision(False, "Linkerd's own control-plane pods are not injected")
    if any(c.name in OTHER_SIDECARS for c in template.all_containers):
        return LinkerdDecision(False, "the pod already has a proxy sidecar")
    if ns is not None and ns_value not in INJECT_VALUES and ns_value != "":
        return LinkerdDecision(False, f'namespace {namespace} has {INJECT_ANNOTATION}: "{ns_value}", which is not enabled, disabled or ingress, so nothing in it is injected', ns.pos)
    if pod is not None and pod_value not in INJECT_VALUES:
        return LinkerdDecision(False, f'the pod template has {INJECT_ANNOTATION}: "{pod_value}", which is not enabled, disabled or ingress', pod.pos)
    if ns is not None and ns_value in ("enabled", "ingress"):
        if pod_value == "disabled":
            return LinkerdDecision(False, f"{INJECT_ANNOTATION}: disabled on the pod template", pod.pos if pod is not None else None)
        return LinkerdDecision(True, f"namespace {namespace} has {INJECT_ANNOTATION}: {ns_value}", ns.pos)
    if pod is not None and pod_value in ("enabled", "ingress"):
        return LinkerdDecision(True, f"the pod template has {INJECT_ANNOTATION}: {pod_value}", pod.pos)
    deciding = pod if pod is not None else ns
    return LinkerdDecision(False, f"{INJECT_ANNOTATION}: {pod_value or ns_value} does not inject", deciding.pos if deciding is not None else None)


def _text(node: Node | None) -> str | None:
    return node.text if node is not None else None
