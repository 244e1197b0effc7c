"""What the rules and the workload view ask of the mesh context (meshlint/mesh/context.py builds it): the
settings that hold at a place, a Namespace, the Services that select a pod, the mTLS mode a policy gives
a port, the Sidecar that scopes a proxy, whether a sign of Istio holds there."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from meshlint.findings import Position
from meshlint.mesh.clusterversion import KUBERNETES_VERSION
from meshlint.mesh.contextfacts import (
    LinkerdServer,
    OptedOut,
    PeerAuthentication,
    RevisionTag,
    ServiceIndex,
    ServiceTargets,
    SignIndex,
    default_revision,
    mesh_keys,
    namespace_position,
    policy_field,
    selects_labels,
)
from meshlint.mesh.injection import Namespace
from meshlint.mesh.meshsettings import MeshSettings, own_claim
from meshlint.mesh.options import MeshOptions
from meshlint.mesh.scope import Claim, Conflict, Place, UnitsOf, considered, distance, resolve, visible
from meshlint.mesh.setting import Setting
from meshlint.mesh.sources import (
    ISTIO_VERSION,
)
from meshlint.model.pod import PodTemplate
from meshlint.model.selectors import selects
from meshlint.source.units import Units

if TYPE_CHECKING:
    from meshlint.mesh.sidecars import SidecarConfig, SidecarScope
    from meshlint.model.resource import Resource

TAG_WEBHOOK_PREFIX = "istio-revision-tag-"
SETTINGS_KEPT = 64  # places whose settings `settings_at` remembers: a folder, or a file that holds a source
INJECTOR_WEBHOOK_PREFIX = "istio-sidecar-injector-"


ARGO_CD_API = "argoproj.io/"
WEBHOOK_KINDS = frozenset(("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"))




class ContextQueries:
    """The questions a built `MeshContext` answers; the state is the context's own (see its __init__)."""

    options: MeshOptions
    istio_in_use: Setting[str] | None
    signs: dict[str, tuple[Place, Setting[str]]]
    units: Units
    _sign_memo: dict[tuple[str, frozenset[str]], Setting[str] | None]
    _sign_index: SignIndex | None
    claims: dict[tuple[str, str], list[Claim]]
    namespaces: dict[str, list[tuple[Namespace, Place]]]
    peer_authentications: list[PeerAuthentication]
    sidecars: list[SidecarConfig]
    services: dict[str, list[ServiceTargets]]
    _indexed: dict[str, ServiceIndex]
    linkerd_servers: dict[str, list[LinkerdServer]]
    opted_out: dict[str, list[tuple[OptedOut, str]]]
    revisions: dict[str, Position]
    tags: dict[str, RevisionTag]
    webhook_services: set[tuple[str, str]]
    _settings: dict[tuple[Place | str, frozenset[str] | None, str], MeshSettings]
    _claim_files: frozenset[str] | None
    _places: dict[str, Place]

    @property
    def units_of(self) -> UnitsOf | None:
        """What decides which sources a workload may see besides its path (None: the path alone)."""
        return self.units.of if self.units else None


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
            self._sign_index = SignIndex(self.signs.values(), self.units)
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
                if field in (ISTIO_VERSION, KUBERNETES_VERSION) and not own_claim(claims, place, units):
                    continue  # a release stated elsewhere (another sample's install) says nothing of this workload
                setting, conflict = resolve(field, claims, place, units)
                if setting is not None:
                    resolved[field] = setting
                if conflict is not None and field not in (ISTIO_VERSION, KUBERNETES_VERSION):  # two releases (an upgrade under way) decide nothing, and conflict in nothing
                    conflicts.append(conflict)
            if len(self._settings) >= SETTINGS_KEPT:
                # The second pass asks about one folder's places at a time: a memo of every place
                # would grow with the tree for no hit.
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
            claim = Claim(Setting(mesh_keys(namespace), namespace_position(namespace)), where)
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
        sees = self._sees(template)
        return [s for s in self._index(template.owner.namespace).candidates(labels) if _selects(s, labels) and sees(s.path)]

    def _sees(self, template: PodTemplate) -> Callable[[str], bool]:
        """Whether a file's Service (or pod) counts for this pod: on its path, in one of its units, or in
        none (wave-3 spec V1)."""
        units = self.units_of
        if units is None:
            return lambda path: True
        place = Place.of(template.owner.path)
        return lambda path: visible(self._placed(path), place, units)

    def leads_outside_mesh(self, template: PodTemplate, port: int) -> bool:
        """Has a connection from this pod to `port` no mesh mTLS to lose? Yes when every Service of its
        namespace that it may see and that serves `port` selects a pod that refuses injection; no when
        no Service of the run serves it (the destination is unknown)."""
        namespace = template.owner.namespace
        opted = self.opted_out.get(namespace)
        if not opted:
            return False
        sees = self._sees(template)
        serving = [s for s in self.services.get(namespace, []) if port in s.numbers and sees(s.path)]
        return bool(serving) and all(any(s.selector and _selects(s, o.labels) and sees(path) for o, path in opted) for s in serving)

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
        slots = self._policy_slots(namespace, labels, place, root)
        chosen, conflicts = self._chosen_policies(slots, namespace, place, root)
        return _mode_of(chosen, port), conflicts

    def _policy_slots(self, namespace: str, labels: dict[str, str], place: Place | None, root: str) -> dict[tuple[Any, ...], list[PeerAuthentication]]:
        """The policies that could apply here, by scope: the mesh's, the namespace's, each selector's."""
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
            elif policy.namespace == namespace and namespace != root and policy.selector is not None and selects_labels(policy.selector, labels):
                slots.setdefault(("selector", tuple(sorted(policy.selector.items()))), []).append(policy)
        return slots

    def _chosen_policies(
        self, slots: dict[tuple[Any, ...], list[PeerAuthentication]], namespace: str, place: Place | None, root: str,
    ) -> tuple[dict[str, list[PeerAuthentication]], list[Conflict]]:
        """Of several policies for one scope, the nearest to `place`; policies that disagree decide nothing."""
        chosen: dict[str, list[PeerAuthentication]] = {"mesh": [], "namespace": [], "selector": []}
        conflicts: list[Conflict] = []
        for slot, policies in sorted(slots.items()):
            if len(policies) == 1 or place is None:
                chosen[slot[0]].extend(policies)
                continue
            claims = [p.claim for p in policies]
            # Versions of one object (one name) in several files are never applied together (V2.5).
            one = len({p.name for p in policies}) == 1
            setting, conflict = resolve(policy_field(slot, namespace, root), claims, place, self.units_of, same_object=one)
            if conflict is not None:
                conflicts.append(conflict)
            if setting is not None:
                chosen[slot[0]].append(next(p for p, c in zip(policies, claims, strict=True) if c.setting is setting))
        return chosen, conflicts

    def sidecar_scope(self, namespace: str, labels: dict[str, str] | None, place: Place, root: str | None = None) -> SidecarScope:
        """The Sidecar that scopes a proxy of `namespace` with these pod labels at `place` (labels None:
        what the namespace as a whole gets), reference §13.2."""
        from meshlint.mesh.sidecars import scope_of

        units = self.units_of
        seen = self.sidecars if units is None else [s for s in self.sidecars if visible(s.place, place, units)]
        return scope_of(seen, namespace, labels, place, root if root is not None else self.options.root_namespace)

    def sidecar_of(self, resource: Resource) -> SidecarConfig | None:
        """The Sidecar `resource` declares, as this context read it (read here only for a resource the
        first pass never saw)."""
        from meshlint.mesh.sidecars import read_sidecar, sidecar_position

        at = sidecar_position(resource)
        return next((s for s in self.sidecars if s.position == at), None) or read_sidecar(resource, Place.of(resource.path))

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

    def _index(self, namespace: str) -> ServiceIndex:
        index = self._indexed.get(namespace)
        if index is None:
            index = self._indexed[namespace] = ServiceIndex(self.services.get(namespace, []))
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
        name = default_revision(name)
        if name in self.tags:
            return self.tags[name].revision
        if not name or name in self.revisions:
            return name
        if (self.revisions or self.tags) and not any(map(_placeholder, (*self.revisions, *self.tags))):
            return None  # the run declares its revisions, and this is not one of them (§12.3.5)
        # Nothing in the run declares revisions, or one is a template's placeholder (`$REVISION`, for
        # envsubst): what they are is not known here, so take the label at its word.
        return name


def _selects(service: ServiceTargets, labels: dict[str, Any]) -> bool:
    """Does the Service's selector hold for these pod labels? (A null value asks for the label's absence.)"""
    return all(labels.get(k) == v for k, v in service.selector)


def _placeholder(revision: str) -> bool:
    """Not a revision's name (a DNS label) but a template's: `$REVISION`, `${REV}`, `{{ .Values.revision }}`."""
    return any(c not in _REVISION_CHARACTERS for c in revision)


_REVISION_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-.")


def _mode_of(chosen: dict[str, list[PeerAuthentication]], port: int | None) -> Setting[Any]:
    """Selector over namespace over mesh; UNSET inherits; a selector policy's port-level mode for `port`."""
    mode: Setting[Any] = Setting("PERMISSIVE", None)
    for scope in ("mesh", "namespace", "selector"):
        for policy in chosen[scope]:
            if policy.mode is not None and policy.mode.value not in (None, "UNSET"):
                mode = policy.mode
            if port is not None and scope == "selector" and port in policy.port_modes:
                port_mode = policy.port_modes[port]
                if port_mode.value not in (None, "UNSET"):
                    mode = port_mode
    return mode
