"""The mesh context: what applies to each workload, resolved once per run, with where it came from.

Rules never work these facts out themselves. Every effective value is a `Setting` whose origin is the
file and line that decided it (or the built-in default), so messages can say
"holdApplicationUntilProxyStarts is false (istio-operator.yaml:12)". Reference: mesh-semantics.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Iterable, NamedTuple

if TYPE_CHECKING:
    from packaging.version import Version


from meshlint import proxyconfig
from meshlint.document import Node
from meshlint.durations import parse_duration
from meshlint.findings import Position
from meshlint.interception import INTERCEPTION_MODE, Interception
from meshlint.interception import effective as effective_interception
from meshlint.loader import SyntaxProblem, parse_embedded
from meshlint.model import (
    HELM_VALUES,
    MESH_CONFIG_KINDS,
    PodTemplate,
    Resource,
    pod_template,
    string_map,
)
from meshlint.prestop import PreStopSleep, prestop_sleep
from meshlint.quitcalls import QuitCall, quit_calls
from meshlint.setting import Setting

NEVER_INJECTED_NAMESPACES = frozenset(("kube-system", "kube-public", "kube-node-lease", "local-path-storage"))
PROXY_CONFIG_ANNOTATION = "proxy.istio.io/config"
INJECT = "sidecar.istio.io/inject"
NATIVE_ANNOTATION = "sidecar.istio.io/nativeSidecar"
STATUS_PORT_ANNOTATION = "status.sidecar.istio.io/port"
REV_LABEL = "istio.io/rev"
DATAPLANE_MODE = "istio.io/dataplane-mode"
ISTIO_PROXY = "istio-proxy"
DEFAULT_GRACE_SECONDS = 30
DEFAULT_DRAIN = "5s"
DEFAULT_MINIMUM_DRAIN = "5s"
EXIT_ON_ZERO = "EXIT_ON_ZERO_ACTIVE_CONNECTIONS"
MINIMUM_DRAIN = "MINIMUM_DRAIN_DURATION"
GO_TRUE = frozenset(("1", "t", "T", "TRUE", "true", "True"))  # strconv.ParseBool
VERSIONS_UNKNOWN = "Istio/Kubernetes versions unknown"


class Versions(NamedTuple):
    istio: Version | None = None
    kubernetes: Version | None = None


def parse_version(text: str | None) -> Version | None:
    if not text:
        return None
    # packaging is imported only by runs that name a version: most pre-commit runs do not.
    from packaging.version import InvalidVersion, Version

    try:
        return Version(str(text).lstrip("v"))
    except InvalidVersion:
        return None


class MeshOptions(NamedTuple):
    """The `mesh:` section of the config and the target versions."""

    default_injection: str = "enabled"
    injected_namespaces: tuple[str, ...] = ()
    root_namespace: str = "istio-system"
    versions: Versions = Versions()


class Injection(NamedTuple):
    """Does the workload get an Istio sidecar, and why. `assumed` when only the default decided it."""

    sidecar: bool
    reason: str
    assumed: bool = False
    ambient: bool = False


class ProxyConfigAnnotation(NamedTuple):
    """The pod template's `proxy.istio.io/config`: its node, its parsed body, or why it did not parse."""

    node: Node
    body: Node | None
    problem: SyntaxProblem | None


@dataclass(eq=False, repr=False)
class MeshSource:
    """One resource that configures the mesh (IstioOperator, Helm values, an istio ConfigMap)."""

    resource: Resource
    mesh_config: Node | None = None
    helm_values: Node | None = None
    env: dict[str, Node] = field(default_factory=dict)
    compatibility_version: Node | None = None
    problems: list[SyntaxProblem] = field(default_factory=list)


class ServiceTargets(NamedTuple):
    """What the mesh context keeps of a Service: whom it selects and which pod ports it sends to
    (kept small: a run keeps one per Service in the tree, not the Service's document)."""

    name: str
    namespace: str
    selector: tuple[tuple[str, str], ...]
    targets: tuple[tuple[Any, Position], ...]  # targetPort (number or port name), or the port itself


