"""A container's liveness, readiness and startup probes, as the kubelet will run them (reference §15).

Istio's injector rewrites httpGet, tcpSocket (since 1.12) and gRPC (since 1.13) probes into httpGet
probes on the agent's status port, which answers them by calling the app directly; exec probes run
inside the container and are never rewritten. Whether a probe that is not rewritten reaches the app
or the sidecar depends on the port it targets, so each probe keeps its port, resolved the kubelet's
way: a number, or the name of one of the same container's ports.
"""

from typing import TYPE_CHECKING, Any, NamedTuple

from meshlint import numbers
from meshlint.findings import Position
from meshlint.mesh.injection import injected_proxy
from meshlint.mesh.istio import GO_FALSE, GO_TRUE, REWRITE_PROBES_ANNOTATION
from meshlint.mesh.options import at_least
from meshlint.mesh.setting import Setting
from meshlint.model.pod import PROBE_ROLES, Container, PodTemplate
from meshlint.source.document import Node

if TYPE_CHECKING:
    from packaging.version import Version



class Probe(NamedTuple):
    container: Container
    role: str  # livenessProbe, readinessProbe or startupProbe
    action: str  # httpGet, tcpSocket, grpc or exec
    port: int | None  # the container port it targets; None for exec, or a name the container lacks
    position: Position  # the port as written (the action, when it names none)

    def __str__(self) -> str:
        port = f" on port {self.port}" if self.port is not None else ""
        return f"{self.role} {self.action}{port} of {self.container.label}"


def probes(container: Container) -> list[Probe]:
    """The container's probes that name an action, in the order liveness, readiness, startup."""
    found = []
    for role in PROBE_ROLES:
        probe = container.node.get(role)
        if not probe.is_map:
            continue
        for action in ("httpGet", "tcpSocket", "grpc", "exec"):
            node = probe.get(action)
            if node.exists:
                port = node.get("port") if action != "exec" else None
                position = port.pos if port is not None and port.exists else (node.key_pos or node.pos)
                found.append(Probe(container, role, action, _port(container, port), position))
                break
    return found


def _port(container: Container, node: Node | None) -> int | None:
    if node is None or not node.exists:
        return None
    value = node.value
    if isinstance(value, int) and not isinstance(value, bool):
        return numbers.port(value)
    if isinstance(value, str):
        if numbers.digits(value):
            return numbers.port(value)
        return next((number for number, name, _ in container.ports if name == value), None)
    return None


def rewrite(template: PodTemplate, helm: Setting[Any] | None, istio: "Version | None", reinjected: bool = False) -> Setting[bool]:
    """Does the injector rewrite this pod's probes? An injected manifest's probes stand as written,
    unless a webhook injects it again (`reinjected`: its namespace or labels ask for injection; the
    webhook then merges and rewrites anew); else the pod annotation (`strconv.ParseBool`; a value it
    cannot parse falls back), else Helm `sidecarInjectorWebhook.rewriteAppHTTPProbe`, else the
    default: on since Istio 1.6 (reference §15.1)."""
    proxy = injected_proxy(template)
    if proxy is not None and not reinjected:
        return Setting(
            False, proxy.position, "the manifest is already injected and nothing in the run has a webhook inject it again, so its probes are the ones the kubelet runs"
        )
    node = template.annotations().get(REWRITE_PROBES_ANNOTATION)
    if node is not None and (node.text in GO_TRUE or node.text in GO_FALSE):
        return Setting(node.text in GO_TRUE, node.pos, f'{REWRITE_PROBES_ANNOTATION}: "{node.text}"', local=True)
    if helm is not None and (isinstance(helm.value, bool) or str(helm.value) in GO_TRUE | GO_FALSE):
        on = helm.value is True or str(helm.value) in GO_TRUE
        return helm.derived(on, f"sidecarInjectorWebhook.rewriteAppHTTPProbe: {str(on).lower()}")
    if istio is not None and not at_least(istio, "1.6"):
        return Setting(False, None, f"Istio {istio} does not rewrite probes by default")
    return Setting(True, None, "probe rewrite is on by default")


# The first Istio version that rewrites each kind of probe (httpGet: every version meshlint knows).
REWRITTEN_SINCE = {"tcpSocket": "1.12", "grpc": "1.13"}


def not_rewritten(probe: Probe, rewrite: Setting[bool], istio: "Version | None") -> str | None:
    """Why the agent does not take this probe over (None: it does): the rewrite is off, or the target
    Istio predates rewriting its kind. Exec probes run in the container and are never rewritten."""
    if probe.action == "exec":
        return "exec probes are never rewritten"
    if not rewrite.value:
        return rewrite.cited
    since = REWRITTEN_SINCE.get(probe.action)
    if since is not None and istio is not None and not at_least(istio, since):
        return f"Istio rewrites {probe.action} probes from {since} on, and the target is {istio}"
    return None


def rewrite_fix(probe: Probe, rewrite: Setting[bool], injected: bool) -> str:
    """How to have the probe rewritten, wherever that was switched off."""
    if rewrite.value:
        return f"upgrade Istio to {REWRITTEN_SINCE.get(probe.action, '1.6')} or later, which rewrites {probe.action} probes"
    if injected:
        return "inject the manifest again with probe rewrite on, so its probes point at the agent's port 15020"
    if rewrite.local:
        return f"remove {rewrite.note}, so the agent on port 15020 takes the probe over"
    return "turn probe rewrite back on (sidecarInjectorWebhook.rewriteAppHTTPProbe: true), so the agent on port 15020 takes the probe over"
