"""What a workload's own containers show: which are the app's, the command model of each (what its
scripts run, the calls they make, its preStop sleep), the evidence of calls at startup, whether the pod
waits for its proxy or sends through it. The base of the workload view (meshlint/mesh/workload.py)."""

import re
from typing import TYPE_CHECKING, Any, NamedTuple

from meshlint.findings import Position
from meshlint.memo import cached_property
from meshlint.mesh import linkerd as linkerd_names
from meshlint.mesh.facts.commands import CommandModel
from meshlint.mesh.injection import Namespace
from meshlint.mesh.istio import (
    ARGO_KILL_COMMAND_ANNOTATION,
    DISTROLESS,
    INJECTED_INIT_CONTAINERS,
    PROXY_CONTAINER,
    PROXY_IMAGE_ANNOTATION,
)
from meshlint.mesh.options import MeshOptions
from meshlint.mesh.setting import Setting
from meshlint.model.pod import Container, PodTemplate
from meshlint.model.resource import Resource
from meshlint.source.document import Node

if TYPE_CHECKING:
    from meshlint.mesh.context import MeshContext
    from meshlint.mesh.facts.evidence import Evidence
    from meshlint.mesh.facts.linkerdcalls import LinkerdCall
    from meshlint.mesh.facts.linkerdproxy import LinkerdProxy
    from meshlint.mesh.facts.prestop import PreStopSleep
    from meshlint.mesh.facts.quitcalls import QuitCall
    from meshlint.mesh.meshsettings import MeshSettings




_WAITS_FOR_PROXY = re.compile(r"(127\.0\.0\.1|localhost):1502[01]/healthz/ready|pilot-agent\s+wait")
_PROXY_ENV = frozenset(("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "GRPC_PROXY"))


class Dependency(NamedTuple):
    """A Service of the mesh a pod calls, and the evidence that names it."""

    service: str
    namespace: str
    port: int | None
    evidence: "Evidence"


class PodFacts:
    """The facts of a pod's own containers; the state is the view's own (see WorkloadView)."""

    mesh: "MeshContext"
    template: PodTemplate
    namespace: Namespace | None
    settings: "MeshSettings"
    options: MeshOptions
    written_proxy: Container | None
    _models: dict[int, CommandModel]

    @property
    def owner(self) -> Resource:
        return self.template.owner

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
    def linkerd_proxy(self) -> "LinkerdProxy":
        """The Linkerd proxy this pod gets (ask only of a Linkerd-meshed workload): native or classic,
        await, the /shutdown endpoint, wait-before-exit, skip ports; each with where it came from.
        Loaded when first asked for: a run without Linkerd-meshed pods never imports it."""
        from meshlint.mesh.facts.linkerdproxy import LinkerdProxy

        return LinkerdProxy(self.template, self.namespace, self.settings.linkerd_helm, self.options.versions.linkerd)

    @cached_property
    def linkerd_calls(self) -> "list[LinkerdCall]":
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
    def quit_calls(self) -> "list[QuitCall]":
        """Every call to Istio's /quitquitquit made by the pod's own containers (whether it can work or not)."""
        return [call for c in self._own_containers for call in self.commands(c).quit_calls]

    @cached_property
    def linkerd_shutdown_calls(self) -> "list[QuitCall]":
        """Every call to Linkerd's /shutdown (a POST to localhost:4191, `linkerd-await --shutdown`)."""
        return [call for c in self._own_containers for call in self.commands(c).linkerd_shutdown_calls]

    @cached_property
    def prestop_sleeps(self) -> "list[PreStopSleep]":
        """Every container's preStop sleep whose length the manifest states (the proxy's included)."""
        return [s for c in self.template.all_containers if (s := self.commands(c).prestop_sleep) is not None]

    @cached_property
    def startup_evidence(self) -> "list[Evidence]":
        """What the pod's regular containers call before the app serves (a co-located container that
        dials out at start counts too): env peers, client commands, migrations, dialled addresses."""
        return [e for c in self.app_containers for e in self.calls(c, race=True)]

    def calls(self, container: Container, race: bool = False) -> "list[Evidence]":
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

    def _names_own(self, evidence: "Evidence") -> bool:
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
    def strong_evidence(self) -> "list[Evidence]":
        """The startup evidence that says the pod itself connects as it starts (wave-3 spec V2.1)."""
        return [e for e in self.startup_evidence if e.strong]

    def evidence(self, container: Container) -> "list[Evidence]":
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
    def outbound_ports(self) -> "list[tuple[Container, int, Evidence]]":
        """Destination ports the app dials (env URLs, `host:port`, `*_PORT`, its commands' calls), per container."""
        return [(c, port, e) for c in self._own_containers for port, e in self.commands(c).outbound_ports]

    # --- stopping the proxy from outside (Argo's wait container) -------------------------------------

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
