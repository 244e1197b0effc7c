"""What a resource that configures the mesh says: IstioOperator, istiod Helm values, the `istio` and
`istio-sidecar-injector` ConfigMaps (whose `data.mesh` / `data.values` are YAML held in a string)."""

from __future__ import annotations

import re
from typing import Any

from meshlint.memo import cached_property
from meshlint.mesh.facts import proxyconfig
from meshlint.mesh.facts.interception import KNOBS
from meshlint.mesh.facts.proxyconfig import SchemaProblem
from meshlint.mesh.istio import EXIT_ON_ZERO, MINIMUM_DRAIN, NATIVE_ENV, REV_LABEL
from meshlint.mesh.setting import Setting
from meshlint.model.kinds import HELM_VALUES, MESH_CONFIG_KINDS
from meshlint.model.pod import pod_templates
from meshlint.model.resource import Resource
from meshlint.source.document import Node
from meshlint.source.embedded import parse_embedded
from meshlint.source.syntax import SyntaxProblem

INJECTOR_CONFIGMAP = "istio-sidecar-injector"
MESH_CONFIGMAP = "istio"
# The mesh-wide fields the workload view reads (mesh/workload.py): only these are claimed, so two
# sources that differ on a field no rule looks at (a tracer, the proxy's image) are no conflict. A
# complete MeshConfig that omits one of them says it is the default.
PROXY_FIELDS_READ = ("holdApplicationUntilProxyStarts", "terminationDrainDuration", "interceptionMode")
PROXY_METADATA_READ = (EXIT_ON_ZERO, MINIMUM_DRAIN)
MESH_FIELDS_READ = ("outboundTrafficPolicy.mode", "discoverySelectors")  # MeshConfig's own, by dotted path
# Helm values outside global.proxy that the workload view reads, by their dotted path.
HELM_VALUES_READ = ("sidecarInjectorWebhook.rewriteAppHTTPProbe", "istio_cni.enabled", "pilot.cni.enabled")
# The injector uses Istio CNI (istio-validation instead of istio-init) when either says so.
ISTIO_CNI_FIELDS = (f"helm.{HELM_VALUES_READ[1]}", f"helm.{HELM_VALUES_READ[2]}")
# The claimed fields of these, as the mesh context names them.
OUTBOUND_POLICY, DISCOVERY_SELECTORS = (f"mesh.{name}" for name in MESH_FIELDS_READ)
REWRITE_PROBES = f"helm.{HELM_VALUES_READ[0]}"
HELM_PROXY_READ = frozenset(("holdApplicationUntilProxyStarts", "lifecycle", *(knob.helm for knob in KNOBS.values())))
DEFAULT_REVISIONS = frozenset(("", "default"))
# The injected hold hook: `pilot-agent wait`, as a word of the postStart command or of its script.
_WAITS_FOR_PROXY = re.compile(r"(?:^|[\s/])pilot-agent\s+wait\b")


# istiod's own Deployment (`istiod`, `istiod-<revision>`): its `discovery` container's env carries the
# pilot settings a rendered install sets there (§18.3.4).
ISTIOD = "istiod"
ISTIO_VERSION = "istio.version"  # the claim of the Istio release a source installs
ISTIOD_CONTAINER = "discovery"


def is_istiod(resource: Resource) -> bool:
    return resource.kind == "Deployment" and (resource.name == ISTIOD or resource.name.startswith(ISTIOD + "-"))


def is_mesh_config(resource: Resource) -> bool:
    """Can this resource configure the mesh itself (mesh config, Helm values, istiod's env)?"""
    return resource.kind in MESH_CONFIG_KINDS or is_istiod(resource)


