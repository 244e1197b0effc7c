"""The mesh context: the mesh-wide facts of a run, collected once, then asked about each workload.

Rules never work these facts out themselves. Every effective value is a `Setting` whose origin is the
file and line that decided it (or the built-in default), so messages can say
"holdApplicationUntilProxyStarts is false (istio-operator.yaml:12)". Reference: mesh-semantics.md.
The context keeps small facts, never documents: a tree with thousands of Services keeps thousands of
`ServiceTargets`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from meshlint import numbers
from meshlint.findings import Position
from meshlint.mesh.clusterversion import CLUSTER_KINDS, KUBERNETES_VERSION, cluster_version
from meshlint.mesh.envsources import EnvSources
from meshlint.mesh.injection import Namespace
from meshlint.mesh.istio import (
    ISTIO_API_SUFFIX,
    NAMESPACE_INJECTION_LABEL,
    NATIVE_ENV,
    PROXY_CONTAINER,
    REV_LABEL,
    is_pod_key,
)
from meshlint.mesh.linkerd import INJECT_ANNOTATION, LINKERD_API_SUFFIX, LINKERD_FIELD_PREFIX
from meshlint.mesh.options import MeshOptions
from meshlint.mesh.scope import Claim, Conflict, Place, UnitsOf, considered, distance, resolve, visible
from meshlint.mesh.setting import Setting
from meshlint.mesh.sources import (
    DISCOVERY_SELECTORS,
    ISTIO_CNI_FIELDS,
    ISTIO_VERSION,
    OUTBOUND_POLICY,
    REWRITE_PROBES,
    MeshSource,
    is_mesh_config,
    mesh_source,
)
from meshlint.model.kinds import HELM_VALUES, LINKERD_HELM_VALUES, LINKERD_SERVER
from meshlint.model.pod import PodTemplate, pod_templates
from meshlint.model.resource import Resource
from meshlint.model.selectors import selects
from meshlint.source.document import Node
from meshlint.source.units import Units

if TYPE_CHECKING:
    from meshlint.mesh.sidecars import SidecarConfig, SidecarScope

HOLD = "holdApplicationUntilProxyStarts"
TAG_WEBHOOK_PREFIX = "istio-revision-tag-"
K = TypeVar("K")
V = TypeVar("V")
SETTINGS_KEPT = 64  # places whose settings `settings_at` remembers: a folder, or a file that holds a source
INJECTOR_WEBHOOK_PREFIX = "istio-sidecar-injector-"
# What of a Namespace decides which mesh injects its pods (the rest does not matter to the rules).
NAMESPACE_MESH_LABELS = frozenset(("istio-injection", "istio.io/rev", "istio.io/dataplane-mode", "config.linkerd.io/admission-webhooks"))
LINKERD_CONFIG_PREFIXES = ("linkerd.io/", "config.linkerd.io/", "config.alpha.linkerd.io/", "config.beta.linkerd.io/")


ARGO_CD_API = "argoproj.io/"
WEBHOOK_KINDS = frozenset(("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"))


class ServiceTargets(NamedTuple):
    """What the mesh context keeps of a Service: whom it selects and which pod ports it sends to.

    A big tree keeps thousands of them to the end of the run, so its places are kept as (line,
    column) in its one file, and made `Position`s when asked for (466 bytes a Service instead of 628)."""

    name: str
    namespace: str
    selector: tuple[tuple[str, str | None], ...]
    path: str
    ports: tuple[tuple[Any, int, int], ...]  # targetPort (number or port name), or the port itself, with its line and column
    line: int  # where its metadata.name is
    column: int

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


def _own(claims: list[Claim], place: Place, units: UnitsOf | None) -> bool:
    """Some claim lies on the workload's path or in one of its units (wave-3 spec V2.6: the release
    its own unit states)."""
    deciding, elsewhere = considered(claims, place, units)
    if not elsewhere:
        return True
    mine = units(place.file) if units is not None else frozenset()
    return bool(mine) and any(mine & units(c.place.file) for c in deciding if units is not None)


class MeshSettings:
    """The mesh-wide settings that apply at one place, for one revision (wave-2 spec §W2), and the
    conflicts that left fields there undecided."""

    def __init__(self, resolved: dict[str, Setting[Any]], conflicts: list[Conflict]) -> None:
        self.conflicts = conflicts
        # The releases a source states are facts about what runs, not settings it gives: a source that
        # states only a release (istiod's image tag) is no mesh-wide configuration to set a field in.
        self.istio_version: Setting[Any] | None = resolved.get(ISTIO_VERSION)  # the release the tree installs
        self.kubernetes_version: Setting[Any] | None = resolved.get(KUBERNETES_VERSION)  # the release its cluster runs
        if self.istio_version is not None or self.kubernetes_version is not None:
            resolved = {k: v for k, v in resolved.items() if k not in (ISTIO_VERSION, KUBERNETES_VERSION)}
        self._resolved = resolved
        self.sourced = bool(resolved) or bool(conflicts)  # False: every field is Istio's built-in default
        self.default_config: dict[str, Setting[Any]] = {}
        self.default_proxy_metadata: dict[str, Setting[Any]] = {}
        self.helm_proxy: dict[str, Setting[Any]] = {}
        self.linkerd_helm: dict[str, Setting[Any]] = {}  # Linkerd control-plane values: `proxy.await`
        for key, setting in resolved.items():
            if setting.value is None:
                continue  # a complete MeshConfig that leaves the field to its default
            group, _, name = key.partition(".")
            if key.startswith(LINKERD_FIELD_PREFIX):
                self.linkerd_helm[key[len(LINKERD_FIELD_PREFIX) :]] = setting
            elif group == "proxy":
                self.default_config[name] = setting
            elif group == "proxyMetadata":
                self.default_proxy_metadata[name] = setting
            elif key.startswith("helm.proxy."):
                self.helm_proxy[key[len("helm.proxy.") :]] = setting
        self.native_env: Setting[Any] | None = resolved.get(f"env.{NATIVE_ENV}")
        self.rewrite_probes: Setting[Any] | None = resolved.get(REWRITE_PROBES)
        self.compatibility_version: Setting[Any] | None = resolved.get("compatibilityVersion")
        self.proxy_variant: Setting[Any] | None = resolved.get("helm.variant")

    def helm_value(self, key: str) -> Setting[Any] | None:
        """A Helm `global.proxy` value that is set (empty values are unset); "true"/"false" strings
        read as the booleans the template sees."""
        setting = self.helm_proxy.get(key)
        if setting is None or setting.value in (None, "", {}, []):
            return None
        if isinstance(setting.value, str) and setting.value.lower() in ("true", "false"):
            return setting.derived(setting.value.lower() == "true")
        return setting

    @property
    def proxy_lifecycle(self) -> Setting[Any] | None:
        """Helm global.proxy.lifecycle when it is set: it replaces the injected hold hook (reference §1.3)."""
        setting = self.helm_proxy.get("lifecycle")
        return setting if setting is not None and setting.value else None

    @property
    def outbound_traffic_policy(self) -> Setting[Any] | None:
        """MeshConfig outboundTrafficPolicy.mode when a source sets it (ALLOW_ANY by default)."""
        setting = self._resolved.get(OUTBOUND_POLICY)
        return setting if setting is not None and isinstance(setting.value, str) else None

    @property
    def discovery_selectors(self) -> Setting[Any] | None:
        """MeshConfig discoverySelectors when a source sets a non-empty list (empty: every namespace)."""
        setting = self._resolved.get(DISCOVERY_SELECTORS)
        return setting if setting is not None and isinstance(setting.value, list) and setting.value else None

    @property
    def istio_cni(self) -> Setting[Any] | None:
        """Istio CNI switched on for the injector (Helm `istio_cni.enabled` or `pilot.cni.enabled`)."""
        for key in ISTIO_CNI_FIELDS:
            setting = self._resolved.get(key)
            if setting is not None and (setting.value is True or str(setting.value).lower() == "true"):
                return setting
        return None

    @property
    def istio_source(self) -> Position | None:
        """Where the mesh-wide Istio source these settings come from is written: the one that sets the
        proxies' defaults (defaultConfig, Helm global.proxy) first, else any that decides a field here;
        None when every field is Istio's default. Where a mesh-wide hold would be set (ML100)."""
        found = [(not k.startswith(("proxy.", "helm.proxy.")), _origin_key(v), v.origin) for k, v in self._resolved.items()
                 if not k.startswith(LINKERD_FIELD_PREFIX) and v.origin is not None]
        return min(found)[2] if found else None

    @property
    def mesh_wide_hold(self) -> Setting[Any] | None:
        """holdApplicationUntilProxyStarts switched on for the whole mesh (defaultConfig or Helm)."""
        for setting in (self.default_config.get(HOLD), self.helm_proxy.get(HOLD)):
            if setting is not None and setting.value is True:
                return setting
        return None


