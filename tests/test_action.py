"""The composite GitHub Action: its steps, and its gate script run here the way the runner runs it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from ruamel.yaml import YAML

from helpers import ROOT

ACTION = YAML(typ="safe").load((ROOT / "action.yml").read_text())
STEPS = {step.get("name", step.get("uses")): step for step in ACTION["runs"]["steps"]}
RACE = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    metadata: {labels: {app: web, sidecar.istio.io/inject: \"true\"}}\n    spec:\n      containers: [{name: web, image: web}]\n"


def test_action_is_composite_and_uploads_sarif():
    assert ACTION["runs"]["using"] == "composite"
    upload = STEPS["Upload SARIF"]
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert upload["with"]["sarif_file"] == "${{ inputs.sarif-file }}"
    assert "always()" in upload["if"]  # findings fail the check step, and the SARIF is still uploaded
    assert "--format sarif" in STEPS["Run meshlint"]["run"]


def run_step(name, env, cwd):
    step = STEPS[name]
    full = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    full.update(env)
    return subprocess.run(["bash", "-c", step["run"]], cwd=cwd, env=full, capture_output=True, text=True, check=False)


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
@pytest.mark.parametrize(
    "paths, fail_on, code",
    [("manifests", "warning", 1), ("manifests", "error", 0), ("missing", "warning", 2)],
)
def test_gate_passes_meshlints_exit_code_through(tmp_path, paths, fail_on, code):
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "web.yaml").write_text(RACE)
    output = tmp_path / "github_output"
    env = {
        "MESHLINT_PATHS": paths,
        "MESHLINT_FAIL_ON": fail_on,
        "MESHLINT_ARGS": "--istio-version 1.26",
        "MESHLINT_SARIF": "out.sarif",
        "GITHUB_OUTPUT": str(output),
    }
    checked = run_step("Run meshlint", env, tmp_path)
    assert checked.returncode == 0  # the step records the code; the gate step fails the job
    assert output.read_text() == f"exit-code={code}\n"
    if code != 2:
        sarif = json.loads((tmp_path / "out.sarif").read_text())
        assert [r["ruleId"] for r in sarif["runs"][0]["results"]] == ["ML101"]
        assert checked.stdout.startswith("::warning file=manifests/web.yaml,line=6,col=5,title=ML101 startup-race::")
    gate = run_step("Gate on meshlint's exit code", {"MESHLINT_EXIT": str(code)}, tmp_path)
    assert gate.returncode == code
