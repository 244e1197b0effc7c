"""The rule contract: a check's subject is typed by its scopes, so that mypy holds each check to the
subjects the engine gives it (meshlint.rule.Scope), and a rule reaches a fact one way: what its
subject holds, or the mesh context through its rule context."""

from __future__ import annotations

import ast
import inspect
import pickle
from pathlib import Path

import pytest

import meshlint.rules
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


RULES_FOLDER = Path(meshlint.rules.__file__).parent
# Facts the mesh context already holds, read once for the run: a rule asks for them
# (`ctx.mesh.sidecar_of`), never reads them again itself.
READ_ONCE = {"read_sidecar"}


@pytest.mark.parametrize("module", sorted(p.name for p in RULES_FOLDER.glob("ml*.py")))
def test_a_rule_reaches_the_mesh_context_through_its_rule_context_alone(module):
    tree = ast.parse((RULES_FOLDER / module).read_text())
    through_others = [
        node.lineno for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr == "mesh" and not (isinstance(node.value, ast.Name) and node.value.id == "ctx")
    ]
    read_again = [
        node.lineno for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) in READ_ONCE
    ]
    assert (through_others, read_again) == ([], [])
