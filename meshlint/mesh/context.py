"""The mesh context: the mesh-wide facts of a run, collected once, then asked about each workload.

Rules never work these facts out themselves. Every effective value is a `Setting` whose origin is the
file and line that decided it (or the built-in default), so messages can say
"holdApplicationUntilProxyStarts is false (istio-operator.yaml:12)". Reference: mesh-semantics.md.
The context keeps small facts, never documents: a tree with thousands of Services keeps thousands of
`ServiceTargets`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from meshlint.findings import Position
from meshlint.mesh.facts import proxyconfig
from meshlint.mesh.istio import NATIVE_ENV
from meshlint.mesh.options import MeshOptions
from meshlint.mesh.setting import Setting
from meshlint.mesh.sources import MeshSource, mesh_source
from meshlint.model.kinds import MESH_CONFIG_KINDS
from meshlint.model.pod import PodTemplate
from meshlint.model.resource import Resource
from meshlint.source.document import Node

HOLD = "holdApplicationUntilProxyStarts"


class ServiceTargets(NamedTuple):
    """What the mesh context keeps of a Service: whom it selects and which pod ports it sends to."""

    name: str
    namespace: str
    selector: tuple[tuple[str, str | None], ...]
    targets: tuple[tuple[Any, Position], ...]  # targetPort (number or port name), or the port itself


class PeerAuthentication(NamedTuple):
    namespace: str
    selector: dict[str, str] | None
    mode: Setting[str | None] | None
    port_modes: dict[int, Setting[str | None]]


class MeshContext:
    """Built once from every input and `mesh.context` file, then asked about each workload."""

    def __init__(self, resources: Iterable[Resource], options: MeshOptions | None = None) -> None:
        self.options = options or MeshOptions()
        self.namespaces: dict[str, dict[str, Node]] = {}
        self.peer_authentications: list[PeerAuthentication] = []
        self.services: dict[str, list[ServiceTargets]] = {}  # by namespace: a pod only meets its own
        self.default_config: dict[str, Setting[Any]] = {}
        self.default_proxy_metadata: dict[str, Setting[Any]] = {}
        self.helm_proxy: dict[str, Setting[Any]] = {}
        self.native_env: Setting[str] | None = None
        self.compatibility_version: Setting[str | None] | None = None
        for resource in resources:
            self._add(resource)

    # --- collecting ------------------------------------------------------------------------------

    def _add(self, resource: Resource) -> None:
        kind = resource.kind
        if kind == "Namespace":
            self.namespaces[resource.name] = resource.metadata.get("labels").string_map()
        elif kind == "Service":
            service = _service_targets(resource)
            self.services.setdefault(service.namespace, []).append(service)
        elif kind == "PeerAuthentication":
            self.peer_authentications.append(_peer_authentication(resource))
        elif kind in MESH_CONFIG_KINDS:
            source = mesh_source(resource)
            if source is not None:
                self._merge(source)

    def _merge(self, source: MeshSource) -> None:
        default_config = source.default_config
        if default_config is not None:
            for name, node in proxyconfig.normalized_fields(default_config).items():
                if name == "proxyMetadata":
                    for key, value in node.items():
                        self.default_proxy_metadata[str(key)] = Setting(value.text, value.pos)
                else:
                    self.default_config[name] = Setting.of(node)
        proxy = source.helm_proxy
        if proxy is not None:
            for key, node in proxy.items():
                self.helm_proxy[str(key)] = Setting.of(node)
            probe_enabled = proxy.path("startupProbe", "enabled")
            if probe_enabled.exists:
                self.helm_proxy["startupProbe.enabled"] = Setting.of(probe_enabled)
        if NATIVE_ENV in source.env:
            node = source.env[NATIVE_ENV]
            self.native_env = Setting((node.text or "").strip().lower(), node.pos)
        if source.compatibility_version is not None:
            node = source.compatibility_version
            self.compatibility_version = Setting(node.text, node.pos)

    # --- asked by the workload view and the rules --------------------------------------------------

    def helm_value(self, key: str) -> Setting[Any] | None:
        """A Helm `global.proxy` value that is set (empty values are unset); "true"/"false" strings
        read as the booleans the template sees."""
        setting = self.helm_proxy.get(key)
        if setting is None or setting.value in (None, "", {}, []):
            return None
        if isinstance(setting.value, str) and setting.value.lower() in ("true", "false"):
            return Setting(setting.value.lower() == "true", setting.origin)
        return setting

    @property
    def proxy_lifecycle(self) -> Setting[Any] | None:
        """Helm global.proxy.lifecycle when it is set: it replaces the injected hold hook (reference §1.3)."""
        setting = self.helm_proxy.get("lifecycle")
        return setting if setting is not None and setting.value else None

    @property
    def mesh_wide_hold(self) -> Setting[Any] | None:
        """holdApplicationUntilProxyStarts switched on for the whole mesh (defaultConfig or Helm)."""
        for setting in (self.default_config.get(HOLD), self.helm_proxy.get(HOLD)):
            if setting is not None and setting.value is True:
                return setting
        return None

    def service_targets(self, template: PodTemplate) -> dict[int, list[Setting[str]]]:
        """Container ports that a Service selecting this pod sends traffic to, each with the Service
        (name as value, the targetPort, or the port when targetPort is absent, as origin)."""
        labels = {k: v.text for k, v in template.labels().items()}
        named = {name: number for c in template.containers for number, name, _ in c.ports if name}
        targets: dict[int, list[Setting[str]]] = {}
        for service in self.services.get(template.owner.namespace, ()):
            if not service.selector:
                continue
            if any(labels.get(k) != v for k, v in service.selector):
                continue
            for value, position in service.targets:
                number = named.get(value) if isinstance(value, str) else value
                if isinstance(number, int) and not isinstance(number, bool):
                    targets.setdefault(number, []).append(Setting(f"Service {service.name}", position))
        return targets

    def mtls_mode(self, namespace: str, labels: dict[str, str], port: int | None = None) -> Setting[Any]:
        """The PeerAuthentication mode in force: selector over namespace over mesh; UNSET inherits."""
        root = self.options.root_namespace
        mesh = [p for p in self.peer_authentications if p.namespace == root and p.selector is None]
        ns = [p for p in self.peer_authentications if p.namespace == namespace and p.selector is None and namespace != root]
        selected = [
            p
            for p in self.peer_authentications
            if p.namespace == namespace and p.selector is not None and all(labels.get(k) == v for k, v in p.selector.items())
        ]
        mode: Setting[Any] = Setting("PERMISSIVE", None)
        for scope in (mesh, ns, selected):
            for policy in scope:
                if policy.mode is not None and policy.mode.value not in (None, "UNSET"):
                    mode = policy.mode
                if port is not None and scope is selected and port in policy.port_modes:
                    port_mode = policy.port_modes[port]
                    if port_mode.value not in (None, "UNSET"):
                        mode = port_mode
        return mode


def _service_targets(resource: Resource) -> ServiceTargets:
    spec = resource.root.get("spec")
    selector = spec.get("selector")
    pairs = tuple((str(k), v.text) for k, v in selector.items()) if selector.is_map else ()
    targets = []
    for port in spec.get("ports").elements():
        target = port.get("targetPort") if port.get("targetPort").exists else port.get("port")
        targets.append((target.value, target.pos))
    return ServiceTargets(resource.name, resource.namespace, pairs, tuple(targets))


def _peer_authentication(resource: Resource) -> PeerAuthentication:
    spec = resource.root.get("spec")
    selector_node = spec.path("selector", "matchLabels")
    selector = {str(k): v.text or "" for k, v in selector_node.items()} if selector_node.is_map else None
    mode = spec.path("mtls", "mode")
    port_modes = {}
    for port, node in spec.get("portLevelMtls").items():
        try:
            port_modes[int(port)] = Setting(node.path("mode").text, node.path("mode").pos)
        except (TypeError, ValueError):
            continue
    return PeerAuthentication(
        namespace=resource.namespace,
        selector=selector,
        mode=Setting(mode.text, mode.pos) if mode.exists else None,
        port_modes=port_modes,
    )
