"""Kubernetes resources, and the one place that knows where each workload keeps its pod template."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Iterator

from meshlint.document import Document, Node
from meshlint.findings import ResourceId

# Where each workload kind keeps its pod template, below the object's root.
POD_TEMPLATE_PATHS: dict[str, tuple[str, ...]] = {
    "Pod": (),
    "Deployment": ("spec", "template"),
    "StatefulSet": ("spec", "template"),
    "DaemonSet": ("spec", "template"),
    "ReplicaSet": ("spec", "template"),
    "ReplicationController": ("spec", "template"),
    "Job": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"),
    "Rollout": ("spec", "template"),
}
WORKLOAD_KINDS = frozenset(POD_TEMPLATE_PATHS)
BATCH_KINDS = frozenset(("Job", "CronJob"))

# Pseudo-kind for an istiod Helm values file, which has no apiVersion or kind of its own.
HELM_VALUES = "HelmValues"
HELM_VALUES_KEYS = frozenset(("meshConfig", "global", "pilot", "env", "compatibilityVersion"))

# Kinds that can configure the mesh itself (mesh config, Helm values, istiod env).
MESH_CONFIG_KINDS = frozenset(("IstioOperator", "ConfigMap", HELM_VALUES))
MESH_CONTEXT_KINDS = frozenset(("Namespace", "Service", "PeerAuthentication")) | MESH_CONFIG_KINDS

# A cheap look at a document's text: could it be a mesh-context resource? Only those are composed
# before the run's main pass; anything that says no here is read once, in the main pass. Only
# ConfigMaps named istio* configure the mesh; Lists may hold anything.
_CONTEXT_KIND = re.compile(
    r"^[\"']?kind[\"']?:[ \t]*[\"']?(Namespace|Service|PeerAuthentication|IstioOperator|List|[A-Za-z]+List)[\"']?[ \t]*(#.*)?$", re.M
)
_CONFIGMAP = re.compile(r"^[\"']?kind[\"']?:[ \t]*[\"']?ConfigMap\b", re.M)
_ISTIO_NAME = re.compile(r"\bname:[ \t]*[\"']?istio")
_TOP_KIND = re.compile(r"^[\"']?kind[\"']?:", re.M)
_HELM_KEY = re.compile(r"^(" + "|".join(sorted(HELM_VALUES_KEYS)) + r"):", re.M)


def might_hold_context(text: str) -> bool:
    """False only when the document surely holds no mesh-context resource (top-level keys at column 0)."""
    if _CONTEXT_KIND.search(text):
        return True
    if _CONFIGMAP.search(text):
        return bool(_ISTIO_NAME.search(text))
    if not _TOP_KIND.search(text):
        return bool(_HELM_KEY.search(text)) or text.lstrip().startswith(("{", "["))
    return False


@dataclass(eq=False, repr=False)
class Resource:
    kind: str
    api_version: str
    root: Node
    document: Document

    # Read-only views of the document, asked for by many rules: computed once per resource.
    @cached_property
    def metadata(self) -> Node:
        return self.root.get("metadata")

    @cached_property
    def name(self) -> str:
        return self.metadata.get("name").text or ""

    @cached_property
    def namespace(self) -> str:
        return self.metadata.get("namespace").text or ""

    @property
    def identity(self) -> ResourceId:
        return ResourceId(self.kind, self.name, self.namespace)

    @property
    def path(self) -> str:
        return self.document.path

    @property
    def is_workload(self) -> bool:
        return self.kind in WORKLOAD_KINDS

    @cached_property
    def template(self) -> "PodTemplate | None":
        return _find_template(self)


def resources_of(document: Document) -> Iterator[Resource]:
    """The resources a document holds: itself, the items of a `kind: List`, or Helm values."""
    root = document.root
    if not root.is_map:
        return
    kind, api_version = root.get("kind").value, root.get("apiVersion").value
    if isinstance(kind, str) and isinstance(api_version, str):
        if kind == "List" or (kind.endswith("List") and root.get("items").is_list):
            for item in root.get("items").elements():
                item_kind, item_api = item.get("kind").value, item.get("apiVersion").value
                if item.is_map and isinstance(item_kind, str) and isinstance(item_api, str):
                    yield Resource(item_kind, item_api, item, document)
            return
        yield Resource(kind, api_version, root, document)
    elif kind is None and api_version is None and HELM_VALUES_KEYS.intersection(root.value):
        yield Resource(HELM_VALUES, "", root, document)


@dataclass(frozen=True, eq=False, repr=False)
class Container:
    """A container of a pod template; `init` for init containers (native sidecars are init containers)."""

    node: Node
    init: bool
    index: int

    @cached_property
    def name(self) -> str:
        return self.node.get("name").text or f"#{self.index}"

    @property
    def image(self) -> str:
        return self.node.get("image").text or ""

    @property
    def restart_policy(self) -> str | None:
        return self.node.get("restartPolicy").text

    @property
    def is_native_sidecar(self) -> bool:
        return self.init and self.restart_policy == "Always"

    @cached_property
    def ports(self) -> list[tuple[int, str | None, str]]:
        """Declared ports as (containerPort, name, protocol); entries without a number are left out."""
        found = []
        for port in self.node.get("ports").elements():
            number = port.get("containerPort").value
            if isinstance(number, int) and not isinstance(number, bool):
                found.append((number, port.get("name").text, port.get("protocol").text or "TCP"))
        return found

    @property
    def label(self) -> str:
        return f"{'init container' if self.init else 'container'} {self.name!r}"

    @property
    def position(self):
        """Where a finding about the container points: its name, else the item itself."""
        name = self.node.get("name")
        return name.pos if name.exists else self.node.pos


@dataclass(frozen=True, eq=False, repr=False)
class PodTemplate:
    """The pod a workload creates: what the injection webhook and the kubelet see."""

    node: Node
    owner: Resource

    # Every rule asks for these; they are computed once per template (callers must not mutate them).
    @cached_property
    def metadata(self) -> Node:
        return self.node.get("metadata")

    @cached_property
    def spec(self) -> Node:
        return self.node.get("spec")

    def labels(self) -> dict[str, Node]:
        return self._labels

    def annotations(self) -> dict[str, Node]:
        return self._annotations

    @cached_property
    def _labels(self) -> dict[str, Node]:
        return string_map(self.metadata.get("labels"))

    @cached_property
    def _annotations(self) -> dict[str, Node]:
        return string_map(self.metadata.get("annotations"))

    @cached_property
    def containers(self) -> list[Container]:
        return [Container(node, False, i) for i, node in enumerate(self.spec.get("containers").elements()) if node.is_map]

    @cached_property
    def init_containers(self) -> list[Container]:
        return [Container(node, True, i) for i, node in enumerate(self.spec.get("initContainers").elements()) if node.is_map]

    @cached_property
    def all_containers(self) -> list[Container]:
        return self.init_containers + self.containers

    @property
    def fix_position(self):
        """Where a fix for something missing goes: the template's metadata, else the kind line."""
        metadata = self.metadata
        if metadata.exists and metadata.key_pos is not None:
            return metadata.key_pos
        return self.owner.root.get("kind").key_pos or self.owner.root.pos


def pod_template(resource: Resource) -> PodTemplate | None:
    """The resource's pod template, the same object on every call (rules and the mesh share it)."""
    return resource.template


def _find_template(resource: Resource) -> PodTemplate | None:
    path = POD_TEMPLATE_PATHS.get(resource.kind)
    if path is None:
        return None
    node = resource.root.path(*path)
    if not node.is_map:
        return None
    return PodTemplate(node, resource)


def string_map(node: Node) -> dict[str, Node]:
    """Annotations and labels by key; values keep their node, so `.text` reads `true` as written."""
    return {str(key): value for key, value in node.items()}
