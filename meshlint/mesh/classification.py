"""Who meshes this pod: exactly one of istio-sidecar, istio-gateway, istio-ambient, linkerd or
not-meshed, with the reason and where it came from (wave-2 spec §W1).

Decided, in order: an Istio gateway (the proxy is the workload); a proxy already in the manifest
(`istioctl kube-inject` or `linkerd inject` output); Istio's webhook selectors; Linkerd's truth table;
ambient enrolment; a pod's own `istio-proxy` customisation or Linkerd configuration keys; and when
nothing decides, `mesh.default-injection`. With `auto` (the default) an
undecided pod counts as having an Istio sidecar only when the run shows that Istio is in use.
"""

from collections.abc import Mapping
from typing import NamedTuple

from meshlint.findings import Position
from meshlint.mesh import injection, linkerd
from meshlint.mesh.injection import Namespace
from meshlint.mesh.istio import AUTO_IMAGE, GATEWAY_TEMPLATES_ANNOTATION, PROXY_CONTAINER
from meshlint.mesh.options import MeshOptions
from meshlint.mesh.setting import Setting
from meshlint.model.pod import PodTemplate
from meshlint.source.document import Node

ISTIO_SIDECAR = "istio-sidecar"
ISTIO_GATEWAY = "istio-gateway"
ISTIO_AMBIENT = "istio-ambient"
LINKERD = "linkerd"
NOT_MESHED = "not-meshed"
KINDS = (ISTIO_SIDECAR, ISTIO_GATEWAY, ISTIO_AMBIENT, LINKERD, NOT_MESHED)


class Classification(NamedTuple):
    """One pod's mesh, why, and where that was decided (None: a default or the run as a whole).

    `assumed`: only `mesh.default-injection` made it istio-sidecar. `unchecked`: nothing decided it
    and, with `auto`, the run shows no Istio, so the sidecar rules leave it alone. `also_linkerd`: Linkerd
    would inject it too (Istio's sidecar is what meshlint checks then)."""

    mesh: str
    reason: str
    origin: Position | None = None
    assumed: bool = False
    by_sign: bool = False  # assumed because the run shows Istio (`auto`), not because `enabled` says so
    unchecked: bool = False
    also_linkerd: linkerd.LinkerdDecision | None = None
    revision: str = ""  # the Istio revision that injects it ("" the default)
    unknown_revision: Node | None = None  # an istio.io/rev that names no revision of the run
    sign: Setting[str] | None = None  # the sign of Istio that made it assumed meshed (`by_sign`)

    @property
    def assumed_note(self) -> str:
        """What a finding about the sidecar says when only the default put it there."""
        return " (injection assumed: namespace unknown)" if self.assumed else ""


def classify(
    template: PodTemplate,
    namespace: Namespace | None,
    options: MeshOptions,
    istio_in_use: Setting[str] | None,
    revision_of: injection.RevisionOf = lambda name: name,
    custom_templates: Mapping[str, str] | None = None,
) -> Classification:
    """`custom_templates`: the injection templates the run defines, each with the list it puts istio-proxy
    in (`none`: it adds none)."""
    gateway = _gateway(template)
    if gateway is not None:
        return gateway
    istio_proxy = injection.injected_proxy(template)
    if istio_proxy is not None:
        return Classification(ISTIO_SIDECAR, f"the manifest already holds an injected {PROXY_CONTAINER} container (line {istio_proxy.position.line})", istio_proxy.position)
    linkerd_proxy = linkerd.injected_proxy(template)
    if linkerd_proxy is not None:
        return Classification(LINKERD, f"the manifest already holds an injected {linkerd.PROXY_CONTAINER} container (line {linkerd_proxy.position.line})", linkerd_proxy.position)
    istio = injection.decide(template, namespace, options, revision_of)
    links = linkerd.decide(template, namespace.annotations if namespace else None, namespace.labels if namespace else None)
    proxyless = _proxyless(template, custom_templates or {})
    if istio.injects and proxyless is not None:
        return Classification(NOT_MESHED, f"{istio.reason}, but {proxyless[0]}", proxyless[1].pos)
    if istio.injects:
        return Classification(ISTIO_SIDECAR, istio.reason, istio.origin, also_linkerd=links if links.injects else None, revision=istio.revision)
    if links.injects:
        return Classification(LINKERD, links.reason, links.origin)
    if istio.ambient:
        return Classification(ISTIO_AMBIENT, istio.reason, istio.origin)
    if links.decided:  # a Linkerd setting on the pod or namespace said no: that is the telling reason
        return Classification(NOT_MESHED, links.reason, links.origin)
    if istio.injects is False:
        return Classification(NOT_MESHED, istio.reason, istio.origin, unknown_revision=istio.unknown_revision)
    if proxyless is not None:
        return Classification(NOT_MESHED, proxyless[0], proxyless[1].pos)
    written = linkerd.written_for_linkerd(template, namespace.annotations if namespace else None)
    custom = injection.proxy_customisation(template)
    if custom is not None and written is None:  # shaped for Istio's injector: the pod is written for Istio
        return Classification(
            ISTIO_SIDECAR, f"its own {PROXY_CONTAINER} container (line {custom.position.line}) is written for Istio's injector, which merges it into the proxy it adds", custom.position
        )
    if written is not None:  # Linkerd's keys: Istio's defaults and advice do not apply (reference §18.3.8)
        key, node = written
        return Classification(NOT_MESHED, f"its {key} annotation (line {node.pos.line}) says it is written for Linkerd, and the run does not show Linkerd injecting it", node.pos)
    return _by_default(istio.reason, options, istio_in_use)


