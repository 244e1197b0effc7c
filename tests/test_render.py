"""Rendering (wave-3 spec V1): root kustomizations built with the real kustomize (the one in the kubectl the
test extra installs), judged as built, and reported where their objects were written. Each test fails
without rendering: the raw files alone say the opposite."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from meshlint.cli import main
from meshlint.source.render import Renderer, find_renderer, first_error, render
from meshlint.source.units import find_units

_found = find_renderer()
assert _found is not None, "no kustomize or kubectl: install the test extra"
RENDERER: Renderer = _found

HOLD = "proxy.istio.io/config: '{\"holdApplicationUntilProxyStarts\": true}'"
BASE_DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    metadata:
      labels: {app: api, sidecar.istio.io/inject: "true"}
    spec:
      containers:
        - name: api
          image: api
          command: ["sh", "-c", "curl -sf http://config/seed && exec api"]
"""
HOLD_PATCH = f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    metadata:
      annotations:
        {HOLD}
"""
GRACE_PATCH = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    spec:
      terminationGracePeriodSeconds: 10
"""
MESH = """apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata: {name: mesh}
spec:
  meshConfig:
    defaultConfig:
      terminationDrainDuration: 20s
"""
RACE = (
    "app/base/deploy.yaml:7:5: error ML101 startup-race: Deployment {name} can start before its istio-proxy sidecar is ready: "
    "classic sidecar (Istio/Kubernetes versions unknown), holdApplicationUntilProxyStarts "
    "is false (default); it calls out at startup: command calls http://config/seed with curl (line 13)"
)


def write_tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def check(*args: str) -> tuple[int, list[str]]:
    result = CliRunner().invoke(main, ["check", "--no-cache", *args])
    return result.exit_code, result.stdout.splitlines()


def overlays(prod: dict[str, str], prod_resources: str = "[../../base]", prod_extra: str = "") -> dict[str, str]:
    tree = {
        "app/base/kustomization.yaml": "resources: [deploy.yaml]\n",
        "app/base/deploy.yaml": BASE_DEPLOYMENT,
        "app/overlays/dev/kustomization.yaml": "resources: [../../base]\nnamePrefix: dev-\n",
        "app/overlays/prod/kustomization.yaml": f"resources: {prod_resources}\nnamespace: prod\n{prod_extra}",
    }
    tree.update({f"app/overlays/prod/{name}": text for name, text in prod.items()})
    return tree


def test_a_base_fixed_by_an_overlay_patch_is_reported_for_the_other_overlay_only(tmp_path, monkeypatch):
    """prod patches in the hold annotation: only dev deploys the race, and the finding names dev alone."""
    write_tree(tmp_path, overlays({"hold.yaml": HOLD_PATCH}, prod_extra="patches:\n  - path: hold.yaml\n"))
    monkeypatch.chdir(tmp_path)
    # As written, the base races in both.
    assert check("--format", "concise", "--render", "never", "--select", "ML101") == (1, [RACE.format(name="api").replace("ML101 ", "ML101 [*] ")])
    # Built, dev's race is the base's own finding (said of the object as written, and with its fix).
    assert check("--format", "concise", "--select", "ML101") == (1, [RACE.format(name="api").replace("ML101 ", "ML101 [*] ")])
    [found] = json.loads("\n".join(check("--format", "json", "--select", "ML101")[1]))["findings"]
    assert (found["path"], found["line"], found["units"]) == ("app/base/deploy.yaml", 7, ["app/overlays/dev"])


def test_a_finding_both_overlays_deploy_is_said_once_naming_both(tmp_path, monkeypatch):
    write_tree(tmp_path, overlays({}))
    monkeypatch.chdir(tmp_path)
    found = json.loads("\n".join(check("--format", "json", "--select", "ML101")[1]))["findings"]
    assert [(f["path"], f["line"], f["column"], f["units"], f["fix"] is not None) for f in found] == [
        ("app/base/deploy.yaml", 7, 5, ["app/overlays/dev", "app/overlays/prod"], True),
    ]
    [result] = json.loads("\n".join(check("--format", "sarif", "--select", "ML101")[1]))["runs"][0]["results"]
    assert result["properties"] == {"units": ["app/overlays/dev", "app/overlays/prod"]}


