"""Ambient mode: which namespaces enrol their pods, their waypoints, and what the node agent reads
(reference §16).

istio-cni enrols a pod labelled `istio.io/dataplane-mode: ambient`, or any pod of a namespace so
labelled unless the pod says `none`; a pod that gets a sidecar is never enrolled, and the sidecar
injector ignores the ambient label, so a namespace that also asks for sidecars (`istio-injection:
enabled` or `istio.io/rev`) runs sidecars, not ambient (`istioctl analyze` reads it the same way).
On an ambient pod the node agent reads only its own annotations; the sidecar's do nothing.
"""

from __future__ import annotations

from meshlint.mesh.injection import Namespace
from meshlint.mesh.istio import (
    DATAPLANE_MODE,
    INTERCEPTION_MODE,
    NAMESPACE_INJECTION_LABEL,
    PROXY_CONFIG_ANNOTATION,
    REV_LABEL,
    TRAFFIC_PREFIX,
)
from meshlint.source.document import Node

AMBIENT = "ambient"
BYPASS_INBOUND_CAPTURE = "ambient.istio.io/bypass-inbound-capture"
USE_WAYPOINT = "istio.io/use-waypoint"
# Annotations only the sidecar injector and the sidecar's iptables read (cni/pkg/nodeagent/net.go).
SIDECAR_ONLY_KEYS = frozenset((INTERCEPTION_MODE, PROXY_CONFIG_ANNOTATION))


def sidecar_only(key: str) -> bool:
    """Does this pod annotation configure only a sidecar, so that it does nothing on an ambient pod?"""
    return key in SIDECAR_ONLY_KEYS or key.startswith(TRAFFIC_PREFIX)


def ambient_namespace(namespace: Namespace | None) -> Node | None:
    """The namespace's `istio.io/dataplane-mode: ambient` label, when it enrols its pods in ambient."""
    if namespace is None:
        return None
    mode = namespace.labels.get(DATAPLANE_MODE)
    if mode is None or mode.text != AMBIENT:
        return None
    injection = namespace.labels.get(NAMESPACE_INJECTION_LABEL)
    if (injection is not None and injection.text == "enabled") or REV_LABEL in namespace.labels:
        return None  # its pods get sidecars, and a pod with a sidecar is never enrolled
    return mode


def waypoint(namespace: Namespace | None) -> Node | None:
    """The waypoint the namespace's traffic goes through (`istio.io/use-waypoint`), if it names one."""
    node = namespace.labels.get(USE_WAYPOINT) if namespace is not None else None
    return node if node is not None and node.text and node.text != "none" else None
