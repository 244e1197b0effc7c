"""Which rules see a resource, and as what: the plan a run makes once per resource shape."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from meshlint.engine.filecheck import Dispatch
from meshlint.engine.subjects import AS_RESOURCE, AS_SOURCE, AS_VIEWS, ResourceSubjects
from meshlint.findings import Issue, Severity
from meshlint.mesh.context import MeshContext
from meshlint.mesh.options import MeshOptions
from meshlint.model.resource import resources_of
from meshlint.rule import FILE, MESH_CONFIG, RESOURCE, WORKLOAD, Rule
from meshlint.source.loader import load_text


def _nothing(subject: Any, context: Any) -> Iterable[Issue]:
    return ()


def _rule(code: str, scopes: tuple[str, ...], kinds: frozenset[str] | None = None) -> Rule:
    return Rule(code, code.lower(), Severity.WARNING, scopes, _nothing, "", kinds=kinds)


# In the config's order; the codes say what each rule takes.
WORKLOAD_ONLY = _rule("T001", (WORKLOAD,))
WORKLOAD_OR_RESOURCE = _rule("T002", (WORKLOAD, RESOURCE))
SOURCE_OR_RESOURCE = _rule("T003", (MESH_CONFIG, RESOURCE))
RESOURCE_OF_SERVICES = _rule("T004", (RESOURCE,), kinds=frozenset({"Service"}))
FILE_ONLY = _rule("T005", (FILE,))
SOURCE_ONLY = _rule("T006", (MESH_CONFIG,))
RULES = [WORKLOAD_ONLY, WORKLOAD_OR_RESOURCE, SOURCE_OR_RESOURCE, RESOURCE_OF_SERVICES, FILE_ONLY, SOURCE_ONLY]


def _codes(plan: list[tuple[Rule, int]]) -> list[tuple[str, int]]:
    return [(rule.code, way) for rule, way in plan]


def test_a_workload_is_seen_by_its_view_rules_as_views_and_by_resource_rules_as_written() -> None:
    plan = Dispatch(RULES).plan(("Deployment", True, False))
    assert _codes(plan) == [("T001", AS_VIEWS), ("T002", AS_VIEWS), ("T003", AS_RESOURCE)]


def test_a_workload_without_pods_is_seen_as_written_by_a_rule_that_also_takes_resources() -> None:
    plan = Dispatch(RULES).plan(("Deployment", False, False))
    assert _codes(plan) == [("T002", AS_RESOURCE), ("T003", AS_RESOURCE)]


def test_a_mesh_config_resource_is_seen_as_its_source_before_as_written() -> None:
    plan = Dispatch(RULES).plan(("IstioOperator", False, True))
    assert _codes(plan) == [("T002", AS_RESOURCE), ("T003", AS_SOURCE), ("T006", AS_SOURCE)]


def test_a_rule_limited_to_kinds_is_left_out_for_other_kinds_and_file_rules_never_take_resources() -> None:
    dispatch = Dispatch(RULES)
    assert _codes(dispatch.plan(("Service", False, False))) == [("T002", AS_RESOURCE), ("T003", AS_RESOURCE), ("T004", AS_RESOURCE)]
    assert _codes(dispatch.plan(("ConfigMap", False, False))) == [("T002", AS_RESOURCE), ("T003", AS_RESOURCE)]
    assert dispatch.file_rules == [FILE_ONLY]


def test_a_plan_is_made_once_per_shape() -> None:
    dispatch = Dispatch(RULES)
    first = dispatch.plan(("Deployment", True, False))
    assert dispatch.plan(("Deployment", True, False)) is first
    assert dispatch.plan(("Deployment", False, False)) is not first


def _subjects(text: str) -> ResourceSubjects:
    resource = next(r for d in load_text("f.yaml", text).documents for r in resources_of(d))
    return ResourceSubjects(resource, MeshContext(options=MeshOptions()))


CRONJOB = """\
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "0 1 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          containers: [{name: app, image: app}]
"""


def test_each_way_lists_its_subjects_with_the_pods_each_is_about() -> None:
    item = _subjects(CRONJOB)
    (view,) = item.views
    assert item.shape == ("CronJob", True, False)
    assert item.taken(AS_VIEWS) == [(view, [view.template])]
    assert item.taken(AS_SOURCE) == []
    assert item.taken(AS_RESOURCE) == [(item.resource, [view.template])]
    assert item.ways == (item.taken(AS_VIEWS), item.taken(AS_SOURCE), item.taken(AS_RESOURCE))
    assert item.for_rule(WORKLOAD_OR_RESOURCE) == item.taken(AS_VIEWS)
    assert item.for_rule(SOURCE_ONLY) == []


def test_a_mesh_config_resource_has_a_source_and_no_views() -> None:
    item = _subjects("apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nmetadata: {name: mesh}\nspec: {meshConfig: {defaultConfig: {terminationDrainDuration: 5s}}}\n")
    assert item.shape == ("IstioOperator", False, True)
    assert item.taken(AS_SOURCE) == [(item.source, [])]
    assert item.for_rule(SOURCE_OR_RESOURCE) == item.taken(AS_SOURCE)
