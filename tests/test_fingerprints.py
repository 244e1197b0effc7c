"""Fingerprints: the same finding keeps its fingerprint when lines move, whatever the path spelling,
for any number of jobs; SARIF, the GitLab report and the baseline share them."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from helpers import ROOT, config_from, git, lint
from meshlint.cli import main
from meshlint.engine import parallel
from meshlint.engine.run import run
from meshlint.findings import Position, ResourceId
from meshlint.fingerprint import fingerprint, repo_path, repository_root
from meshlint.registry import load_rules
from meshlint.source.loader import load_text

EXAMPLES = ROOT / "examples"


def copy_examples(tmp_path: Path) -> Path:
    target = tmp_path / "examples"
    shutil.copytree(EXAMPLES, target)
    return target


def test_node_path_names_keys_list_items_by_name_and_places_inside_strings():
    text = (
        "kind: Pod\n"  # 1
        "metadata:\n"  # 2
        "  annotations:\n"  # 3
        "    traffic.sidecar.istio.io/excludeInboundPorts: \"9000\"\n"  # 4
        "spec:\n"  # 5
        "  containers:\n"  # 6
        "    - name: web\n"  # 7
        "      ports: [{containerPort: 80}, {containerPort: 81}]\n"  # 8
        "      command:\n"  # 9
        "        - |\n"  # 10
        "          sleep 5\n"  # 11
        "          curl -X POST localhost:15020/quitquitquit\n"  # 12
        "    - image: sidecar\n"  # 13
        "  shared: &s {a: 1}\n"  # 14
        "  again: *s\n"  # 15
    )
    root = load_text("p.yaml", text).documents[0].root

    def at(line: int, column: int, path: str = "p.yaml") -> str:
        return root.path_to(Position(path, line, column))

    assert at(2, 1) == "metadata"
    assert at(4, 5) == "metadata.annotations.traffic.sidecar.istio.io/excludeInboundPorts"  # the key
    assert at(4, 52) == "metadata.annotations.traffic.sidecar.istio.io/excludeInboundPorts"  # its value
    assert at(7, 15) == "spec.containers[web].name"
    assert at(8, 36) == "spec.containers[web].ports[1]"
    assert at(12, 19) == "spec.containers[web].command[0]"  # inside a block scalar
    assert at(13, 7) == "spec.containers[1].image"  # no name: by index
    assert at(14, 15) == "spec.shared.a"  # an aliased mapping is named where its anchor stands
    assert at(1, 1) == "kind"
    assert at(4, 5, path="other.yaml") == ""


def shifted_back(finding, lines: int):
    """The finding as it was before `lines` lines were added at the top of every file."""
    message = re.sub(r"(line |\.yaml:)(\d+)", lambda m: f"{m.group(1)}{int(m.group(2)) - lines}", finding.message)
    related = tuple(p._replace(line=p.line - lines) for p in finding.related)
    fix = finding.fix
    if fix is not None:
        fix = fix._replace(edits=tuple(e._replace(line=e.line - lines, end_line=e.end_line - lines) for e in fix.edits))
        fix = fix._replace(isolation=tuple((line - lines, column) for line, column in fix.isolation))
    return finding._replace(line=finding.line - lines, message=message, related=related, fix=fix)


def test_fingerprints_unchanged_when_lines_are_inserted_above(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    copy_examples(tmp_path)
    before = lint(["examples"]).findings
    for path in Path("examples").rglob("*.yaml"):
        path.write_text("# owned by the shop team\n# reviewed 2024\n\n" + path.read_text())
    after = lint(["examples"]).findings
    assert len(before) == 7 and all(f.fingerprint for f in before)
    assert [shifted_back(f, 3) for f in after] == before  # whole findings, fingerprints included


def test_fingerprint_unchanged_when_a_sibling_key_is_added_above_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    checkout = copy_examples(tmp_path) / "apps" / "checkout.yaml"
    before = lint(["examples"]).findings
    checkout.write_text(checkout.read_text().replace("  replicas: 2\n", "  replicas: 2\n  revisionHistoryLimit: 3\n  minReadySeconds: 5\n"))
    after = lint(["examples"]).findings
    moved = [f for f in after if f.path.endswith("checkout.yaml")]
    assert [(f.code, f.line, f.node_path) for f in moved] == [("ML301", 23, "spec.template.spec.terminationGracePeriodSeconds")]
    assert [f.fingerprint for f in after] == [f.fingerprint for f in before]


def sarif_fingerprints(output: str) -> list[tuple[str, str, str]]:
    results = json.loads(output)["runs"][0]["results"]
    return [(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], r["partialFingerprints"]["meshlintFinding/v2"]) for r in results]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_fingerprints_agree_for_four_spellings_of_the_path(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    copy_examples(repo)
    (repo / "sub").mkdir()
    runner = CliRunner()
    seen = []
    for cwd, spelling in [(repo, "examples"), (repo, "./examples"), (repo, str(repo / "examples")), (repo / "sub", "../examples")]:
        monkeypatch.chdir(cwd)
        seen.append(sarif_fingerprints(runner.invoke(main, ["check", spelling, "--format", "sarif"]).output))
    assert len(seen[0]) == 7
    assert seen == [seen[0]] * 4
    assert {uri for _, uri, _ in seen[0]} == {"examples/apps/checkout.yaml", "examples/apps/orders-api.yaml", "examples/jobs/nightly-report.yaml", "examples/platform/istio-operator.yaml"}


def test_one_fingerprint_for_sarif_gitlab_and_the_baseline(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    copy_examples(tmp_path)
    runner = CliRunner()
    result = runner.invoke(main, ["check", "examples", "--format", "sarif", "-o", "out.sarif", "--format", "gitlab", "-o", "out.json"])
    assert result.exit_code == 1, result.output
    assert runner.invoke(main, ["check", "examples", "--write-baseline", "base.json"]).exit_code == 0
    from_sarif = sorted(fp for _, _, fp in sarif_fingerprints(Path("out.sarif").read_text()))
    from_gitlab = sorted(issue["fingerprint"] for issue in json.loads(Path("out.json").read_text()))
    from_baseline = sorted(entry["fingerprint"] for entry in json.loads(Path("base.json").read_text())["findings"])
    assert from_sarif == from_gitlab == from_baseline
    assert len(set(from_sarif)) == 7


def test_fingerprints_are_the_same_for_any_number_of_jobs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    examples = copy_examples(tmp_path)
    for n in range(parallel.PARALLEL_FROM):
        shutil.copy(examples / "apps" / "orders-api.yaml", examples / "apps" / f"orders-{n:02}.yaml")
    rules = load_rules()
    config = config_from()
    monkeypatch.setattr(parallel, "PARALLEL_BYTES", 0)
    in_workers = [run(["examples"], config, rules, jobs=jobs).findings for jobs in (2, 3)]
    monkeypatch.setattr(parallel, "PARALLEL_FROM", 10**6)
    in_process = run(["examples"], config, rules, jobs=1).findings
    assert len(in_process) == 7 + 3 * 32 and len({f.fingerprint for f in in_process}) == len(in_process)
    assert in_workers == [in_process, in_process]


def test_findings_that_share_every_input_are_numbered_in_line_order(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    container = "        - name: web\n          image: web\n          lifecycle: {preStop: {sleep: {seconds: 60}}}\n"
    Path("pod.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  template:\n"
        "    metadata: {labels: {app: web}}\n    spec:\n      terminationGracePeriodSeconds: 30\n      containers:\n" + container * 2
    )
    findings = lint(["pod.yaml"], {"select": ["ML303"]}).findings
    at = "spec.template.spec.containers[web].lifecycle.preStop.sleep.seconds"
    assert [(f.line, f.node_path) for f in findings] == [(12, at), (15, at)]
    identity = ResourceId("Deployment", "web", "shop")
    assert [f.fingerprint for f in findings] == [fingerprint("pod.yaml", identity, "ML303", at, n) for n in (0, 1)]


def test_repository_root_is_the_git_top_level_else_the_config_directory_else_cwd(tmp_path, monkeypatch):
    (tmp_path / "repo" / "deep" / "er").mkdir(parents=True)
    (tmp_path / "repo" / ".git").mkdir()  # what git init makes; a worktree has a .git file instead
    (tmp_path / "plain" / "sub").mkdir(parents=True)
    (tmp_path / "plain" / ".meshlint.yaml").write_text("")
    monkeypatch.chdir(tmp_path / "repo" / "deep" / "er")
    assert repository_root(".meshlint.yaml") == str((tmp_path / "repo").resolve())
    monkeypatch.chdir(tmp_path / "plain" / "sub")
    assert repository_root("../.meshlint.yaml") == str((tmp_path / "plain").resolve())
    assert repository_root(None) == str((tmp_path / "plain" / "sub").resolve())
    assert repo_path("../x/y.yaml", repository_root("../.meshlint.yaml")) == "x/y.yaml"
    assert repo_path("<stdin>", "/anywhere") == "<stdin>"


def test_repo_path_is_relpath_of_the_resolved_file_for_every_spelling(tmp_path, monkeypatch):
    """Below the root a path is cut, not worked out by relpath: the two agree for every spelling,
    a linked directory, `.` and `..`, a root with a trailing separator, and files outside the root."""
    import os

    from meshlint.fingerprint import _relative
    from meshlint.source import inputs

    (tmp_path / "repo" / "apps" / "web").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "repo" / "linked").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "repo" / "inside").symlink_to(tmp_path / "repo" / "apps")
    monkeypatch.chdir(tmp_path / "repo" / "apps")
    spellings = [
        "web/a.yaml", "./web/a.yaml", "web/../web/a.yaml", "../apps/web/a.yaml", "web", "web/.", "web/..", ".", "..",
        "../linked/b.yaml", "../inside/web/a.yaml", "../../elsewhere/c.yaml", str(tmp_path / "repo" / "x.yaml"), "/",
        "web//a.yaml", "../repo-sibling.yaml",
    ]
    real_root = os.path.realpath(tmp_path / "repo")
    roots = [real_root, real_root + os.sep, real_root + os.sep + ".", os.path.dirname(real_root), os.sep]
    for root in roots:
        for path in spellings:
            _relative.cache_clear()
            inputs.forget_paths()
            absolute = os.path.join(os.getcwd(), path)
            resolved = os.path.join(os.path.realpath(os.path.dirname(absolute)), os.path.basename(absolute))
            assert repo_path(path, root) == os.path.relpath(resolved, root).replace(os.sep, "/"), (root, path)