def test_a_field_an_overlay_patch_adds_is_reported_at_the_patch_line(tmp_path, monkeypatch):
    """prod's patch cuts the grace period below the mesh's drain: the finding is at the patch's line."""
    write_tree(tmp_path, overlays({"grace.yaml": GRACE_PATCH, "mesh.yaml": MESH}, "[../../base, mesh.yaml]", "patches:\n  - path: grace.yaml\n"))
    monkeypatch.chdir(tmp_path)
    assert check("--format", "concise", "--select", "ML301", "--render", "never") == (0, [])
    assert check("--format", "concise", "--select", "ML301") == (1, [
        "app/overlays/prod/grace.yaml:8:38: error ML301 drain-exceeds-grace: terminationDrainDuration 20s (app/overlays/prod/mesh.yaml:7) > "
        "terminationGracePeriodSeconds 10 (app/overlays/prod/grace.yaml:8): the kubelet kills istio-proxy at the deadline, so its drain "
        "is cut short by 10s and the connections still open are reset",
    ])


def test_a_suppression_comment_in_the_base_silences_what_the_overlays_find(tmp_path, monkeypatch):
    tree = overlays({})
    tree["app/base/deploy.yaml"] = BASE_DEPLOYMENT.replace("    metadata:\n", "    metadata:  # meshlint: disable=ML101\n", 1)
    write_tree(tmp_path, tree)
    monkeypatch.chdir(tmp_path)
    assert check("--format", "concise", "--select", "ML101") == (0, [])


def test_a_root_that_does_not_build_is_named_and_its_files_are_checked_as_written(tmp_path, monkeypatch):
    write_tree(tmp_path, overlays({}, "[../../base, missing.yaml]"))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "--no-cache", "--select", "ML101"])
    notes = [line for line in result.stderr.splitlines() if "not rendered" in line]
    # kustomize's own words vary with its version: what it speaks of, and that no path of this machine is in them.
    [note] = notes
    assert note.startswith(f"meshlint: app/overlays/prod: not rendered ({RENDERER.name}): accumulating resources: "), note
    assert "'missing.yaml'" in note and str(tmp_path) not in note and note.endswith("; its files are checked as written"), note
    # The base is in a unit that did not build: its raw finding stands, named for both overlays.
    found = json.loads("\n".join(check("--format", "json", "--select", "ML101")[1]))["findings"]
    assert [(f["path"], f["units"]) for f in found] == [("app/base/deploy.yaml", ["app/overlays/dev", "app/overlays/prod"])]
    assert result.stdout.splitlines()[-1].endswith("1 of 2 root kustomizations rendered with " + RENDERER.name)


def test_a_remote_base_is_never_fetched(tmp_path, monkeypatch):
    write_tree(tmp_path, overlays({}, "[../../base, 'https://github.com/example/app//base?ref=v1']"))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "--no-cache", "--select", "ML101"])
    assert ("app/overlays/prod: not rendered (" + RENDERER.name + "): needs the remote base https://github.com/example/app//base?ref=v1, "
            "which is never fetched; its files are checked as written") in result.output


def test_a_named_overlay_file_reports_only_on_itself(tmp_path, monkeypatch):
    """pre-commit names prod's patch: prod is built, and only what lands in the named file is reported."""
    write_tree(tmp_path, overlays({"grace.yaml": GRACE_PATCH, "mesh.yaml": MESH}, "[../../base, mesh.yaml]", "patches:\n  - path: grace.yaml\n"))
    monkeypatch.chdir(tmp_path)
    code, out = check("--format", "concise", "app/overlays/prod/grace.yaml", "app/overlays/prod/kustomization.yaml")
    assert (code, [line.split(" ")[0] for line in out]) == (1, ["app/overlays/prod/grace.yaml:8:38:"])


def test_render_never_in_the_config_checks_files_as_written(tmp_path, monkeypatch):
    write_tree(tmp_path, {**overlays({"hold.yaml": HOLD_PATCH}, prod_extra="patches:\n  - path: hold.yaml\n"), ".meshlint.yaml": "render: never\n"})
    monkeypatch.chdir(tmp_path)
    [found] = json.loads("\n".join(check("--format", "json", "--select", "ML101")[1]))["findings"]
    assert found["units"] == ["app/overlays/dev", "app/overlays/prod"]


