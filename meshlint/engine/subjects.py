"""What each rule checks in a file: the file itself, and for each resource the most specific subject
the rule takes (a workload's view, else a mesh source, else the resource as written)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from meshlint.mesh.context import MeshContext
from meshlint.mesh.sources import MeshSource, mesh_source
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import MESH_CONFIG_KINDS
from meshlint.model.resource import Resource
from meshlint.rule import FILE, MESH_CONFIG, RESOURCE, WORKLOAD, Rule
from meshlint.source.loader import LoadedFile


class ResourceSubjects:
    """A resource with its workload view and its mesh source, each built once for all rules."""

    __slots__ = ("resource", "source", "view")

    def __init__(self, resource: Resource, mesh: MeshContext) -> None:
        self.resource = resource
        self.view: WorkloadView | None = mesh.workload(resource) if resource.is_workload else None
        self.source: MeshSource | None = mesh_source(resource) if resource.kind in MESH_CONFIG_KINDS else None

    def for_rule(self, rule: Rule) -> Any:
        """The most specific subject `rule` takes for this resource, or None."""
        if rule.kinds is not None and self.resource.kind not in rule.kinds:
            return None
        if self.view is not None and WORKLOAD in rule.scopes:
            return self.view
        if self.source is not None and MESH_CONFIG in rule.scopes:
            return self.source
        if RESOURCE in rule.scopes:
            return self.resource
        return None


def subjects(rule: Rule, loaded: LoadedFile, resources: list[ResourceSubjects]) -> Iterator[tuple[Any, Resource | None]]:
    """(subject, the resource it is about) for every check `rule` makes in this file."""
    if FILE in rule.scopes:
        yield loaded, None
    for item in resources:
        subject = item.for_rule(rule)
        if subject is not None:
            yield subject, item.resource
