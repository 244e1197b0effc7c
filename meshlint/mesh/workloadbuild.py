"""How a workload view is made: the pod's mesh classification, then the effective ProxyConfig, native
sidecar, hold, drain, grace period and interception, each a `Setting` with where it was decided, from
the pod's own annotations over the mesh-wide settings that hold where it is written."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from meshlint import numbers
from meshlint.mesh import linkerd as linkerd_names
from meshlint.mesh.classification import (
    ISTIO_GATEWAY,
    LINKERD,
    NOT_MESHED,
    Classification,
    agent_only,
    classify,
)
from meshlint.mesh.facts import proxyconfig
from meshlint.mesh.facts.durations import parse_duration
from meshlint.mesh.facts.interception import effective as effective_interception
from meshlint.mesh.facts.proxyconfig import ProxyConfigAnnotation, read_annotation
from meshlint.mesh.injection import Namespace, decide, injected_proxy, proxy_customisation
from meshlint.mesh.istio import (
    DEFAULT_DRAIN,
    DEFAULT_GRACE_SECONDS,
    GATEWAY_TEMPLATES_ANNOTATION,
    INTERCEPTION_MODE,
    NATIVE_ANNOTATION,
    PROXY_CONFIG_ANNOTATION,
    STATUS_PORT_ANNOTATION,
)
from meshlint.mesh.options import MeshOptions, at_least, parse_version
from meshlint.mesh.scope import Place
from meshlint.mesh.setting import Setting
from meshlint.mesh.sources import DISCOVERY_SELECTORS, ISTIO_CNI_FIELDS, OUTBOUND_POLICY, REWRITE_PROBES
from meshlint.mesh.workload import HOLD, VERSIONS_UNKNOWN, WorkloadView
from meshlint.model.pod import Container, PodTemplate
from meshlint.source.document import Node

if TYPE_CHECKING:
    from meshlint.mesh.context import MeshContext
    from meshlint.mesh.facts.probes import Probe
    from meshlint.mesh.meshsettings import MeshSettings





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