class MeshContext:
    """Built once from every input and `mesh.context` file, then asked about each workload."""

    def __init__(
        self, resources: Iterable[Resource] = (), options: MeshOptions | None = None, istio_in_use: Setting[str] | None = None
    ) -> None:
        self.options = options or MeshOptions()
        # A sign that the whole run is about an Istio mesh (--mesh-config given): it holds everywhere.
        self.istio_in_use: Setting[str] | None = istio_in_use
        # The first sign of Istio in each file (or a config's, at its folder), with where it counts as
        # located: it holds for workloads on its path and in its units only (wave-3 spec V1).
        self.signs: dict[str, tuple[Place, Setting[str]]] = {}
        self.units = Units()  # the run's deployment units, set by the run once its files are known
        self._sign_memo: dict[tuple[str, frozenset[str]], Setting[str] | None] = {}
        self._sign_index: _SignIndex | None = None
        # Folders with a file that shows a sign, each with the units those files are in: a later file of
        # the folder in no other unit cannot change which sign holds anywhere, so it is not scanned.
        self._signed_folders: dict[str, frozenset[str]] = {}
        self._scan: tuple[str, bool] = ("", True)  # the last file asked about, and the answer
        self.claims: dict[tuple[str, str], list[Claim]] = {}  # (revision, field) -> what sources say
        self.namespaces: dict[str, list[tuple[Namespace, Place]]] = {}
        self.peer_authentications: list[PeerAuthentication] = []
        self.sidecars: list[SidecarConfig] = []
        self.services: dict[str, list[ServiceTargets]] = {}  # by namespace: a pod only meets its own
        self._indexed: dict[str, _ServiceIndex] = {}  # by namespace, made when first asked (service_targets, service)
        self.linkerd_servers: dict[str, list[LinkerdServer]] = {}  # by namespace
        self.revisions: dict[str, Position] = {}  # non-default revisions the run declares
        self.tags: dict[str, RevisionTag] = {}
        self.injection_templates: dict[str, str] = {}  # custom templates the run defines: where they put istio-proxy
        self.webhook_services: set[tuple[str, str]] = set()  # (namespace, name) of Services admission webhooks call
        self._settings: dict[tuple[Place | str, frozenset[str] | None, str], MeshSettings] = {}
        self._claim_files: frozenset[str] | None = None  # the files that hold a claim, made when first asked
        self._places: dict[str, Place] = {}  # Services' files, placed when units are asked about
        self.env_sources = EnvSources()  # ConfigMaps and Secrets a container's envFrom can name
        for resource in resources:
            self.add(resource)

    # --- collecting ------------------------------------------------------------------------------

    def add(self, resource: Resource, place: Place | None = None) -> None:
        """Take what the mesh context needs from one resource (the resource itself is not kept);
        `place` is where it counts as located (a mesh.context file: beside its config)."""
        where = place if place is not None else Place.of(resource.path)
        self._note_istio(resource, where)
        self.env_sources.add(resource)
        kind = resource.kind
        if kind == "Namespace":
            name = resource.root.path("metadata", "name")
            position = name.pos if name.exists else resource.root.pos
            labels = {key: node.detached() for key, node in resource.labels.items()}
            annotations = {key: node.detached() for key, node in resource.annotations.items()}
            self.namespaces.setdefault(resource.name, []).append((Namespace(resource.name, labels, annotations, position), where))
        elif kind == "Service":
            service = _service_targets(resource)
            self.services.setdefault(service.namespace, []).append(service)
            self._indexed.pop(service.namespace, None)
        elif kind == "PeerAuthentication":
            self.peer_authentications.append(_peer_authentication(resource, where))
        elif kind == "Sidecar":
            from meshlint.mesh.sidecars import read_sidecar  # a run without Sidecars never loads their reader

            sidecar = read_sidecar(resource, where)
            if sidecar is not None:
                self.sidecars.append(sidecar)
        elif kind == "Application" and resource.api_version.startswith(ARGO_CD_API):
            created = _created_namespace(resource)
            if created is not None:
                self.namespaces.setdefault(created.name, []).append((created, where))
        elif kind in WEBHOOK_KINDS:
            if kind == "MutatingWebhookConfiguration":
                self._note_tag(resource)
            for hook in resource.root.get("webhooks").elements():
                called = hook.path("clientConfig", "service")
                service_name, service_namespace = called.get("name").text, called.get("namespace").text
                if service_name and service_namespace:
                    self.webhook_services.add((service_namespace, service_name))
        elif kind == LINKERD_HELM_VALUES:
            from meshlint.mesh import linkerdsource

            for key, setting in linkerdsource.claims(resource):
                self.claims.setdefault(("", key), []).append(Claim(setting, where))
            self._claims_changed()
        elif kind == LINKERD_SERVER and resource.api_version.split("/", 1)[0].endswith(LINKERD_API_SUFFIX):
            server = _linkerd_server(resource)
            self.linkerd_servers.setdefault(server.namespace, []).append(server)
        elif kind in CLUSTER_KINDS:
            version = cluster_version(resource)
            if version is not None:
                self.claims.setdefault(("", KUBERNETES_VERSION), []).append(Claim(version, where))
                self._claims_changed()
        elif is_mesh_config(resource):
            source = mesh_source(resource)
            if source is not None:
                self._take(source, where)

    def merge(self, later: MeshContext) -> None:
        """Take what `later` collected from files that come after every file this context read (a
        worker's range of the first pass): the same as if those files had been added here."""
        for path, signed in later.signs.items():
            self.signs.setdefault(path, signed)
        for folder, units in later._signed_folders.items():
            self._signed_folders[folder] = self._signed_folders.get(folder, frozenset()) | units
        self._scan = ("", True)
        self._sign_memo.clear()
        self._sign_index = None
        _extend(self.claims, later.claims)
        _extend(self.namespaces, later.namespaces)
        _extend(self.services, later.services)
        self._indexed.clear()
        _extend(self.linkerd_servers, later.linkerd_servers)
        self.env_sources.merge(later.env_sources)
        self.peer_authentications.extend(later.peer_authentications)
        self.sidecars.extend(later.sidecars)
        for revision, position in later.revisions.items():
            self.revisions.setdefault(revision, position)
        for tag, found in later.tags.items():
            self.tags.setdefault(tag, found)
        for name, adds in later.injection_templates.items():
            self.injection_templates.setdefault(name, adds)
        self.webhook_services |= later.webhook_services
        self._claims_changed()

    def _take(self, source: MeshSource, place: Place) -> None:
        if source.revision:
            self.revisions.setdefault(source.revision, source.resource.root.pos)
        for tag in source.tags:
            self.tags.setdefault(tag, RevisionTag(tag, source.revision, source.resource.root.pos))
        for name, adds in source.injection_templates.items():
            self.injection_templates.setdefault(name, adds)
        for key, setting in source.claims():
            self.claims.setdefault((source.revision, key), []).append(Claim(setting, place))
        self._claims_changed()

    def _claims_changed(self) -> None:
        self._settings.clear()
        self._claim_files = None

    def _note_tag(self, resource: Resource) -> None:
        """A revision tag's webhook (`istio-revision-tag-<tag>`, label istio.io/rev: <revision>), or a
        revision's own injector webhook (`istio-sidecar-injector-<revision>`)."""
        label = resource.labels.get(REV_LABEL)
        name = resource.name
        if name.startswith(TAG_WEBHOOK_PREFIX) and label is not None:
            tag = name[len(TAG_WEBHOOK_PREFIX) :]
            self.tags.setdefault(tag, RevisionTag(tag, _default(label.text), resource.root.pos))
        elif name.startswith(INJECTOR_WEBHOOK_PREFIX):
            # Every object of a revision carries its istio.io/rev label; the name's suffix may be a namespace.
            revision = _default(label.text) if label is not None else _default(name[len(INJECTOR_WEBHOOK_PREFIX) :])
            if revision:
                self.revisions.setdefault(revision, resource.root.pos)

    def note_sign(self, resource: Resource) -> None:
        """A resource read only because it might be its file's first sign of Istio: that is all it gives."""
        self._note_istio(resource, None)

    def wants_istio_sign(self, path: str) -> bool:
        """Could a sign of Istio in this file change which sign holds anywhere? Not once the file has
        one (its first holds wherever a later one would), nor when an earlier file of its folder (the
        walk gives a folder's files in order) showed one and this file is in no unit that file is not:
        the first sign of each folder and of each unit is all that is asked (`istio_sign_at`)."""
        if path in self.signs:
            return False
        if self._scan[0] == path:
            return self._scan[1]
        wanted = True
        if self._signed_folders and not path.startswith("<"):
            place = Place.of(path)
            covered = self._signed_folders.get(place.folder)
            wanted = covered is None or not (self.units.of(place.file) if self.units else frozenset()) <= covered
        self._scan = (path, wanted)
        return wanted

    def sign_config(self, sign: Setting[str], folder: str) -> None:
        """A config that names mesh context or injected namespaces: a sign for the tree it governs."""
        key = f"{folder}{os.sep}"
        if key not in self.signs:
            self.signs[key] = (Place(key, folder), sign)
            self._sign_memo.clear()
            self._sign_index = None

    def _note_istio(self, resource: Resource, place: Place | None) -> None:
        if resource.path in self.signs:
            return  # the file's first sign is known: none after it counts for more
        sign = _istio_sign(resource)
        if sign is not None:
            where = place if place is not None else Place.of(resource.path)
            self.signs[resource.path] = (where, sign)
            units = self.units.of(where.file) if self.units and not where.file.startswith("<") else frozenset()
            self._signed_folders[where.folder] = self._signed_folders.get(where.folder, frozenset()) | units
            self._sign_memo.clear()
            self._sign_index = None

    def sign_digest(self) -> str:
        """The signs that can hold anywhere (the first of each folder and of each unit), for the key of
        kept results: the same however the first pass shared its files out, whichever files it skipped."""
        index = _SignIndex(self.signs.values(), self.units)
        parts = [f"{k}\0{_origin_key(v)}\0{v.value}" for table in (index.by_folder, index.by_unit) for k, v in sorted(table.items())]
        return "\1".join(parts)

    def istio_sign_at(self, place: Place) -> Setting[str] | None:
        """The sign of Istio that holds for a workload at `place`: the run's own, else the nearest on its
        path (its file, its folder, a folder above), else the first in its units. A sign in a sibling
        sample, overlay or chart holds nothing there."""
        if self.istio_in_use is not None:
            return self.istio_in_use
        if not self.signs:
            return None
        units = self.units.of(place.file) if self.units else frozenset()
        key = (place.folder, units)
        if key in self._sign_memo:
            return self._sign_memo[key]
        if self._sign_index is None:
            self._sign_index = _SignIndex(self.signs.values(), self.units)
        found = self._sign_index.at(place.folder, units)
        if len(self._sign_memo) >= SETTINGS_KEPT:
            self._sign_memo.clear()
        self._sign_memo[key] = found
        return found

    def istio_governs(self, place: Place) -> Setting[str] | None:
        """What shows that Istio is the mesh of a workload at `place`: a sign on its path or in its units,
        else the mesh-wide Istio settings it takes from elsewhere in the run (a platform folder's
        IstioOperator governs an apps/ folder beside it, wave-3 spec V1.3)."""
        sign = self.istio_sign_at(place)
        if sign is not None:
            return sign
        source = self.settings_at(place).istio_source
        return Setting("mesh-wide Istio settings from elsewhere in the run", source) if source is not None else None

    def set_units(self, units: Units) -> None:
        """The run's deployment units, known once its files are: what they change is asked anew."""
        self.units = units
        for sign in units.signs:
            if sign.path not in self.signs:
                self.signs[sign.path] = (Place.of(sign.path), Setting(f"{sign.key} in a Kustomization", Position(sign.path, sign.line, sign.column)))
        self._sign_memo.clear()
        self._sign_index = None
        self._claims_changed()

    @property
    def units_of(self) -> UnitsOf | None:
        """What decides which sources a workload may see besides its path (None: the path alone)."""
        return self.units.of if self.units else None

    # --- asked by the workload view and the rules --------------------------------------------------

    def settings_at(self, place: Place, revision: str = "") -> MeshSettings:
        """The mesh-wide settings a workload at `place`, injected by `revision`, runs with: each field
        from the nearest source of that revision, or the agreeing rest of the run (§W2)."""
        if self._claim_files is None:
            self._claim_files = frozenset(c.place.file for claims in self.claims.values() for c in claims)
        # How near a source is (`scope.distance`) tells a workload's file from the rest of its folder
        # only when a source is in that file: the other files of a folder share their settings.
        units = self.units_of
        key = (place if place.file in self._claim_files else place.folder, units(place.file) if units is not None else None, revision)
        settings = self._settings.get(key)
        if settings is None:
            resolved: dict[str, Setting[Any]] = {}
            conflicts: list[Conflict] = []
            for (claimed_revision, field), claims in self.claims.items():
                if claimed_revision != revision and field != KUBERNETES_VERSION:  # the cluster's, whichever revision injects
                    continue
                if field in (ISTIO_VERSION, KUBERNETES_VERSION) and not _own(claims, place, units):
                    continue  # a release stated elsewhere (another sample's install) says nothing of this workload
                setting, conflict = resolve(field, claims, place, units)
                if setting is not None:
                    resolved[field] = setting
                if conflict is not None and field not in (ISTIO_VERSION, KUBERNETES_VERSION):  # two releases (an upgrade under way) decide nothing, and conflict in nothing
                    conflicts.append(conflict)
            if len(self._settings) >= SETTINGS_KEPT:
                # The second pass asks about one folder's places at a time: a memo of every place
                # would grow with the tree (a few MB per 10,000 files) for no hit.
                self._settings.clear()
            settings = self._settings[key] = MeshSettings(resolved, conflicts)
        return settings

    def namespace_at(self, name: str, place: Place) -> tuple[Namespace | None, Conflict | None]:
        """The Namespace object that decides for a workload at `place`: the nearest definition, or the
        agreeing rest of the run; definitions that disagree decide nothing."""
        units = self.units_of
        # A Namespace is the cluster's: a definition in any unit counts, and those never applied
        # together (alternatives) decide nothing rather than conflict.
        found = self.namespaces.get(name, [])
        if not found:
            return None, None
        if len(found) == 1:
            return found[0][0], None
        by_claim: dict[int, Namespace] = {}
        claims = []
        for namespace, where in found:
            claim = Claim(Setting(_mesh_keys(namespace), _namespace_position(namespace)), where)
            by_claim[id(claim.setting)] = namespace
            claims.append(claim)
        setting, conflict = resolve(f"Namespace {name}", claims, place, units, everywhere=True, same_object=True)
        return (by_claim[id(setting)] if setting is not None else None), conflict

    def service_targets(self, template: PodTemplate) -> dict[int, list[Setting[str]]]:
        """Container ports that a Service selecting this pod sends traffic to, each with the Service
        (name as value, the targetPort, or the port when targetPort is absent, as origin)."""
        targets: dict[int, list[Setting[str]]] = {}
        for service, number, position in self._targeted(template):
            targets.setdefault(number, []).append(Setting(f"Service {service.name}", position))
        return targets

    def _targeted(self, template: PodTemplate) -> Iterator[tuple[ServiceTargets, int, Position]]:
        """Each container port of this pod that a Service selecting it sends to, with the Service and where
        its target is written (a targetPort by name is looked up among the containers' ports)."""
        named = {name: number for c in template.containers for number, name, _ in c.ports if name}
        for service in self.selecting(template):
            for value, position in service.targets:
                number = named.get(value) if isinstance(value, str) else value
                if isinstance(number, int) and not isinstance(number, bool):
                    yield service, number, position

    def selecting(self, template: PodTemplate) -> list[ServiceTargets]:
        """The Services of the run that select this pod, in the order the run read them; a Service of a
        sibling overlay or chart selects nothing here."""
        labels = {k: v.text for k, v in template.labels().items()}
        units = self.units_of
        place = Place.of(template.owner.path) if units is not None else None
        return [
            s for s in self._index(template.owner.namespace).candidates(labels)
            if all(labels.get(k) == v for k, v in s.selector)
            and (place is None or units is None or visible(self._placed(s.path), place, units))
        ]

    def admission_ports(self, template: PodTemplate) -> set[int]:
        """Container ports of this pod that only Services an admission webhook of the run calls send to:
        their one client is the API server, outside the mesh."""
        if not self.webhook_services:
            return set()
        webhook: set[int] = set()
        other: set[int] = set()
        for service, number, _ in self._targeted(template):
            (webhook if (service.namespace, service.name) in self.webhook_services else other).add(number)
        return webhook - other

    def linkerd_servers_for(self, template: PodTemplate) -> list[LinkerdServer]:
        """The Linkerd Servers whose podSelector picks this pod (by matchLabels; an empty selector
        picks every pod of its namespace)."""
        labels = {k: v.text for k, v in template.labels().items()}
        return [
            s for s in self.linkerd_servers.get(template.owner.namespace, ())
            if s.selector is not None and all(labels.get(k) == v for k, v in s.selector.items())
        ]

    def mtls_mode(
        self, namespace: str, labels: dict[str, str], port: int | None = None, place: Place | None = None, root: str | None = None
    ) -> tuple[Setting[Any], list[Conflict]]:
        """The PeerAuthentication mode in force: selector over namespace over mesh; UNSET inherits. Of
        several policies for one scope, the nearest to `place` decides (policies that disagree decide
        nothing). Selector policies in the root namespace are ignored, as Istio ignores them."""
        root = root if root is not None else self.options.root_namespace
        slots: dict[tuple[Any, ...], list[PeerAuthentication]] = {}
        units = self.units_of
        for policy in self.peer_authentications:
            if place is not None and units is not None and not visible(policy.place, place, units):
                continue  # a sibling overlay's or chart's policy is never applied with this workload
            if not policy.namespace and place is not None and distance(policy.place, place) is None:
                # No namespace written: it lands wherever it is applied, so only a workload applied
                # with it (on its path) can be taken to share it, never one of an unrelated folder.
                continue
            if policy.namespace == root and policy.selector is None:
                slots.setdefault(("mesh",), []).append(policy)
            elif policy.namespace == namespace and namespace != root and policy.selector is None:
                slots.setdefault(("namespace",), []).append(policy)
            elif policy.namespace == namespace and namespace != root and policy.selector is not None and _selects(policy.selector, labels):
                slots.setdefault(("selector", tuple(sorted(policy.selector.items()))), []).append(policy)
        chosen: dict[str, list[PeerAuthentication]] = {"mesh": [], "namespace": [], "selector": []}
        conflicts: list[Conflict] = []
        for slot, policies in sorted(slots.items()):
            if len(policies) == 1 or place is None:
                chosen[slot[0]].extend(policies)
                continue
            claims = [p.claim for p in policies]
            # Versions of one object (one name) in several files are never applied together (V2.5).
            one = len({p.name for p in policies}) == 1
            setting, conflict = resolve(_policy_field(slot, namespace, root), claims, place, units, same_object=one)
            if conflict is not None:
                conflicts.append(conflict)
            if setting is not None:
                chosen[slot[0]].append(next(p for p, c in zip(policies, claims, strict=True) if c.setting is setting))
        mode: Setting[Any] = Setting("PERMISSIVE", None)
        for scope in ("mesh", "namespace", "selector"):
            for policy in chosen[scope]:
                if policy.mode is not None and policy.mode.value not in (None, "UNSET"):
                    mode = policy.mode
                if port is not None and scope == "selector" and port in policy.port_modes:
                    port_mode = policy.port_modes[port]
                    if port_mode.value not in (None, "UNSET"):
                        mode = port_mode
        return mode, conflicts

    def sidecar_scope(self, namespace: str, labels: dict[str, str] | None, place: Place, root: str | None = None) -> SidecarScope:
        """The Sidecar that scopes a proxy of `namespace` with these pod labels at `place` (labels None:
        what the namespace as a whole gets), reference §13.2."""
        from meshlint.mesh.sidecars import scope_of

        units = self.units_of
        seen = self.sidecars if units is None else [s for s in self.sidecars if visible(s.place, place, units)]
        return scope_of(seen, namespace, labels, place, root if root is not None else self.options.root_namespace)

    def sidecar_clashes(self, sidecar: SidecarConfig) -> list[SidecarConfig]:
        """The other Sidecars applied with this one (read from the same resource) that match every pod
        it matches: the ambiguity of reference §13.2 that needs no pod to show."""
        from meshlint.mesh.sidecars import clashes

        placed = next((s for s in self.sidecars if s.position == sidecar.position), sidecar)
        return clashes(self.sidecars, placed)

    def discovered(self, namespace: str, place: Place, revision: str = "") -> bool | None:
        """Does istiod process this namespace, as MeshConfig discoverySelectors say at `place` (none set:
        every namespace)? None when selectors are set and the run holds no Namespace to match them to."""
        selectors = self.settings_at(place, revision).discovery_selectors
        if selectors is None:
            return True
        found, _ = self.namespace_at(namespace, place)
        if found is None:
            return None
        labels = {k: v.text or "" for k, v in found.labels.items()}
        return any(selects(selector, labels) for selector in selectors.value)

    def service_count(self, place: Place, revision: str = "") -> int:
        """How many Services of the run a proxy at `place` is sent: those of namespaces istiod processes
        (a Service whose namespace discoverySelectors may leave out is not counted)."""
        units = self.units_of
        total = 0
        for namespace, found in self.services.items():
            if self.discovered(namespace, place, revision):
                total += len(found) if units is None else sum(1 for s in found if visible(self._placed(s.path), place, units))
        return total

    def _placed(self, path: str) -> Place:
        """Where a Service of the run is (one Place a file, however many Services it holds)."""
        found = self._places.get(path)
        if found is None:
            found = self._places[path] = Place.of(path)
        return found

    def service(self, name: str, namespace: str) -> ServiceTargets | None:
        """The Service `name` of `namespace`, if the run holds it (the first read, of several)."""
        return self._index(namespace).by_name.get(name)

    def _index(self, namespace: str) -> _ServiceIndex:
        index = self._indexed.get(namespace)
        if index is None:
            index = self._indexed[namespace] = _ServiceIndex(self.services.get(namespace, []))
        return index

    def decided_by(self, file: str, place: Place) -> tuple[bool, frozenset[str]]:
        """What the sources in `file` decide, or help decide, for a workload at `place` (§W2.6): whether
        any mesh-wide field or revision, and the namespaces whose definition or policy they give."""
        absolute = os.path.abspath(file)
        if any(p.path == file for p in self.revisions.values()) or any(t.origin.path == file for t in self.tags.values()):
            return True, frozenset()
        for claims in self.claims.values():
            if any(c.place.file == absolute for c in claims) and any(c.place.file == absolute for c in considered(claims, place, self.units_of)[0]):
                return True, frozenset()
        names = set()
        for name, found in self.namespaces.items():
            if any(where.file == absolute for _, where in found):
                claims = [Claim(Setting(None, None), where) for _, where in found]
                if any(c.place.file == absolute for c in considered(claims, place, self.units_of, everywhere=True)[0]):
                    names.add(name)
        for policy in self.peer_authentications:
            if policy.place.file == absolute:
                if policy.namespace == self.options.root_namespace:
                    return True, frozenset()
                names.add(policy.namespace)
        return False, frozenset(names)

    def revision_of(self, name: str) -> str | None:
        """The revision a pod or namespace `istio.io/rev` value selects: a revision, or a tag's
        revision; None when it names neither while the run declares revisions or tags."""
        name = _default(name)
        if name in self.tags:
            return self.tags[name].revision
        if not name or name in self.revisions:
            return name
        if self.revisions or self.tags:
            return None  # the run declares its revisions, and this is not one of them (§12.3.5)
        return name  # nothing in the run declares revisions: take the label at its word


