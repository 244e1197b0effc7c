"""What a Linkerd control-plane Helm values file (`linkerd-control-plane` chart) says about the proxies
it injects: a mesh-wide source of its own kind, scoped like istiod's values (wave-2 spec §W2, §W7).

Only the values the Linkerd facts read are claimed (reference §4.3, §10, §11), so two values files
that differ on an image tag or a log level are no conflict. Each field is named `linkerd:<value path>`
in the mesh context's claims, apart from every Istio field.
"""

from __future__ import annotations

from typing import Any

from meshlint.mesh.linkerd import LINKERD_FIELD_PREFIX as PREFIX
from meshlint.mesh.setting import Setting
from meshlint.model.resource import Resource

# The chart's values the Linkerd facts read, as (section, key); "" is the top level.
READ = (
    ("", "cniEnabled"),
    ("identity", "serviceAccountTokenProjection"),
    ("proxy", "await"),
    ("proxy", "nativeSidecar"),
    ("proxy", "enableShutdownEndpoint"),
    ("proxy", "waitBeforeExitSeconds"),
    ("proxy", "shutdownGracePeriod"),
    ("proxy", "opaquePorts"),
    ("proxyInit", "ignoreInboundPorts"),
    ("proxyInit", "ignoreOutboundPorts"),
    ("proxyInit", "skipSubnets"),
)


def field(path: str) -> str:
    """The claim name of a chart value: `linkerd:proxy.await`."""
    return PREFIX + path


def claims(resource: Resource) -> list[tuple[str, Setting[Any]]]:
    """What the values file says of each value the Linkerd facts read, as (field, setting)."""
    found: list[tuple[str, Setting[Any]]] = []
    for section, key in READ:
        node = resource.root.path(section, key) if section else resource.root.get(key)
        if node.exists and node.value is not None:
            found.append((field(f"{section}.{key}" if section else key), Setting.of(node)))
    return found
