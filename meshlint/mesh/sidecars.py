"""Istio `Sidecar` resources: which one scopes a proxy, and which hosts it imports (reference §13).

istiod gives a proxy the Sidecar of its own namespace whose `workloadSelector` labels are a subset of
the pod's labels (selector Sidecars first), else the namespace's Sidecar without a selector, else the
root namespace's Sidecar without a selector, else the default scope: every Service in the mesh
(`pilot/pkg/model/push_context.go` `doGetSidecarScope`). Two selector-less Sidecars in a namespace,
or two selectors matching one pod, are undefined behaviour (proto NOTE 1).

Which Sidecars meet a workload is decided by nearness, as for PeerAuthentications (wave-2 spec §W2):
of a namespace's Sidecars, those nearest on the workload's path, else all of them when they sit in one
folder or agree; Sidecars of one namespace in several unrelated folders decide nothing.
"""

from typing import Any, NamedTuple

from meshlint.findings import Position
from meshlint.mesh.istio import CLUSTER_DOMAIN
from meshlint.mesh.scope import Place, distance
from meshlint.mesh.setting import Setting
from meshlint.model.resource import Resource

NETWORKING_GROUP = "networking.istio.io"


class EgressListener(NamedTuple):
    port: int | None  # None: the catch-all listener
    hosts: tuple[Setting[str], ...]  # `namespace/dnsName` entries as written


class SidecarConfig(NamedTuple):
    """What the mesh context keeps of a Sidecar."""

    name: str
    namespace: str
    selector: dict[str, str] | None  # workloadSelector.labels ({} selects every pod); None: no selector
    selector_position: Position | None
    egress: tuple[EgressListener, ...]  # empty: Istio's default listener, importing `*/*`
    outbound_policy: Setting[Any] | None  # spec.outboundTrafficPolicy.mode, overriding the mesh's
    place: Place
    position: Position  # metadata.name (the object itself when it has none)

    @property
    def title(self) -> str:
        return f"Sidecar {self.name or '(unnamed)'} ({self.position.path}:{self.position.line})"

    @property
    def facts(self) -> tuple[Any, ...]:
        """What it says, to tell copies of one Sidecar from different ones."""
        selector = tuple(sorted(self.selector.items())) if self.selector is not None else None
        egress = tuple((e.port, tuple(h.value for h in e.hosts)) for e in self.egress)
        policy = self.outbound_policy.value if self.outbound_policy is not None else None
        return self.name, self.namespace, selector, egress, policy

    def selects(self, labels: dict[str, str]) -> bool:
        return self.selector is not None and all(labels.get(k) == v for k, v in self.selector.items())

    def imports(self, namespace: str, name: str, port: int | None, proxy_namespace: str | None = None) -> Setting[str] | None:
        """The egress host entry that imports Service `name` of `namespace` (on `port`, when known) for a
        proxy of `proxy_namespace` (by default the Sidecar's own), or None. `.` is the proxy's namespace:
        the root namespace's default Sidecar imports each namespace's own Services with `./*`
        (`convertToSidecarScope` resolves it per proxy namespace). A Sidecar without egress imports
        everything, cited as its own position."""
        if not self.egress:
            return Setting("*/* (no egress listeners)", self.position)
        fqdn = f"{name}.{namespace}.svc.{CLUSTER_DOMAIN}"
        for listener in self.egress:
            if listener.port is not None and port is not None and listener.port != port:
                continue
            for entry in listener.hosts:
                if _matches(entry.value, self.namespace if proxy_namespace is None else proxy_namespace, namespace, name, fqdn):
                    return entry
        return None

    @property
    def host_entries(self) -> list[str]:
        return list(dict.fromkeys(h.value for e in self.egress for h in e.hosts))


class SidecarScope(NamedTuple):
    """The Sidecar that scopes one proxy (None: the default scope, every Service in the mesh), how it
    was chosen, or the Sidecars that make the choice undefined."""

    sidecar: SidecarConfig | None
    how: str = ""
    ambiguous: tuple[SidecarConfig, ...] = ()
    undecided: bool = False  # its namespace's Sidecars lie in unrelated folders: no telling which applies


def read_sidecar(resource: Resource, place: Place) -> SidecarConfig | None:
    """The Sidecar's facts, or None when it is not Istio's `Sidecar` kind."""
    if resource.kind != "Sidecar" or resource.api_version.split("/", 1)[0] != NETWORKING_GROUP:
        return None
    spec = resource.root.get("spec")
    selector_node = spec.get("workloadSelector")
    selector = None
    if selector_node.exists and selector_node.value is not None:
        labels = selector_node.get("labels")
        selector = {str(k): v.text or "" for k, v in labels.items()} if labels.is_map else {}
    egress = []
    for listener in spec.get("egress").elements():
        number = listener.path("port", "number").value
        port = number if isinstance(number, int) and not isinstance(number, bool) else None
        hosts = tuple(Setting(h.text, h.pos) for h in listener.get("hosts").elements() if h.text)
        egress.append(EgressListener(port, hosts))
    mode = spec.path("outboundTrafficPolicy", "mode")
    return SidecarConfig(
        name=resource.name,
        namespace=resource.namespace,
        selector=selector,
        selector_position=(selector_node.key_pos or selector_node.pos) if selector is not None else None,
        egress=tuple(egress),
        outbound_policy=Setting(mode.text, mode.pos) if mode.exists and mode.text else None,
        place=place,
        position=sidecar_position(resource),
    )


