"""What a resource that configures the mesh says: IstioOperator, istiod Helm values, the `istio` and
`istio-sidecar-injector` ConfigMaps (whose `data.mesh` / `data.values` are YAML held in a string)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from meshlint.mesh.facts import proxyconfig
from meshlint.mesh.facts.proxyconfig import SchemaProblem
from meshlint.model.kinds import HELM_VALUES
from meshlint.model.resource import Resource
from meshlint.source.compose import SyntaxProblem
from meshlint.source.document import Node
from meshlint.source.embedded import parse_embedded

INJECTOR_CONFIGMAP = "istio-sidecar-injector"
MESH_CONFIGMAP = "istio"


@dataclass(eq=False, repr=False)
class MeshSource:
    """One resource that configures the mesh (IstioOperator, Helm values, an istio ConfigMap)."""

    resource: Resource
    mesh_config: Node | None = None
    helm_values: Node | None = None
    env: dict[str, Node] = field(default_factory=dict)
    compatibility_version: Node | None = None
    problems: list[SyntaxProblem] = field(default_factory=list)  # data.mesh / data.values that do not parse

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

    @cached_property
    def default_config_problems(self) -> list[SchemaProblem]:
        """Type errors and unknown keys in `defaultConfig`, as the injector's parser would meet them."""
        node = self.mesh_config.get("defaultConfig") if self.mesh_config is not None else None
        return proxyconfig.validate(node) if node is not None and node.exists else []


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
    elif resource.kind == HELM_VALUES:
        source.mesh_config = _mapping(root.get("meshConfig"))
        source.helm_values = root
        # From Istio 1.24 the istiod chart is flattened: top-level `env` works like `pilot.env`.
        source.env.update(root.path("pilot", "env").string_map())
        source.env.update(root.get("env").string_map())
        source.compatibility_version = _present(root.get("compatibilityVersion"))
    elif resource.kind == "ConfigMap":
        if not _configmap(resource, source):
            return None
    else:
        return None
    says_nothing = source.mesh_config is None and source.helm_values is None and not source.env and source.compatibility_version is None
    return None if says_nothing and not source.problems else source


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
        return True
    if name == MESH_CONFIGMAP or name.startswith(MESH_CONFIGMAP + "-"):
        mesh = data.get("mesh")
        if not isinstance(mesh.value, str):
            return False
        parsed = parse_embedded(mesh)
        source.mesh_config = _mapping(parsed.root)
        _note(source, parsed.problem, "data.mesh", "istiod cannot read this MeshConfig")
        return True
    return False


def _note(source: MeshSource, problem: SyntaxProblem | None, field: str, effect: str) -> None:
    if problem is not None:
        source.problems.append(problem._replace(message=f"{field} of ConfigMap {source.resource.name} does not parse ({problem.message}); {effect}"))


def _mapping(node: Node | None) -> Node | None:
    return node if node is not None and node.is_map else None


def _present(node: Node) -> Node | None:
    return node if node.exists else None
