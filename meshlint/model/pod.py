"""The pod a workload creates, and its containers: what the injection webhook and the kubelet see."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from meshlint.findings import Position
from meshlint.model.kinds import BATCH_KINDS, POD_TEMPLATE_PATHS
from meshlint.model.resource import Resource
from meshlint.source.document import Node

RUN_TO_COMPLETION_POLICIES = frozenset(("Never", "OnFailure"))


@dataclass(frozen=True, eq=False, repr=False)
class Container:
    """A container of a pod template; `init` for init containers (native sidecars are init containers).
    `pod_user` is the pod-level `securityContext.runAsUser`, which a container inherits."""

    node: Node
    init: bool
    index: int
    pod_user: Any = None

    @cached_property
    def name(self) -> str:
        return self.node.get("name").text or f"#{self.index}"

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


@dataclass(frozen=True, eq=False, repr=False)
class PodTemplate:
    """The pod a workload creates: what the injection webhook and the kubelet see."""

    node: Node
    owner: Resource

    # Every rule asks for these; they are computed once per template (callers must not mutate them).
    @cached_property
    def metadata(self) -> Node:
        return self.node.get("metadata")

    @cached_property
    def spec(self) -> Node:
        return self.node.get("spec")

    def labels(self) -> dict[str, Node]:
        return self._labels

    def annotations(self) -> dict[str, Node]:
        return self._annotations

    @cached_property
    def _labels(self) -> dict[str, Node]:
        return self.metadata.get("labels").string_map()

    @cached_property
    def _annotations(self) -> dict[str, Node]:
        return self.metadata.get("annotations").string_map()

    @cached_property
    def _pod_user(self) -> Any:
        return self.spec.path("securityContext", "runAsUser").value

    @cached_property
    def containers(self) -> list[Container]:
        return [Container(n, False, i, self._pod_user) for i, n in enumerate(self.spec.get("containers").elements()) if n.is_map]

    @cached_property
    def init_containers(self) -> list[Container]:
        return [Container(n, True, i, self._pod_user) for i, n in enumerate(self.spec.get("initContainers").elements()) if n.is_map]

    @cached_property
    def all_containers(self) -> list[Container]:
        return self.init_containers + self.containers

    @property
    def restart_policy(self) -> str | None:
        return self.spec.get("restartPolicy").text

    @property
    def runs_to_completion(self) -> bool:
        """A Job's or CronJob's pod, or a bare Pod that is not restarted: it is meant to finish."""
        if self.owner.kind in BATCH_KINDS:
            return True
        return self.owner.kind == "Pod" and self.restart_policy in RUN_TO_COMPLETION_POLICIES

    @property
    def fix_position(self) -> Position:
        """Where a fix for something missing goes: the template's metadata, else the kind line."""
        metadata = self.metadata
        if metadata.exists and metadata.key_pos is not None:
            return metadata.key_pos
        return self.owner.root.get("kind").key_pos or self.owner.root.pos


def pod_templates(resource: Resource) -> list[PodTemplate]:
    """The pods a resource creates: the one extractor that knows where each workload kind keeps its
    pod template (none for other kinds, or when the template is not a mapping)."""
    path = POD_TEMPLATE_PATHS.get(resource.kind)
    if path is None:
        return []
    node = resource.root.path(*path)
    return [PodTemplate(node, resource)] if node.is_map else []