def test_render_builds_with_origins_and_stops_a_build_that_writes_too_much(tmp_path, monkeypatch):
    write_tree(tmp_path, overlays({}))
    monkeypatch.chdir(tmp_path)
    units = find_units([str(p) for p in sorted(tmp_path.rglob("*.yaml"))])
    dev, prod = render(units.roots, RENDERER, limit=1 << 20, jobs=2)
    assert dev.error is None and dev.text is not None and b"config.kubernetes.io/origin" in dev.text and b"name: dev-api" in dev.text
    assert prod.text is not None and b"namespace: prod" in prod.text
    [small] = render(units.roots[:1], RENDERER, limit=100)
    assert (small.text, small.error) == (None, f"{RENDERER.name} wrote more than 100 bytes")


def test_the_first_error_line_is_the_renderers_own_words():
    text = 'E1204 18:43:09.338609 2156 run.go:72] "command failed" err="boom"\nerror: accumulating resources: boom\n'
    assert first_error(text, "kubectl kustomize") == "accumulating resources: boom"
    # What kustomize says of our wrapper before it speaks of the root is left out, and the paths shortened.
    wrapped = "Error: accumulating resources: from '../x': '/w/x' must resolve to a file': recursed accumulation of path '/w/x': bad patch in /w/x/p.yaml"
    assert first_error(wrapped, "kustomize build", "/w") == "bad patch in x/p.yaml"
    assert first_error("", "kustomize build") == "kustomize build failed"
    assert first_error("Error: " + "x" * 300, "kustomize build") == "x" * 237 + "..."


