"""Linkerd's names and defaults, and whether its proxy injector meshes a pod (reference §6.4, §10,
§11). Linkerd's own vocabulary is `enabled`/`disabled`, except the native-sidecar switch, which is
read as a Go boolean."""

from collections.abc import Callable
from typing import Any, NamedTuple

from meshlint.findings import Position
from meshlint.mesh.setting import Setting
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
PROXY_UID = 2102  # proxy.uid: an init container running as it is not captured (§11.5.6)
ADMIN_PORT = 4191  # proxy.ports.admin: /ready, /shutdown
CONTROL_PORT = 4190  # proxy.ports.control
PROXY_PORTS = frozenset((CONTROL_PORT, ADMIN_PORT))  # proxy-init always skips them inbound (§11.5.2)
ADMIN_PORT_ANNOTATION = "config.linkerd.io/admin-port"
CONTROL_PORT_ANNOTATION = "config.linkerd.io/control-port"
ADMIN_PORT_NAME = "linkerd-admin"  # the injected proxy's container port for its admin server
ARGO_KILL_COMMAND = "workflows.argoproj.io/kill-cmd-" + PROXY_CONTAINER  # what Argo runs to stop the proxy
INIT_CONTAINER = "linkerd-init"  # proxy-init; absent from a pod the CNI plugin sets up

AWAIT = "config.linkerd.io/proxy-await"
ADMIN_SHUTDOWN = "config.linkerd.io/proxy-admin-shutdown"
WAIT_BEFORE_EXIT = "config.alpha.linkerd.io/proxy-wait-before-exit-seconds"
SHUTDOWN_GRACE_PERIOD = "config.linkerd.io/shutdown-grace-period"
SKIP_INBOUND = "config.linkerd.io/skip-inbound-ports"
SKIP_OUTBOUND = "config.linkerd.io/skip-outbound-ports"
SKIP_SUBNETS = "config.linkerd.io/skip-subnets"
OPAQUE_PORTS = "config.linkerd.io/opaque-ports"
ENABLED_DISABLED = ("enabled", "disabled")
# The native-sidecar switch by name, in the injector's precedence (GA over beta over alpha), with the
# stable line that first reads it (§10.2).
NATIVE_GA = "config.linkerd.io/proxy-enable-native-sidecar"
NATIVE_BETA = "config.beta.linkerd.io/proxy-enable-native-sidecar"
NATIVE_ALPHA = "config.alpha.linkerd.io/proxy-enable-native-sidecar"
NATIVE_ANNOTATIONS = ((NATIVE_GA, "2.20"), (NATIVE_BETA, "2.19"), (NATIVE_ALPHA, "2.15"))
GO_BOOLS = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True,
            "0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False}  # strconv.ParseBool

# What a pod inherits from its namespace's annotations (`AppendNamespaceAnnotations`: the
# ProxyAnnotations and ProxyAlphaConfigAnnotations lists). Which native-sidecar name is on the list
# depends on the line: 2.20 lists the GA and alpha names but not the beta one (§11.1.6).
INHERITED = frozenset((AWAIT, ADMIN_SHUTDOWN, WAIT_BEFORE_EXIT, SHUTDOWN_GRACE_PERIOD, SKIP_INBOUND, SKIP_OUTBOUND, SKIP_SUBNETS, OPAQUE_PORTS))
INHERITED_NATIVE = {"2.20": frozenset((NATIVE_GA, NATIVE_ALPHA)), "2.19": frozenset((NATIVE_BETA, NATIVE_ALPHA)), "2.15": frozenset((NATIVE_ALPHA,))}

# Version gates (reference §10, §11): each the first stable line with the change.
NATIVE_SINCE = "2.15"
SHUTDOWN_OFF_SINCE = "2.16"  # the /shutdown endpoint is off unless enabled
NATIVE_DEFAULT_SINCE = "2.20"  # proxy.nativeSidecar defaults to true; wait-before-exit ignored when native
DEFAULT_SKIP_PORTS = "4567,4568"  # proxyInit.ignoreInboundPorts / ignoreOutboundPorts (Galera)
CNI_DEFAULT_SKIP_PORTS = ""  # the linkerd2-cni chart's ignoreInboundPorts / ignoreOutboundPorts (§18.3.7)
AWAIT_DISABLING_ENV = ("LINKERD_AWAIT_DISABLED", "LINKERD_DISABLED")
SHUTDOWN_ENV = "LINKERD2_PROXY_SHUTDOWN_ENDPOINT_ENABLED"
LINKERD_API_SUFFIX = ".linkerd.io"
LINKERD_FIELD_PREFIX = "linkerd:"  # how the mesh context names a Linkerd Helm value among its claims


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


