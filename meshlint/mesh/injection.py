"""Does Istio's injector give a pod a sidecar? The webhook selectors and the injector's own checks
(reference §6.1-§6.3). Nothing deciding is an answer too: then `mesh.default-injection` decides."""

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


class _PodLabels(NamedTuple):
    """What the injector reads of the pod template itself: its `sidecar.istio.io/inject` label (and the
    deprecated annotation of that name), its `istio.io/rev` and its data-plane mode."""

    inject: Node | None
    rev: Node | None
    mode: Node | None  # istio.io/dataplane-mode
    annotation: Node | None  # the deprecated sidecar.istio.io/inject annotation

    @property
    def value(self) -> str | None:
        return _text(self.inject)

    @property
    def ambient(self) -> Node | None:
        """The pod's own `istio.io/dataplane-mode=ambient`, if written."""
        return self.mode if _text(self.mode) == "ambient" else None


def decide(template: PodTemplate, namespace: Namespace | None, options: MeshOptions, revision_of: RevisionOf = lambda name: name) -> IstioDecision:
    """Follow the webhooks (reference §6.1, §12.3): hostNetwork, never-injected namespaces, then the
    namespace labels (`istio-injection` beats `istio.io/rev`, a namespace's `istio.io/rev` beats the
    pod's) and the pod labels. The pod label wins over the deprecated annotation, as in `injectRequired`.
    `revision_of` turns an `istio.io/rev` value into the revision it selects (None: no such revision)."""
    name = template.owner.namespace
    excluded = _host_network(template) or _never_injected_namespace(name)
    if excluded is not None:
        return excluded
    labels = template.labels()
    pod = _PodLabels(labels.get(INJECT), labels.get(REV_LABEL), labels.get(DATAPLANE_MODE), template.annotations().get(INJECT))
    selected = _selected(pod, namespace, name, options, revision_of("default") or "", revision_of)
    if selected is None:
        return _annotation_opt_out(pod) or _unselected(name)
    if not selected.injects:
        return _ambient_instead(selected, _in_ambient(pod, namespace))
    return _annotation_opt_out(pod) or selected


def _host_network(template: PodTemplate) -> IstioDecision | None:
    """The injector skips hostNetwork pods before reading any label."""
    host_network = template.spec.get("hostNetwork")
    if host_network.value is True:
        return IstioDecision(False, "hostNetwork: true pods are never injected", host_network.pos)
    return None


def _never_injected_namespace(name: str) -> IstioDecision | None:
    """The injector's own list of system namespaces, whatever their labels say."""
    return IstioDecision(False, f"namespace {name} is never injected") if name in NEVER_INJECTED_NAMESPACES else None


def _selected(pod: _PodLabels, namespace: Namespace | None, name: str, options: MeshOptions, default: str, revision_of: RevisionOf) -> IstioDecision | None:
    """The webhook's verdict from the selectors: the Namespace in the run, else `mesh.injected-namespaces`
    (a namespace labelled elsewhere), else the pod's labels alone. None: no webhook selects the pod."""
    if namespace is not None:
        return _by_namespace(namespace, pod, name, default, revision_of)
    if name and name in options.injected_namespaces:
        return IstioDecision(pod.value != "false", f"namespace {name} is listed in mesh.injected-namespaces", revision=default)
    return _by_pod(pod, default, revision_of) or _pod_declines(pod)


def _by_namespace(namespace: Namespace, pod: _PodLabels, name: str, default: str, revision_of: RevisionOf) -> IstioDecision:
    """A Namespace in the run: its `istio-injection` label beats its `istio.io/rev`, which beats the pod's
    labels; a pod labelled `sidecar.istio.io/inject: "false"` opts out of its namespace's injection."""
    ns_inject = namespace.labels.get(NAMESPACE_INJECTION_LABEL)
    if ns_inject is not None:
        injects = _text(ns_inject) == "enabled" and pod.value != "false"
        return IstioDecision(injects, f"namespace {name} has {NAMESPACE_INJECTION_LABEL}={_text(ns_inject)}", ns_inject.pos, revision=default)
    ns_rev = namespace.labels.get(REV_LABEL)
    if ns_rev is not None:
        return _by_revision(ns_rev, f"namespace {name} has {REV_LABEL}={_text(ns_rev)}", pod.value != "false", revision_of)
    return _by_pod(pod, default, revision_of) or IstioDecision(False, f"namespace {name} has no injection label")