def test_no_renderer_on_the_path_leaves_the_files_as_written(tmp_path, monkeypatch):
    write_tree(tmp_path, overlays({"hold.yaml": HOLD_PATCH}, prod_extra="patches:\n  - path: hold.yaml\n"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("meshlint.source.render.find_renderer", lambda path=None: None)
    result = CliRunner().invoke(main, ["check", "--no-cache", "--select", "ML101"])
    assert "2 root kustomizations not rendered: neither kustomize nor kubectl is on PATH" in result.output
    # As written, prod's patch settles nothing: the base races, for both overlays.
    assert result.exit_code == 1 and result.stdout.startswith("app/base/deploy.yaml:7:5: error ML101 [*] startup-race: Deployment api")


def test_a_named_base_file_is_judged_as_each_overlay_deploys_it(tmp_path, monkeypatch):
    """pre-commit names only the base: the overlays that reach it are found and built, and prod's patch
    settles the race there, so the finding names dev alone."""
    write_tree(tmp_path, overlays({"hold.yaml": HOLD_PATCH}, prod_extra="patches:\n  - path: hold.yaml\n"))
    monkeypatch.chdir(tmp_path)
    found = json.loads("\n".join(check("--format", "json", "--select", "ML101", "app/base/deploy.yaml")[1]))["findings"]
    assert [(f["path"], f["line"], f["units"]) for f in found] == [("app/base/deploy.yaml", 7, ["app/overlays/dev"])]
    # As written, the base alone is its own unit.
    found = json.loads("\n".join(check("--format", "json", "--select", "ML101", "--render", "never", "app/base/deploy.yaml")[1]))["findings"]
    assert [(f["path"], f["line"], f["units"]) for f in found] == [("app/base/deploy.yaml", 7, ["app/base"])]


def test_a_field_a_json_patch_adds_is_reported_at_the_operation(tmp_path, monkeypatch):
    json_patch = "- op: add\n  path: /spec/template/spec/terminationGracePeriodSeconds\n  value: 10\n"
    extra = "patches:\n  - path: grace.yaml\n    target: {kind: Deployment, name: api}\n"
    write_tree(tmp_path, overlays({"grace.yaml": json_patch, "mesh.yaml": MESH}, "[../../base, mesh.yaml]", extra))
    monkeypatch.chdir(tmp_path)
    assert check("--format", "concise", "--select", "ML301") == (1, [
        "app/overlays/prod/grace.yaml:3:10: error ML301 drain-exceeds-grace: terminationDrainDuration 20s (app/overlays/prod/mesh.yaml:7) > "
        "terminationGracePeriodSeconds 10 (app/overlays/prod/grace.yaml:3): the kubelet kills istio-proxy at the deadline, so its drain "
        "is cut short by 10s and the connections still open are reset",
    ])


def test_fix_edits_the_base_once_for_every_overlay(tmp_path, monkeypatch):
    write_tree(tmp_path, overlays({}))
    monkeypatch.chdir(tmp_path)
    code, _ = check("--fix", "--select", "ML101")
    assert code == 0
    fixed = (tmp_path / "app/base/deploy.yaml").read_text(encoding="utf-8")
    assert fixed.count("holdApplicationUntilProxyStarts") == 1
    assert check("--format", "concise", "--select", "ML101") == (0, [])


# The ML100 tests below are about grouping: no mesh-wide source is in their runs, so they ask for the
# groups to be said anyway (by default the summary counts them).
SAID_WITHOUT_SOURCE = {"require-source": False}


def test_ml100_counts_each_workload_once_and_names_the_overlays(tmp_path, monkeypatch):
    quiet = BASE_DEPLOYMENT.replace('          command: ["sh", "-c", "curl -sf http://config/seed && exec api"]\n', '          env: [{name: CONFIG_URL, value: "http://config"}]\n')
    tree = overlays({})
    tree["app/base/kustomization.yaml"] = "resources: [deploy.yaml, worker.yaml]\n"
    tree["app/base/deploy.yaml"] = quiet
    tree["app/base/worker.yaml"] = quiet.replace("name: api", "name: worker").replace("app: api", "app: worker")
    tree[".meshlint.yaml"] = "rules:\n  ML100: {require-source: false}\n"
    write_tree(tmp_path, tree)
    monkeypatch.chdir(tmp_path)
    [found] = json.loads("\n".join(check("--format", "json", "--select", "ML100")[1]))["findings"]
    assert (found["path"], found["line"], found["units"]) == ("app/base/deploy.yaml", 7, ["app/overlays/dev", "app/overlays/prod"])
    assert found["message"].startswith(
        "holdApplicationUntilProxyStarts is off mesh-wide (Istio's default): 2 workloads with a classic istio-proxy sidecar start without it in "
        "app/overlays/dev and app/overlays/prod: Deployment api and Deployment worker (app/base/worker.yaml:7)"
    ), found["message"]


def test_ml100_takes_a_workload_two_overlays_word_differently_once_in_both_units():
    """Overlays may deploy one workload with different words (a component swaps its database address):
    the grouped finding counts it once, in every unit any of its findings holds in."""
    from meshlint.findings import Finding, Severity
    from meshlint.rules.ml100_startup_race_mesh_wide import combine

    def at(path: str, line: int, message: str) -> Finding:
        return Finding(path, line, 5, "ML100", "startup-race-mesh-wide", Severity.WARNING, message, "help")

    held = {"in dev": ["app/overlays/dev"], "in prod": ["app/overlays/prod"], "other": ["app/overlays/dev", "app/overlays/prod"]}
    found = [at("app/base/a.yaml", 7, "in dev"), at("app/base/a.yaml", 7, "in prod"), at("app/base/b.yaml", 7, "other")]
    [issue] = combine(found, lambda f: held[f.message], lambda _: None, lambda _: SAID_WITHOUT_SOURCE)
    assert not isinstance(issue, Finding)
    assert issue.message.startswith(
        "holdApplicationUntilProxyStarts is off mesh-wide (Istio's default): 2 workloads with a classic istio-proxy sidecar start without it "
        "in app/overlays/dev and app/overlays/prod: "
    ), issue.message


def test_ml100_says_once_for_workloads_whose_overlays_overlap():
    """A base every overlay deploys and a workload only the test overlays give a peer are one decision:
    one finding naming every unit, not one per set of overlays (GoogleCloudPlatform/microservices-demo
    34ffea9, kustomize/base with the components of kustomize/tests)."""
    from meshlint.findings import Finding, Position, Severity
    from meshlint.rules.ml100_startup_race_mesh_wide import ALONE, combine

    def at(path: str, message: str) -> Finding:
        return Finding(path, 26, 5, "ML100", "startup-race-mesh-wide", Severity.WARNING, message, "help")

    held = {"frontend": ["kustomize", "kustomize/tests/a"], "currency": ["kustomize/tests/a", "kustomize/tests/b"], "alone": ["release"]}
    found = [at("kustomize/base/frontend.yaml", "frontend"), at("kustomize/base/currency.yaml", "currency"), at("release/all.yaml", "alone")]
    said = combine(found, lambda f: held[f.message], lambda _: None, lambda _: SAID_WITHOUT_SOURCE)
    assert [(s.position, s.related) for s in said if not isinstance(s, Finding)] == [
        (Position("kustomize/base/currency.yaml", 26, 5), (Position("kustomize/base/currency.yaml", 26, 5), Position("kustomize/base/frontend.yaml", 26, 5)))
    ]
    [group] = [s for s in said if not isinstance(s, Finding)]
    assert group.message.startswith(
        "holdApplicationUntilProxyStarts is off mesh-wide (Istio's default): 2 workloads with a classic istio-proxy sidecar start without it "
        "in kustomize, kustomize/tests/a and kustomize/tests/b: "
    ), group.message
    assert [s for s in said if isinstance(s, Finding)] == [found[2]._replace(message=f"alone; {ALONE}")]


def test_the_renderer_is_looked_for_on_path_first(tmp_path):
    real = shutil.which("kubectl") or shutil.which("kubectl", path=os.path.dirname(sys.executable))
    assert real is not None
    (tmp_path / "kubectl").symlink_to(real)
    found = find_renderer(str(tmp_path))
    assert found == Renderer((str(tmp_path / "kubectl"), "kustomize"), "kubectl kustomize")


def test_a_base_of_a_built_and_an_unbuilt_overlay_is_judged_as_written_for_the_unbuilt_one_only(tmp_path, monkeypatch):
    """dev builds and its patch settles the race; prod does not build: the base as written speaks for
    prod alone."""
    tree = overlays({}, "[../../base, missing.yaml]")
    tree["app/overlays/dev/kustomization.yaml"] = "resources: [../../base]\npatches:\n  - path: hold.yaml\n"
    tree["app/overlays/dev/hold.yaml"] = HOLD_PATCH
    write_tree(tmp_path, tree)
    monkeypatch.chdir(tmp_path)
    found = json.loads("\n".join(check("--format", "json", "--select", "ML101")[1]))["findings"]
    assert [(f["path"], f["line"], f["units"]) for f in found] == [("app/base/deploy.yaml", 7, ["app/overlays/prod"])]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_diff_base_renders_only_the_overlays_that_reach_a_changed_file(tmp_path, monkeypatch):
    from helpers import git

    write_tree(tmp_path, overlays({"grace.yaml": GRACE_PATCH.replace("10", "40"), "mesh.yaml": MESH}, "[../../base, mesh.yaml]", "patches:\n  - path: grace.yaml\n"))
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "overlays")
    (tmp_path / "app/overlays/prod/grace.yaml").write_text(GRACE_PATCH, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "--no-cache", "--select", "ML301", "--diff-base", "main"])
    lines = result.stdout.splitlines()
    assert lines[0].startswith("app/overlays/prod/grace.yaml:8:38: error ML301 drain-exceeds-grace: "), lines
    assert "1 of 1 root kustomization rendered with " + RENDERER.name in lines[-1], lines[-1]