# Annotation prefixes only Linkerd reads: a pod (or Namespace) carrying one is written for Linkerd (§18.3.8).
CONFIG_PREFIXES = ("config.linkerd.io/", "config.alpha.linkerd.io/")


def written_for_linkerd(template: PodTemplate, namespace_annotations: dict[str, Node] | None) -> tuple[str, Node] | None:
    """The first Linkerd configuration annotation on the pod template, else on its namespace."""
    for written in (template.annotations(), namespace_annotations or {}):
        for key, node in written.items():
            if key.startswith(CONFIG_PREFIXES):
                return key, node
    return None


class _Injectee(NamedTuple):
    """What the injector's checks read of one pod: the template, its namespace, and the inject annotation
    on each of them."""

    template: PodTemplate
    namespace: str
    namespace_labels: dict[str, Node]
    pod: Node | None  # the pod template's linkerd.io/inject
    ns: Node | None  # the namespace's linkerd.io/inject

    @property
    def pod_value(self) -> str | None:
        return _text(self.pod)

    @property
    def ns_value(self) -> str | None:
        return _text(self.ns)


def decide(
    template: PodTemplate,
    namespace_annotations: dict[str, Node] | None,
    namespace_labels: dict[str, Node] | None,
) -> LinkerdDecision:
    """The proxy injector's verdict, following `disabledByAnnotation` and `Injectable()` (§11.1.2-4).

    The injector reads the annotation (never the label) from the pod and from its namespace; an
    invalid value on the namespace un-meshes every pod in it, even pods annotated `enabled`."""
    injectee = _Injectee(
        template,
        template.owner.namespace,
        namespace_labels or {},
        template.annotations().get(INJECT_ANNOTATION),
        (namespace_annotations or {}).get(INJECT_ANNOTATION),
    )
    for step in _STEPS:
        decision = step(injectee)
        if decision is not None:
            return decision
    return _not_enabled(injectee)


def _unannotated(injectee: _Injectee) -> LinkerdDecision | None:
    """Without the annotation on the pod or its namespace, no Linkerd setting was seen: nothing decided."""
    if injectee.pod is None and injectee.ns is None:
        return LinkerdDecision(False, "no linkerd.io/inject annotation on the pod or its namespace", decided=False)
    return None


def _host_network(injectee: _Injectee) -> LinkerdDecision | None:
    """`Injectable()`: a pod on the host's network is never injected."""
    if injectee.template.spec.get("hostNetwork").value is True:
        return LinkerdDecision(False, "Linkerd never injects hostNetwork pods")
    return None


def _never_injected_namespace(injectee: _Injectee) -> LinkerdDecision | None:
    """The webhook's namespace selector leaves out the system namespaces, whatever they are annotated."""
    if injectee.namespace in NEVER_INJECTED_NAMESPACES:
        return LinkerdDecision(False, f"Linkerd never injects namespace {injectee.namespace}")
    return None


def _webhook_off(injectee: _Injectee) -> LinkerdDecision | None:
    """A namespace labelled to turn Linkerd's admission webhooks off is not sent to the injector."""
    if _text(injectee.namespace_labels.get(WEBHOOK_OFF_LABEL)) == "disabled":
        return LinkerdDecision(False, f"namespace {injectee.namespace} has {WEBHOOK_OFF_LABEL}=disabled")
    return None


def _control_plane(injectee: _Injectee) -> LinkerdDecision | None:
    """The webhook's object selector leaves out Linkerd's own control-plane and CNI pods."""
    if any(label in injectee.template.labels() for label in CONTROL_PLANE_LABELS):
        return LinkerdDecision(False, "Linkerd's own control-plane pods are not injected")
    return None