class MeshSource:
    """One resource that configures the mesh (IstioOperator, Helm values, an istio ConfigMap, the
    istiod Deployment's env)."""

    resource: Resource
    mesh_config: Node | None
    helm_values: Node | None
    env: dict[str, Node]
    compatibility_version: Node | None
    problems: list[SyntaxProblem]  # data.mesh / data.values that do not parse
    revision: str  # the control-plane revision it configures; "" is the default revision
    complete: bool  # an `istio` ConfigMap is a whole MeshConfig: what it omits is the default
    tags: tuple[str, ...]  # revision tags it declares (Helm `revisionTags`), pointing at `revision`
    version: Setting[str] | None  # the Istio release it installs (`spec.tag`, `global.tag`, istiod's image), as major.minor

    def __init__(
        self,
        resource: Resource,
        mesh_config: Node | None = None,
        helm_values: Node | None = None,
        env: dict[str, Node] | None = None,
        compatibility_version: Node | None = None,
        problems: list[SyntaxProblem] | None = None,
        revision: str = "",
        complete: bool = False,
        tags: tuple[str, ...] = (),
    ) -> None:
        self.resource = resource
        self.mesh_config = mesh_config
        self.helm_values = helm_values
        self.env = {} if env is None else env
        self.compatibility_version = compatibility_version
        self.problems = [] if problems is None else problems
        self.revision = revision
        self.complete = complete
        self.tags = tags
        self.version = None

    @property
    def injection_templates(self) -> dict[str, str]:
        """The custom injection templates its Helm values define (`sidecarInjectorWebhook.templates`),
        each with the list it puts an `istio-proxy` container in: `containers`, `initContainers`, or
        `none` (reference §18.3.2, §18.2 H5)."""
        if self.helm_values is None:
            return {}
        written = self.helm_values.path("sidecarInjectorWebhook", "templates").string_map()
        return {name: proxy_list(node.text or "") for name, node in written.items()}

    @property
    def default_config(self) -> Node | None:
        """`meshConfig.defaultConfig` when it is a mapping: the mesh-wide ProxyConfig."""
        node = self.mesh_config.get("defaultConfig") if self.mesh_config is not None else None
        return node if node is not None and node.is_map else None

    @property
    def helm_proxy(self) -> Node | None:
        """Helm `global.proxy`, the injection template's per-proxy values."""
        node = self.helm_values.path("global", "proxy") if self.helm_values is not None else None
        return node if node is not None and node.is_map else None

    @property
    def proxy_lifecycle(self) -> Node | None:
        """Helm `global.proxy.lifecycle` as this source writes it, when it is set."""
        node = self.helm_proxy.get("lifecycle") if self.helm_proxy is not None else None
        return node if node is not None and node.exists and node.value else None

    def claims(self) -> list[tuple[str, Setting[Any]]]:
        """What this source says of each mesh-wide field the rules read, as (field, setting). A field it
        does not name is not claimed, except by a complete MeshConfig, which claims the default (value
        None) for every ProxyConfig field it omits."""
        found = self._mesh_config_claims()
        if self.complete:
            found += self._defaults_claimed({key for key, _ in found})
        found += self._helm_proxy_claims()
        if NATIVE_ENV in self.env:
            node = self.env[NATIVE_ENV]
            found.append((f"env.{NATIVE_ENV}", Setting((node.text or "").strip().lower(), node.pos)))
        if self.compatibility_version is not None:
            found.append(("compatibilityVersion", Setting(self.compatibility_version.text, self.compatibility_version.pos)))
        if self.version is not None:
            found.append((ISTIO_VERSION, self.version))
        found += self._helm_value_claims()
        return [(key, setting._with_revision(self.revision)) for key, setting in found]

    def _mesh_config_claims(self) -> list[tuple[str, Setting[Any]]]:
        """What its MeshConfig and its proxies' defaultConfig name."""
        found: list[tuple[str, Setting[Any]]] = []
        default_config = self.default_config
        if default_config is not None:
            for name, node in proxyconfig.normalized_fields(default_config).items():
                if name == "proxyMetadata":
                    found += [(f"proxyMetadata.{key}", Setting(value.text, value.pos)) for key, value in node.items() if key in PROXY_METADATA_READ]
                elif name in PROXY_FIELDS_READ:
                    found.append((f"proxy.{name}", Setting.of(node)))
        if self.mesh_config is not None:
            for name in MESH_FIELDS_READ:
                node = self.mesh_config.path(*name.split("."))
                if node.exists:
                    found.append((f"mesh.{name}", Setting.of(node)))
        return found

    def _defaults_claimed(self, named: set[str]) -> list[tuple[str, Setting[Any]]]:
        """A complete MeshConfig claims the default for every field it does not name."""
        anchor = self.mesh_config.pos if self.mesh_config is not None else self.resource.root.pos
        fields = [f"mesh.{n}" for n in MESH_FIELDS_READ] + [f"proxy.{n}" for n in PROXY_FIELDS_READ] + [f"proxyMetadata.{k}" for k in PROXY_METADATA_READ]
        return [(field, Setting(None, anchor, "the default")) for field in fields if field not in named]

    def _helm_proxy_claims(self) -> list[tuple[str, Setting[Any]]]:
        """What its Helm global.proxy names."""
        found: list[tuple[str, Setting[Any]]] = []
        proxy = self.helm_proxy
        if proxy is not None:
            found += [(f"helm.proxy.{key}", Setting.of(node)) for key, node in proxy.items() if key in HELM_PROXY_READ]
            probe_enabled = proxy.path("startupProbe", "enabled")
            if probe_enabled.exists:
                found.append(("helm.proxy.startupProbe.enabled", Setting.of(probe_enabled)))
        return found

    def _helm_value_claims(self) -> list[tuple[str, Setting[Any]]]:
        """What its Helm values name besides global.proxy: the fields the rules read, the image variant."""
        found: list[tuple[str, Setting[Any]]] = []
        values = self.helm_values
        if values is None:
            return found
        for dotted in HELM_VALUES_READ:
            value = values.path(*dotted.split("."))
            if value.exists:
                found.append((f"helm.{dotted}", Setting.of(value)))
        variant = values.path("global", "variant")
        if variant.exists:
            found.append(("helm.variant", Setting(variant.text, variant.pos)))
        return found

    @cached_property
    def default_config_problems(self) -> list[SchemaProblem]:
        """Type errors and unknown keys in `defaultConfig`, as the injector's parser would meet them."""
        node = self.mesh_config.get("defaultConfig") if self.mesh_config is not None else None
        return proxyconfig.validate(node) if node is not None and node.exists else []