def _created_namespace(resource: Resource) -> Namespace | None:
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


def _service_targets(resource: Resource) -> ServiceTargets:
    spec = resource.root.get("spec")
    selector = spec.get("selector")
    # A tree's thousands of Services are kept to the end of the run, and their namespaces, selector
    # keys and port names repeat: one copy of each.
    own = resource.name
    # `app: <its own name>` is the usual selector: one copy of the name for both.
    pairs = tuple((sys.intern(str(k)), own if v.text == own else v.text) for k, v in selector.items()) if selector.is_map else ()
    targets = []
    for port in spec.get("ports").elements():
        target = port.get("targetPort") if port.get("targetPort").exists else port.get("port")
        value, where = target.value, target.pos
        targets.append((sys.intern(value) if isinstance(value, str) else value, where.line, where.column))
    name = resource.root.path("metadata", "name")
    position = name.pos if name.exists else resource.root.pos
    return ServiceTargets(own, sys.intern(resource.namespace), pairs, position.path, tuple(targets), position.line, position.column)


def _linkerd_server(resource: Resource) -> LinkerdServer:
    spec = resource.root.get("spec")
    selector = spec.get("podSelector")
    labels = selector.get("matchLabels")
    if selector.get("matchExpressions").exists:
        chosen = None
    else:
        chosen = {str(k): v.text or "" for k, v in labels.items()} if labels.is_map else {}
    port = spec.get("port")
    return LinkerdServer(resource.name, resource.namespace, chosen, port.value, port.pos if port.exists else resource.root.pos)


