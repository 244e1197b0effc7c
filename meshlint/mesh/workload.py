"""The workload view: everything a rule may know about one workload's mesh setup, each effective value
with where it came from. Built once per workload in the second pass, from the mesh context."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from meshlint.findings import Position
from meshlint.memo import cached_property
from meshlint.mesh import ambient
from meshlint.mesh.classification import (
    ISTIO_AMBIENT,
    ISTIO_GATEWAY,
    ISTIO_SIDECAR,
    LINKERD,
    Classification,
    agent_only,
    injection_templates,
)
from meshlint.mesh.facts.commands import CommandModel
from meshlint.mesh.facts.durations import parse_duration
from meshlint.mesh.facts.interception import Interception
from meshlint.mesh.facts.proxyconfig import ProxyConfigAnnotation
from meshlint.mesh.facts.webhookinit import WebhookInit, webhook_inits
from meshlint.mesh.injection import Namespace, injected_proxy
from meshlint.mesh.istio import (
    ALWAYS_EXCLUDED_INBOUND,
    CAPTURE_INIT_CONTAINERS,
    DATAPLANE_MODE,
    DEFAULT_MINIMUM_DRAIN,
    EXIT_ON_ZERO,
    GATEWAY_TEMPLATES_ANNOTATION,
    GO_TRUE,
    INJECTED_INIT_CONTAINERS,
    MINIMUM_DRAIN,
    PROXY_CONTAINER,
    STATUS_PORT_ANNOTATION,
)
from meshlint.mesh.options import MeshOptions, at_least
from meshlint.mesh.podfacts import Dependency, PodFacts
from meshlint.mesh.scope import Conflict, Place
from meshlint.mesh.setting import Setting
from meshlint.model.pod import PROBE_ROLES, Container, PodTemplate
from meshlint.source.document import Node

if TYPE_CHECKING:
    from meshlint.mesh.context import MeshContext
    from meshlint.mesh.facts.probes import Probe
    from meshlint.mesh.meshsettings import MeshSettings
    from meshlint.mesh.sidecars import SidecarScope

VERSIONS_UNKNOWN = "Istio/Kubernetes versions unknown"
HOLD = "holdApplicationUntilProxyStarts"


class WorkloadView(PodFacts):
    """Everything the rules need to know about one workload's mesh setup."""

    mesh: MeshContext
    template: PodTemplate
    classification: Classification
    proxy_config: dict[str, Setting[Any]]  # effective ProxyConfig fields by JSON name
    proxy_metadata: dict[str, Setting[Any]]
    annotation: ProxyConfigAnnotation | None
    native: Setting[bool]  # note says why
    hold: Setting[Any]  # bool
    hold_override: Setting[Any] | None  # Helm global.proxy.lifecycle, which replaces the hold hook
    startup_probe_off: Setting[Any] | None
    grace_period: Setting[Any]  # int seconds, None when not a number
    drain: Setting[Any]  # float seconds, None when not a valid duration
    interception: dict[str, Interception]  # traffic.sidecar.istio.io/* knobs, by name
    interception_mode: Setting[Any]  # REDIRECT, TPROXY or NONE (or what was written)
    settings: MeshSettings  # the mesh-wide settings where it is, for its revision
    options: MeshOptions  # its governing config's mesh options and versions
    place: Place
    namespace: Namespace | None  # the Namespace object that decides for it, if the run holds one
    conflicts: list[Conflict]  # mesh-wide sources that disagree where it is (ML006)
    written_proxy: Container | None  # kube-inject's istio-proxy, when it stands as written
    _models: dict[int, CommandModel]

    def __init__(
        self,
        mesh: MeshContext,
        template: PodTemplate,
        classification: Classification,
        proxy_config: dict[str, Setting[Any]],
        proxy_metadata: dict[str, Setting[Any]],
        annotation: ProxyConfigAnnotation | None,
        native: Setting[bool],
        hold: Setting[Any],
        hold_override: Setting[Any] | None,
        startup_probe_off: Setting[Any] | None,
        grace_period: Setting[Any],
        drain: Setting[Any],
        interception: dict[str, Interception],
        interception_mode: Setting[Any],
        settings: MeshSettings,
        options: MeshOptions,
        place: Place,
        namespace: Namespace | None,
        conflicts: list[Conflict],
        written_proxy: Container | None = None,
    ) -> None:
        self.mesh = mesh
        self.template = template
        self.classification = classification
        self.proxy_config = proxy_config
        self.proxy_metadata = proxy_metadata
        self.annotation = annotation
        self.native = native
        self.hold = hold
        self.hold_override = hold_override
        self.startup_probe_off = startup_probe_off
        self.grace_period = grace_period
        self.drain = drain
        self.interception = interception
        self.interception_mode = interception_mode
        self.settings = settings
        self.options = options
        self.place = place
        self.namespace = namespace
        self.conflicts = conflicts
        self.written_proxy = written_proxy
        self._models = {}

    @property
    def istio_sidecar(self) -> bool:
        """Istio injects a sidecar into this pod (classic or native)."""
        return self.classification.mesh == ISTIO_SIDECAR

    @property
    def istio_gateway(self) -> bool:
        """An Istio gateway: its proxy is the workload, so only the proxy's own shutdown applies."""
        return self.classification.mesh == ISTIO_GATEWAY

    @property
    def linkerd(self) -> bool:
        return self.classification.mesh == LINKERD

    @property
    def istio_ambient(self) -> bool:
        """Enrolled in ambient mode: ztunnel on its node carries its traffic, no sidecar."""
        return self.classification.mesh == ISTIO_AMBIENT

    @property
    def agent_only(self) -> bool:
        """Istio's `grpc-agent` template: its istio-proxy only serves the app's certificates and xDS,
        and captures no traffic, so nothing the app sends waits on it."""
        return self.istio_sidecar and agent_only(self.template) is not None

    @property
    def classic_sidecar(self) -> bool:
        return self.istio_sidecar and not self.native.value

    @property
    def native_sidecar(self) -> bool:
        return self.istio_sidecar and bool(self.native.value)

    @property
    def classic_istio_proxy(self) -> bool:
        """An istio-proxy that the kubelet stops with the other containers: a classic sidecar, or a
        gateway's own proxy container."""
        return self.classic_sidecar or self.istio_gateway

    # --- Linkerd -----------------------------------------------------------------------------------
    @property
    def classic_linkerd(self) -> bool:
        return self.linkerd and not self.linkerd_proxy.native.value

    @property
    def native_linkerd(self) -> bool:
        return self.linkerd and bool(self.linkerd_proxy.native.value)

    # --- ProxyConfig and drain ---------------------------------------------------------------------

    @property
    def pod_hold(self) -> Setting[Any] | None:
        """holdApplicationUntilProxyStarts as the pod's own proxy.istio.io/config writes it."""
        setting = self.proxy_config.get(HOLD)
        return setting if setting is not None and setting.local else None

    @property
    def exit_on_zero(self) -> Setting[Any] | None:
        """proxyMetadata EXIT_ON_ZERO_ACTIVE_CONNECTIONS when it is true: the agent then ignores
        terminationDrainDuration, waits MINIMUM_DRAIN_DURATION and exits once connections reach zero."""
        setting = self.proxy_metadata.get(EXIT_ON_ZERO)
        return setting if setting is not None and setting.value in GO_TRUE else None

    @property
    def minimum_drain(self) -> Setting[Any]:
        """proxyMetadata MINIMUM_DRAIN_DURATION in seconds (default 5s); value None when not a duration."""
        setting = self.proxy_metadata.get(MINIMUM_DRAIN)
        if setting is None:
            return Setting(parse_duration(DEFAULT_MINIMUM_DRAIN), None)
        return setting.derived(parse_duration(setting.value))

    # --- probes ------------------------------------------------------------------------------------

    @cached_property
    def probe_rewrite(self) -> Setting[bool]:
        """Whether the injector hands this pod's probes to the agent, and what decided it (reference §15)."""
        from meshlint.mesh.facts.probes import rewrite  # only runs whose pods have probes read them

        # kube-inject output in a namespace the webhook injects is injected again, probes rewritten anew.
        reinjected = self.written_proxy is None and injected_proxy(self.template) is not None
        return rewrite(self.template, self.settings.rewrite_probes, self.options.versions.istio, reinjected)

    @cached_property
    def probes(self) -> list[Probe]:
        """The probes of the app's own containers (regular and native sidecars, not istio-proxy)."""
        containers = [c for c in self.template.all_containers if c.name != PROXY_CONTAINER and any(c.node.get(r).exists for r in PROBE_ROLES)]
        if not containers:
            return []
        from meshlint.mesh.facts.probes import probes

        return [p for c in containers for p in probes(c)]

    @cached_property
    def probes_to_sidecar(self) -> list[tuple[Probe, str]]:
        """The probes the kubelet sends to istio-proxy, each with why it is not rewritten: an Istio
        sidecar, a probe the agent does not take over, on a port the sidecar captures."""
        if not self.istio_sidecar or not self.probes:
            return []
        from meshlint.mesh.facts.probes import not_rewritten

        found = []
        for probe in self.probes:
            why = not_rewritten(probe, self.probe_rewrite, self.options.versions.istio) if probe.port is not None else None
            if why is not None and probe.action != "exec" and probe.port is not None and self.inbound_captured(probe.port):
                found.append((probe, why))
        return found

    @cached_property
    def istio_cni(self) -> Setting[Any] | None:
        """Istio CNI sets up this pod's capture: an injected manifest with istio-validation (and no
        istio-init), else the mesh-wide switch."""
        proxy = self.injected_proxy
        if proxy is not None:
            names = {c.name: c for c in self.template.init_containers}
            validation = names.get("istio-validation")
            if validation is not None and "istio-init" not in names:
                return Setting(True, validation.position, "the injected manifest's istio-validation container", local=True)
            return None
        return self.settings.istio_cni

    @cached_property
    def webhook_inits(self) -> list[WebhookInit]:
        """Network-using init containers other webhooks add (Vault agent, bank-vaults), from annotations."""
        return webhook_inits(self.template) if self.template.annotations() else []

    def outbound_port_excluded(self, port: int) -> Interception | None:
        """The exclusion that lets outbound traffic to `port` past istio-proxy, if one does."""
        exclude = self.interception["excludeOutboundPorts"]
        if exclude.parsed.problem is None and port in exclude.parsed.items:
            return exclude
        return None

    @cached_property
    def no_capture(self) -> Setting[Any] | None:
        """Why the pod gets no traffic capture at all, if it gets none: interception mode NONE, injection
        templates without `sidecar` (proxyless gRPC's `grpc-agent` and `grpc-simple`, a custom one), or an
        injected manifest without Istio's capture init container (istio-init, or istio-validation with CNI)."""
        if self.interception_mode.value == "NONE":
            return self.interception_mode
        names, templates = injection_templates(self.template)
        if templates is not None and "sidecar" not in names:
            return Setting(templates.text, templates.pos, f'{GATEWAY_TEMPLATES_ANNOTATION}: "{templates.text}" injects no sidecar template', local=True)
        if self.injected_proxy is not None and not any(c.name in CAPTURE_INIT_CONTAINERS for c in self.template.init_containers):
            return Setting(None, self.injected_proxy.position, "the injected manifest has no istio-init or istio-validation container")
        return None

    def inbound_captured(self, port: int) -> bool:
        """Does istio-proxy capture inbound connections to this port? Not without capture at all, not for
        Istio's own ports, and only as includeInboundPorts and excludeInboundPorts say (a value the
        injector rejects captures nothing: the pod is never created)."""
        if self.no_capture is not None or port in ALWAYS_EXCLUDED_INBOUND:
            return False
        include, exclude = self.interception["includeInboundPorts"].parsed, self.interception["excludeInboundPorts"].parsed
        if include.problem is not None or exclude.problem is not None:
            return False
        if not include.everything:
            return port in include.items
        return port not in exclude.items

    @cached_property
    def native_drain(self) -> Setting[Any] | None:
        """The native sidecar's own drain, when it is in effect: the injected preStop `pilot-agent request
        POST drain` (Istio 1.21+), after which the agent exits at once on SIGTERM, so the drain settings
        are never waited on (reference §14.4). Not with Helm global.proxy.lifecycle (it replaces the
        hook), nor with status port 0 (the hook then fails)."""
        if not self.native_sidecar:
            return None
        proxy = self.injected_proxy
        if proxy is not None:
            command = proxy.node.path("lifecycle", "preStop", "exec", "command")
            words = [n.text or "" for n in command.elements()]
            drains = "drain" in words and any(w.endswith("pilot-agent") for w in words)
            return Setting(True, command.pos, "the injected istio-proxy's preStop starts its drain") if drains else None
        if self.hold_override is not None:
            return None
        port = self.template.annotations().get(STATUS_PORT_ANNOTATION)
        if port is not None and port.text == "0":
            return None
        istio = self.options.versions.istio
        if istio is not None and not at_least(istio, "1.21"):
            return None  # 1.19-1.20 native sidecars had no preStop: SIGTERM drained as for classic ones
        return Setting(True, None, "its injected preStop starts the drain when the pod begins terminating (Istio 1.21+)")

    # --- traffic -----------------------------------------------------------------------------------

    @cached_property
    def service_targets(self) -> dict[int, list[Setting[str]]]:
        """Container ports that a Service selecting this pod sends traffic to, with the Service."""
        return self.mesh.service_targets(self.template)

    def mtls_mode(self, port: int | None = None) -> Setting[Any]:
        """The PeerAuthentication mode in force for this pod (on `port`, when given)."""
        labels = {k: v.text or "" for k, v in self.template.labels().items()}
        mode, _ = self.mesh.mtls_mode(self.owner.namespace, labels, port, self.place, self.options.root_namespace)
        return mode

    # --- Sidecar scoping (reference §13) -----------------------------------------------------------

    @cached_property
    def sidecar_scope(self) -> SidecarScope:
        """The Sidecar resource that scopes this pod's proxy (none: it holds the whole mesh's config)."""
        labels = {k: v.text or "" for k, v in self.template.labels().items()}
        return self.mesh.sidecar_scope(self.owner.namespace, labels, self.place, self.options.root_namespace)

    @property
    def outbound_policy(self) -> Setting[Any]:
        """outboundTrafficPolicy.mode for this proxy: its Sidecar's, else the mesh's, else ALLOW_ANY."""
        sidecar = self.sidecar_scope.sidecar
        if sidecar is not None and sidecar.outbound_policy is not None:
            return sidecar.outbound_policy
        return self.settings.outbound_traffic_policy or Setting("ALLOW_ANY", None, "the default")

    @cached_property
    def dependencies(self) -> list[Dependency]:
        """Services of the mesh the pod calls through its proxy, read from the startup evidence of the
        containers whose traffic the proxy carries (init containers only with a native proxy): a cluster
        DNS name (`orders.shop.svc.cluster.local`), or a short name (`orders`, `orders.shop`) that a
        Service in the run answers to. Names no Service of the run answers to are left out."""
        from meshlint.mesh.facts import addresses

        found = []
        for container in self.template.all_containers:
            if container.name in INJECTED_INIT_CONTAINERS or (container.init and not (container.is_native_sidecar or self.native_sidecar)):
                continue
            for evidence in self.calls(container):
                if evidence.shared:
                    continue  # an address book every service loads names addresses, not calls
                address = addresses.parse(evidence.target) if evidence.target else None
                service = self._service_for(address.host.lower().rstrip(".")) if address is not None and address.remote else None
                if service is not None:
                    found.append(Dependency(*service, address.port if address is not None else None, evidence))
        return found

    def _service_for(self, host: str) -> tuple[str, str] | None:
        labels = host.split(".")
        if len(labels) >= 3 and labels[2] == "svc":
            return labels[0], labels[1]
        if len(labels) == 1 and self.mesh.service(labels[0], self.owner.namespace) is not None:
            return labels[0], self.owner.namespace
        if len(labels) == 2 and self.mesh.service(labels[0], labels[1]) is not None:
            return labels[0], labels[1]
        return None

    # --- ambient (reference §16) -------------------------------------------------------------------

    @property
    def ambient_enrolment(self) -> Setting[str] | None:
        """What enrols this ambient pod: its own `istio.io/dataplane-mode: ambient` label, else its
        namespace's (istio-cni's default enablement selectors, reference §16.2)."""
        if not self.istio_ambient:
            return None
        label = self.template.labels().get(DATAPLANE_MODE)
        if label is not None and label.text == ambient.AMBIENT:
            text = f"{DATAPLANE_MODE}={label.text} on the pod template"
            return Setting(text, label.pos, text, local=True)
        node = ambient.ambient_namespace(self.namespace)
        if node is not None and self.namespace is not None:
            text = f"{DATAPLANE_MODE}={node.text} on Namespace {self.namespace.name}"
            return Setting(text, node.pos, text)
        return None

    @property
    def bypass_inbound_capture(self) -> Node | None:
        """`ambient.istio.io/bypass-inbound-capture` when it reads as true (`strconv.ParseBool`)."""
        node = self.template.annotations().get(ambient.BYPASS_INBOUND_CAPTURE)
        return node if node is not None and node.text in GO_TRUE else None

    def point_at(self, *settings: Setting[Any] | None) -> Position:
        """Where a finding about these settings goes: the first one written in this workload's own
        manifest, else the pod template's metadata (a value from the mesh config lives in another file)."""
        for setting in settings:
            if setting is not None and setting.local and setting.origin is not None:
                return setting.origin
        return self.template.fix_position
