"""The workload view: everything a rule may know about one workload's mesh setup, each effective value
with where it came from. Built once per workload in the second pass, from the mesh context."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, NamedTuple

from meshlint import numbers
from meshlint.findings import Position
from meshlint.memo import cached_property
from meshlint.mesh import ambient
from meshlint.mesh import linkerd as linkerd_names
from meshlint.mesh.classification import (
    ISTIO_AMBIENT,
    ISTIO_GATEWAY,
    ISTIO_SIDECAR,
    LINKERD,
    NOT_MESHED,
    Classification,
    agent_only,
    classify,
    injection_templates,
)
from meshlint.mesh.facts import proxyconfig
from meshlint.mesh.facts.commands import CommandModel
from meshlint.mesh.facts.durations import parse_duration
from meshlint.mesh.facts.interception import Interception
from meshlint.mesh.facts.interception import effective as effective_interception
from meshlint.mesh.facts.proxyconfig import ProxyConfigAnnotation, read_annotation
from meshlint.mesh.facts.webhookinit import WebhookInit, webhook_inits
from meshlint.mesh.injection import Namespace, decide, injected_proxy, proxy_customisation
from meshlint.mesh.istio import (
    ALWAYS_EXCLUDED_INBOUND,
    ARGO_KILL_COMMAND_ANNOTATION,
    CAPTURE_INIT_CONTAINERS,
    DATAPLANE_MODE,
    DEFAULT_DRAIN,
    DEFAULT_GRACE_SECONDS,
    DEFAULT_MINIMUM_DRAIN,
    DISTROLESS,
    EXIT_ON_ZERO,
    GATEWAY_TEMPLATES_ANNOTATION,
    GO_TRUE,
    INJECTED_INIT_CONTAINERS,
    INTERCEPTION_MODE,
    MINIMUM_DRAIN,
    NATIVE_ANNOTATION,
    PROXY_CONFIG_ANNOTATION,
    PROXY_CONTAINER,
    PROXY_IMAGE_ANNOTATION,
    STATUS_PORT_ANNOTATION,
)
from meshlint.mesh.options import MeshOptions, at_least, parse_version
from meshlint.mesh.scope import Conflict, Place
from meshlint.mesh.setting import Setting
from meshlint.mesh.sources import DISCOVERY_SELECTORS, ISTIO_CNI_FIELDS, OUTBOUND_POLICY, REWRITE_PROBES
from meshlint.model.pod import PROBE_ROLES, Container, PodTemplate
from meshlint.model.resource import Resource
from meshlint.source.document import Node

if TYPE_CHECKING:
    from meshlint.mesh.context import MeshContext
    from meshlint.mesh.facts.evidence import Evidence
    from meshlint.mesh.facts.linkerdcalls import LinkerdCall
    from meshlint.mesh.facts.linkerdproxy import LinkerdProxy
    from meshlint.mesh.facts.prestop import PreStopSleep
    from meshlint.mesh.facts.probes import Probe
    from meshlint.mesh.facts.quitcalls import QuitCall
    from meshlint.mesh.meshsettings import MeshSettings
    from meshlint.mesh.sidecars import SidecarScope

VERSIONS_UNKNOWN = "Istio/Kubernetes versions unknown"


class Dependency(NamedTuple):
    """A Service of the mesh a pod calls, and the evidence that names it."""

    service: str
    namespace: str
    port: int | None
    evidence: Evidence


HOLD = "holdApplicationUntilProxyStarts"


class WorkloadView:
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
    def owner(self) -> Resource:
        return self.template.owner

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

    # --- containers --------------------------------------------------------------------------------

    @property
    def injected_proxy(self) -> Container | None:
        """The `istio-proxy` already in the manifest (kube-inject output) as it will run: not when a
        webhook in the run injects the pod again, which replaces it with its own template."""
        return self.written_proxy

    @cached_property
    def app_containers(self) -> list[Container]:
        """The regular containers that are the application's own (not an injected istio-proxy or linkerd-proxy)."""
        return [c for c in self.template.containers if c.name not in (PROXY_CONTAINER, linkerd_names.PROXY_CONTAINER)]

    @cached_property
    def app_init_containers(self) -> list[Container]:
        """Init containers that run before the pod's containers: not the mesh's own, not native sidecars."""
        return [
            c for c in self.template.init_containers
            if c.name not in INJECTED_INIT_CONTAINERS and c.name not in linkerd_names.INIT_CONTAINERS and not c.is_native_sidecar
        ]

    # --- Linkerd -----------------------------------------------------------------------------------

    @cached_property
    def linkerd_proxy(self) -> LinkerdProxy:
        """The Linkerd proxy this pod gets (ask only of a Linkerd-meshed workload): native or classic,
        await, the /shutdown endpoint, wait-before-exit, skip ports; each with where it came from.
        Loaded when first asked for: a run without Linkerd-meshed pods never imports it."""
        from meshlint.mesh.facts.linkerdproxy import LinkerdProxy

        return LinkerdProxy(self.template, self.namespace, self.settings.linkerd_helm, self.options.versions.linkerd)

    @property
    def classic_linkerd(self) -> bool:
        return self.linkerd and not self.linkerd_proxy.native.value

    @property
    def native_linkerd(self) -> bool:
        return self.linkerd and bool(self.linkerd_proxy.native.value)

    @cached_property
    def linkerd_calls(self) -> list[LinkerdCall]:
        """The app's `linkerd-await` wrappers and calls to the proxy's /shutdown."""
        from meshlint.mesh.facts.linkerdcalls import linkerd_calls

        return [call for c in self.template.all_containers if c.name != linkerd_names.PROXY_CONTAINER for call in linkerd_calls(self.commands(c))]

    # --- facts read from the pod's own commands ------------------------------------------------------

    def commands(self, container: Container) -> CommandModel:
        """The command model of one of the pod's containers, built once: what its scripts run, the
        calls it makes, its preStop sleep."""
        model = self._models.get(id(container))
        if model is None:
            owner = self.template.owner
            model = self._models[id(container)] = CommandModel(container, self.mesh.env_sources, owner.namespace, owner.path)
        return model

    @cached_property
    def _own_containers(self) -> list[Container]:
        return [c for c in self.template.all_containers if c.name != PROXY_CONTAINER]

    @cached_property
    def quit_calls(self) -> list[QuitCall]:
        """Every call to Istio's /quitquitquit made by the pod's own containers (whether it can work or not)."""
        return [call for c in self._own_containers for call in self.commands(c).quit_calls]

    @cached_property
    def linkerd_shutdown_calls(self) -> list[QuitCall]:
        """Every call to Linkerd's /shutdown (a POST to localhost:4191, `linkerd-await --shutdown`)."""
        return [call for c in self._own_containers for call in self.commands(c).linkerd_shutdown_calls]

    @cached_property
    def prestop_sleeps(self) -> list[PreStopSleep]:
        """Every container's preStop sleep whose length the manifest states (the proxy's included)."""
        return [s for c in self.template.all_containers if (s := self.commands(c).prestop_sleep) is not None]

    @cached_property
    def startup_evidence(self) -> list[Evidence]:
        """What the pod's regular containers call before the app serves (a co-located container that
        dials out at start counts too): env peers, client commands, migrations, dialled addresses."""
        return [e for c in self.app_containers for e in self.calls(c, race=True)]

    def calls(self, container: Container, race: bool = False) -> list[Evidence]:
        """A container's startup evidence without its own address: a Service that selects this pod is
        never a peer it calls (a database given its own DSN), and a ConfigMap that names the pod's own
        Service is the whole app's address book, shared by every service: its addresses are names, weak
        evidence, never calls (wave-3 spec V2.2, V2.4). `race`: only the calls that can meet a proxy not
        yet ready (none after a wait for the network or a long sleep)."""
        found = self.commands(container).race_calls if race else self.commands(container).startup_calls
        if not found or not self.own_hosts:
            return found
        own = [self._names_own(e) for e in found]
        if not any(own):
            return found
        shared = {e.source for e, mine in zip(found, own, strict=True) if mine and e.source}
        return [e._replace(strong=False, shared=True) if e.source in shared else e for e, mine in zip(found, own, strict=True) if not mine]

    def _names_own(self, evidence: Evidence) -> bool:
        from meshlint.mesh.facts import addresses

        address = addresses.parse(evidence.target) if evidence.target else None
        return address is not None and address.host.lower().rstrip(".") in self.own_hosts

    @cached_property
    def own_hosts(self) -> frozenset[str]:
        """The names this pod answers to through the Services of the run that select it."""
        namespace = self.owner.namespace or "default"
        names: set[str] = set()
        for service in self.mesh.selecting(self.template):
            names.update((service.name, f"{service.name}.{namespace}", f"{service.name}.{namespace}.svc", f"{service.name}.{namespace}.svc.cluster.local"))
        return frozenset(names)

    @cached_property
    def waits_for_proxy(self) -> Position | None:
        """Where the pod's own script waits for istio-proxy before the app starts (a loop on the agent's
        `localhost:15020/healthz/ready` or `:15021`, `pilot-agent wait`), written in any of its containers
        (an init container may write the app's wrapper script): it holds itself (wave-3 spec V2.2)."""
        for container in self.template.all_containers:
            if container.name == PROXY_CONTAINER:
                continue
            for key in ("command", "args"):
                for item in container.node.get(key).elements():
                    if _WAITS_FOR_PROXY.search(item.text or ""):
                        return item.pos
        return None

    @cached_property
    def strong_evidence(self) -> list[Evidence]:
        """The startup evidence that says the pod itself connects as it starts (wave-3 spec V2.1)."""
        return [e for e in self.startup_evidence if e.strong]

    def evidence(self, container: Container) -> list[Evidence]:
        """Network use of one container (the same signs as the startup evidence)."""
        return self.commands(container).startup_calls

    def sends_to_proxy(self, container: Container) -> Setting[Any] | None:
        """The container is told to send through the sidecar itself (HTTP_PROXY and the like at a
        loopback address and port that no container of the pod declares, as a squid beside it would):
        those calls pass through istio-proxy even when nothing is captured."""
        from meshlint.mesh.facts import addresses  # only pods with interception mode NONE ask

        declared = {number for c in self.template.all_containers for number, _, _ in c.ports}
        for item in container.node.get("env").elements():
            name, value = item.get("name").text or "", item.get("value")
            if name.upper() not in _PROXY_ENV or not value.exists:
                continue
            address = addresses.parse(value.text or "")
            if address is not None and address.loopback and address.port is not None and address.port not in declared:
                return Setting(value.text, value.pos, f"env {name}={value.text} in {container.label}", local=True)
        return None

    @cached_property
    def app_sends_to_proxy(self) -> Setting[Any] | None:
        """The first app container that sends through the sidecar itself (see `sends_to_proxy`)."""
        return next((s for s in map(self.sends_to_proxy, self.app_containers) if s is not None), None)

    @cached_property
    def outbound_ports(self) -> list[tuple[Container, int, Evidence]]:
        """Destination ports the app dials (env URLs, `host:port`, `*_PORT`, its commands' calls), per container."""
        return [(c, port, e) for c in self._own_containers for port, e in self.commands(c).outbound_ports]

    # --- ProxyConfig and drain ---------------------------------------------------------------------

    @cached_property
    def proxy_without_shell(self) -> Setting[str] | None:
        """The proxy image has no shell (Istio's distroless variant): the pod's proxyImage annotation,
        else Helm global.variant. Argo can then stop the sidecar only with a kill command."""
        image = self.template.annotations().get(PROXY_IMAGE_ANNOTATION)
        if image is not None:
            text = image.text or ""
            return Setting(f"{PROXY_IMAGE_ANNOTATION}: {text}", image.pos, local=True) if DISTROLESS in text else None
        variant = self.settings.proxy_variant
        if variant is not None and variant.value == DISTROLESS:
            return variant.derived(f"global.variant: {DISTROLESS}")
        return None

    @property
    def argo_kill_command(self) -> Node | None:
        """The command Argo's wait container runs to stop istio-proxy, when the pod names one."""
        return self.template.annotations().get(ARGO_KILL_COMMAND_ANNOTATION)

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