_LIST_KEY = re.compile(r"^\s*(initContainers|containers)\s*:", re.MULTILINE)
_PROXY_NAME = re.compile(r"name:\s*[\"']?istio-proxy\b")


def proxy_list(template: str) -> str:
    """Which list a Go-templated injection template puts `istio-proxy` in: the last `containers:` or
    `initContainers:` key written before its name (the template is no YAML until rendered), or `none`."""
    found = _PROXY_NAME.search(template)
    if found is None:
        return "none"
    keys = [m.group(1) for m in _LIST_KEY.finditer(template, 0, found.start())]
    return keys[-1] if keys else "containers"


def source_of(resource: Resource) -> MeshSource | None:
    """The mesh-wide source a resource is, or None when it is no mesh config."""
    return mesh_source(resource) if is_mesh_config(resource) else None


def mesh_source(resource: Resource) -> MeshSource | None:
    """What a mesh-config resource says about the mesh, or None when it says nothing."""
    root = resource.root
    source = MeshSource(resource)
    if resource.kind == "IstioOperator":
        spec = root.get("spec")
        source.mesh_config = _mapping(spec.get("meshConfig"))
        source.helm_values = _mapping(spec.get("values"))
        source.env.update(spec.path("values", "pilot", "env").string_map())
        for item in spec.path("components", "pilot", "k8s", "env").elements():
            name = item.get("name").text
            if name:
                source.env[name] = item.get("value")
        source.compatibility_version = _present(spec.get("compatibilityVersion"))
        source.revision = _revision(spec.get("revision").text)
        source.tags = _tags(spec.path("values", "revisionTags"))
        source.version = _release(spec.get("tag"), "IstioOperator spec.tag")
    elif resource.kind == HELM_VALUES:
        source.mesh_config = _mapping(root.get("meshConfig"))
        source.helm_values = root
        # From Istio 1.24 the istiod chart is flattened: top-level `env` works like `pilot.env`.
        source.env.update(root.path("pilot", "env").string_map())
        source.env.update(root.get("env").string_map())
        source.compatibility_version = _present(root.get("compatibilityVersion"))
        source.revision = _revision(root.get("revision").text)
        source.tags = _tags(root.get("revisionTags"))
        if _istio_values(root):  # any chart's values may have a `global.tag`: only istiod's name Istio's release
            source.version = _release(root.path("global", "tag"), "Helm global.tag") or _release(root.path("pilot", "tag"), "Helm pilot.tag")
    elif resource.kind == "ConfigMap":
        if not _configmap(resource, source):
            return None
    elif is_istiod(resource):
        _istiod(resource, source)
    else:
        return None
    says_nothing = source.mesh_config is None and source.helm_values is None and not source.env and source.compatibility_version is None and source.version is None
    declares_nothing = not source.revision and not source.tags
    return None if says_nothing and declares_nothing and not source.problems else source


