"""The baseline: adopt the gate over existing findings, fail only on new ones, prune fixed ones."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from helpers import ROOT
from meshlint.cli import main

# The baseline keeps findings one by one: each workload's mesh-wide startup race is its own here.
PER_WORKLOAD = "rules:\n  ML100: {group: false}\n"
RACE = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: web, image: web, env: [{name: API_URL, value: \"http://api:8080\"}]}]\n"


@pytest.fixture
def repo(tmp_path, monkeypatch):
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    (tmp_path / ".meshlint.yaml").write_text(PER_WORKLOAD)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def invoke(*args):
    return CliRunner().invoke(main, list(args))


def test_baseline_round_trip(repo):
    written = invoke("check", "examples", "--write-baseline", "baseline.json")
    assert written.exit_code == 0
    assert written.stderr == "meshlint: wrote 7 findings to the baseline baseline.json\n"
    assert written.stdout.endswith(", 7 baselined\n")

    quiet = invoke("check", "examples", "--baseline", "baseline.json")
    assert (quiet.exit_code, quiet.stderr) == (0, "")
    assert quiet.stdout == "5 files, 7 resources, 0 findings (0 error, 0 warning, 0 info), 0 suppressed, 0 skipped, 0 assumed meshed, 7 baselined\n"

    # A new hazard: only it is reported, and it fails the gate.
    (repo / "examples" / "apps" / "web.yaml").write_text(RACE)
    alone = json.loads(invoke("check", "examples/apps/web.yaml", "--mesh-config", "examples/platform/namespaces.yaml", "--mesh-config", "examples/platform/istio-operator.yaml", "--format", "json").stdout)
    new = invoke("check", "examples", "--baseline", "baseline.json", "--format", "json")
    assert new.exit_code == 1
    report = json.loads(new.stdout)
    assert report["findings"] == alone["findings"] and len(alone["findings"]) == 1  # whole findings
    assert (report["summary"]["baselined"], report["summary"]["stale_baseline"]) == (7, [])

    # An old one fixed: its entry is stale, listed on stderr and in the summary.
    checkout = repo / "examples" / "apps" / "checkout.yaml"
    checkout.write_text(checkout.read_text().replace("terminationGracePeriodSeconds: 20", "terminationGracePeriodSeconds: 60"))
    fixed = invoke("check", "examples", "--baseline", "baseline.json", "--format", "json")
    assert fixed.exit_code == 1
    entry = {
        "path": "examples/apps/checkout.yaml", "code": "ML301", "resource": "Deployment shop/checkout",
        "at": "spec.template.spec.terminationGracePeriodSeconds",
        "fingerprint": next(e["fingerprint"] for e in json.loads(Path("baseline.json").read_text())["findings"] if e["code"] == "ML301"),
    }
    assert json.loads(fixed.stdout)["summary"]["stale_baseline"] == [entry]
    assert json.loads(fixed.stdout)["summary"]["baselined"] == 6
    assert fixed.stderr == (
        "meshlint: baseline.json: stale entry, no such finding any more: "
        "ML301 examples/apps/checkout.yaml Deployment shop/checkout at spec.template.spec.terminationGracePeriodSeconds\n"
    )
    text = invoke("check", "examples", "--baseline", "baseline.json").stdout
    assert text.endswith(", 6 baselined, 1 stale baseline entry\n")

    # Writing it again prunes the stale entry and takes in the new finding.
    assert invoke("check", "examples", "--write-baseline", "baseline.json").exit_code == 0
    assert invoke("check", "examples", "--baseline", "baseline.json").exit_code == 0
    assert "ML301" not in Path("baseline.json").read_text()


def test_baseline_file_is_versioned_sorted_and_one_entry_a_line(repo):
    invoke("check", "examples", "--write-baseline", "baseline.json")
    lines = Path("baseline.json").read_text().splitlines()
    assert lines[:3] == ["{", '  "meshlint-baseline": 1,', '  "findings": [']
    assert lines[-2:] == ["  ]", "}"]
    entries = [json.loads(line.strip().rstrip(",")) for line in lines[3:-2]]
    assert len(entries) == 7
    assert [list(e) for e in entries] == [["path", "code", "resource", "at", "fingerprint"]] * 7
    assert entries == sorted(entries, key=lambda e: (e["path"], e["code"], e["resource"], e["at"], e["fingerprint"]))
    assert entries[0]["path"] == "examples/apps/checkout.yaml"


def test_baseline_from_the_config_is_relative_to_the_config_file(repo, monkeypatch):
    invoke("check", "examples", "--write-baseline", "meshlint-baseline.json")
    (repo / ".meshlint.yaml").write_text("baseline: meshlint-baseline.json\n")
    monkeypatch.chdir(repo / "examples")
    result = invoke("check", ".")
    assert result.exit_code == 0 and result.stdout.endswith(", 7 baselined\n")


def test_entries_of_files_not_checked_are_not_stale(repo):
    invoke("check", "examples", "--write-baseline", "baseline.json")
    result = invoke("check", "examples/apps/checkout.yaml", "--mesh-config", "examples/platform/istio-operator.yaml", "--baseline", "baseline.json")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout.endswith(", 1 baselined\n")
    (repo / "examples" / "jobs" / "nightly-report.yaml").unlink()  # a deleted file's entries are stale
    result = invoke("check", "examples/apps", "--baseline", "baseline.json", "--mesh-config", "examples/platform/istio-operator.yaml")
    assert result.stderr.count("stale entry") == 2


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "missing.json: cannot read the baseline: No such file or directory"),
        ("{", "missing.json: not a meshlint baseline: invalid JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))"),
        ('{"findings": []}', 'missing.json: not a meshlint baseline (expected {"meshlint-baseline": 1, "findings": [...]}); write one with --write-baseline'),
    ],
)
def test_unusable_baseline_is_exit_2_with_one_line(repo, content, message):
    if content is not None:
        Path("missing.json").write_text(content)
    result = invoke("check", "examples", "--baseline", "missing.json")
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", f"meshlint: error: {message}\n")


# --- a renamed file keeps its baselined findings ------------------------------------------------------

MESHED_RACE = RACE.replace("labels: {app: web}", 'labels: {app: web, sidecar.istio.io/inject: "true"}')


def lint_json(*args):
    result = invoke("check", *args, "--format", "json", "--no-cache")
    return result.exit_code, json.loads(result.stdout), result.stderr


def found(report):
    return [(f["path"], f["code"], f["line"]) for f in report["findings"]]


@pytest.fixture
def adopted(tmp_path, monkeypatch):
    """A git repository whose one finding (ML100 in apps/web.yaml) is baselined and committed."""
    from helpers import git

    monkeypatch.chdir(tmp_path)
    (tmp_path / ".meshlint.yaml").write_text(PER_WORKLOAD)
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "web.yaml").write_text(MESHED_RACE)
    git(tmp_path, "init", "-q")
    assert invoke("check", "apps", "--write-baseline", "baseline.json").exit_code == 0
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "adopt meshlint")
    return tmp_path


def test_a_baselined_finding_follows_its_file_through_git_mv(adopted):
    from helpers import git

    git(adopted, "mv", "apps/web.yaml", "apps/frontend.yaml")
    code, report, stderr = lint_json("apps", "--baseline", "baseline.json")
    assert (code, found(report), stderr) == (0, [], "")
    assert (report["summary"]["baselined"], report["summary"]["stale_baseline"]) == (1, [])


def test_a_baselined_finding_follows_its_file_through_a_plain_rename_into_another_folder(adopted):
    (adopted / "web").mkdir()
    (adopted / "apps" / "web.yaml").rename(adopted / "web" / "deployment.yaml")
    code, report, stderr = lint_json("apps", "web", "--baseline", "baseline.json")
    assert (code, found(report), stderr) == (0, [], "")
    assert (report["summary"]["baselined"], report["summary"]["stale_baseline"]) == (1, [])


def test_a_resource_moved_out_of_a_file_that_stays_keeps_its_baselined_finding(adopted):
    api = MESHED_RACE.replace("web", "api")
    (adopted / "apps" / "web.yaml").write_text(MESHED_RACE + "---\n" + api)
    assert invoke("check", "apps", "--write-baseline", "baseline.json").exit_code == 0
    (adopted / "apps" / "web.yaml").write_text(MESHED_RACE)
    (adopted / "apps" / "api.yaml").write_text(api)
    code, report, stderr = lint_json("apps", "--baseline", "baseline.json")
    assert (code, found(report), stderr) == (0, [], "")
    assert report["summary"]["baselined"] == 2


def test_a_copy_is_new_and_a_moved_finding_is_matched_once(adopted):
    (adopted / "apps" / "copy.yaml").write_text(MESHED_RACE)  # the original stays: the copy's finding is new
    code, report, _ = lint_json("apps", "--baseline", "baseline.json")
    assert (code, found(report), report["summary"]["baselined"]) == (1, [("apps/copy.yaml", "ML100", 6)], 1)
    (adopted / "apps" / "web.yaml").rename(adopted / "apps" / "a.yaml")  # renamed, and copied once more
    code, report, _ = lint_json("apps", "--baseline", "baseline.json")
    assert (code, found(report), report["summary"]["baselined"]) == (1, [("apps/copy.yaml", "ML100", 6)], 1)


def test_another_resource_in_the_renamed_file_is_new(adopted):
    (adopted / "apps" / "web.yaml").rename(adopted / "apps" / "frontend.yaml")
    (adopted / "apps" / "frontend.yaml").write_text(MESHED_RACE.replace("name: web,", "name: shop-web,"))
    code, report, _ = lint_json("apps", "--baseline", "baseline.json")
    assert (code, found(report), report["summary"]["baselined"]) == (1, [("apps/frontend.yaml", "ML100", 6)], 0)
    assert [e["path"] for e in report["summary"]["stale_baseline"]] == ["apps/web.yaml"]
