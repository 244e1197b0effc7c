"""Resources: the Kubernetes objects a document holds, with their identity."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from typing import Any

from meshlint.findings import ResourceId
from meshlint.memo import cached_property
from meshlint.model.kinds import (
    ARGO_WORKFLOW_KINDS,
    HELM_VALUES,
    HELM_VALUES_KEYS,
    JOBSET,
    LINKERD_HELM_VALUES,
    POD_TEMPLATE_PATHS,
    WORKLOAD_KINDS,
)
from meshlint.source.document import Document, Node

ORIGIN_ANNOTATION = "config.kubernetes.io/origin"


class Resource:
    """One Kubernetes object of a document: its kind, apiVersion and root mapping."""

    kind: str
    api_version: str
    root: Node
    document: Document

    def __init__(self, kind: str, api_version: str, root: Node, document: Document) -> None:
        self.kind = kind
        self.api_version = api_version
        self.root = root
        self.document = document

    # Read-only views of the document, asked for by many rules: computed once per resource.
    @cached_property
    def metadata(self) -> Node:
        return self.root.get("metadata")

    @cached_property
    def name(self) -> str:
        return self.metadata.get("name").text or ""

    @cached_property
    def namespace(self) -> str:
        return self.metadata.get("namespace").text or ""

    @cached_property
    def labels(self) -> dict[str, Node]:
        """The object's own labels (a controller's, not its pods')."""
        return self.metadata.get("labels").string_map()

    @cached_property
    def annotations(self) -> dict[str, Node]:
        """The object's own annotations (a controller's, not its pods')."""
        return self.metadata.get("annotations").string_map()

    @property
    def rendered_from(self) -> str | None:
        """The file this object was rendered from, when a rendered stream says: Kustomize's
        `config.kubernetes.io/origin` annotation (`buildMetadata: [originAnnotations]`), or Helm's
        `# Source:` comment."""
        origin = self.annotations.get(ORIGIN_ANNOTATION)
        if origin is not None and origin.text:
            match = re.search(r"^\s*path:\s*[\"']?([^\"'\s]+)", origin.text, re.M)
            if match:
                return match.group(1)
        return self.document.rendered_from

    @property
    def identity(self) -> ResourceId:
        # Every finding keeps one until the report is written: one copy of each kind and namespace.
        return ResourceId(sys.intern(self.kind), self.name, sys.intern(self.namespace))

    @property
    def path(self) -> str:
        return self.document.path

    @property
    def is_workload(self) -> bool:
        return self.kind in WORKLOAD_KINDS

    @property
    def template_path(self) -> str:
        """Where its pods' metadata is written, as a dotted path (`spec.template.metadata`)."""
        if self.kind in ARGO_WORKFLOW_KINDS:
            return "spec.podMetadata" if self.kind != "CronWorkflow" else "spec.workflowSpec.podMetadata"
        if self.kind == JOBSET:
            return "spec.replicatedJobs[].template.spec.template.metadata"
        return ".".join((*POD_TEMPLATE_PATHS.get(self.kind, ()), "metadata"))

    @property
    def title(self) -> str:
        """`Deployment orders`, as messages name it (Argo's `generateName` stands in for a name)."""
        name = self.name or (f"{self.metadata.get('generateName').text}*" if self.metadata.get("generateName").text else "(unnamed)")
        return f"{self.kind} {name}"


def resources_of(document: Document) -> Iterator[Resource]:
    """The resources a document holds: itself, the items of a `kind: List`, or Helm values."""
    root = document.root
    if not root.is_map:
        return
    kind, api_version = root.get("kind").value, root.get("apiVersion").value
    if isinstance(kind, str) and isinstance(api_version, str):
        if kind == "List" or (kind.endswith("List") and root.get("items").is_list):
            for item in root.get("items").elements():
                item_kind, item_api = item.get("kind").value, item.get("apiVersion").value
                if item.is_map and isinstance(item_kind, str) and isinstance(item_api, str):
                    yield Resource(item_kind, item_api, item, document)
            return
        yield Resource(kind, api_version, root, document)
    elif kind is None and api_version is None and _linkerd_values(root.value):
        yield Resource(LINKERD_HELM_VALUES, "", root, document)
    elif kind is None and api_version is None and HELM_VALUES_KEYS.intersection(root.value):
        yield Resource(HELM_VALUES, "", root, document)


def _linkerd_values(keys: dict[Any, Any]) -> bool:
    """Linkerd control-plane Helm values: its `proxy` beside `proxyInit` or `identity`, or its
    `linkerdVersion` (checked before istiod's values: old Linkerd charts have a `global` key too)."""
    return "linkerdVersion" in keys or ("proxy" in keys and ("proxyInit" in keys or "identity" in keys))
