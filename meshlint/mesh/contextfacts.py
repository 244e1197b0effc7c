"""What the mesh context keeps of each resource it reads: small records (a Service's targets, a
PeerAuthentication, a Linkerd Server, a revision tag, a Namespace's mesh labels, a sign of Istio), made
from the resource and the document dropped, and the indexes it asks them through."""

import os
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from meshlint import numbers
from meshlint.findings import Position
from meshlint.mesh.injection import Namespace, refusal
from meshlint.mesh.istio import (
    INJECT,
    ISTIO_API_SUFFIX,
    NAMESPACE_INJECTION_LABEL,
    PROXY_CONTAINER,
    REV_LABEL,
    is_pod_key,
)
from meshlint.mesh.linkerd import INJECT_ANNOTATION
from meshlint.mesh.scope import Claim, Place
from meshlint.mesh.setting import Setting
from meshlint.mesh.sources import (
    is_mesh_config,
    mesh_source,
)
from meshlint.model.kinds import HELM_VALUES
from meshlint.model.pod import pod_templates
from meshlint.model.resource import Resource
from meshlint.source.document import Node
from meshlint.source.units import Units

if TYPE_CHECKING:
    pass


K = TypeVar("K")
V = TypeVar("V")
# What of a Namespace decides which mesh injects its pods (the rest does not matter to the rules).
NAMESPACE_MESH_LABELS = frozenset(("istio-injection", "istio.io/rev", "istio.io/dataplane-mode", "config.linkerd.io/admission-webhooks"))
LINKERD_CONFIG_PREFIXES = ("linkerd.io/", "config.linkerd.io/", "config.alpha.linkerd.io/", "config.beta.linkerd.io/")


class ServiceTargets(NamedTuple):
    """What the mesh context keeps of a Service: whom it selects and which pod ports it sends to.

    A big tree keeps thousands of them to the end of the run, so its places are kept as (line,
    column) in its one file, and made `Position`s when asked for: lighter than keeping one for each."""

    name: str
    namespace: str
    selector: tuple[tuple[str, str | None], ...]
    path: str
    ports: tuple[tuple[Any, int, int], ...]  # targetPort (number or port name), or the port itself, with its line and column
    line: int  # where its metadata.name is
    column: int
    numbers: tuple[int, ...] = ()  # the ports it serves: what its clients dial

    @property
    def targets(self) -> tuple[tuple[Any, Position], ...]:
        """Each port it sends to, with where that is written."""
        return tuple((value, Position(self.path, line, column)) for value, line, column in self.ports)

    @property
    def position(self) -> Position:
        """Its metadata.name (the Service itself when it has none)."""
        return Position(self.path, self.line, self.column)


class PeerAuthentication(NamedTuple):
    namespace: str
    selector: dict[str, str] | None
    mode: Setting[str | None] | None
    port_modes: dict[int, Setting[str | None]]
    place: Place
    position: Position  # the policy as written (its first line)
    name: str = ""

    @property
    def claim(self) -> Claim:
        """What it says, as one value (mode and port modes), to compare with another policy's."""
        value = (self.mode.value if self.mode else None, tuple(sorted((p, m.value) for p, m in self.port_modes.items())))
        origin = self.mode.origin if self.mode and self.mode.origin else self.position
        return Claim(Setting(value, origin), self.place)


class LinkerdServer(NamedTuple):
    """What the mesh context keeps of a Linkerd `Server`: the pods and the port its policy governs."""

    name: str
    namespace: str
    selector: dict[str, str] | None  # podSelector.matchLabels; None when it selects by expressions
    port: Any  # a number or a container port's name
    position: Position


class RevisionTag(NamedTuple):
    tag: str
    revision: str
    origin: Position


def created_namespace(resource: Resource) -> Namespace | None:
    """The Namespace an Argo CD Application creates with the sync option `CreateNamespace=true`: its
    destination namespace, with only the labels and annotations of `managedNamespaceMetadata` (Argo CD
    `docs/user-guide/sync-options.md`, "Create Namespace"). None when it creates none."""
    spec = resource.root.get("spec")
    policy = spec.get("syncPolicy")
    options = [(o.text or "").replace(" ", "") for o in policy.get("syncOptions").elements()]
    name = spec.path("destination", "namespace")
    if "CreateNamespace=true" not in options or not name.text:
        return None
    metadata = policy.get("managedNamespaceMetadata")
    labels = {str(k): v.detached() for k, v in metadata.get("labels").items()}
    annotations = {str(k): v.detached() for k, v in metadata.get("annotations").items()}
    return Namespace(name.text, labels, annotations, name.pos)


