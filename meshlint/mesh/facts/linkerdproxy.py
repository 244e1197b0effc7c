"""The Linkerd proxy a pod gets: native or classic, await, the /shutdown endpoint, wait-before-exit,
skip and opaque ports (reference §4.3, §5.4, §10, §11), each with where it came from.

Each setting is read the way the injector reads it: the pod template's annotation, else the
namespace's when the injector copies it onto the pod (`AppendNamespaceAnnotations`: only the proxy
annotations, and only the native-sidecar names of that release), else the control plane's Helm value,
else the default of the Linkerd release. A proxy already in the manifest (`linkerd inject` output)
says what it is itself. Values outside an annotation's vocabulary are ignored by the injector, so they
are ignored here too (ML507 reports them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from meshlint import numbers
from meshlint.memo import cached_property
from meshlint.mesh import linkerd
from meshlint.mesh.linkerd import (
    ADMIN_SHUTDOWN,
    AWAIT,
    CNI_DEFAULT_SKIP_PORTS,
    DEFAULT_SKIP_PORTS,
    GO_BOOLS,
    INHERITED,
    INHERITED_NATIVE,
    NATIVE_ANNOTATIONS,
    NATIVE_DEFAULT_SINCE,
    NATIVE_SINCE,
    SHUTDOWN_ENV,
    SHUTDOWN_OFF_SINCE,
    SKIP_INBOUND,
    SKIP_OUTBOUND,
    SKIP_SUBNETS,
    WAIT_BEFORE_EXIT,
)
from meshlint.mesh.options import at_least
from meshlint.mesh.setting import Setting
from meshlint.model.pod import Container, PodTemplate
from meshlint.source.document import Node

if TYPE_CHECKING:
    from packaging.version import Version

    from meshlint.mesh.injection import Namespace

VERSION_UNKNOWN = "Linkerd version unknown"


def version_text(version: Version | None) -> str:
    """How messages name the Linkerd release they assume."""
    return f"Linkerd {version}" if version is not None else VERSION_UNKNOWN


def native_line(version: Version | None) -> str:
    """Which list of inherited native-sidecar names a release has (§11.1.6); unknown reads as the newest."""
    if version is None or at_least(version, "2.20"):
        return "2.20"
    return "2.19" if at_least(version, "2.19") else "2.15"


def native_annotation_for(version: Version | None) -> str:
    """The native-sidecar annotation a release reads, for the help: GA from 2.20, beta on 2.19, alpha before."""
    if version is None:
        return f'{linkerd.NATIVE_GA}: "true" (Linkerd 2.20+; {linkerd.NATIVE_ALPHA} on 2.15-2.19), Kubernetes 1.29+'
    if at_least(version, "2.20"):
        return f'{linkerd.NATIVE_GA}: "true" (Kubernetes 1.29+)'
    if at_least(version, "2.19"):
        return f'{linkerd.NATIVE_BETA}: "true" (Kubernetes 1.29+)'
    return f'{linkerd.NATIVE_ALPHA}: "true" (Kubernetes 1.29+)'


def said(setting: Setting[Any]) -> str:
    """How a message cites a setting: what it is, and where when that is not where the finding points."""
    return setting.note if setting.local and setting.note else setting.cited


class LinkerdProxy:
    """The effective Linkerd proxy settings of one pod template."""

    def __init__(self, template: PodTemplate, namespace: Namespace | None, helm: dict[str, Setting[Any]], version: Version | None) -> None:
        self.template = template
        self.namespace = namespace
        self.helm = helm
        self.version = version

    @property
    def version_known(self) -> bool:
        return self.version is not None

    @property
    def assumed(self) -> str:
        """The release the messages assume: `Linkerd 2.16`, or that it is unknown."""
        return version_text(self.version)

    def _since(self, line: str) -> bool | None:
        """Is the target release at least `line`? None when the release is unknown."""
        return at_least(self.version, line) if self.version is not None else None

    # --- where a setting is written ---------------------------------------------------------------

    @cached_property
    def injected(self) -> Container | None:
        """The `linkerd-proxy` already in the manifest (`linkerd inject` output)."""
        return linkerd.injected_proxy(self.template)

    def annotation(self, name: str) -> Setting[str] | None:
        """The annotation as the injector sees it: the pod's own, else the namespace's when inherited."""
        own = self.template.annotations().get(name)
        if own is not None:
            return Setting(own.text or "", own.pos, f"{name}: {own.text} on the pod template", local=True)
        return self.from_namespace(name)

    def from_namespace(self, name: str) -> Setting[str] | None:
        """The namespace's annotation, when the injector copies it onto the pod."""
        if self.namespace is None:
            return None
        node = self.namespace.annotations.get(name)
        inherited = name in INHERITED or name in INHERITED_NATIVE[native_line(self.version)]
        if node is None or not inherited:
            return None
        return Setting(node.text or "", node.pos, f"{name}: {node.text} on namespace {self.namespace.name}")

    def helm_value(self, path: str) -> Setting[Any] | None:
        setting = self.helm.get(path)
        if setting is None:
            return None
        return Setting(setting.value, setting.origin, f"Helm {path}: {_helm_text(setting.value)}", revision=setting.revision)

    def helm_bool(self, path: str) -> Setting[Any] | None:
        """A Helm boolean ("true"/"false" strings read as the template reads them); None otherwise."""
        setting = self.helm_value(path)
        if setting is None:
            return None
        if isinstance(setting.value, str) and setting.value.lower() in ("true", "false"):
            return setting.derived(setting.value.lower() == "true")
        return setting if isinstance(setting.value, bool) else None

    # --- the facts --------------------------------------------------------------------------------

    @cached_property
    def native(self) -> Setting[bool]:
        """Is the proxy a native sidecar (an init container with restartPolicy: Always)? Its note says why."""
        proxy = self.injected
        if proxy is not None:
            how = "an injected linkerd-proxy init container with restartPolicy: Always" if proxy.init else "an injected linkerd-proxy container"
            return Setting(proxy.init, proxy.position, how, local=True)
        if self._since(NATIVE_SINCE) is False:
            return Setting(False, None, f"{self.assumed} has no native sidecars (from 2.15)")
        # The first name present decides, GA over beta over alpha; a value ParseBool rejects is dropped
        # without falling back to the next name (`ApplyAnnotationOverrides`: if / else if on presence).
        for name, since in NATIVE_ANNOTATIONS:
            if self._since(since) is False:
                continue  # an older injector does not read this name
            setting = self.annotation(name)
            if setting is not None:
                if setting.value in GO_BOOLS:
                    return setting.derived(GO_BOOLS[setting.value])
                break
        helm = self.helm_bool("proxy.nativeSidecar")
        if helm is not None:
            return helm
        if self.version is None:
            return Setting(False, None, f"{VERSION_UNKNOWN}, so classic assumed; 2.20 and later default to native sidecars")
        native = at_least(self.version, NATIVE_DEFAULT_SINCE)
        return Setting(native, None, f"{self.assumed} {'defaults to native sidecars' if native else 'defaults to a classic proxy'}")

    @property
    def mode(self) -> str:
        """The proxy's kind, why, and the release assumed, each once: `Linkerd 2.19 defaults to a classic
        proxy`, `native: config...: "true" on the pod template, Linkerd version unknown`."""
        native = self.native
        kind = "native" if native.value else "classic"
        if native.origin is None:
            return native.note  # a release's default: the note names the release and the kind
        return f"{kind}: {said(native)}, {self.assumed}"

    @property
    def native_assumed(self) -> bool:
        """Classic only because the Linkerd release is unknown (2.20 would make it native)."""
        return self.native.origin is None and self.version is None

    @cached_property
    def await_disabled(self) -> Setting[str] | None:
        """What turns proxy-await off, when something does: the annotation (the pod's, or inherited
        from its namespace) or Helm `proxy.await: false`. Then a classic proxy loses its postStart
        linkerd-await hook and a native one its startupProbe (§11.2.2). A proxy `linkerd inject` already
        rendered with the hook or the probe waits, whatever its annotations say."""
        proxy = self.injected
        if proxy is not None:
            hook = proxy.node.path("lifecycle", "postStart", "exec", "command")
            if proxy.has_startup_probe or any("linkerd-await" in (n.text or "") for n in hook.elements()):
                return None
            own = self.template.annotations().get(AWAIT)
            return Setting(own.text or "", own.pos, f"{AWAIT}: disabled on the pod template", local=True) if own is not None and own.text == "disabled" else None
        setting = self.annotation(AWAIT)
        if setting is not None and setting.value in linkerd.ENABLED_DISABLED:
            return setting if setting.value == "disabled" else None
        helm = self.helm_bool("proxy.await")
        return helm.derived("disabled") if helm is not None and helm.value is False else None

    @cached_property
    def shutdown_endpoint(self) -> Setting[bool]:
        """Does the proxy answer POST /shutdown? Always before 2.16; off by default since (§11.3.2)."""
        proxy = self.injected
        if proxy is not None:
            for item in proxy.node.get("env").elements():
                if item.get("name").text == SHUTDOWN_ENV:
                    value = item.get("value")
                    return Setting((value.text or "").lower() == "true", value.pos, f"{SHUTDOWN_ENV}={value.text}", local=True)
        if self._since(SHUTDOWN_OFF_SINCE) is False:
            return Setting(True, None, f"{self.assumed} always serves /shutdown (it is off by default from 2.16)")
        setting = self.annotation(ADMIN_SHUTDOWN)
        if setting is not None and setting.value in linkerd.ENABLED_DISABLED:
            return setting.derived(setting.value == "enabled")
        helm = self.helm_bool("proxy.enableShutdownEndpoint")
        if helm is not None:
            return helm
        return Setting(False, None, "the /shutdown endpoint is off by default since 2.16")

    @cached_property
    def wait_before_exit(self) -> Setting[Any] | None:
        """proxy-wait-before-exit-seconds when set: its value as a number of seconds (None: not a uint).
        A classic proxy `linkerd inject` rendered carries it as its preStop `/bin/sleep N`."""
        proxy = self.injected
        if proxy is not None and not proxy.init:
            command = list(proxy.node.path("lifecycle", "preStop", "exec", "command").elements())
            if len(command) == 2 and (command[0].text or "").endswith("sleep"):
                return Setting(_uint(command[1].text), command[1].pos, f"the injected linkerd-proxy's preStop sleep {command[1].text}", local=True)
            return None
        setting = self.annotation(WAIT_BEFORE_EXIT)
        if setting is None:
            helm = self.helm_value("proxy.waitBeforeExitSeconds")
            if helm is None or helm.value in (0, "0", ""):
                return None
            return helm.derived(_uint(helm.value))
        return setting.derived(_uint(setting.value))

    @cached_property
    def cni(self) -> Setting[Any] | None:
        """The Linkerd CNI plugin sets up the redirect instead of proxy-init: Helm `cniEnabled: true`, or
        `linkerd inject` output without a linkerd-init container (`--linkerd-cni-enabled`)."""
        proxy = self.injected
        if proxy is not None:
            if any(c.name == linkerd.INIT_CONTAINER for c in self.template.init_containers):
                return None
            return Setting(True, proxy.position, f"the injected pod has no {linkerd.INIT_CONTAINER} container", local=True)
        setting = self.helm_bool("cniEnabled")
        return setting if setting is not None and setting.value is True else None

    @cached_property
    def own_ports(self) -> frozenset[int]:
        """The proxy's control and admin ports, which the redirect always leaves alone inbound: 4190 and
        4191 unless `config.linkerd.io/control-port` / `admin-port` (or the injected admin port) say otherwise."""
        ports = {linkerd.CONTROL_PORT, linkerd.ADMIN_PORT}
        for name, default in ((linkerd.CONTROL_PORT_ANNOTATION, linkerd.CONTROL_PORT), (linkerd.ADMIN_PORT_ANNOTATION, linkerd.ADMIN_PORT)):
            setting = self.annotation(name)
            number = numbers.port(setting.value) if setting is not None and numbers.digits(setting.value) else None
            if number is not None:
                ports = (ports - {default}) | {number}
        proxy = self.injected
        if proxy is not None:
            admin = next((number for number, name, _ in proxy.ports if name == linkerd.ADMIN_PORT_NAME), None)
            if admin is not None:
                ports = (ports - {linkerd.ADMIN_PORT}) | {admin}
        return frozenset(ports)

    @property
    def default_skip_ports(self) -> str:
        """The ports skipped when nothing says otherwise: proxy-init's 4567,4568, none under the CNI plugin
        (the linkerd2-cni chart's lists are empty, reference §18.3.7)."""
        return CNI_DEFAULT_SKIP_PORTS if self.cni is not None else DEFAULT_SKIP_PORTS

    def skip(self, name: str, helm_path: str) -> Setting[str]:
        """A skip list as the redirect gets it: the annotation replaces the Helm list, whose default is
        4567,4568 for proxy-init; under the CNI plugin the proxyInit values are not read and the
        default is empty."""
        setting = self.annotation(name)
        if setting is not None:
            return setting
        if self.cni is not None:
            return self.cni.derived("", "the Linkerd CNI plugin's default (Helm cniEnabled: true)") if name != SKIP_SUBNETS else Setting("", None, "the default")
        helm = self.helm_value(helm_path)
        if helm is not None:
            return helm.derived(_helm_text(helm.value))
        return Setting(DEFAULT_SKIP_PORTS if name != SKIP_SUBNETS else "", None, "the default")

    @cached_property
    def skip_inbound(self) -> Setting[str]:
        return self.skip(SKIP_INBOUND, "proxyInit.ignoreInboundPorts")

    @cached_property
    def skip_outbound(self) -> Setting[str]:
        return self.skip(SKIP_OUTBOUND, "proxyInit.ignoreOutboundPorts")

    @cached_property
    def skip_subnets(self) -> Setting[str]:
        return self.skip(SKIP_SUBNETS, "proxyInit.skipSubnets")

    def skips_inbound(self, port: int) -> bool:
        """Does proxy-init let inbound traffic to `port` past the proxy (the proxy's own ports always)?"""
        return port in self.own_ports or any(low <= port <= high for low, high in port_ranges(self.skip_inbound.value))

    def skips_outbound(self, port: int) -> bool:
        """Does the redirect let outbound traffic to `port` past the proxy?"""
        return any(low <= port <= high for low, high in port_ranges(self.skip_outbound.value))


def port_ranges(text: str | None) -> list[tuple[int, int]]:
    """A Linkerd port list: comma-separated ports or ranges `a-b` (§5.4); what does not read is left out."""
    found = []
    for part in (text or "").split(","):
        low, _, high = part.strip().partition("-")
        first, last = numbers.port(low, zero=True), numbers.port(high or low, zero=True)
        if first is not None and last is not None:
            found.append((first, last))
    return found


def probe_port(container: Container, node: Node) -> int | None:
    """A tcpSocket probe's port as a number (a name is looked up among the container's ports)."""
    value = node.value
    if isinstance(value, int) or numbers.digits(value if isinstance(value, str) else ""):
        return numbers.port(value)
    if isinstance(value, str):
        return next((number for number, name, _ in container.ports if name == value), None)
    return None


def _uint(value: Any) -> int | None:
    """A Go uint64 as the injector parses it (strconv.ParseUint): digits only."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if value >= 0 else None
    text = str(value).strip() if value is not None else ""
    return numbers.whole(text)


def _helm_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)
