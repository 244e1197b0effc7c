"""The mesh context: the mesh-wide facts of a run, collected once, then asked about each workload.

Rules never work these facts out themselves. Every effective value is a `Setting` whose origin is the
file and line that decided it (or the built-in default), so messages can say
"holdApplicationUntilProxyStarts is false (istio-operator.yaml:12)". Reference: mesh-semantics.md.
The context keeps small facts, never documents: a tree with thousands of Services keeps thousands of
`ServiceTargets`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from meshlint.findings import Position
from meshlint.mesh.clusterversion import CLUSTER_KINDS, KUBERNETES_VERSION, cluster_version
from meshlint.mesh.contextfacts import (
    LinkerdServer,
    OptedOut,
    PeerAuthentication,
    RevisionTag,
    ServiceIndex,
    ServiceTargets,
    SignIndex,
    created_namespace,
    default_revision,
    extend,
    istio_sign_of,
    linkerd_server_of,
    opted_out_of,
    origin_key,
    peer_authentication_of,
    service_targets_of,
)
from meshlint.mesh.contextqueries import ContextQueries
from meshlint.mesh.envsources import EnvSources
from meshlint.mesh.injection import Namespace
from meshlint.mesh.istio import (
    REV_LABEL,
)
from meshlint.mesh.linkerd import LINKERD_API_SUFFIX
from meshlint.mesh.meshsettings import MeshSettings
from meshlint.mesh.options import MeshOptions
from meshlint.mesh.scope import Claim, Place
from meshlint.mesh.setting import Setting
from meshlint.mesh.sources import (
    MeshSource,
    is_mesh_config,
    mesh_source,
)
from meshlint.model.kinds import LINKERD_HELM_VALUES, LINKERD_SERVER, WORKLOAD_KINDS
from meshlint.model.resource import Resource
from meshlint.source.units import Units

if TYPE_CHECKING:
    from meshlint.mesh.sidecars import SidecarConfig

TAG_WEBHOOK_PREFIX = "istio-revision-tag-"
SETTINGS_KEPT = 64  # places whose settings `settings_at` remembers: a folder, or a file that holds a source
INJECTOR_WEBHOOK_PREFIX = "istio-sidecar-injector-"


ARGO_CD_API = "argoproj.io/"
WEBHOOK_KINDS = frozenset(("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"))


class MeshContext(ContextQueries):
    """Built once from every input and `mesh.context` file, then asked about each workload (the questions:
    meshlint/mesh/contextqueries.py)."""

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
        self._sign_index: SignIndex | None = None
        # Folders with a file that shows a sign, each with the units those files are in: a later file of
        # the folder in no other unit cannot change which sign holds anywhere, so it is not scanned.
        self._signed_folders: dict[str, frozenset[str]] = {}
        self._scan: tuple[str, bool] = ("", True)  # the last file asked about, and the answer
        self.claims: dict[tuple[str, str], list[Claim]] = {}  # (revision, field) -> what sources say
        self.namespaces: dict[str, list[tuple[Namespace, Place]]] = {}
        self.peer_authentications: list[PeerAuthentication] = []
        self.sidecars: list[SidecarConfig] = []
        self.services: dict[str, list[ServiceTargets]] = {}  # by namespace: a pod only meets its own
        self._indexed: dict[str, ServiceIndex] = {}  # by namespace, made when first asked (service_targets, service)
        self.linkerd_servers: dict[str, list[LinkerdServer]] = {}  # by namespace
        self.opted_out: dict[str, list[tuple[OptedOut, str]]] = {}  # by namespace, with the file each is in
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
        if kind in WORKLOAD_KINDS:  # istiod's own Deployment opts out too, and is a mesh source below
            for opted in opted_out_of(resource):
                self.opted_out.setdefault(opted.namespace, []).append((opted, resource.path))
        if kind == "Namespace":
            self.namespaces.setdefault(resource.name, []).append((_namespace(resource), where))
        elif kind == "Service":
            service = service_targets_of(resource)
            self.services.setdefault(service.namespace, []).append(service)
            self._indexed.pop(service.namespace, None)
        elif kind == "PeerAuthentication":
            self.peer_authentications.append(peer_authentication_of(resource, where))
        elif kind == "Sidecar":
            from meshlint.mesh.sidecars import read_sidecar  # a run without Sidecars never loads their reader

            sidecar = read_sidecar(resource, where)
            if sidecar is not None:
                self.sidecars.append(sidecar)
        elif kind == "Application" and resource.api_version.startswith(ARGO_CD_API):
            created = created_namespace(resource)
            if created is not None:
                self.namespaces.setdefault(created.name, []).append((created, where))
        elif kind in WEBHOOK_KINDS:
            if kind == "MutatingWebhookConfiguration":
                self._note_tag(resource)
            self.webhook_services.update(_webhook_services(resource))
        elif kind == LINKERD_HELM_VALUES:
            from meshlint.mesh import linkerdsource

            for key, setting in linkerdsource.claims(resource):
                self.claims.setdefault(("", key), []).append(Claim(setting, where))
            self._claims_changed()
        elif kind == LINKERD_SERVER and resource.api_version.split("/", 1)[0].endswith(LINKERD_API_SUFFIX):
            server = linkerd_server_of(resource)
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
        extend(self.claims, later.claims)
        extend(self.namespaces, later.namespaces)
        extend(self.services, later.services)
        self._indexed.clear()
        extend(self.linkerd_servers, later.linkerd_servers)
        extend(self.opted_out, later.opted_out)
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
            self.tags.setdefault(tag, RevisionTag(tag, default_revision(label.text), resource.root.pos))
        elif name.startswith(INJECTOR_WEBHOOK_PREFIX):
            # Every object of a revision carries its istio.io/rev label; the name's suffix may be a namespace.
            revision = default_revision(label.text) if label is not None else default_revision(name[len(INJECTOR_WEBHOOK_PREFIX) :])
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
        sign = istio_sign_of(resource)
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
        index = SignIndex(self.signs.values(), self.units)
        parts = [f"{k}\0{origin_key(v)}\0{v.value}" for table in (index.by_folder, index.by_unit) for k, v in sorted(table.items())]
        return "\1".join(parts)

    def set_units(self, units: Units) -> None:
        """The run's deployment units, known once its files are: what they change is asked anew."""
        self.units = units
        for sign in units.signs:
            if sign.path not in self.signs:
                self.signs[sign.path] = (Place.of(sign.path), Setting(f"{sign.key} in a Kustomization", Position(sign.path, sign.line, sign.column)))
        self._sign_memo.clear()
        self._sign_index = None
        self._claims_changed()


def _namespace(resource: Resource) -> Namespace:
    """What a Namespace object says of the meshes: its labels and annotations, kept without the document."""
    name = resource.root.path("metadata", "name")
    position = name.pos if name.exists else resource.root.pos
    labels = {key: node.detached() for key, node in resource.labels.items()}
    annotations = {key: node.detached() for key, node in resource.annotations.items()}
    return Namespace(resource.name, labels, annotations, position)


def _webhook_services(resource: Resource) -> Iterator[tuple[str, str]]:
    """(namespace, name) of each Service an admission webhook configuration calls."""
    for hook in resource.root.get("webhooks").elements():
        called = hook.path("clientConfig", "service")
        service_name, service_namespace = called.get("name").text, called.get("namespace").text
        if service_name and service_namespace:
            yield service_namespace, service_name