def _configmap(resource: Resource, source: MeshSource) -> bool:
    name = resource.name
    data = resource.root.get("data")
    if name == INJECTOR_CONFIGMAP or name.startswith(INJECTOR_CONFIGMAP + "-"):
        values = data.get("values")
        if not isinstance(values.value, str):
            return False
        parsed = parse_embedded(values)
        source.helm_values = _mapping(parsed.root)
        _note(source, parsed.problem, "data.values", "the injector cannot read these Helm values")
        if source.helm_values is not None:
            source.env.update(source.helm_values.path("pilot", "env").string_map())
        source.revision = _revision(name[len(INJECTOR_CONFIGMAP) + 1 :]) if name != INJECTOR_CONFIGMAP else ""
        return True
    if name == MESH_CONFIGMAP or name.startswith(MESH_CONFIGMAP + "-"):
        mesh = data.get("mesh")
        if not isinstance(mesh.value, str):
            return False
        parsed = parse_embedded(mesh)
        source.mesh_config = _mapping(parsed.root)
        _note(source, parsed.problem, "data.mesh", "istiod cannot read this MeshConfig")
        source.revision = _revision(name[len(MESH_CONFIGMAP) + 1 :]) if name != MESH_CONFIGMAP else ""
        source.complete = source.mesh_config is not None
        return True
    return False


def _istiod(resource: Resource, source: MeshSource) -> None:
    """The env of istiod's `discovery` container; the revision from its `istio.io/rev` label, else its name."""
    for template in pod_templates(resource):
        for container in template.containers:
            if container.name != ISTIOD_CONTAINER:
                continue
            image = container.node.get("image")
            tag = (image.text or "").rpartition(":")[2] if "@" not in (image.text or "") and ":" in (image.text or "") else ""
            if tag and source.version is None:
                source.version = _release(image, "istiod image", tag)
            for item in container.node.get("env").elements():
                name, value = item.get("name").text, item.get("value")
                if name and value.exists:
                    source.env[name] = value
    label = resource.labels.get(REV_LABEL)
    source.revision = _revision(label.text if label is not None else resource.name[len(ISTIOD) + 1 :])


def _istio_values(root: Node) -> bool:
    """Helm values that are istiod's own: they set its mesh config or pilot, or pull Istio's images."""
    hub = root.path("global", "hub").text or ""
    return root.get("meshConfig").exists or root.get("pilot").exists or root.path("global", "istioNamespace").exists or "istio" in hub


def _release(node: Node, where: str, text: str | None = None) -> Setting[str] | None:
    """The Istio release a tag names, as major.minor (`1.18.5`, `1.18.5-distroless` read 1.18), with
    where it is written; None for what names no release (`latest`, a digest, a template)."""
    from meshlint.mesh.options import parse_version

    written = text if text is not None else node.text
    release = parse_version(written) if node.exists and written else None
    if release is None or len(release.release) < 2:
        return None
    return Setting(f"{release.release[0]}.{release.release[1]}", node.pos, f"{where} {written}")


def _note(source: MeshSource, problem: SyntaxProblem | None, field: str, effect: str) -> None:
    if problem is not None:
        source.problems.append(problem._replace(message=f"{field} of ConfigMap {source.resource.name} does not parse ({problem.message}); {effect}"))


def _revision(name: str | None) -> str:
    """A revision's name; the default revision is "" (Istio reads "" and "default" alike)."""
    name = (name or "").strip()
    return "" if name in DEFAULT_REVISIONS else name


def _tags(node: Node) -> tuple[str, ...]:
    return tuple(t.text for t in node.elements() if t.text)


def _mapping(node: Node | None) -> Node | None:
    return node if node is not None and node.is_map else None


def _present(node: Node) -> Node | None:
    return node if node.exists else None


def keeps_the_hold(lifecycle: Any) -> bool:
    """Does a Helm `global.proxy.lifecycle` (which replaces the injected proxy's hooks) run
    `pilot-agent wait` in its postStart, as the hook it replaces did? Then the hold still holds."""
    if not isinstance(lifecycle, dict):
        return False
    post_start = lifecycle.get("postStart")
    command = post_start.get("exec", {}).get("command") if isinstance(post_start, dict) and isinstance(post_start.get("exec"), dict) else None
    if not isinstance(command, list):
        return False
    return bool(_WAITS_FOR_PROXY.search(" ".join(word for word in command if isinstance(word, str))))
