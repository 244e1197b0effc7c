"""`--diff-base REF` on a throwaway git repository: only what the change touched, or cites."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from helpers import ROOT, git, lint
from meshlint.cli import main

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.fixture
def repo(tmp_path, monkeypatch):
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "manifests")
    git(tmp_path, "checkout", "-q", "-b", "change")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def check(*args):
    return CliRunner().invoke(main, ["check", "examples", *args])


def reported(*args):
    result = check("--format", "json", *args)
    return result, json.loads(result.stdout) if result.stdout else None


def edit(path, old, new):
    path.write_text(path.read_text().replace(old, new))


def test_a_finding_on_a_changed_line_is_reported_and_one_on_an_untouched_line_is_not(repo):
    everything = lint(["examples"]).findings
    edit(repo / "examples" / "apps" / "orders-api.yaml", 'excludeOutboundPorts: "5432"', 'excludeOutboundPorts: "5432,6379"')
    git(repo, "commit", "-q", "-am", "exclude redis too")
    result, report = reported("--diff-base", "main")
    assert result.exit_code == 1
    after = lint(["examples"]).findings
    assert [f["code"] for f in report["findings"]] == ["ML402"]
    assert report["findings"][0]["line"] == 21
    assert report["summary"]["outside_diff"] == len(after) - 1 == len(everything) - 1
    assert check("--diff-base", "main").stdout.endswith(", 6 outside the diff\n")
    # Uncommitted edits count too: the working tree is compared with the base.
    edit(repo / "examples" / "jobs" / "nightly-report.yaml", "name: nightly-report", "name: nightly-export")
    _, report = reported("--diff-base", "main")
    assert sorted(f["code"] for f in report["findings"]) == ["ML402"]  # the rename is not on a finding's line


def test_a_change_to_a_mesh_wide_source_reports_the_workloads_it_affects(repo):
    edit(repo / "examples" / "platform" / "istio-operator.yaml", "terminationDrainDuration: 30s", "terminationDrainDuration: 25s")
    git(repo, "commit", "-q", "-am", "longer drain")
    result, report = reported("--diff-base", "main")
    assert result.exit_code == 1
    full = {(f["path"], f["code"]): f for f in json.loads(check("--format", "json").stdout)["findings"]}
    # ML301 stands on the Deployment's grace period, which did not change; it cites the changed drain.
    assert report["findings"] == [full[("examples/apps/checkout.yaml", "ML301")]]
    assert report["findings"][0]["related"] == [{"path": "examples/platform/istio-operator.yaml", "line": 14, "column": 33}]


def test_untracked_files_are_new_in_every_line(repo):
    shutil.copy(repo / "examples" / "jobs" / "nightly-report.yaml", repo / "examples" / "jobs" / "weekly-report.yaml")
    _, report = reported("--diff-base", "HEAD")
    assert [(f["path"], f["code"]) for f in report["findings"]] == [
        ("examples/jobs/weekly-report.yaml", "ML101"), ("examples/jobs/weekly-report.yaml", "ML201"),
    ]


def test_the_base_is_where_the_branch_left_main(repo):
    """Lines main changed after the branch left it are not the branch's changes."""
    git(repo, "checkout", "-q", "main")
    edit(repo / "examples" / "apps" / "checkout.yaml", "terminationGracePeriodSeconds: 20", "terminationGracePeriodSeconds: 15")
    git(repo, "commit", "-q", "-am", "main moves on")
    git(repo, "checkout", "-q", "change")
    result, report = reported("--diff-base", "main")
    assert (result.exit_code, report["findings"]) == (0, [])


@pytest.mark.parametrize(
    "ref, message",
    [
        ("no-such-branch", "meshlint: error: --diff-base: unknown revision 'no-such-branch' (fetched? a shallow clone may not have it)\n"),
        ("--output=x", "meshlint: error: --diff-base: unknown revision '--output=x' (fetched? a shallow clone may not have it)\n"),
    ],
)
def test_unknown_ref_is_exit_2_with_one_line(repo, ref, message):
    result = check(f"--diff-base={ref}")
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", message)


def test_outside_a_repository_is_exit_2_with_one_line(tmp_path, monkeypatch):
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    result = check("--diff-base", "main")
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", "meshlint: error: --diff-base: not in a git repository\n")