def _by_pod(pod: _PodLabels, default: str, revision_of: RevisionOf) -> IstioDecision | None:
    """In a namespace without injection labels: the pod's `istio.io/rev`, else its inject label."""
    if pod.rev is not None and pod.value != "false":
        return _by_revision(pod.rev, f"the pod template has {REV_LABEL}={_text(pod.rev)}", True, revision_of)
    if pod.value == "true":
        return IstioDecision(True, "the pod template's labels ask for injection", pod.inject.pos if pod.inject else None, revision=default)
    return None


def _pod_declines(pod: _PodLabels) -> IstioDecision | None:
    """Where no Namespace is known, a pod that turns injection off, or is ambient, is decided all the same."""
    if pod.value == "false":
        return IstioDecision(False, f'{INJECT}: "false"', pod.inject.pos if pod.inject else None)
    ambient = pod.ambient
    return IstioDecision(False, "ambient", ambient.pos) if ambient is not None else None


def _by_revision(label: Node, reason: str, injects: bool, revision_of: RevisionOf) -> IstioDecision:
    revision = revision_of(label.text or "")
    if revision is None:
        return IstioDecision(False, f"{reason}, which names no revision or tag of this run, so no webhook injects", label.pos, unknown_revision=label)
    return IstioDecision(injects, reason, label.pos, revision=revision)


def _annotation_opt_out(pod: _PodLabels) -> IstioDecision | None:
    """The injector itself reads the label, else the deprecated annotation of the same name: without a
    `true` or `false` label, the annotation's `false` keeps the sidecar out."""
    if pod.value not in ("true", "false") and _text(pod.annotation) == "false":
        return IstioDecision(False, f'{INJECT}: "false" on the pod template', pod.annotation.pos if pod.annotation else None)
    return None


def refusal(template: PodTemplate) -> Node | None:
    """The pod template's own `sidecar.istio.io/inject: "false"`, read as `decide` reads it: the label,
    else (without a true or false label) the deprecated annotation. Such a pod is never injected."""
    labels = template.labels()
    pod = _PodLabels(labels.get(INJECT), None, None, template.annotations().get(INJECT))
    if pod.value == "false":
        return pod.inject
    return pod.annotation if _annotation_opt_out(pod) is not None else None


def _unselected(name: str) -> IstioDecision:
    """No selector matched: a namespace no install labels is not injected; of any other, the run does not
    say, and `mesh.default-injection` decides."""
    if name in UNLABELLED_BY_INSTALLS:
        return IstioDecision(False, f"namespace {name} is not labelled for injection by any install, and no Namespace in the run labels it")
    return IstioDecision(None, f"namespace {name or '(unset)'} is not among the inputs")


def _in_ambient(pod: _PodLabels, namespace: Namespace | None) -> bool:
    """Is the pod in the ambient data plane? Its own label says so; istio-cni also enrols an ambient
    namespace's pods unless the pod opts out with `none` (§16.2)."""
    if pod.ambient is not None:
        return True
    return namespace is not None and _text(namespace.labels.get(DATAPLANE_MODE)) == "ambient" and _text(pod.mode) != "none"


def _ambient_instead(decision: IstioDecision, ambient: bool) -> IstioDecision:
    """A pod no sidecar is injected into is an ambient pod when it is in the ambient data plane, unless
    its `istio.io/rev` names no revision of the run: that verdict is kept, to be reported (§12.3.5)."""
    if ambient and decision.unknown_revision is None:
        return IstioDecision(False, "ambient data plane, no sidecar", decision.origin, ambient=True)
    return decision


def _text(node: Node | None) -> str | None:
    return node.text if node is not None else None
