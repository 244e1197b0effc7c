"""The rule contract: a check's subject is typed by its scopes, so that mypy holds each check to the
subjects the engine gives it (meshlint.rule.Scope)."""

from __future__ import annotations

import inspect
import pickle

import pytest

from helpers import RULES
from meshlint.rule import FILE, MESH_CONFIG, RESOURCE, RUN, SCOPES, WORKLOAD, Scope

SUBJECT = {FILE: "LoadedFile", RESOURCE: "Resource", WORKLOAD: "WorkloadView", MESH_CONFIG: "MeshSource", RUN: "MeshRun"}


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_a_checks_subject_is_annotated_with_the_subjects_of_its_scopes(rule):
    first = next(iter(inspect.signature(rule.check).parameters.values()))
    assert set(first.annotation.split(" | ")) == {SUBJECT[scope] for scope in rule.scopes}


def test_a_scope_is_its_name_wherever_text_is_read():
    assert SCOPES == ("file", "resource", "workload", "mesh-config", "run")
    assert all(isinstance(scope, Scope) for scope in SCOPES)
    assert pickle.loads(pickle.dumps(WORKLOAD)) == "workload" and {"workload": 1}[WORKLOAD] == 1
    assert f"{(WORKLOAD, RESOURCE)}" == "('workload', 'resource')"