def test_the_text_report_names_the_overlays_that_deploy_a_rendered_finding(tmp_path, monkeypatch):
    write_tree(tmp_path, overlays({"hold.yaml": HOLD_PATCH}, prod_extra="patches:\n  - path: hold.yaml\n"))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "--no-cache", "--select", "ML101"])
    assert result.stdout.splitlines()[1:4] == ["  7 |     metadata:", "    |     ^", "  deployed by: app/overlays/dev"]


def test_a_build_whose_findings_cannot_be_placed_is_named_and_its_files_checked_as_written(tmp_path, monkeypatch):
    from meshlint.engine import relocation

    def broken(self, finding):
        raise ValueError("no such node")

    write_tree(tmp_path, overlays({"hold.yaml": HOLD_PATCH}, prod_extra="patches:\n  - path: hold.yaml\n"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(relocation.Relocation, "finding", broken)
    result = CliRunner().invoke(main, ["check", "--no-cache", "--select", "ML101", "--format", "json"])
    assert result.exit_code == 1 and "Traceback" not in result.output
    [found] = json.loads(result.stdout)["findings"]
    # prod's build finds nothing to place, so it stands; dev's cannot be placed, and the base as written
    # speaks for dev alone.
    assert (found["path"], found["units"]) == ("app/base/deploy.yaml", ["app/overlays/dev"])
    assert result.stderr.count("not rendered (meshlint): it could not check what it builds (ValueError: no such node)") == 1


def test_json_summarises_the_rendering(tmp_path, monkeypatch):
    write_tree(tmp_path, overlays({}, "[../../base, 'https://github.com/example/app//base?ref=v1']"))
    monkeypatch.chdir(tmp_path)
    summary = json.loads("\n".join(check("--format", "json", "--select", "ML101")[1]))["summary"]
    assert summary["rendering"] == {
        "renderer": RENDERER.name, "roots": 2, "rendered": 1,
        "not_rendered": [{"unit": "app/overlays/prod", "reason": "needs the remote base https://github.com/example/app//base?ref=v1, which is never fetched"}],
    }


def test_a_place_is_read_back_as_keys_that_may_hold_dots(tmp_path):
    from meshlint.engine.relocation import _steps
    from meshlint.findings import Position
    from meshlint.source.loader import load_file

    text = "metadata:\n  annotations:\n    sidecar.istio.io/inject: 'true'\nspec:\n  containers:\n    - name: web\n      image: web\n    - image: two\n"
    path = tmp_path / "x.yaml"
    path.write_text(text, encoding="utf-8")
    root = load_file(str(path), input_file=False).documents[0].root
    assert _steps(root, Position(str(path), 3, 30)) == [("key", "metadata"), ("key", "annotations"), ("key", "sidecar.istio.io/inject")]
    assert _steps(root, Position(str(path), 7, 14)) == [("key", "spec"), ("key", "containers"), ("item", "web"), ("key", "image")]
    assert _steps(root, Position(str(path), 8, 14)) == [("key", "spec"), ("key", "containers"), ("item", 1), ("key", "image")]


def test_ml100_leaves_a_group_without_a_source_to_the_summary(tmp_path, monkeypatch):
    """The overlays' two workloads and no mesh-wide configuration in the run: no finding (its one fix is a
    line in a file the run does not hold), and the summary counts each workload once."""
    quiet = BASE_DEPLOYMENT.replace('          command: ["sh", "-c", "curl -sf http://config/seed && exec api"]\n', '          env: [{name: CONFIG_URL, value: "http://config"}]\n')
    tree = overlays({})
    tree["app/base/kustomization.yaml"] = "resources: [deploy.yaml, worker.yaml]\n"
    tree["app/base/deploy.yaml"] = quiet
    tree["app/base/worker.yaml"] = quiet.replace("name: api", "name: worker").replace("app: api", "app: worker")
    write_tree(tmp_path, tree)
    monkeypatch.chdir(tmp_path)
    report = json.loads("\n".join(check("--format", "json", "--select", "ML100")[1]))
    assert (report["findings"], report["summary"]["unheld"]) == ([], 2)


def test_a_cited_env_item_is_the_line_it_is_written_on_whatever_the_renderer_sorts(tmp_path, monkeypatch):
    """kubectl kustomize writes each env item's fields in its own order (`key` before `name`): a line the
    message cites (`env MYSQL_HOST (line 103)`) was put back one line up, at the item before, in the
    overlays that render the base, and the one fact became two findings (kubeflow/pipelines 7b70c7b,
    manifests/kustomize/base/metadata/base/metadata-grpc-deployment.yaml, in env/plain and the others). Here
    the item is a connection string's name, which is strong evidence, so that the finding is ML101's."""
    base = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: metadata-grpc\nspec:\n  template:\n    metadata:\n"
        "      labels: {app: metadata-grpc, sidecar.istio.io/inject: \"true\"}\n    spec:\n      containers:\n        - name: container\n"
        "          image: mlmd\n          env:\n          - name: MYSQL_DATABASE\n            valueFrom:\n              configMapKeyRef:\n"
        "                name: pipeline-install-config\n                key: mlmdDb\n          - name: MYSQL_URL\n            valueFrom:\n"
        "              configMapKeyRef:\n                name: pipeline-install-config\n                key: mysqlHost\n"
    )
    write_tree(tmp_path, {
        "base/kustomization.yaml": "resources: [deploy.yaml]\n",
        "base/deploy.yaml": base,
        "plain/kustomization.yaml": "resources: [../base]\nnamespace: kubeflow\n",
        "dev/kustomization.yaml": "resources: [../base]\nnamespace: kubeflow\ncommonLabels: {env: dev}\n",
    })
    monkeypatch.chdir(tmp_path)
    findings = json.loads("\n".join(check("--format", "json", "--select", "ML101")[1]))["findings"]
    assert [(f["path"], f["line"], f["message"].rsplit(": ", 1)[1], f["units"]) for f in findings] == [
        ("base/deploy.yaml", 7, "env MYSQL_URL (line 19)", ["dev", "plain"]),
    ]