class PeerAuthentication(NamedTuple):
    namespace: str
    selector: dict[str, str] | None
    mode: Setting | None
    port_modes: dict[int, Setting]


@dataclass(eq=False, repr=False)
class WorkloadMesh:
    """Everything the rules need to know about one workload's mesh setup."""

    template: PodTemplate
    injection: Injection
    proxy_config: dict[str, Setting]
    proxy_metadata: dict[str, Setting]
    annotation: ProxyConfigAnnotation | None
    native: Setting  # bool; note says why
    hold: Setting  # bool
    hold_override: Setting | None  # Helm global.proxy.lifecycle, which replaces the hold hook
    startup_probe_off: Setting | None
    grace_period: Setting  # int seconds, None when not a number
    drain: Setting  # float seconds, None when not a valid duration
    interception: dict[str, Interception]  # traffic.sidecar.istio.io/* knobs, by name
    interception_mode: Setting  # REDIRECT, TPROXY or NONE (or what was written)

    @cached_property
    def quit_calls(self) -> list[QuitCall]:
        """Every call to the proxy's /quitquitquit made by the pod's own containers."""
        lines = self.template.owner.document.lines
        return [call for c in self.template.all_containers if c.name != ISTIO_PROXY for call in quit_calls(c, lines)]

    @cached_property
    def prestop_sleeps(self) -> list[PreStopSleep]:
        """Every container's preStop sleep whose length the manifest states (the proxy's included)."""
        lines = self.template.owner.document.lines
        return [s for c in self.template.all_containers if (s := prestop_sleep(c, lines)) is not None]

    @property
    def exit_on_zero(self) -> Setting | None:
        """proxyMetadata EXIT_ON_ZERO_ACTIVE_CONNECTIONS when it is true: the agent then ignores
        terminationDrainDuration, waits MINIMUM_DRAIN_DURATION and exits once connections reach zero."""
        setting = self.proxy_metadata.get(EXIT_ON_ZERO)
        return setting if setting is not None and setting.value in GO_TRUE else None

    @property
    def minimum_drain(self) -> Setting:
        """proxyMetadata MINIMUM_DRAIN_DURATION in seconds (default 5s); value None when not a duration."""
        setting = self.proxy_metadata.get(MINIMUM_DRAIN)
        if setting is None:
            return Setting(parse_duration(DEFAULT_MINIMUM_DRAIN), None)
        return Setting(parse_duration(setting.value), setting.origin, local=setting.local)

    def point_at(self, *settings: Setting | None) -> Position:
        """Where a finding about these settings goes: the first one written in this workload's own
        manifest, else the pod template's metadata (a value from the mesh config lives in another file)."""
        for setting in settings:
            if setting is not None and setting.local and setting.origin is not None:
                return setting.origin
        return self.template.fix_position

    @property
    def classic_sidecar(self) -> bool:
        return self.injection.sidecar and not self.native.value

    @property
    def native_sidecar(self) -> bool:
        return self.injection.sidecar and bool(self.native.value)


