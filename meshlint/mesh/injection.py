"""Does a pod get an Istio sidecar? The webhook selectors and the injector's own checks (reference §6)."""

from __future__ import annotations

from typing import NamedTuple

from meshlint.mesh.istio import (
    DATAPLANE_MODE,
    INJECT,
    NAMESPACE_INJECTION_LABEL,
    NEVER_INJECTED_NAMESPACES,
    PROXY_CONTAINER,
    REV_LABEL,
)
from meshlint.mesh.options import MeshOptions
from meshlint.model.pod import Container, PodTemplate
from meshlint.source.document import Node


class Injection(NamedTuple):
    """Does the workload get an Istio sidecar, and why. `assumed` when only the default decided it."""

    sidecar: bool
    reason: str
    assumed: bool = False
    ambient: bool = False


def injected_proxy(template: PodTemplate) -> Container | None:
    """The `istio-proxy` container already in the manifest (kube-inject output), if any."""
    for container in template.all_containers:
        if container.name == PROXY_CONTAINER:
            return container
    return None


def decide_injection(template: PodTemplate, namespaces: dict[str, dict[str, Node]], options: MeshOptions) -> Injection:
    """Follow the webhook: an injected proxy, hostNetwork, never-injected namespaces, then the namespace
    and pod labels; when nothing decides, `mesh.default-injection` does (and the result is assumed)."""
    labels, annotations = template.labels(), template.annotations()
    namespace = template.owner.namespace
    proxy = injected_proxy(template)
    if proxy is not None:
        return Injection(True, f"the manifest already holds an injected {PROXY_CONTAINER} container (line {proxy.position.line})")
    if template.spec.get("hostNetwork").value is True:
        return Injection(False, "hostNetwork: true pods are never injected")
    if namespace in NEVER_INJECTED_NAMESPACES:
        return Injection(False, f"namespace {namespace} is never injected")
    pod_label = _text(labels.get(INJECT))
    pod_rev = _text(labels.get(REV_LABEL))
    pod_ambient = _text(labels.get(DATAPLANE_MODE)) == "ambient"
    ns_labels = namespaces.get(namespace) if namespace else None
    assumed = False
    ambient = pod_ambient
    pod_asks = pod_label == "true" or (pod_rev is not None and pod_label != "false")
    if ns_labels is not None:
        ns_inject = _text(ns_labels.get(NAMESPACE_INJECTION_LABEL))
        ns_rev = _text(ns_labels.get(REV_LABEL))
        ambient = ambient or _text(ns_labels.get(DATAPLANE_MODE)) == "ambient"
        if ns_inject is not None:
            webhook = ns_inject == "enabled" and pod_label != "false"
            reason = f"namespace {namespace} has {NAMESPACE_INJECTION_LABEL}={ns_inject}"
        elif ns_rev is not None:
            webhook = pod_label != "false"
            reason = f"namespace {namespace} has {REV_LABEL}={ns_rev}"
        elif pod_asks:
            webhook, reason = True, "the pod template's labels ask for injection"
        else:
            webhook, reason = False, f"namespace {namespace} has no injection label"
    elif namespace and namespace in options.injected_namespaces:
        webhook, reason = pod_label != "false", f"namespace {namespace} is listed in mesh.injected-namespaces"
    elif pod_asks:
        webhook, reason = True, "the pod template's labels ask for injection"
    elif pod_label == "false":
        webhook, reason = False, f'{INJECT}: "false"'
    elif pod_ambient:
        webhook, reason = False, "ambient"
    else:
        enabled = options.default_injection == "enabled"
        webhook, assumed = enabled, enabled
        reason = f"namespace {namespace or '(unset)'} is not among the inputs; mesh.default-injection is {options.default_injection}"
    if not webhook:
        return Injection(False, "ambient data plane, no sidecar" if ambient else reason, ambient=ambient)
    # The injector itself reads the label, else the deprecated annotation of the same name.
    decision = pod_label if pod_label in ("true", "false") else _text(annotations.get(INJECT))
    if decision == "false":
        return Injection(False, f'{INJECT}: "false" on the pod template')
    return Injection(True, reason, assumed=assumed)


def _text(node: Node | None) -> str | None:
    return node.text if node is not None else None
