"""Kinds meshlint knows, and where each workload kind keeps its pods."""

from __future__ import annotations

# Where each Kubernetes workload kind keeps its pod template, below the object's root.
POD_TEMPLATE_PATHS: dict[str, tuple[str, ...]] = {
    "Pod": (),
    "Deployment": ("spec", "template"),
    "StatefulSet": ("spec", "template"),
    "DaemonSet": ("spec", "template"),
    "ReplicaSet": ("spec", "template"),
    "ReplicationController": ("spec", "template"),
    "Job": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"),
    "Rollout": ("spec", "template"),
    # OpenShift (apps.openshift.io/v1): the injector treats its pod template as a Deployment's.
    "DeploymentConfig": ("spec", "template"),
}
# A JobSet runs Jobs: `spec.replicatedJobs[].template` is a Job template.
JOBSET = "JobSet"
# Argo Workflows: each template with a `container`, `script` or `containerSet` runs as a pod.
ARGO_WORKFLOW_KINDS = frozenset(("Workflow", "WorkflowTemplate", "ClusterWorkflowTemplate", "CronWorkflow"))
WORKLOAD_KINDS = frozenset(POD_TEMPLATE_PATHS) | {JOBSET} | ARGO_WORKFLOW_KINDS
# Kinds whose pods run to completion (a bare Pod does when its restartPolicy says so).
BATCH_KINDS = frozenset(("Job", "CronJob", JOBSET)) | ARGO_WORKFLOW_KINDS

# Pseudo-kind for an istiod Helm values file, which has no apiVersion or kind of its own.
HELM_VALUES = "HelmValues"
HELM_VALUES_KEYS = frozenset(("meshConfig", "global", "pilot", "env", "compatibilityVersion", "istio_cni"))

# Pseudo-kind for a Linkerd control-plane (`linkerd-control-plane` chart) Helm values file: no
# apiVersion or kind, a top-level `proxy` beside `proxyInit` or `identity`, or `linkerdVersion`.
LINKERD_HELM_VALUES = "LinkerdHelmValues"
LINKERD_HELM_VALUES_KEYS = frozenset(("proxy", "proxyInit", "identity", "linkerdVersion"))
# Linkerd's policy resource whose port a skipped inbound port takes out of its reach (ML510).
LINKERD_SERVER = "Server"

# Kinds that can configure the mesh itself (mesh config, Helm values, istiod env).
MESH_CONFIG_KINDS = frozenset(("IstioOperator", "ConfigMap", HELM_VALUES))
MESH_CONTEXT_KINDS = frozenset(("Namespace", "Service", "PeerAuthentication", "Sidecar", LINKERD_HELM_VALUES, LINKERD_SERVER)) | MESH_CONFIG_KINDS
# Checked as written, never read as context (the rules about them need only the context's other facts).
POLICY_KINDS = frozenset(("AuthorizationPolicy",))
# Read in the first pass only for what they declare (Istio revision tags, the Services webhooks call), never checked.
# A cluster's own manifest (kind, Cluster API, eksctl) declares its Kubernetes release (mesh/clusterversion.py).
DECLARATION_KINDS = frozenset(("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "Application", "Cluster", "KubeadmControlPlane", "ClusterConfig"))