class MeshContext:
    """Built once from every input and `mesh.context` file, then asked about each workload."""

    def __init__(self, resources: Iterable[Resource], options: MeshOptions | None = None):
        self.options = options or MeshOptions()
        self.namespaces: dict[str, dict[str, Node]] = {}
        self.sources: list[MeshSource] = []
        self.peer_authentications: list[PeerAuthentication] = []
        self.services: dict[str, list[ServiceTargets]] = {}  # by namespace: a pod only meets its own
        self.default_config: dict[str, Setting] = {}
        self.default_proxy_metadata: dict[str, Setting] = {}
        self.helm_proxy: dict[str, Setting] = {}
        self.native_env: Setting | None = None
        self.compatibility_version: Setting | None = None
        for resource in resources:
            self._add(resource)

    # --- collecting ------------------------------------------------------------------------------

    def _add(self, resource: Resource) -> None:
        kind = resource.kind
        if kind == "Namespace":
            self.namespaces[resource.name] = string_map(resource.metadata.get("labels"))
        elif kind == "Service":
            service = _service_targets(resource)
            self.services.setdefault(service.namespace, []).append(service)
        elif kind == "PeerAuthentication":
            self.peer_authentications.append(_peer_authentication(resource))
        elif kind in MESH_CONFIG_KINDS:
            source = _mesh_source(resource)
            if source is not None:
                self.sources.append(source)
                self._merge(source)

    def _merge(self, source: MeshSource) -> None:
        default_config = source.mesh_config.get("defaultConfig") if source.mesh_config else None
        if default_config is not None and default_config.is_map:
            for name, node in proxyconfig.normalized_fields(default_config).items():
                if name == "proxyMetadata":
                    for key, value in node.items():
                        self.default_proxy_metadata[str(key)] = Setting(value.text, value.pos)
                else:
                    self.default_config[name] = Setting.of(node)
        if source.helm_values is not None:
            proxy = source.helm_values.path("global", "proxy")
            for key, node in proxy.items():
                self.helm_proxy[str(key)] = Setting.of(node)
            probe_enabled = proxy.path("startupProbe", "enabled")
            if probe_enabled.exists:
                self.helm_proxy["startupProbe.enabled"] = Setting.of(probe_enabled)
        if "ENABLE_NATIVE_SIDECARS" in source.env:
            node = source.env["ENABLE_NATIVE_SIDECARS"]
            self.native_env = Setting((node.text or "").strip().lower(), node.pos)
        if source.compatibility_version is not None:
            node = source.compatibility_version
            self.compatibility_version = Setting(node.text, node.pos)

    def source_for(self, resource: Resource) -> MeshSource | None:
        """The mesh source read from this resource. By position, not identity: the run reads mesh
        sources in a first pass and checks the same documents, read again, in the second."""
        where = (resource.path, resource.root.pos.line, resource.root.pos.column)
        for source in self.sources:
            root = source.resource.root.pos
            if (source.resource.path, root.line, root.column) == where:
                return source
        return None

    # --- per workload ----------------------------------------------------------------------------

    def workload(self, resource: Resource) -> WorkloadMesh | None:
        # Kept on the resource itself, so it lives exactly as long as the file being checked.
        cached = resource.__dict__.get("_mesh_view")
        if cached is not None:
            return cached
        template = pod_template(resource)
        if template is None:
            return None
        annotation = _proxy_config_annotation(template)
        proxy_config, proxy_metadata = self._effective_proxy_config(annotation)
        injection = self._injection(template)
        native = self._native(template)
        view = WorkloadMesh(
            template=template,
            injection=injection,
            proxy_config=proxy_config,
            proxy_metadata=proxy_metadata,
            annotation=annotation,
            native=native,
            hold=self._hold(template, proxy_config),
            hold_override=self._helm_value("lifecycle"),
            startup_probe_off=self._startup_probe_off(template),
            grace_period=_grace_period(template),
            drain=_drain(proxy_config),
            interception=effective_interception(template.annotations(), self.helm_proxy),
            interception_mode=_interception_mode(template, proxy_config),
        )
        resource.__dict__["_mesh_view"] = view
        return view

    def _effective_proxy_config(self, annotation: ProxyConfigAnnotation | None) -> tuple[dict, dict]:
        """Mesh defaultConfig, then each top-level annotation field replaces it; proxyMetadata merges by key."""
        fields = dict(self.default_config)
        metadata = dict(self.default_proxy_metadata)
        if annotation is not None and annotation.body is not None and annotation.body.is_map:
            for name, node in proxyconfig.normalized_fields(annotation.body).items():
                if name == "proxyMetadata":
                    for key, value in node.items():
                        metadata[str(key)] = Setting(value.text, value.pos, local=True)
                else:
                    fields[name] = Setting.of(node, local=True)
        return fields, metadata

    def _injection(self, template: PodTemplate) -> Injection:
        labels, annotations = template.labels(), template.annotations()
        spec = template.spec
        namespace = template.owner.namespace
        proxy = _injected_proxy(template)
        if proxy is not None:
            return Injection(True, f"the manifest already holds an injected {ISTIO_PROXY} container (line {proxy.position.line})")
        if spec.get("hostNetwork").value is True:
            return Injection(False, "hostNetwork: true pods are never injected")
        if namespace in NEVER_INJECTED_NAMESPACES:
            return Injection(False, f"namespace {namespace} is never injected")
        pod_label = _text(labels.get(INJECT))
        pod_rev = _text(labels.get(REV_LABEL))
        pod_ambient = _text(labels.get(DATAPLANE_MODE)) == "ambient"
        ns_labels = self.namespaces.get(namespace) if namespace else None
        assumed = False
        ambient = pod_ambient
        if ns_labels is not None:
            ns_inject = _text(ns_labels.get("istio-injection"))
            ns_rev = _text(ns_labels.get(REV_LABEL))
            ambient = ambient or _text(ns_labels.get(DATAPLANE_MODE)) == "ambient"
            if ns_inject is not None:
                webhook = ns_inject == "enabled" and pod_label != "false"
                reason = f"namespace {namespace} has istio-injection={ns_inject}"
            elif ns_rev is not None:
                webhook = pod_label != "false"
                reason = f"namespace {namespace} has {REV_LABEL}={ns_rev}"
            elif pod_label == "true" or (pod_rev is not None and pod_label != "false"):
                webhook, reason = True, "the pod template's labels ask for injection"
            else:
                webhook, reason = False, f"namespace {namespace} has no injection label"
        elif namespace and namespace in self.options.injected_namespaces:
            webhook, reason = pod_label != "false", f"namespace {namespace} is listed in mesh.injected-namespaces"
        elif pod_label == "true" or (pod_rev is not None and pod_label != "false"):
            webhook, reason = True, "the pod template's labels ask for injection"
        elif pod_label == "false":
            webhook, reason = False, f"{INJECT}: \"false\""
        elif pod_ambient:
            webhook, reason = False, "ambient"
        else:
            enabled = self.options.default_injection == "enabled"
            webhook, assumed = enabled, enabled
            reason = f"namespace {namespace or '(unset)'} is not among the inputs; mesh.default-injection is {self.options.default_injection}"
        if not webhook:
            return Injection(False, "ambient data plane, no sidecar" if ambient else reason, ambient=ambient)
        # The injector itself reads the label, else the deprecated annotation of the same name.
        decision = pod_label if pod_label in ("true", "false") else _text(annotations.get(INJECT))
        if decision == "false":
            return Injection(False, f"{INJECT}: \"false\" on the pod template")
        return Injection(True, reason, assumed=assumed)

    def _native(self, template: PodTemplate) -> Setting:
        proxy = _injected_proxy(template)
        if proxy is not None:
            return Setting(proxy.is_native_sidecar, proxy.position, "injected istio-proxy")
        versions = self.options.versions
        annotation = template.annotations().get(NATIVE_ANNOTATION)
        if annotation is not None and annotation.text in ("true", "false"):
            if versions.istio is None or versions.istio >= parse_version("1.24"):
                return Setting(annotation.text == "true", annotation.pos, f"{NATIVE_ANNOTATION} annotation")
        env = self.native_env
        if env is not None and env.value in ("true", "false"):
            return Setting(env.value == "true", env.origin, "ENABLE_NATIVE_SIDECARS")
        if env is not None and env.value != "auto":
            return Setting(False, env.origin, f"ENABLE_NATIVE_SIDECARS={env.value!r} is treated as disabled")
        compat = self.compatibility_version
        if compat is not None and compat.value in ("1.24", "1.25", "1.26"):
            return Setting(False, compat.origin, f"compatibilityVersion {compat.value}")
        if versions.istio is not None and versions.istio < parse_version("1.27"):
            return Setting(False, None, f"Istio {versions.istio} does not default to native sidecars")
        if versions.istio is not None and versions.kubernetes is not None:
            auto = versions.kubernetes >= parse_version("1.33")
            return Setting(auto, None, f"ENABLE_NATIVE_SIDECARS=auto with Istio {versions.istio} on Kubernetes {versions.kubernetes}")
        return Setting(False, None, VERSIONS_UNKNOWN)

    def _hold(self, template: PodTemplate, proxy_config: dict[str, Setting]) -> Setting:
        proxy = _injected_proxy(template)
        if proxy is not None:
            command = proxy.node.path("lifecycle", "postStart", "exec", "command")
            words = [n.text for n in command.elements()]
            waits = "pilot-agent" in " ".join(w or "" for w in words) and "wait" in words
            return Setting(waits, command.pos if command.exists else proxy.position, "injected istio-proxy")
        from_pod = proxy_config.get("holdApplicationUntilProxyStarts")
        from_helm = self._helm_value("holdApplicationUntilProxyStarts")
        for setting in (from_pod, from_helm):
            if setting is not None and setting.value is True:
                return setting
        if from_pod is not None and isinstance(from_pod.value, bool):
            return from_pod
        return Setting(False, None)

    def _startup_probe_off(self, template: PodTemplate) -> Setting | None:
        port = template.annotations().get(STATUS_PORT_ANNOTATION)
        if port is not None and port.text == "0":
            return Setting("0", port.pos, f"{STATUS_PORT_ANNOTATION}: \"0\"")
        enabled = self._helm_value("startupProbe.enabled")
        if enabled is not None and enabled.value is False:
            return Setting(False, enabled.origin, "global.proxy.startupProbe.enabled: false")
        return None

    def _helm_value(self, key: str) -> Setting | None:
        setting = self.helm_proxy.get(key)
        if setting is None or setting.value in (None, "", {}, []):
            return None
        if isinstance(setting.value, str) and setting.value.lower() in ("true", "false"):
            return Setting(setting.value.lower() == "true", setting.origin)
        return setting

    # --- Services and mTLS ------------------------------------------------------------------------

    def service_targets(self, template: PodTemplate) -> dict[int, list[Setting]]:
        """Container ports that a Service selecting this pod sends traffic to, each with the Service
        (name as value, the targetPort, or the port when targetPort is absent, as origin)."""
        labels = {k: v.text for k, v in template.labels().items()}
        named = {name: number for c in template.containers for number, name, _ in c.ports if name}
        targets: dict[int, list[Setting]] = {}
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

    def mtls_mode(self, namespace: str, labels: dict[str, str], port: int | None = None) -> Setting:
        """The PeerAuthentication mode in force: selector over namespace over mesh; UNSET inherits."""
        root = self.options.root_namespace
        mesh = [p for p in self.peer_authentications if p.namespace == root and p.selector is None]
        ns = [p for p in self.peer_authentications if p.namespace == namespace and p.selector is None and namespace != root]
        selected = [
            p
            for p in self.peer_authentications
            if p.namespace == namespace and p.selector is not None and all(labels.get(k) == v for k, v in p.selector.items())
        ]
        mode = Setting("PERMISSIVE", None)
        for scope in (mesh, ns, selected):
            for policy in scope:
                if policy.mode is not None and policy.mode.value not in (None, "UNSET"):
                    mode = policy.mode
                if port is not None and scope is selected and port in policy.port_modes:
                    port_mode = policy.port_modes[port]
                    if port_mode.value not in (None, "UNSET"):
                        mode = port_mode
        return mode


