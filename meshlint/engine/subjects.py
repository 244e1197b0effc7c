"""What each rule checks in a file: the file itself, and for each resource the most specific subject
the rule takes (each of its pods' workload view, else its mesh source, else the resource as written)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from meshlint.mesh.context import MeshContext
from meshlint.mesh.options import MeshOptions
from meshlint.mesh.sources import MeshSource, is_mesh_config, mesh_source
from meshlint.mesh.workload import WorkloadView
from meshlint.mesh.workloadbuild import build_view
from meshlint.model.pod import PodTemplate, pod_templates
from meshlint.model.resource import Resource
from meshlint.rule import FILE, MESH_CONFIG, RESOURCE, WORKLOAD, Rule
from meshlint.source.loader import LoadedFile


class ResourceSubjects:
    """A resource with the views of its pods and its mesh source, each built once for all rules."""

    __slots__ = ("resource", "source", "views", "ways")

    def __init__(self, resource: Resource, mesh: MeshContext, options: MeshOptions | None = None) -> None:
        self.resource = resource
        # A pod template without containers (a patch fragment, a test fixture) is not a workload.
        pods = [t for t in pod_templates(resource) if t.containers] if resource.is_workload else []
        self.views: list[WorkloadView] = [build_view(mesh, t, options) for t in pods]
        self.source: MeshSource | None = mesh_source(resource) if is_mesh_config(resource) else None
        # Each of the three ways a rule may see this resource, indexed by AS_VIEWS, AS_SOURCE and
        # AS_RESOURCE, made once for every rule that asks (a workload is asked by some twenty rules;
        # the lists are only read).
        templates = [view.template for view in self.views]
        self.ways: tuple[list[tuple[Any, list[PodTemplate]]], ...] = (
            [(view, [view.template]) for view in self.views],
            [(self.source, templates)] if self.source is not None else [],
            [(resource, templates)],
        )

    @property
    def shape(self) -> tuple[str, bool, bool]:
        """What decides which subjects a rule takes here: the kind, and whether there are views and a
        source (`taken_as`)."""
        return self.resource.kind, bool(self.views), self.source is not None

    def taken(self, way: int) -> list[tuple[Any, list[PodTemplate]]]:
        """The subjects of one way (`AS_VIEWS`...), with the pods each is about (lists shared by every
        rule: not to be changed)."""
        return self.ways[way]

    def for_rule(self, rule: Rule) -> list[tuple[Any, list[PodTemplate]]]:
        """The most specific subjects `rule` takes for this resource, with the pods each is about."""
        way = taken_as(rule, *self.shape)
        return [] if way is None else self.taken(way)


AS_VIEWS, AS_SOURCE, AS_RESOURCE = range(3)


def taken_as(rule: Rule, kind: str, views: bool, source: bool) -> int | None:
    """How `rule` sees a resource of `kind` (with workload views, with a mesh source): as each view,
    as its source, as the resource, or not at all."""
    if rule.kinds is not None and kind not in rule.kinds:
        return None
    if views and WORKLOAD in rule.scopes:
        return AS_VIEWS
    if source and MESH_CONFIG in rule.scopes:
        return AS_SOURCE
    if RESOURCE in rule.scopes:
        return AS_RESOURCE
    return None


def subjects(
    rule: Rule, loaded: LoadedFile, resources: list[ResourceSubjects]
) -> Iterator[tuple[Any, Resource | None, list[PodTemplate]]]:
    """(subject, the resource it is about, its pods) for every check `rule` makes in this file."""
    if FILE in rule.scopes:
        yield loaded, None, []
    for item in resources:
        for subject, pods in item.for_rule(rule):
            yield subject, item.resource, pods
