"""The composite GitHub Action: its steps, and its shell steps run here the way the runner runs them
(`bash -e`, inputs as environment variables)."""

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
RACE = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    metadata: {labels: {app: web, sidecar.istio.io/inject: \"true\"}}\n    spec:\n      containers: [{name: web, image: web, env: [{name: API_URL, value: \"http://api:8080\"}]}]\n"
pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")


def test_action_is_composite_and_uploads_sarif_without_ever_failing_the_job_for_it():
    assert ACTION["runs"]["using"] == "composite"
    upload = STEPS["Upload SARIF"]
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert upload["with"]["sarif_file"] == "${{ inputs.sarif-file }}"
    assert "always()" in upload["if"]  # findings fail the check step, and the SARIF is still uploaded
    assert upload["continue-on-error"] is True  # no code scanning, or a fork's pull request: the gate still decides
    names = list(STEPS)
    assert names.index("Upload SARIF") < names.index("Gate on meshlint's exit code")
    assert ACTION["inputs"]["fail-on"]["default"] == ""  # the config's fail-on, unless given


def test_one_meshlint_run_makes_every_report():
    script = STEPS["Run meshlint"]["run"]
    commands = [line for line in script.splitlines() if line.strip().startswith("meshlint ")]
    assert len(commands) == 1
    assert "--format sarif --output \"$MESHLINT_SARIF\" --format github" in commands[0]


def run_step(name, env, cwd):
    step = STEPS[name]
    full = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    full.update(env)
    # As the runner runs a `shell: bash` step.
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=cwd, env=full, capture_output=True, text=True, check=False)


def lint_step(tmp_path, paths, fail_on="", args="--istio-version 1.26", sarif="out.sarif"):
    output = tmp_path / "github_output"
    output.write_text("")
    env = {"MESHLINT_PATHS": paths, "MESHLINT_FAIL_ON": fail_on, "MESHLINT_ARGS": args, "MESHLINT_SARIF": sarif, "GITHUB_OUTPUT": str(output)}
    checked = run_step("Run meshlint", env, tmp_path)
    assert checked.returncode == 0, checked.stderr  # the step records the code; the gate step fails the job
    return checked, output.read_text()


@pytest.fixture
def workspace(tmp_path):
    for folder in ("manifests", "platform"):
        (tmp_path / folder).mkdir()
    (tmp_path / "manifests" / "web.yaml").write_text(RACE)
    (tmp_path / "platform" / "api.yaml").write_text(RACE.replace("name: web}", "name: api}"))
    return tmp_path


@pytest.mark.parametrize(
    "paths, fail_on, code",
    [("manifests", "warning", 1), ("manifests", "error", 0), ("missing", "warning", 2), ("manifests", "never", 0)],
)
def test_gate_passes_meshlints_exit_code_through(workspace, paths, fail_on, code):
    checked, output = lint_step(workspace, paths, fail_on)
    assert output == f"exit-code={code}\n"
    if code != 2:
        sarif = json.loads((workspace / "out.sarif").read_text())
        assert [r["ruleId"] for r in sarif["runs"][0]["results"]] == ["ML100"]
        assert checked.stdout.startswith("::warning file=manifests/web.yaml,line=6,col=5,title=ML100 startup-race-mesh-wide::")
    gate = run_step("Gate on meshlint's exit code", {"MESHLINT_EXIT": str(code)}, workspace)
    assert gate.returncode == code


def test_multi_line_paths_are_all_linted(workspace):
    # Two workloads and no mesh-wide configuration in the run: said at the first only when asked for.
    (workspace / ".meshlint.yaml").write_text("rules:\n  ML100: {require-source: false}\n")
    checked, output = lint_step(workspace, "manifests/\nplatform\n\n", "warning", args="--istio-version 1.26\n--kubernetes-version 1.30\n")
    assert output == "exit-code=1\n"
    annotated = [line.split(",")[0] for line in checked.stdout.splitlines()]
    assert annotated == ["::warning file=manifests/web.yaml"]  # one mesh-wide startup race for both paths' workloads
    [result] = json.loads((workspace / "out.sarif").read_text())["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "manifests/web.yaml"
    assert [r["physicalLocation"]["artifactLocation"]["uri"] for r in result["relatedLocations"]] == ["platform/api.yaml"]


def test_fail_on_comes_from_the_config_unless_given(workspace):
    (workspace / ".meshlint.yaml").write_text("fail-on: error\n")
    _, output = lint_step(workspace, "manifests")
    assert output == "exit-code=0\n"
    _, output = lint_step(workspace, "manifests", fail_on="warning")
    assert output == "exit-code=1\n"


def test_the_docs_url_input_links_each_sarif_rule_to_its_section(workspace):
    page = "https://github.com/acme/meshlint/blob/v1/docs/rules.md"
    output = workspace / "github_output"
    env = {"MESHLINT_PATHS": "manifests", "MESHLINT_FAIL_ON": "", "MESHLINT_ARGS": "", "MESHLINT_SARIF": "out.sarif", "GITHUB_OUTPUT": str(output)}
    assert run_step("Run meshlint", dict(env, MESHLINT_DOCS_URL=page), workspace).returncode == 0
    driver = json.loads((workspace / "out.sarif").read_text())["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == page
    assert {r["id"]: r["helpUri"] for r in driver["rules"]}["ML101"] == f"{page}#ml101-startup-race"
    assert ACTION["inputs"]["docs-url"]["default"] == ""
    assert STEPS["Run meshlint"]["env"]["MESHLINT_DOCS_URL"] == "${{ inputs.docs-url }}"
    run_step("Run meshlint", dict(env, MESHLINT_DOCS_URL=""), workspace)  # empty: no link, the help is in the report
    assert "informationUri" not in json.loads((workspace / "out.sarif").read_text())["runs"][0]["tool"]["driver"]


def test_sarif_into_a_new_directory_and_paths_are_never_globbed(workspace):
    (workspace / "*.yaml").write_text(RACE)  # a file literally named `*.yaml`
    checked, output = lint_step(workspace, "*.yaml", "warning", sarif="reports/meshlint.sarif")
    assert output == "exit-code=1\n"
    assert checked.stdout.startswith("::warning file=*.yaml,")
    assert (workspace / "reports" / "meshlint.sarif").exists()


def test_the_gate_fails_when_the_check_step_left_no_exit_code(workspace):
    assert run_step("Gate on meshlint's exit code", {"MESHLINT_EXIT": ""}, workspace).returncode == 2


def test_the_actions_used_are_their_current_major_versions():
    # Node 20 actions are being retired from the runners; these majors run on Node 24 (CodeQL Action v3
    # is deprecated in December 2026).
    used = sorted(step["uses"] for step in ACTION["runs"]["steps"] if "uses" in step)
    assert used == ["actions/cache@v6", "actions/setup-python@v7", "github/codeql-action/upload-sarif@v4"]


def test_each_use_of_the_action_can_upload_under_its_own_category():
    assert ACTION["inputs"]["category"]["default"] == "meshlint"  # as before the input existed
    assert STEPS["Upload SARIF"]["with"]["category"] == "${{ inputs.category }}"


def test_pips_downloads_are_cached_under_a_key_of_the_actions_own_dependency_files(tmp_path):
    cache = STEPS["Cache pip's downloads"]
    assert cache["with"]["path"] == "${{ steps.pip-cache.outputs.dir }}"
    assert cache["with"]["key"] == "meshlint-pip-${{ runner.os }}-py${{ steps.python.outputs.python-version }}-${{ steps.pip-cache.outputs.key }}"
    assert cache["if"] == "steps.pip-cache.outputs.dir != ''"
    names = list(STEPS)
    assert names.index("actions/setup-python@v7") < names.index("Locate pip's cache") < names.index("Cache pip's downloads") < names.index("Install meshlint")
    assert STEPS["actions/setup-python@v7"]["id"] == "python"

    def located(source, **env):
        output = tmp_path / "github_output"
        output.write_text("")
        done = run_step("Locate pip's cache", {"MESHLINT_SOURCE": str(source), "GITHUB_OUTPUT": str(output), **env}, tmp_path)
        assert (done.returncode, done.stderr) == (0, "")
        return dict(line.split("=", 1) for line in output.read_text().splitlines())

    found = located(ROOT)
    expected = subprocess.run([sys.executable, "-m", "pip", "cache", "dir"], capture_output=True, text=True, check=True).stdout.strip()
    assert found["dir"] == expected
    assert len(found["key"]) == 16 and int(found["key"], 16) >= 0
    copy = tmp_path / "source"
    copy.mkdir()
    for name in ("pyproject.toml", "setup.py"):
        (copy / name).write_bytes((ROOT / name).read_bytes())
    assert located(copy)["key"] == found["key"]  # the key follows the files' content, not where they are
    (copy / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text() + "\n# another dependency\n")
    assert located(copy)["key"] != found["key"]
    assert located(ROOT, PIP_NO_CACHE_DIR="1")["dir"] == ""  # no cache kept: nothing to restore or save