def _text(node: Node | None) -> str | None:
    return node.text if node is not None else None


def _injected_proxy(template: PodTemplate):
    for container in template.all_containers:
        if container.name == ISTIO_PROXY:
            return container
    return None


def _proxy_config_annotation(template: PodTemplate) -> ProxyConfigAnnotation | None:
    node = template.annotations().get(PROXY_CONFIG_ANNOTATION)
    if node is None:
        return None
    parsed = parse_embedded(node, template.owner.document.lines)
    return ProxyConfigAnnotation(node, parsed.root, parsed.problem)


def _grace_period(template: PodTemplate) -> Setting:
    node = template.spec.get("terminationGracePeriodSeconds")
    if not node.exists or node.value is None:
        return Setting(DEFAULT_GRACE_SECONDS, None)
    if isinstance(node.value, int) and not isinstance(node.value, bool) and node.value >= 0:
        return Setting.of(node, local=True)
    return Setting(None, node.pos, f"terminationGracePeriodSeconds {node.text!r} is not a whole number", local=True)


def _drain(proxy_config: dict[str, Setting]) -> Setting:
    setting = proxy_config.get("terminationDrainDuration")
    if setting is None:
        return Setting(parse_duration(DEFAULT_DRAIN), None)
    return Setting(parse_duration(setting.value), setting.origin, local=setting.local)