# Injection templates that add no istio-proxy container: proxyless gRPC (reference §18.3.2).
PROXYLESS_TEMPLATES = frozenset(("grpc-simple",))


def injection_templates(template: PodTemplate) -> tuple[list[str], Node | None]:
    """The injection templates the pod asks for by `inject.istio.io/templates` (none: the injector's
    defaults, `sidecar`), and the annotation."""
    node = template.annotations().get(GATEWAY_TEMPLATES_ANNOTATION)
    text = (node.text or "") if node is not None else ""
    return [t.strip() for t in text.split(",") if t.strip()], node


def agent_only(template: PodTemplate) -> Node | None:
    """The annotation that gives the pod `grpc-agent` without `sidecar`: an agent-only istio-proxy, a
    regular container whatever native says, that captures no traffic (reference §18.3.2)."""
    names, node = injection_templates(template)
    return node if "grpc-agent" in names and "sidecar" not in names else None


def _proxyless(template: PodTemplate, custom: Mapping[str, str]) -> tuple[str, Node] | None:
    """Why Istio's injection gives this pod no proxy container, and the annotation that says so: its
    `inject.istio.io/templates` names only templates that add none (proxyless gRPC's, or custom ones
    the run defines without an istio-proxy container)."""
    names, node = injection_templates(template)
    if not names or node is None or not all(n in PROXYLESS_TEMPLATES or custom.get(n) == "none" for n in names):
        return None
    kind = "proxyless gRPC" if PROXYLESS_TEMPLATES.issuperset(names) else "the run's sidecarInjectorWebhook.templates define it without one"
    return f'{GATEWAY_TEMPLATES_ANNOTATION}: "{node.text}" injects no {PROXY_CONTAINER} container ({kind})', node


def _by_default(reason: str, options: MeshOptions, istio_in_use: Setting[str] | None) -> Classification:
    mode = options.default_injection
    if mode == "enabled":
        return Classification(ISTIO_SIDECAR, f"{reason}; mesh.default-injection is enabled", assumed=True)
    if mode == "auto" and istio_in_use is not None:
        return Classification(ISTIO_SIDECAR, f"{reason}; Istio is in use there ({istio_in_use.value}, {istio_in_use.where})", assumed=True, by_sign=True, sign=istio_in_use)
    if mode == "auto":
        return Classification(NOT_MESHED, f"{reason}, and nothing on its path or in its unit shows that Istio is in use", unchecked=True)
    return Classification(NOT_MESHED, f"{reason}; mesh.default-injection is disabled")


def _gateway(template: PodTemplate) -> Classification | None:
    """An Istio gateway: it asks for the gateway injection template, or its only container is an
    istio-proxy (whose image the injector fills in, `image: auto`, or a rendered gateway)."""
    names, templates = injection_templates(template)
    if templates is not None and "gateway" in names:
        return Classification(ISTIO_GATEWAY, f'{GATEWAY_TEMPLATES_ANNOTATION}: "{templates.text}" makes the proxy the workload', templates.pos)
    containers = template.containers
    if len(containers) == 1 and containers[0].name == PROXY_CONTAINER:
        # With image: auto the injector completes a gateway; a rendered gateway (args proxy router)
        # and any pod whose only container is the proxy have no app either.
        proxy = containers[0]
        how = "with image: auto, a gateway the injector completes" if proxy.image == AUTO_IMAGE else "and no app container: the proxy is the workload"
        return Classification(ISTIO_GATEWAY, f"its only container is {PROXY_CONTAINER} {how}", proxy.position)
    return None
