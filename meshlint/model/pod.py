"""The pod a workload creates, and its containers: what the injection webhook and the kubelet see."""

from __future__ import annotations

from typing import Any, Final

from meshlint.findings import Position
from meshlint.memo import cached_property
from meshlint.model.kinds import ARGO_WORKFLOW_KINDS, BATCH_KINDS, JOBSET, POD_TEMPLATE_PATHS
from meshlint.model.resource import Resource
from meshlint.source.document import Node

RUN_TO_COMPLETION_POLICIES = frozenset(("Never", "OnFailure"))
PROBE_ROLES = ("livenessProbe", "readinessProbe", "startupProbe")


class Container:
    """A container of a pod template; `init` for init containers (native sidecars are init containers).
    `pod_user` is the pod-level `securityContext.runAsUser`, which a container inherits."""

    node: Final[Node]
    init: Final[bool]
    index: Final[int]
    pod_user: Final[Any]
    unnamed: Final[str | None]  # what the container is called when the manifest names none (Argo: main)

    def __init__(self, node: Node, init: bool, index: int, pod_user: Any = None, unnamed: str | None = None) -> None:
        self.node = node
        self.init = init
        self.index = index
        self.pod_user = pod_user
        self.unnamed = unnamed

    @cached_property
    def name(self) -> str:
        return self.node.get("name").text or self.unnamed or f"#{self.index}"

    @property
    def image(self) -> str:
        return self.node.get("image").text or ""

    @property
    def restart_policy(self) -> str | None:
        return self.node.get("restartPolicy").text

    @property
    def restart_policy_position(self) -> Position:
        return self.node.get("restartPolicy").pos

    @property
    def is_native_sidecar(self) -> bool:
        return self.init and self.restart_policy == "Always"

    @property
    def has_startup_probe(self) -> bool:
        return self.node.get("startupProbe").exists

    @property
    def run_as_user(self) -> Any:
        """The UID the container runs as, when the manifest says: its own, else the pod's."""
        own = self.node.path("securityContext", "runAsUser")
        return own.value if own.exists else self.pod_user

    @property
    def argv(self) -> list[Node]:
        """`command` then `args`, as the kubelet joins them."""
        return [n for key in ("command", "args") for n in self.node.get(key).elements()]

    @cached_property
    def ports(self) -> list[tuple[int, str | None, str]]:
        """Declared ports as (containerPort, name, protocol); entries without a number are left out."""
        found = []
        for port in self.node.get("ports").elements():
            number = port.get("containerPort").value
            if isinstance(number, int) and not isinstance(number, bool):
                found.append((number, port.get("name").text, port.get("protocol").text or "TCP"))
        return found

    @property
    def label(self) -> str:
        return f"{'init container' if self.init else 'container'} {self.name!r}"

    @property
    def position(self) -> Position:
        """Where a finding about the container points: its name, else the item itself."""
        name = self.node.get("name")
        return name.pos if name.exists else self.node.pos