def _interception_mode(template: PodTemplate, proxy_config: dict[str, Setting]) -> Setting:
    """The annotation, else ProxyConfig interceptionMode (pod over mesh), else REDIRECT."""
    node = template.annotations().get(INTERCEPTION_MODE)
    if node is not None:
        return Setting(node.text, node.pos, INTERCEPTION_MODE, local=True)
    setting = proxy_config.get("interceptionMode")
    if setting is not None:
        return Setting(setting.value, setting.origin, "proxy.istio.io/config interceptionMode", local=setting.local)
    return Setting("REDIRECT", None)


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


def _mesh_source(resource: Resource) -> MeshSource | None:
    """What a context resource says about the mesh, or None when it says nothing."""
    root = resource.root
    source = MeshSource(resource)
    if resource.kind == "IstioOperator":
        spec = root.get("spec")
        source.mesh_config = _mapping(spec.get("meshConfig"))
        source.helm_values = _mapping(spec.get("values"))
        source.env.update(_env_map(spec.path("values", "pilot", "env")))
        for item in spec.path("components", "pilot", "k8s", "env").elements():
            if item.get("name").text:
                source.env[item.get("name").text] = item.get("value")
        compat = spec.get("compatibilityVersion")
        source.compatibility_version = compat if compat.exists else None
    elif resource.kind == HELM_VALUES:
        source.mesh_config = _mapping(root.get("meshConfig"))
        source.helm_values = root
        # From Istio 1.24 the istiod chart is flattened: top-level `env` works like `pilot.env`.
        source.env.update(_env_map(root.path("pilot", "env")))
        source.env.update(_env_map(root.get("env")))
        compat = root.get("compatibilityVersion")
        source.compatibility_version = compat if compat.exists else None
    else:  # ConfigMap
        name = resource.name
        data = root.get("data")
        lines = resource.document.lines
        if name == "istio-sidecar-injector" or name.startswith("istio-sidecar-injector-"):
            values = data.get("values")
            if not isinstance(values.value, str):
                return None
            parsed = parse_embedded(values, lines)
            source.helm_values = _mapping(parsed.root) if parsed.root is not None else None
            source.problems.extend([parsed.problem] if parsed.problem else [])
            if source.helm_values is not None:
                source.env.update(_env_map(source.helm_values.path("pilot", "env")))
        elif name == "istio" or name.startswith("istio-"):
            mesh = data.get("mesh")
            if not isinstance(mesh.value, str):
                return None
            parsed = parse_embedded(mesh, lines)
            source.mesh_config = _mapping(parsed.root) if parsed.root is not None else None
            source.problems.extend([parsed.problem] if parsed.problem else [])
        else:
            return None
    if source.mesh_config is None and source.helm_values is None and not source.env and source.compatibility_version is None:
        return None
    return source


def _mapping(node: Node | None) -> Node | None:
    return node if node is not None and node.is_map else None


def _env_map(node: Node) -> dict[str, Node]:
    return {str(k): v for k, v in node.items()}
