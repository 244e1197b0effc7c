"""Does Istio's injector give a pod a sidecar? The webhook selectors and the injector's own checks
(reference §6.1-§6.3). Nothing deciding is an answer too: then `mesh.default-injection` decides."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from meshlint.findings import Position
from meshlint.mesh.istio import (
    DATAPLANE_MODE,
    INJECT,
    INJECTED_STATUS_ANNOTATION,
    NAMESPACE_INJECTION_LABEL,
    NEVER_INJECTED_NAMESPACES,
    PROXY_CONTAINER,
    REV_LABEL,
    UNLABELLED_BY_INSTALLS,
)
from meshlint.mesh.options import MeshOptions
from meshlint.model.pod import Container, PodTemplate
from meshlint.source.document import Node


class Namespace(NamedTuple):
    """What the mesh context keeps of a Namespace object: its labels and annotations, with positions."""

    name: str
    labels: dict[str, Node]
    annotations: dict[str, Node]
    position: Position | None = None  # where the object is written (its metadata.name)


class IstioDecision(NamedTuple):
    """Istio's verdict for one pod: `injects` None when nothing in the run decides it; `revision` is the
    control plane that injects ("" the default revision); `unknown_revision` the `istio.io/rev` label
    naming no revision or tag the run declares (then nothing injects, §12.3.5)."""

    injects: bool | None
    reason: str
    origin: Position | None = None
    ambient: bool = False
    revision: str = ""
    unknown_revision: Node | None = None


def injected_proxy(template: PodTemplate) -> Container | None:
    """The `istio-proxy` the injector already added (kube-inject output), if any. Only a pod carrying
    the injector's `sidecar.istio.io/status` record was injected (reference §18.3.1)."""
    return _proxy_container(template) if _injected(template) else None


def proxy_customisation(template: PodTemplate) -> Container | None:
    """The pod's own `istio-proxy` container, written before injection: the injector merges it into the
    proxy it adds (native where native sidecars are in effect), so it says how the proxy is shaped,
    not that the pod is injected or that its proxy is classic (reference §18.3.1)."""
    return None if _injected(template) else _proxy_container(template)


def _injected(template: PodTemplate) -> bool:
    """Does the pod carry the injector's record? kube-inject writes a CronJob's on its jobTemplate's
    metadata (istio/istio `cronjob.yaml.injected`), every other kind's on the pod template."""
    if INJECTED_STATUS_ANNOTATION in template.annotations():
        return True
    if template.owner.kind != "CronJob":
        return False
    return INJECTED_STATUS_ANNOTATION in template.owner.root.path("spec", "jobTemplate", "metadata", "annotations").string_map()


def _proxy_container(template: PodTemplate) -> Container | None:
    for container in template.all_containers:
        if container.name == PROXY_CONTAINER:
            return container
    return None


RevisionOf = Callable[[str], "str | None"]


