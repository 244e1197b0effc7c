"""The Kubernetes release a manifest of the tree states (wave-3 spec V2.6): a kind `Cluster`'s node
images, a Cluster API `Cluster`'s `spec.topology.version`, a `KubeadmControlPlane`'s `spec.version`,
an eksctl `ClusterConfig`'s `metadata.version`. Read in the first pass only, never checked."""

from __future__ import annotations

from meshlint.mesh.options import parse_version
from meshlint.mesh.setting import Setting
from meshlint.model.resource import Resource
from meshlint.source.document import Node

CLUSTER_KINDS = frozenset(("Cluster", "KubeadmControlPlane", "ClusterConfig"))
KUBERNETES_VERSION = "kubernetes.version"  # the claim of the Kubernetes release the tree's cluster runs


def cluster_version(resource: Resource) -> Setting[str] | None:
    """The release, as major.minor, with where it is written; None when the resource states none."""
    group = resource.api_version.split("/", 1)[0]
    root = resource.root
    if resource.kind == "Cluster" and group == "kind.x-k8s.io":
        return _nodes(resource)
    if resource.kind == "Cluster" and group == "cluster.x-k8s.io":
        return _release(root.path("spec", "topology", "version"), "Cluster spec.topology.version")
    if resource.kind == "KubeadmControlPlane" and group == "controlplane.cluster.x-k8s.io":
        return _release(root.path("spec", "version"), "KubeadmControlPlane spec.version")
    if resource.kind == "ClusterConfig" and group == "eksctl.io":
        return _release(root.path("metadata", "version"), "eksctl ClusterConfig metadata.version")
    return None


def _nodes(resource: Resource) -> Setting[str] | None:
    """The oldest release among a kind cluster's node images: native sidecars need every node to
    have it. A node without an image runs kind's default, which the file does not say."""
    found: list[Setting[str]] = []
    for node in resource.root.get("nodes").elements():
        image = node.get("image")
        text = image.text or ""
        tag = text.split("@", 1)[0].rpartition(":")[2] if ":" in text.split("@", 1)[0] else ""
        setting = _release(image, "kind node image", tag) if tag else None
        if setting is None:
            return None
        found.append(setting)
    return min(found, key=lambda s: tuple(int(p) for p in s.value.split("."))) if found else None


def _release(node: Node, where: str, text: str | None = None) -> Setting[str] | None:
    written = text if text is not None else node.text
    release = parse_version(written) if node.exists and written else None
    if release is None or len(release.release) < 2:
        return None
    return Setting(f"{release.release[0]}.{release.release[1]}", node.pos, f"{where} {written}")