def _peer_authentication(resource: Resource, place: Place) -> PeerAuthentication:
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


def _policy_field(slot: tuple[Any, ...], namespace: str, root: str) -> str:
    """How a conflict names the PeerAuthentication scope it is about."""
    if slot[0] == "mesh":
        return f"PeerAuthentication mesh-wide (namespace {root})"
    if slot[0] == "namespace":
        return f"PeerAuthentication namespace-wide (namespace {namespace})"
    return f"PeerAuthentication selecting {', '.join(f'{k}={v}' for k, v in slot[1])} (namespace {namespace})"


def _selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


def _mesh_keys(namespace: Namespace) -> tuple[tuple[str, str | None], ...]:
    """What of a Namespace decides injection, to compare two definitions of it."""
    keys = [(k, v.text) for k, v in namespace.labels.items() if k in NAMESPACE_MESH_LABELS]
    keys += [(k, v.text) for k, v in namespace.annotations.items() if k.startswith(LINKERD_CONFIG_PREFIXES) and not _injects_nothing(k, v)]
    return tuple(sorted(keys))


def _injects_nothing(key: str, value: Node) -> bool:
    """`linkerd.io/inject: disabled` (or "") on a namespace injects nothing, as no annotation does
    (reference §11.1.2): two definitions differing only in that agree."""
    return key == INJECT_ANNOTATION and value.text in ("", "disabled")