class PodTemplate:
    """A pod a workload creates: what the injection webhook and the kubelet see.

    For the Kubernetes kinds `node` is the pod template (`metadata` + `spec`). An Argo template is a
    pod whose labels and annotations are the workflow's `podMetadata` under the template's own
    `metadata`, whose containers are its `container` / `script` / `containerSet` and `sidecars`, and
    whose pod-level fields are the workflow's `spec`."""

    node: Final[Node]
    owner: Final[Resource]
    argo: Final[bool]
    shared_metadata: Final[Node | None]  # Argo `spec.podMetadata`
    pod_spec: Final[Node | None]  # Argo: the workflow's spec, where pod-level fields live
    part: Final[str | None]  # which of the resource's pods: `template report`, `job workers`

    def __init__(
        self,
        node: Node,
        owner: Resource,
        argo: bool = False,
        shared_metadata: Node | None = None,
        pod_spec: Node | None = None,
        part: str | None = None,
    ) -> None:
        self.node = node
        self.owner = owner
        self.argo = argo
        self.shared_metadata = shared_metadata
        self.pod_spec = pod_spec
        self.part = part

    # Every rule asks for these; they are computed once per template (callers must not mutate them).
    @cached_property
    def metadata(self) -> Node:
        return self.node.get("metadata")

    @cached_property
    def spec(self) -> Node:
        return self.pod_spec if self.pod_spec is not None else self.node.get("spec")

    def labels(self) -> dict[str, Node]:
        return self._labels

    def annotations(self) -> dict[str, Node]:
        return self._annotations

    @cached_property
    def _labels(self) -> dict[str, Node]:
        return self._merged("labels")

    @cached_property
    def _annotations(self) -> dict[str, Node]:
        return self._merged("annotations")

    def _merged(self, field: str) -> dict[str, Node]:
        own = self.metadata.get(field).string_map()
        if self.shared_metadata is None:
            return own
        return {**self.shared_metadata.get(field).string_map(), **own}

    @cached_property
    def _pod_user(self) -> Any:
        return self.spec.path("securityContext", "runAsUser").value

    @cached_property
    def containers(self) -> list[Container]:
        if not self.argo:
            nodes = [n for n in self.spec.get("containers").elements() if n.is_map]
            return [Container(n, False, i, self._pod_user) for i, n in enumerate(nodes)]
        # Argo names a template's own container `main`.
        main = [n for n in (self.node.get("container"), self.node.get("script")) if n.is_map]
        others = [n for n in (*self.node.path("containerSet", "containers").elements(), *self.node.get("sidecars").elements()) if n.is_map]
        found = [Container(n, False, i, self._pod_user, "main") for i, n in enumerate(main)]
        return found + [Container(n, False, len(found) + i, self._pod_user) for i, n in enumerate(others)]

    @cached_property
    def init_containers(self) -> list[Container]:
        source = self.node if self.argo else self.spec
        return [Container(n, True, i, self._pod_user) for i, n in enumerate(source.get("initContainers").elements()) if n.is_map]

    @cached_property
    def all_containers(self) -> list[Container]:
        return self.init_containers + self.containers

    @property
    def restart_policy(self) -> str | None:
        return self.spec.get("restartPolicy").text

    @property
    def runs_to_completion(self) -> bool:
        """A Job's, CronJob's, JobSet's or workflow step's pod, or a bare Pod that is not restarted."""
        if self.owner.kind in BATCH_KINDS:
            return True
        return self.owner.kind == "Pod" and self.restart_policy in RUN_TO_COMPLETION_POLICIES

    @property
    def title(self) -> str:
        """How messages name the pod: `Job export`, `Workflow nightly template report`."""
        return f"{self.owner.title} {self.part}" if self.part else self.owner.title

    @property
    def fix_position(self) -> Position:
        """Where a fix for something missing goes: the template's metadata, else (an Argo template
        without metadata) its name, else the kind line."""
        metadata = self.metadata
        if metadata.exists and metadata.key_pos is not None:
            return metadata.key_pos
        if self.argo:
            name = self.node.get("name")
            return name.key_pos or self.node.pos
        return self.owner.root.get("kind").key_pos or self.owner.root.pos


def pod_templates(resource: Resource) -> list[PodTemplate]:
    """The pods a resource creates: the one extractor that knows where each workload kind keeps them
    (none for other kinds, or when a template is not a mapping)."""
    kind = resource.kind
    if kind in ARGO_WORKFLOW_KINDS:
        return _argo_templates(resource)
    if kind == JOBSET:
        pods = []
        for job in resource.root.path("spec", "replicatedJobs").elements():
            node = job.path("template", "spec", "template")
            if node.is_map:
                pods.append(PodTemplate(node, resource, part=f"job {job.get('name').text or '(unnamed)'}"))
        return pods
    path = POD_TEMPLATE_PATHS.get(kind)
    if path is None:
        return []
    node = resource.root.path(*path)
    return [PodTemplate(node, resource)] if node.is_map else []


def _argo_templates(resource: Resource) -> list[PodTemplate]:
    spec = resource.root.get("spec")
    if resource.kind == "CronWorkflow":
        spec = spec.get("workflowSpec")
    shared = spec.get("podMetadata")
    pods = []
    for template in spec.get("templates").elements():
        if template.is_map and any(template.get(key).is_map for key in ("container", "script", "containerSet")):
            part = f"template {template.get('name').text or '(unnamed)'}"
            pods.append(PodTemplate(template, resource, argo=True, shared_metadata=shared if shared.is_map else None, pod_spec=spec, part=part))
    return pods