def sidecar_position(resource: Resource) -> Position:
    """Where a Sidecar is said to be: its name, or the object where it has none."""
    name = resource.root.path("metadata", "name")
    return name.pos if name.exists else resource.root.pos


def _matches(entry: str, own_namespace: str, namespace: str, name: str, fqdn: str) -> bool:
    """Does the egress host `namespace/dnsName` import the Service (`pilot/pkg/model/sidecar.go`)?"""
    if entry.count("/") != 1:
        return False  # istiod logs and skips it
    ns, _, dns = entry.partition("/")
    if ns.startswith("~"):
        # `~/...` imports nothing; `~ns/host` is an exclusion only from Istio 1.31 on and a namespace
        # no Service has before: either way it imports nothing.
        return False
    if ns == ".":
        ns = own_namespace
    if ns not in ("*", namespace):
        return False
    dns = dns.lower().rstrip(".")
    if dns == "*":
        return True
    if dns.startswith("*."):
        return fqdn.endswith(dns[1:])
    # An exact name is the Service's FQDN; any cluster domain is taken, as meshlint cannot know it.
    return dns == fqdn or dns.startswith(f"{name}.{namespace}.svc.")


def nearest(group: list[SidecarConfig], place: Place) -> list[SidecarConfig] | None:
    """The Sidecars of `group` that meet a workload at `place`: the nearest on its path, else all of
    them when they lie in one folder or say the same; None when they lie in unrelated folders and
    differ. One object (a namespace and a name) counts once, as written first."""
    if not group:
        return []
    on_path = [(d, s) for s in group if (d := distance(s.place, place)) is not None]
    if on_path:
        best = min(d for d, _ in on_path)
        chosen = [s for d, s in on_path if d == best]
    elif len({s.place.folder for s in group}) == 1 or len({s.facts for s in group}) == 1:
        chosen = group
    else:
        return None
    unique: dict[str, SidecarConfig] = {}
    for sidecar in sorted(chosen, key=_order):
        unique.setdefault(sidecar.name, sidecar)
    return list(unique.values())


def scope_of(sidecars: list[SidecarConfig], namespace: str, labels: dict[str, str] | None, place: Place, root: str) -> SidecarScope:
    """The Sidecar that scopes a proxy of `namespace` with these pod labels (None: the namespace as a
    whole, what a pod no selector matches gets) at `place`."""
    own = [s for s in sidecars if s.namespace == namespace and (namespace or distance(s.place, place) is not None)]
    if labels is not None:
        selecting = nearest([s for s in own if s.selector is not None], place)
        if selecting is None:
            return SidecarScope(None, undecided=True)
        matching = [s for s in selecting if s.selects(labels)]
        if len(matching) > 1:
            return SidecarScope(None, "workloadSelector", ambiguous=tuple(matching))
        if matching:
            labels_text = ", ".join(f"{k}={v}" for k, v in sorted((matching[0].selector or {}).items())) or "every pod"
            return SidecarScope(matching[0], f"its workloadSelector ({labels_text}) matches the pod")
    for group, how in ((own, f"it has no workloadSelector in namespace {namespace}"), (_root(sidecars, root, namespace), f"it is the mesh-wide default in the root namespace {root}")):
        found = nearest([s for s in group if s.selector is None], place)
        if found is None:
            return SidecarScope(None, undecided=True)
        if len(found) > 1:
            return SidecarScope(None, "no workloadSelector", ambiguous=tuple(found))
        if found:
            return SidecarScope(found[0], how)
    return SidecarScope(None, "no Sidecar applies")


def clashes(sidecars: list[SidecarConfig], sidecar: SidecarConfig) -> list[SidecarConfig]:
    """Other Sidecars applied with this one (same namespace, same folder) that match every pod it
    matches: both without a selector, or selectors one of which holds the other's labels."""
    found = []
    for other in sorted(sidecars, key=_order):
        if other.name == sidecar.name or other.namespace != sidecar.namespace or other.place.folder != sidecar.place.folder:
            continue
        if (sidecar.selector is None and other.selector is None) or (sidecar.selector is not None and other.selector is not None and _nested(sidecar.selector, other.selector)):
            found.append(other)
    return list({s.name: s for s in found}.values())


def _nested(a: dict[str, str], b: dict[str, str]) -> bool:
    small, large = (a, b) if len(a) <= len(b) else (b, a)
    return all(large.get(k) == v for k, v in small.items())


def nested(a: SidecarConfig, b: SidecarConfig) -> bool:
    """Do the two selectors match the same pods, or one every pod the other matches?"""
    return a.selector is not None and b.selector is not None and _nested(a.selector, b.selector)


def _root(sidecars: list[SidecarConfig], root: str, namespace: str) -> list[SidecarConfig]:
    return [s for s in sidecars if s.namespace == root and namespace != root]


def _order(sidecar: SidecarConfig) -> tuple[str, int, int]:
    return sidecar.position.path, sidecar.position.line, sidecar.position.column
