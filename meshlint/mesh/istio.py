"""Istio's names and defaults, as the injector and the agent read them (reference §1-§6)."""

from __future__ import annotations

PROXY_CONTAINER = "istio-proxy"
# Containers the injector adds to a pod; a manifest that holds them is kube-inject output
# (grpc-bootstrap-init comes with the proxyless-gRPC `grpc-agent` template).
INJECTED_INIT_CONTAINERS = frozenset(("istio-init", "istio-validation", PROXY_CONTAINER, "enable-core-dump", "grpc-bootstrap-init"))
PROXY_UID = 1337
# The init containers that set up a sidecar's traffic capture: iptables, or CNI's check of its rules.
CAPTURE_INIT_CONTAINERS = frozenset(("istio-init", "istio-validation"))

PROXY_CONFIG_ANNOTATION = "proxy.istio.io/config"
INJECT = "sidecar.istio.io/inject"
NATIVE_ANNOTATION = "sidecar.istio.io/nativeSidecar"
STATUS_PORT_ANNOTATION = "status.sidecar.istio.io/port"
# What the injector writes on a pod it injected (and `istioctl kube-inject` on a CronJob's
# jobTemplate.metadata too): its record of what it added, never a setting.
INJECTED_STATUS_ANNOTATION = "sidecar.istio.io/status"
INTERCEPTION_MODE = "sidecar.istio.io/interceptionMode"
INTERCEPTION_MODES = ("REDIRECT", "TPROXY", "NONE")
TRAFFIC_PREFIX = "traffic.sidecar.istio.io/"
REV_LABEL = "istio.io/rev"
CLUSTER_DOMAIN = "cluster.local"  # Kubernetes' default; Service FQDNs are name.namespace.svc.<domain>
NAMESPACE_INJECTION_LABEL = "istio-injection"
# Labels the webhooks read from Namespaces only (on a pod they do nothing).
NAMESPACE_ONLY_LABELS = (NAMESPACE_INJECTION_LABEL,)
DATAPLANE_MODE = "istio.io/dataplane-mode"
NEVER_INJECTED_NAMESPACES = frozenset(("kube-system", "kube-public", "kube-node-lease", "local-path-storage"))
# No install labels its own namespace for injection, and Istio's control-plane pods opt out (§18.3.9):
# a workload there is meshed only where a label in the run says so, never by assumption.
UNLABELLED_BY_INSTALLS = frozenset(("istio-system",))

# Keys that act only on a pod (the webhook sees only the pod, never its controller's metadata).
POD_KEY_PREFIXES = ("sidecar.istio.io/", TRAFFIC_PREFIX)
POD_KEYS = frozenset((PROXY_CONFIG_ANNOTATION,))

# The injector adds these to every pod's inbound exclusions; excluding them again changes nothing.
ALWAYS_EXCLUDED_INBOUND = frozenset((15090, 15021, 15020))

DEFAULT_GRACE_SECONDS = 30
DEFAULT_DRAIN = "5s"
DEFAULT_MINIMUM_DRAIN = "5s"
EXIT_ON_ZERO = "EXIT_ON_ZERO_ACTIVE_CONNECTIONS"
MINIMUM_DRAIN = "MINIMUM_DRAIN_DURATION"
NATIVE_ENV = "ENABLE_NATIVE_SIDECARS"
GO_TRUE = frozenset(("1", "t", "T", "TRUE", "true", "True"))  # strconv.ParseBool
GO_FALSE = frozenset(("0", "f", "F", "FALSE", "false", "False"))
REWRITE_PROBES_ANNOTATION = "sidecar.istio.io/rewriteAppHTTPProbers"


def is_pod_key(key: str) -> bool:
    """Does this label or annotation configure the sidecar of the pod that carries it?"""
    return key in POD_KEYS or key.startswith(POD_KEY_PREFIXES)

# A gateway Deployment asks the injector for the gateway template (the proxy is the workload) or
# carries a lone istio-proxy container whose image the injector fills in.
GATEWAY_TEMPLATES_ANNOTATION = "inject.istio.io/templates"
AUTO_IMAGE = "auto"
ISTIO_API_SUFFIX = ".istio.io"

PROXY_IMAGE_ANNOTATION = "sidecar.istio.io/proxyImage"
DISTROLESS = "distroless"
# Argo's wait container kills an injected sidecar through a shell in its image, or with this command.
ARGO_KILL_COMMAND_ANNOTATION = "workflows.argoproj.io/kill-cmd-" + PROXY_CONTAINER
ARGO_KILL_COMMAND = '["pilot-agent", "request", "POST", "quitquitquit"]'

# Istio's own Helm profiles: `manifests/helm-profiles/*.yaml` and their copies in each chart's
# `files/profile-*.yaml`. They apply only when an install picks them (`profile`, `compatibilityVersion`),
# so they are not the mesh's configuration unless a config names one in mesh.context.
HELM_PROFILE_FOLDER = "helm-profiles"
HELM_PROFILE_PREFIX = "profile-"


def is_helm_profile(path: str) -> bool:
    parts = path.replace("\\", "/").split("/")
    name, folder = parts[-1], parts[-2] if len(parts) > 1 else ""
    return folder == HELM_PROFILE_FOLDER or (folder == "files" and name.startswith(HELM_PROFILE_PREFIX))