def service_targets_of(resource: Resource) -> ServiceTargets:
    spec = resource.root.get("spec")
    selector = spec.get("selector")
    # A tree's thousands of Services are kept to the end of the run, and their namespaces, selector
    # keys and port names repeat: one copy of each.
    own = resource.name
    # `app: <its own name>` is the usual selector: one copy of the name for both.
    pairs = tuple((sys.intern(str(k)), own if v.text == own else v.text) for k, v in selector.items()) if selector.is_map else ()
    targets = []
    numbers = []
    for port in spec.get("ports").elements():
        served = port.get("port").value
        if isinstance(served, int) and not isinstance(served, bool):
            numbers.append(served)
        target = port.get("targetPort") if port.get("targetPort").exists else port.get("port")
        value, where = target.value, target.pos
        targets.append((sys.intern(value) if isinstance(value, str) else value, where.line, where.column))
    name = resource.root.path("metadata", "name")
    position = name.pos if name.exists else resource.root.pos
    return ServiceTargets(
        own, sys.intern(resource.namespace), pairs, position.path, tuple(targets), position.line, position.column, tuple(numbers)
    )


class OptedOut(NamedTuple):
    """A pod template that tells Istio's injector not to inject it: what a Service selecting it reaches
    lies outside the mesh."""

    namespace: str
    labels: dict[str, str]


def opted_out_of(resource: Resource) -> list[OptedOut]:
    """The pod templates of a workload that refuse injection (`injection.refusal`)."""
    return [
        OptedOut(resource.namespace, {str(k): v.text or "" for k, v in template.labels().items()})
        for template in pod_templates(resource)
        if refusal(template) is not None
    ]


def linkerd_server_of(resource: Resource) -> LinkerdServer:
    spec = resource.root.get("spec")
    selector = spec.get("podSelector")
    labels = selector.get("matchLabels")
    if selector.get("matchExpressions").exists:
        chosen = None
    else:
        chosen = {str(k): v.text or "" for k, v in labels.items()} if labels.is_map else {}
    port = spec.get("port")
    return LinkerdServer(resource.name, resource.namespace, chosen, port.value, port.pos if port.exists else resource.root.pos)


def peer_authentication_of(resource: Resource, place: Place) -> PeerAuthentication:
    spec = resource.root.get("spec")
    selector_node = spec.path("selector", "matchLabels")
    selector = {str(k): v.text or "" for k, v in selector_node.items()} if selector_node.is_map else None
    mode = spec.path("mtls", "mode")
    port_modes = {}
    for port, node in spec.get("portLevelMtls").items():
        number = numbers.port(port, zero=True)
        if number is not None:
            port_modes[number] = Setting(node.path("mode").text, node.path("mode").pos)
    return PeerAuthentication(
        namespace=resource.namespace,
        selector=selector,
        mode=Setting(mode.text, mode.pos) if mode.exists else None,
        port_modes=port_modes,
        place=place,
        position=resource.root.pos,
        name=resource.name,
    )


def policy_field(slot: tuple[Any, ...], namespace: str, root: str) -> str:
    """How a conflict names the PeerAuthentication scope it is about."""
    if slot[0] == "mesh":
        return f"PeerAuthentication mesh-wide (namespace {root})"
    if slot[0] == "namespace":
        return f"PeerAuthentication namespace-wide (namespace {namespace})"
    return f"PeerAuthentication selecting {', '.join(f'{k}={v}' for k, v in slot[1])} (namespace {namespace})"