def _namespace_position(namespace: Namespace) -> Position | None:
    for node in (*namespace.labels.values(), *namespace.annotations.values()):
        return node.key_pos or node.pos
    return namespace.position


def _default(revision: str | None) -> str:
    name = (revision or "").strip()
    return "" if name in ("", "default") else name


class _ServiceIndex:
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


def _extend(mine: dict[K, list[V]], later: dict[K, list[V]]) -> None:
    for key, items in later.items():
        mine.setdefault(key, []).extend(items)


class _SignIndex:
    """The first sign of Istio (in path order) in each folder and in each unit: a workload looks in its
    folder and each folder above, then in its units."""

    def __init__(self, signs: Iterable[tuple[Place, Setting[str]]], units: Units) -> None:
        self.by_folder: dict[str, Setting[str]] = {}
        self.by_unit: dict[str, Setting[str]] = {}
        for where, sign in signs:
            _keep_first(self.by_folder, where.folder, sign)
            for unit in units.of(where.file) if units else ():
                _keep_first(self.by_unit, unit, sign)

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
        return min(in_units, key=_origin_key) if in_units else None


def _keep_first(table: dict[str, Setting[str]], key: str, sign: Setting[str]) -> None:
    known = table.get(key)
    if known is None or _origin_key(sign) < _origin_key(known):
        table[key] = sign


def _origin_key(sign: Setting[str]) -> tuple[str, int, int]:
    origin = sign.origin
    return (origin.path, origin.line, origin.column) if origin is not None else ("", 0, 0)


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
    if is_mesh_config(resource):
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
