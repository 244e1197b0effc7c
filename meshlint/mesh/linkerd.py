"""Linkerd's names and defaults, and whether its proxy injector meshes a pod (reference §6.4, §10,
§11). Linkerd's own vocabulary is `enabled`/`disabled`, except the native-sidecar switch, which is
read as a Go boolean."""

from __future__ import annotations

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
    if pod is not None and pod_value not in INJECT_VALUES and pod_value != "":  # "" is as if unset (isInjectAnnotationValid)
        return LinkerdDecision(False, f'the pod template has {INJECT_ANNOTATION}: "{pod_value}", which is not enabled, disabled or ingress', pod.pos)
    if ns is not None and ns_value in ("enabled", "ingress"):
        if pod_value == "disabled":
            return LinkerdDecision(False, f"{INJECT_ANNOTATION}: disabled on the pod template", pod.pos if pod is not None else None)
        return LinkerdDecision(True, f"namespace {namespace} has {INJECT_ANNOTATION}: {ns_value}", ns.pos)
    if pod is not None and pod_value in ("enabled", "ingress"):
        return LinkerdDecision(True, f"the pod template has {INJECT_ANNOTATION}: {pod_value}", pod.pos)
    deciding = pod if pod is not None else ns
    return LinkerdDecision(False, f"{INJECT_ANNOTATION}: {pod_value or ns_value} does not inject", deciding.pos if deciding is not None else None)


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
