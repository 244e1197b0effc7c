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
from meshlint.mesh.envsources import EnvSources
from meshlint.mesh.facts import proxyconfig
from meshlint.mesh.injection import Namespace
from meshlint.mesh.istio import (
    ISTIO_API_SUFFIX,
    NAMESPACE_INJECTION_LABEL,
    NATIVE_ENV,
    PROXY_CONTAINER,
    REV_LABEL,
    is_pod_key,
)
from meshlint.mesh.options import MeshOptions
from meshlint.mesh.setting import Setting
from meshlint.mesh.sources import MeshSource, mesh_source
from meshlint.model.kinds import HELM_VALUES, MESH_CONFIG_KINDS
from meshlint.model.pod import PodTemplate, pod_templates
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

    def __init__(
        self, resources: Iterable[Resource] = (), options: MeshOptions | None = None, istio_in_use: Setting[str] | None = None
    ) -> None:
        self.options = options or MeshOptions()
        # The first sign, in path order, that the run is about an Istio mesh (wave-2 spec §W1).
        self.istio_in_use: Setting[str] | None = istio_in_use
        self.namespaces: dict[str, Namespace] = {}
        self.peer_authentications: list[PeerAuthentication] = []
        self.services: dict[str, list[ServiceTargets]] = {}  # by namespace: a pod only meets its own
        self.default_config: dict[str, Setting[Any]] = {}
        self.default_proxy_metadata: dict[str, Setting[Any]] = {}
        self.helm_proxy: dict[str, Setting[Any]] = {}
        self.native_env: Setting[str] | None = None
        self.compatibility_version: Setting[str | None] | None = None
        self.proxy_variant: Setting[str | None] | None = None  # Helm global.variant (distroless has no shell)
        self.env_sources = EnvSources()  # ConfigMaps and Secrets a container's envFrom can name
        for resource in resources:
            self.add(resource)

    # --- collecting ------------------------------------------------------------------------------

    def add(self, resource: Resource) -> None:
        """Take what the mesh context needs from one resource (the resource itself is not kept)."""
        self._note_istio(resource)
        self.env_sources.add(resource)
        kind = resource.kind
        if kind == "Namespace":
            self.namespaces[resource.name] = Namespace(resource.name, resource.labels, resource.annotations)
        elif kind == "Service":
            service = _service_targets(resource)
            self.services.setdefault(service.namespace, []).append(service)
        elif kind == "PeerAuthentication":
            self.peer_authentications.append(_peer_authentication(resource))
        elif kind in MESH_CONFIG_KINDS:
            source = mesh_source(resource)
            if source is not None:
                self._merge(source)

    def wants_istio_sign(self, path: str, line: int) -> bool:
        """Could a sign of Istio at this place be the first one? (Signs later in path order change
        nothing, so the first pass need not read them.)"""
        found = self.istio_in_use
        if found is None:
            return True
        if found.origin is None:
            return False
        return (path, line) < (found.origin.path, found.origin.line)

    def _note_istio(self, resource: Resource) -> None:
        sign = _istio_sign(resource)
        if sign is None or not (self.istio_in_use is None or _earlier(sign, self.istio_in_use)):
            return
        self.istio_in_use = sign

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
        variant = source.helm_values.path("global", "variant") if source.helm_values is not None else None
        if variant is not None and variant.exists:
            self.proxy_variant = Setting(variant.text, variant.pos)
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


def _earlier(a: Setting[str], b: Setting[str]) -> bool:
    if b.origin is None:
        return False
    if a.origin is None:
        return True
    return (a.origin.path, a.origin.line, a.origin.column) < (b.origin.path, b.origin.line, b.origin.column)


def _istio_sign(resource: Resource) -> Setting[str] | None:
    """What in this resource shows that the run is about an Istio mesh, and where (wave-2 spec §W1)."""
    group = resource.api_version.split("/", 1)[0] if "/" in resource.api_version else ""
    if group.endswith(ISTIO_API_SUFFIX):
        return Setting(f"{resource.kind} {resource.name or '(unnamed)'}", resource.root.get("apiVersion").pos)
    if resource.kind == "Namespace":
        for key in (NAMESPACE_INJECTION_LABEL, REV_LABEL):
            if key in resource.labels:
                return Setting(f"Namespace {resource.name} label {key}", resource.labels[key].key_pos)
        return None
    if resource.kind in MESH_CONFIG_KINDS:
        source = mesh_source(resource)
        if source is None:
            return None
        if resource.kind == HELM_VALUES:
            # Only what istiod's chart alone has: many charts' values have `global:` or `env:`.
            node = source.mesh_config or source.helm_proxy or _present(resource.root.get("pilot"))
            return Setting("istiod Helm values", node.key_pos or node.pos) if node is not None else None
        return Setting(f"{resource.kind} {resource.name or '(unnamed)'}", resource.root.pos)
    for template in pod_templates(resource):
        for container in template.all_containers:
            if container.name == PROXY_CONTAINER:
                return Setting(f"an {PROXY_CONTAINER} container in {resource.kind} {resource.name or '(unnamed)'}", container.position)
        for values in (template.labels(), template.annotations()):
            for key, node in values.items():
                if is_pod_key(key) or key.startswith("proxy.istio.io/") or key == REV_LABEL:
                    return Setting(f"{key} on {resource.kind} {resource.name or '(unnamed)'}", node.key_pos or node.pos)
    return None


def _present(node: Node) -> Node | None:
    return node if node.exists else None