def selects_labels(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


def mesh_keys(namespace: Namespace) -> tuple[tuple[str, str | None], ...]:
    """What of a Namespace decides injection, to compare two definitions of it."""
    keys = [(k, v.text) for k, v in namespace.labels.items() if k in NAMESPACE_MESH_LABELS]
    keys += [(k, v.text) for k, v in namespace.annotations.items() if k.startswith(LINKERD_CONFIG_PREFIXES) and not injects_nothing(k, v)]
    return tuple(sorted(keys))


def injects_nothing(key: str, value: Node) -> bool:
    """`linkerd.io/inject: disabled` (or "") on a namespace injects nothing, as no annotation does
    (reference §11.1.2): two definitions differing only in that agree."""
    return key == INJECT_ANNOTATION and value.text in ("", "disabled")


def namespace_position(namespace: Namespace) -> Position | None:
    for node in (*namespace.labels.values(), *namespace.annotations.values()):
        return node.key_pos or node.pos
    return namespace.position


def default_revision(revision: str | None) -> str:
    name = (revision or "").strip()
    return "" if name in ("", "default") else name


class ServiceIndex:
    """One namespace's Services by name (the first read of a name), and those with a selector by one
    label their selector requires: a pod is compared only with the Services that could select it (a
    big tree has hundreds a namespace, and searching them all for each pod or each name grew with the
    square of the tree)."""

    def __init__(self, services: list[ServiceTargets]) -> None:
        self.services = services
        self.by_name: dict[str, ServiceTargets] = {}
        self.by_label: dict[tuple[str, str | None], list[int]] = {}
        self.always: list[int] = []  # selectors of null values only: they select pods without those labels
        for index, service in enumerate(services):
            self.by_name.setdefault(service.name, service)
            if not service.selector:
                continue
            required = next(((k, v) for k, v in service.selector if v is not None), None)
            if required is None:
                self.always.append(index)
            else:
                self.by_label.setdefault(required, []).append(index)

    def candidates(self, labels: dict[str, str | None]) -> list[ServiceTargets]:
        """The Services that might select a pod with these labels, in the order the run read them."""
        found = list(self.always)
        for pair in labels.items():
            found.extend(self.by_label.get(pair, ()))
        return [self.services[i] for i in sorted(found)]


def extend(mine: dict[K, list[V]], later: dict[K, list[V]]) -> None:
    for key, items in later.items():
        mine.setdefault(key, []).extend(items)


class SignIndex:
    """The first sign of Istio (in path order) in each folder and in each unit: a workload looks in its
    folder and each folder above, then in its units."""

    def __init__(self, signs: Iterable[tuple[Place, Setting[str]]], units: Units) -> None:
        self.by_folder: dict[str, Setting[str]] = {}
        self.by_unit: dict[str, Setting[str]] = {}
        for where, sign in signs:
            keep_first(self.by_folder, where.folder, sign)
            for unit in units.of(where.file) if units else ():
                keep_first(self.by_unit, unit, sign)

    def at(self, folder: str, units: frozenset[str]) -> Setting[str] | None:
        while True:
            found = self.by_folder.get(folder)
            if found is not None:
                return found
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
        in_units = [self.by_unit[u] for u in units if u in self.by_unit]
        return min(in_units, key=origin_key) if in_units else None


def keep_first(table: dict[str, Setting[str]], key: str, sign: Setting[str]) -> None:
    known = table.get(key)
    if known is None or origin_key(sign) < origin_key(known):
        table[key] = sign


def origin_key(sign: Setting[str]) -> tuple[str, int, int]:
    origin = sign.origin
    return (origin.path, origin.line, origin.column) if origin is not None else ("", 0, 0)


def istio_sign_of(resource: Resource) -> Setting[str] | None:
    """What in this resource shows that the run is about an Istio mesh, and where (wave-2 spec §W1)."""
    group = resource.api_version.split("/", 1)[0] if "/" in resource.api_version else ""
    if group.endswith(ISTIO_API_SUFFIX):
        return Setting(f"{resource.kind} {resource.name or '(unnamed)'}", resource.root.get("apiVersion").pos)
    if resource.kind == "Namespace":
        for key in (NAMESPACE_INJECTION_LABEL, REV_LABEL):
            if key in resource.labels:
                return Setting(f"Namespace {resource.name} label {key}", resource.labels[key].key_pos)
        return None
    if is_mesh_config(resource):
        return _mesh_config_sign(resource)
    return _pod_sign(resource)


def _mesh_config_sign(resource: Resource) -> Setting[str] | None:
    source = mesh_source(resource)
    if source is None:
        return None
    if resource.kind == HELM_VALUES:
        # Only what istiod's chart alone has: many charts' values have `global:` or `env:`.
        node = source.mesh_config or source.helm_proxy or present(resource.root.get("pilot"))
        return Setting("istiod Helm values", node.key_pos or node.pos) if node is not None else None
    return Setting(f"{resource.kind} {resource.name or '(unnamed)'}", resource.root.pos)


def _pod_sign(resource: Resource) -> Setting[str] | None:
    """An injected istio-proxy, or an Istio key on a pod template (wave-2 spec §W1) other than an opt-out."""
    for template in pod_templates(resource):
        for container in template.all_containers:
            if container.name == PROXY_CONTAINER:
                return Setting(f"an {PROXY_CONTAINER} container in {resource.kind} {resource.name or '(unnamed)'}", container.position)
        for values in (template.labels(), template.annotations()):
            for key, node in values.items():
                if (is_pod_key(key) or key.startswith("proxy.istio.io/") or key == REV_LABEL) and not _opts_out(key, node):
                    return Setting(f"{key} on {resource.kind} {resource.name or '(unnamed)'}", node.key_pos or node.pos)
    return None


def _opts_out(key: str, node: Node) -> bool:
    """`sidecar.istio.io/inject: "false"` keeps its own pod out of any mesh, and manifests that run with
    or without Istio (a standalone install and a meshed one sharing a base) carry it either way: it
    shows nothing about whether the other pods are injected."""
    return key == INJECT and node.text == "false"


def present(node: Node) -> Node | None:
    return node if node.exists else None