_WAITS_FOR_PROXY = re.compile(r"(127\.0\.0\.1|localhost):1502[01]/healthz/ready|pilot-agent\s+wait")
_PROXY_ENV = frozenset(("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "GRPC_PROXY"))


def build_view(mesh: MeshContext, template: PodTemplate, options: MeshOptions | None = None) -> WorkloadView:
    """Resolve one pod template against the mesh context: who meshes it, and the mesh-wide settings
    that apply where it is and for the revision that injects it (wave-2 spec §W1, §W2)."""
    options = options if options is not None else mesh.options
    place = Place.of(template.owner.path)
    namespace, namespace_conflict = mesh.namespace_at(template.owner.namespace, place)
    sign = mesh.istio_governs(place)
    classification = classify(template, namespace, options, sign, mesh.revision_of, mesh.injection_templates)
    if namespace_conflict is not None and not _namespace_matters(mesh, template, options, sign):
        namespace_conflict = None
    settings = mesh.settings_at(place, classification.revision)
    options = _with_tree_versions(options, settings.istio_version, settings.kubernetes_version)
    written = _written_proxy(template, namespace, options, mesh)
    if classification.mesh == LINKERD and linkerd_names.injected_proxy(template) is None:
        refused = linkerd_names.token_refusal(template, settings.linkerd_helm.get("identity.serviceAccountTokenProjection"))
        if refused is not None:
            classification = Classification(NOT_MESHED, f"{classification.reason}, but {refused[0]}", refused[1])
    labels = {k: v.text or "" for k, v in template.labels().items()}
    _, policy_conflicts = mesh.mtls_mode(template.owner.namespace, labels, None, place, options.root_namespace)
    annotation = _proxy_config_annotation(template)
    proxy_config, proxy_metadata = _effective_proxy_config(settings, annotation)
    view = WorkloadView(
        mesh=mesh,
        template=template,
        classification=classification,
        proxy_config=proxy_config,
        proxy_metadata=proxy_metadata,
        annotation=annotation,
        native=_native(settings, template, options, written) if classification.mesh != ISTIO_GATEWAY else _GATEWAY_PROXY,
        hold=_hold(settings, template, proxy_config, written),
        hold_override=settings.proxy_lifecycle,
        startup_probe_off=_startup_probe_off(settings, template),
        grace_period=_grace_period(template),
        drain=_drain(proxy_config),
        interception=effective_interception(template.annotations(), settings.helm_proxy),
        interception_mode=_interception_mode(template, proxy_config),
        settings=settings,
        options=options,
        place=place,
        namespace=namespace,
        conflicts=[],
        written_proxy=written,
    )
    conflicts = (*settings.conflicts, namespace_conflict, *policy_conflicts)
    view.conflicts = [c for c in conflicts if c is not None and _matters(c.field, view)]
    return view


def _matters(field: str, view: WorkloadView) -> bool:
    """Can sources that disagree on this field change a finding for this workload? Most fields always
    can; these only for some pods, and only those pods are told of the conflict (ML006)."""
    if field in ISTIO_CNI_FIELDS:  # ML102's severity: init containers that use the network before the proxy
        return view.classic_sidecar and (bool(view.webhook_inits) or any(view.evidence(c) for c in view.app_init_containers))
    if field == REWRITE_PROBES:  # ML106/ML107: a probe on a captured port that fails or passes unrewritten
        return view.istio_sidecar and any(_rewrite_matters(view, p) for p in view.probes)
    if field == OUTBOUND_POLICY:  # ML602's severity: a Service its Sidecar misses, the Sidecar saying no mode
        sidecar = view.sidecar_scope.sidecar if view.istio_sidecar and view.mesh.sidecars else None
        return sidecar is not None and sidecar.outbound_policy is None and any(sidecar.imports(d.namespace, d.service, d.port, view.owner.namespace) is None for d in view.dependencies)
    return field != DISCOVERY_SELECTORS  # read for Namespaces (ML601), never for a workload


def _rewrite_matters(view: WorkloadView, probe: Probe) -> bool:
    if probe.port is None or probe.action == "exec" or not view.inbound_captured(probe.port):
        return False
    return probe.action == "tcpSocket" or view.mtls_mode(probe.port).value == "STRICT"


def _namespace_matters(mesh: MeshContext, template: PodTemplate, options: MeshOptions, sign: Setting[str] | None) -> bool:
    """Would the definitions of the pod's namespace (or none of them) mesh it differently? When every
    one gives the same verdict, and the same Linkerd settings to inherit, their disagreement changes
    nothing for this pod, and is no conflict for it (ML006)."""
    found = [ns for ns, _ in mesh.namespaces.get(template.owner.namespace, ())]
    outcomes = set()
    for namespace in (None, *found):
        verdict = classify(template, namespace, options, sign, mesh.revision_of, mesh.injection_templates)
        inherited: tuple[tuple[str, str | None], ...] = ()
        if verdict.mesh == LINKERD and namespace is not None:
            inherited = tuple(sorted((k, v.text) for k, v in namespace.annotations.items() if k in linkerd_names.INHERITED or "native-sidecar" in k))
        outcomes.add((verdict.mesh, verdict.revision, inherited))
    return len(outcomes) > 1


def _proxy_config_annotation(template: PodTemplate) -> ProxyConfigAnnotation | None:
    node = template.annotations().get(PROXY_CONFIG_ANNOTATION)
    return read_annotation(node) if node is not None else None


def _effective_proxy_config(
    settings: MeshSettings, annotation: ProxyConfigAnnotation | None
) -> tuple[dict[str, Setting[Any]], dict[str, Setting[Any]]]:
    """Mesh defaultConfig, then each top-level annotation field replaces it; proxyMetadata merges by key."""
    fields = dict(settings.default_config)
    metadata = dict(settings.default_proxy_metadata)
    if annotation is not None and annotation.body is not None and annotation.body.is_map:
        for name, node in proxyconfig.normalized_fields(annotation.body).items():
            if name == "proxyMetadata":
                for key, value in node.items():
                    metadata[str(key)] = Setting(value.text, value.pos, local=True)
            else:
                fields[name] = Setting.of(node, local=True)
    return fields, metadata


def _written_proxy(template: PodTemplate, namespace: Namespace | None, options: MeshOptions, mesh: MeshContext) -> Container | None:
    """kube-inject's istio-proxy, unless a webhook the run shows injects the pod again: the webhook then
    drops every container the pod's sidecar.istio.io/status lists and injects its own template anew
    (istio/istio `webhook.go`; golden `merge-probers.yaml.injected`), so the settings decide."""
    proxy = injected_proxy(template)
    if proxy is None or decide(template, namespace, options, mesh.revision_of).injects is True:
        return None
    return proxy


def _with_tree_versions(options: MeshOptions, istio: Setting[Any] | None, kubernetes: Setting[Any] | None) -> MeshOptions:
    """The options with the Istio release the workload's own sources install and the Kubernetes release
    its cluster's manifest states (wave-3 spec V2.6), where neither the command line nor a config names
    one: those win."""
    release = parse_version(istio.value) if istio is not None and options.versions.istio is None else None
    if istio is not None and release is not None:
        options = options._replace(versions=options.versions._replace(istio=release), istio_version_from=_read_at(istio))
    release = parse_version(kubernetes.value) if kubernetes is not None and options.versions.kubernetes is None else None
    if kubernetes is not None and release is not None:
        options = options._replace(versions=options.versions._replace(kubernetes=release), kubernetes_version_from=_read_at(kubernetes))
    return options


def _read_at(setting: Setting[Any]) -> str:
    """`IstioOperator spec.tag 1.18.5 at iop.yaml:5`: what a release was read from, and where."""
    return f"{setting.note} at {setting.where}" if setting.origin is not None else setting.note


def _native(settings: MeshSettings, template: PodTemplate, options: MeshOptions, written: Container | None) -> Setting[bool]:
    """Native sidecar in effect? The injected proxy, the pod annotation, istiod's env, the
    compatibility profile, then Istio's `auto` default judged on the target versions."""
    versions = options.versions
    istio = f"Istio {versions.istio} from {options.istio_version_from}" if options.istio_version_from else f"Istio {versions.istio}"
    kubernetes = f"Kubernetes {versions.kubernetes} from {options.kubernetes_version_from}" if options.kubernetes_version_from else f"Kubernetes {versions.kubernetes}"
    proxy = written
    if proxy is not None:
        return Setting(proxy.is_native_sidecar, proxy.position, "injected istio-proxy")
    agent = agent_only(template)
    if agent is not None:  # the grpc-agent template never asks for a native sidecar
        return Setting(False, agent.pos, f'{GATEWAY_TEMPLATES_ANNOTATION}: "{agent.text}" keeps its agent a regular container')
    annotation = template.annotations().get(NATIVE_ANNOTATION)
    # The annotation exists from Istio 1.24 on; older injectors ignore it.
    readable = versions.istio is None or at_least(versions.istio, "1.24")
    if annotation is not None and annotation.text in ("true", "false") and readable:
        return Setting(annotation.text == "true", annotation.pos, f"{NATIVE_ANNOTATION} annotation")
    env = settings.native_env
    if env is not None and env.value in ("true", "false"):
        return env.derived(env.value == "true", f"ENABLE_NATIVE_SIDECARS={env.value}")
    if env is not None and env.value != "auto":
        return env.derived(False, f"ENABLE_NATIVE_SIDECARS={env.value!r} is treated as disabled")
    compat = settings.compatibility_version
    if compat is not None and compat.value in ("1.24", "1.25", "1.26"):
        return compat.derived(False, f"compatibilityVersion {compat.value}")
    if versions.istio is not None and not at_least(versions.istio, "1.27"):
        return Setting(False, None, f"{istio} does not default to native sidecars")
    if versions.istio is not None and versions.kubernetes is not None:
        auto = at_least(versions.kubernetes, "1.33")
        joined = "," if options.istio_version_from else ""  # a comma after where the Istio release was read
        return Setting(auto, None, f"ENABLE_NATIVE_SIDECARS=auto with {istio}{joined} on {kubernetes}")
    # One release known: say which is missing, and what the known one decides.
    if versions.istio is not None:
        return Setting(False, None, f"{istio} defaults to native sidecars only on Kubernetes 1.33+, Kubernetes version unknown")
    if versions.kubernetes is not None:
        return Setting(False, None, f"Istio version unknown, on {kubernetes}")
    return Setting(False, None, VERSIONS_UNKNOWN)


# A gateway's istio-proxy is its main container, never a native sidecar (the gateway template).
_GATEWAY_PROXY: Setting[bool] = Setting(False, None, "a gateway's istio-proxy is its main container")


def _hold(settings: MeshSettings, template: PodTemplate, proxy_config: dict[str, Setting[Any]], written: Container | None) -> Setting[Any]:
    """Hold in effect: the effective ProxyConfig value OR Helm global.proxy (reference §1.3)."""
    proxy = written
    if proxy is not None:
        command = proxy.node.path("lifecycle", "postStart", "exec", "command")
        return Setting(_waits_for_agent(command), command.pos if command.exists else proxy.position, "injected istio-proxy")
    agent = agent_only(template)
    if agent is not None:  # the grpc-agent template's postStart waits for its own agent (reference §18.3.2)
        return Setting(True, agent.pos, f'{GATEWAY_TEMPLATES_ANNOTATION}: "{agent.text}" holds the app until its agent is ready', local=True)
    custom = proxy_customisation(template)
    if custom is not None:  # its own postStart is merged over the injected one: the hold hook, if it waits
        command = custom.node.path("lifecycle", "postStart", "exec", "command")
        if _waits_for_agent(command):
            return Setting(True, command.pos, "the pod's own istio-proxy postStart runs pilot-agent wait", local=True)
    from_pod = proxy_config.get(HOLD)
    from_helm = settings.helm_value(HOLD)
    for setting in (from_pod, from_helm):
        if setting is not None and setting.value is True:
            return setting
    if from_pod is not None and isinstance(from_pod.value, bool):
        return from_pod
    return Setting(False, None)


def _waits_for_agent(command: Node) -> bool:
    """Does a hook's exec command run `pilot-agent wait` (the hold's postStart)?"""
    words = [n.text or "" for n in command.elements()]
    return "pilot-agent" in " ".join(words) and "wait" in words


def _startup_probe_off(settings: MeshSettings, template: PodTemplate) -> Setting[Any] | None:
    port = template.annotations().get(STATUS_PORT_ANNOTATION)
    if port is not None and port.text == "0":
        return Setting("0", port.pos, f'{STATUS_PORT_ANNOTATION}: "0"')
    enabled = settings.helm_value("startupProbe.enabled")
    if enabled is not None and enabled.value is False:
        return enabled.derived(False, "global.proxy.startupProbe.enabled: false")
    return None


def _grace_period(template: PodTemplate) -> Setting[Any]:
    node = template.spec.get("terminationGracePeriodSeconds")
    if not node.exists or node.value is None:
        return Setting(DEFAULT_GRACE_SECONDS, None)
    if isinstance(node.value, int) and not isinstance(node.value, bool) and node.value >= 0:
        if node.value > numbers.INT64_MAX:  # the API server refuses it; as a float it would not even convert
            return Setting(None, node.pos, "terminationGracePeriodSeconds is out of range (an int64)", local=True)
        return Setting.of(node, local=True)
    return Setting(None, node.pos, f"terminationGracePeriodSeconds {node.text!r} is not a whole number", local=True)


def _drain(proxy_config: dict[str, Setting[Any]]) -> Setting[Any]:
    setting = proxy_config.get("terminationDrainDuration")
    if setting is None:
        return Setting(parse_duration(DEFAULT_DRAIN), None)
    return setting.derived(parse_duration(setting.value))


def _interception_mode(template: PodTemplate, proxy_config: dict[str, Setting[Any]]) -> Setting[Any]:
    """The annotation, else ProxyConfig interceptionMode (pod over mesh), else REDIRECT."""
    node = template.annotations().get(INTERCEPTION_MODE)
    if node is not None:
        return Setting(node.text, node.pos, INTERCEPTION_MODE, local=True)
    setting = proxy_config.get("interceptionMode")
    if setting is not None:
        return setting.derived(setting.value, "proxy.istio.io/config interceptionMode")
    return Setting("REDIRECT", None)