def decide(template: PodTemplate, namespace: Namespace | None, options: MeshOptions, revision_of: RevisionOf = lambda name: name) -> IstioDecision:
    """Follow the webhooks (reference §6.1, §12.3): hostNetwork, never-injected namespaces, then the
    namespace labels (`istio-injection` beats `istio.io/rev`, a namespace's `istio.io/rev` beats the
    pod's) and the pod labels. The pod label wins over the deprecated annotation, as in `injectRequired`.
    `revision_of` turns an `istio.io/rev` value into the revision it selects (None: no such revision)."""
    labels, annotations = template.labels(), template.annotations()
    name = template.owner.namespace
    if template.spec.get("hostNetwork").value is True:
        return IstioDecision(False, "hostNetwork: true pods are never injected", template.spec.get("hostNetwork").pos)
    if name in NEVER_INJECTED_NAMESPACES:
        return IstioDecision(False, f"namespace {name} is never injected")
    pod_label = labels.get(INJECT)
    pod_value = _text(pod_label)
    pod_rev = labels.get(REV_LABEL)
    pod_ambient = labels.get(DATAPLANE_MODE) if _text(labels.get(DATAPLANE_MODE)) == "ambient" else None
    ambient = pod_ambient is not None
    default = revision_of("default") or ""
    decision: IstioDecision | None = None
    if namespace is not None:
        ns_inject = namespace.labels.get(NAMESPACE_INJECTION_LABEL)
        ns_rev = namespace.labels.get(REV_LABEL)
        # istio-cni enrols an ambient namespace's pods unless the pod opts out with `none` (§16.2).
        ambient = ambient or (_text(namespace.labels.get(DATAPLANE_MODE)) == "ambient" and _text(labels.get(DATAPLANE_MODE)) != "none")
        if ns_inject is not None:
            injects = _text(ns_inject) == "enabled" and pod_value != "false"
            decision = IstioDecision(injects, f"namespace {name} has {NAMESPACE_INJECTION_LABEL}={_text(ns_inject)}", ns_inject.pos, revision=default)
        elif ns_rev is not None:
            decision = _by_revision(ns_rev, f"namespace {name} has {REV_LABEL}={_text(ns_rev)}", pod_value != "false", revision_of)
        else:
            decision = _by_pod(pod_label, pod_value, pod_rev, default, revision_of) or IstioDecision(False, f"namespace {name} has no injection label")
    elif name and name in options.injected_namespaces:
        decision = IstioDecision(pod_value != "false", f"namespace {name} is listed in mesh.injected-namespaces", revision=default)
    else:
        decision = _by_pod(pod_label, pod_value, pod_rev, default, revision_of)
        if decision is None and pod_value == "false":
            decision = IstioDecision(False, f'{INJECT}: "false"', pod_label.pos if pod_label else None)
        elif decision is None and pod_ambient is not None:
            decision = IstioDecision(False, "ambient", pod_ambient.pos)
    if decision is None:
        undecided = annotations.get(INJECT)
        if _text(undecided) == "false":
            return IstioDecision(False, f'{INJECT}: "false" on the pod template', undecided.pos if undecided else None)
        if name in UNLABELLED_BY_INSTALLS:
            return IstioDecision(False, f"namespace {name} is not labelled for injection by any install, and no Namespace in the run labels it")
        return IstioDecision(None, f"namespace {name or '(unset)'} is not among the inputs")
    if not decision.injects:
        if ambient and decision.unknown_revision is None:
            return IstioDecision(False, "ambient data plane, no sidecar", decision.origin, ambient=True)
        return decision
    # The injector itself reads the label, else the deprecated annotation of the same name.
    deprecated = annotations.get(INJECT)
    if pod_value not in ("true", "false") and _text(deprecated) == "false":
        return IstioDecision(False, f'{INJECT}: "false" on the pod template', deprecated.pos if deprecated else None)
    return decision


def _by_pod(pod_label: Node | None, pod_value: str | None, pod_rev: Node | None, default: str, revision_of: RevisionOf) -> IstioDecision | None:
    """In a namespace without injection labels: the pod's `istio.io/rev`, else its inject label."""
    if pod_rev is not None and pod_value != "false":
        return _by_revision(pod_rev, f"the pod template has {REV_LABEL}={_text(pod_rev)}", True, revision_of)
    if pod_value == "true":
        return IstioDecision(True, "the pod template's labels ask for injection", pod_label.pos if pod_label else None, revision=default)
    return None


def _by_revision(label: Node, reason: str, injects: bool, revision_of: RevisionOf) -> IstioDecision:
    revision = revision_of(label.text or "")
    if revision is None:
        return IstioDecision(False, f"{reason}, which names no revision or tag of this run, so no webhook injects", label.pos, unknown_revision=label)
    return IstioDecision(injects, reason, label.pos, revision=revision)


def _text(node: Node | None) -> str | None:
    return node.text if node is not None else None