def _already_proxied(injectee: _Injectee) -> LinkerdDecision | None:
    """A pod that already has Linkerd's proxy, or Istio's, gets no second one."""
    if any(c.name in OTHER_SIDECARS for c in injectee.template.all_containers):
        return LinkerdDecision(False, "the pod already has a proxy sidecar")
    return None


def _invalid_namespace_value(injectee: _Injectee) -> LinkerdDecision | None:
    """The namespace's value is checked first: an invalid one un-meshes every pod in the namespace."""
    ns, value = injectee.ns, injectee.ns_value
    if ns is not None and value not in INJECT_VALUES and value != "":
        return LinkerdDecision(False, f'namespace {injectee.namespace} has {INJECT_ANNOTATION}: "{value}", which is not enabled, disabled or ingress, so nothing in it is injected', ns.pos)
    return None


def _invalid_pod_value(injectee: _Injectee) -> LinkerdDecision | None:
    """Then the pod's: an invalid value leaves the pod out."""
    pod, value = injectee.pod, injectee.pod_value
    if pod is not None and value not in INJECT_VALUES and value != "":  # "" is as if unset (isInjectAnnotationValid)
        return LinkerdDecision(False, f'the pod template has {INJECT_ANNOTATION}: "{value}", which is not enabled, disabled or ingress', pod.pos)
    return None


def _namespace_enables(injectee: _Injectee) -> LinkerdDecision | None:
    """A namespace annotated `enabled` or `ingress` meshes its pods, except those annotated `disabled`."""
    ns, pod = injectee.ns, injectee.pod
    if ns is None or injectee.ns_value not in ("enabled", "ingress"):
        return None
    if injectee.pod_value == "disabled":
        return LinkerdDecision(False, f"{INJECT_ANNOTATION}: disabled on the pod template", pod.pos if pod is not None else None)
    return LinkerdDecision(True, f"namespace {injectee.namespace} has {INJECT_ANNOTATION}: {injectee.ns_value}", ns.pos)


def _pod_enables(injectee: _Injectee) -> LinkerdDecision | None:
    """Otherwise the pod's own `enabled` or `ingress` meshes it."""
    if injectee.pod is not None and injectee.pod_value in ("enabled", "ingress"):
        return LinkerdDecision(True, f"the pod template has {INJECT_ANNOTATION}: {injectee.pod_value}", injectee.pod.pos)
    return None


def _not_enabled(injectee: _Injectee) -> LinkerdDecision:
    """Nothing enabled injection: the pod's value, else the namespace's, is what leaves the pod out."""
    deciding = injectee.pod if injectee.pod is not None else injectee.ns
    return LinkerdDecision(False, f"{INJECT_ANNOTATION}: {injectee.pod_value or injectee.ns_value} does not inject", deciding.pos if deciding is not None else None)


# The injector's checks in its own order: the first that decides gives the verdict. Whether the pod is
# injectable at all (the webhook's selectors, then `Injectable()`), then `disabledByAnnotation`.
_STEPS: tuple[Callable[[_Injectee], LinkerdDecision | None], ...] = (
    _unannotated,
    _host_network,
    _never_injected_namespace,
    _webhook_off,
    _control_plane,
    _already_proxied,
    _invalid_namespace_value,
    _invalid_pod_value,
    _namespace_enables,
    _pod_enables,
)


def token_refusal(template: PodTemplate, projection: Setting[Any] | None) -> tuple[str, Position] | None:
    """Why the injector refuses a pod it would otherwise mesh, for want of an identity token: the pod
    turns off `automountServiceAccountToken` and Helm `identity.serviceAccountTokenProjection` is false,
    so the proxy would have no token to prove its identity with (reference §18.3.6, `report.go`)."""
    automount = template.spec.get("automountServiceAccountToken")
    if automount.value is not False or projection is None or projection.value not in (False, "false"):
        return None
    return (
        f"Linkerd's injector refuses it: automountServiceAccountToken: false (line {automount.pos.line}) while "
        f"Helm identity.serviceAccountTokenProjection is false ({projection.where}) leaves the proxy no identity token",
        automount.pos,
    )


def _text(node: Node | None) -> str | None:
    return node.text if node is not None else None
