"""The command line as users run it: exit codes, formats, stdin, config, suppressions."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from helpers import RACE, ROOT
from meshlint.cli import main
from meshlint.findings import ResourceId
from meshlint.fingerprint import fingerprint

# Vendored from the OASIS SARIF 2.1.0 standard, so SARIF output is validated on every run.
SARIF_SCHEMA = ROOT / "tests" / "schemas" / "sarif-schema-2.1.0.json"

CLEAN = """apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports: [{port: 80}]
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NO_COLOR", raising=False)
    (tmp_path / "race.yaml").write_text(RACE)
    (tmp_path / "clean.yaml").write_text(CLEAN)
    return tmp_path


def invoke(*args, input=None):
    return CliRunner().invoke(main, list(args), input=input)


RACE_TEXT = (
    "race.yaml:7:5: warning ML100 [*] startup-race-mesh-wide: Deployment web can start before its istio-proxy sidecar is ready: "
    "classic sidecar (Istio/Kubernetes versions unknown), holdApplicationUntilProxyStarts is false (default); it names peers in env: env API_URL=http://api:8080 (line 13); "
    "nothing shows a call out at startup that needs the hold on this workload alone: set it mesh-wide\n"
    "  help: add the pod-template annotation proxy.istio.io/config: '{\"holdApplicationUntilProxyStarts\": true}', "
    "or run native sidecars: the pod annotation sidecar.istio.io/nativeSidecar: \"true\" (Istio 1.24+, Kubernetes 1.29+), "
    "or Istio 1.27+ with every node on Kubernetes 1.33+, which turns them on by default (pass --istio-version and --kubernetes-version so meshlint can tell)\n"
)


def test_text_report_and_exit_code_1(project):
    result = invoke("check", "race.yaml")
    assert result.exit_code == 1
    head, help_line = RACE_TEXT.splitlines()
    assert result.output == (
        f"{head}\n"
        "  7 |     metadata:\n"
        "    |     ^\n"
        f"{help_line}\n"
        "\n"
        "[*] 1 fixable with --fix\n"
        "1 file, 1 resource, 1 finding (0 error, 1 warning, 0 info), 0 suppressed, 0 skipped, 0 assumed meshed\n"
    )


def test_text_groups_by_file_with_caret_under_the_column_and_statistics(project):
    (project / "two.yaml").write_text(RACE.replace("name: web", "name: one") + "---\n" + RACE.replace("name: web", "name: two").replace("      labels: {app: web, sidecar.istio.io/inject: \"true\"}", "\tlabels: {app: web, sidecar.istio.io/inject: \"true\"}"))
    (project / ".meshlint.yaml").write_text("rules:\n  ML100: {group: false}\n")  # a finding for each workload
    result = invoke("check", "two.yaml", "race.yaml", "--statistics", "--select", "ML100,ML001")
    blocks = result.output.split("\n\n")
    assert [b.splitlines()[0].split(": ")[0] for b in blocks[:-2]] == ["race.yaml:7:5", "two.yaml:7:5", "two.yaml:22:1"]
    tab_block = blocks[2].splitlines()  # the tab is shown as one space, so the caret stays under column 1
    assert tab_block[1:3] == ["  22 |  labels: {app: web, sidecar.istio.io/inject: \"true\"}", "     | ^"]
    assert blocks[-2] == "findings per rule:\n  2  ML100  startup-race-mesh-wide  (2 warning)\n  1  ML001  yaml-syntax-error       (1 error)"
    assert result.exit_code == 1


def test_statistics_go_to_stderr_for_machine_formats(project):
    result = CliRunner().invoke(main, ["check", "race.yaml", "--format", "json", "--statistics"])
    assert json.loads(result.stdout)["summary"]["findings"]["warning"] == 1
    assert result.stderr == "findings per rule:\n  1  ML100  startup-race-mesh-wide  (1 warning)\n"


def test_quiet_prints_only_the_findings(project):
    result = invoke("check", "race.yaml", "-q")
    assert result.output.endswith("  help: " + RACE_TEXT.split("  help: ")[1] + "\n")
    assert "1 file" not in result.output
    assert invoke("check", "clean.yaml", "-q").output == ""


def test_quiet_keeps_the_statistics_when_asked_for(project):
    result = invoke("check", "race.yaml", "-q", "--statistics")
    findings = invoke("check", "race.yaml", "-q").output
    assert result.output == findings + "findings per rule:\n  1  ML100  startup-race-mesh-wide  (1 warning)\n"
    assert invoke("check", "clean.yaml", "-q", "--statistics").output == ""


def test_clean_exit_0(project):
    result = invoke("check", "clean.yaml")
    assert (result.exit_code, result.output.splitlines()[-1]) == (0, "1 file, 1 resource, 0 findings (0 error, 0 warning, 0 info), 0 suppressed, 0 skipped, 0 assumed meshed")


@pytest.mark.parametrize("fail_on, code", [("error", 0), ("warning", 1), ("info", 1)])
@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github", "junit"])
def test_exit_code_is_the_same_in_every_format(project, fmt, fail_on, code):
    assert invoke("check", ".", "--format", fmt, "--fail-on", fail_on).exit_code == code


def test_missing_path_is_exit_2_with_one_line(project):
    result = invoke("check", "nope.yaml")
    assert result.exit_code == 2
    assert result.output == "meshlint: error: nope.yaml: no such file or directory\n"


def test_stdin(project):
    result = invoke("check", "-", input=RACE)
    assert result.exit_code == 1
    assert result.output.startswith("<stdin>:7:5: warning ML100 startup-race-mesh-wide:")  # no [*]: --fix never writes stdin


def test_json_report(project):
    result = invoke("check", "race.yaml", "--format", "json")
    data = json.loads(result.output)
    head, help_line = RACE_TEXT.splitlines()
    assert data == {
        "version": 1,
        "findings": [
            {
                "code": "ML100",
                "name": "startup-race-mesh-wide",
                "severity": "warning",
                "path": "race.yaml",
                "line": 7,
                "column": 5,
                "message": head.split("startup-race-mesh-wide: ", 1)[1],
                "help": help_line.split("help: ", 1)[1],
                "resource": {"kind": "Deployment", "name": "web", "namespace": ""},
                "related": [],
                "fingerprint": fingerprint("race.yaml", ResourceId("Deployment", "web", ""), "ML100", "spec.template.metadata", 0),
                "fix": {
                    "message": "add the pod-template annotation proxy.istio.io/config: '{\"holdApplicationUntilProxyStarts\": true}'",
                    "applicability": "safe",
                    "edits": [{
                        "path": "race.yaml", "line": 8, "column": 58, "end_line": 8, "end_column": 58,
                        "content": "\n      annotations:\n        proxy.istio.io/config: '{\"holdApplicationUntilProxyStarts\": true}'",
                    }],
                },
            }
        ],
        "summary": {
            "files": 1, "resources": 1, "findings": {"error": 0, "warning": 1, "info": 0},
            "suppressed": 0, "skipped_documents": 0, "skipped_files": 0, "assumed_meshed": 0, "not_checked": 0, "on_defaults": 0, "unheld": 0, "test_folders": 0, "skipped_inputs": [],
            "baselined": 0, "stale_baseline": [], "outside_diff": 0, "fixed": 0, "fixable": 1, "unsafe_fixable": 0,
        },
    }


def test_sarif_is_valid_and_stable(project):
    import jsonschema

    first = invoke("check", ".", "--format", "sarif").output
    second = invoke("check", ".", "--format", "sarif").output
    assert first == second
    log = json.loads(first)
    jsonschema.validate(log, json.loads(SARIF_SCHEMA.read_text()))
    run = log["runs"][0]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]][:2] == ["ML001", "ML002"]
    result = run["results"][0]
    assert result["ruleId"] == "ML100" and result["level"] == "warning"
    assert result["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "race.yaml", "uriBaseId": "%SRCROOT%"}, "region": {"startLine": 7, "startColumn": 5}
    }
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": project.resolve().as_uri() + "/"}}
    assert result["partialFingerprints"] == {"meshlintFinding/v2": fingerprint("race.yaml", ResourceId("Deployment", "web", ""), "ML100", "spec.template.metadata", 0)}


def test_github_annotations(project):
    line = invoke("check", "race.yaml", "--format", "github").output.splitlines()[0]
    assert line.startswith("::warning file=race.yaml,line=7,col=5,title=ML100 startup-race-mesh-wide::Deployment web can start")


def test_output_file_and_report_on_stdout_only(project):
    result = invoke("check", ".", "--format", "json", "--output", "out.json")
    assert result.exit_code == 1 and result.output == ""
    assert json.loads((project / "out.json").read_text())["findings"][0]["code"] == "ML100"


def test_select_ignore_by_code_prefix_and_name(project):
    assert invoke("check", "race.yaml", "--select", "ML1").exit_code == 1
    assert invoke("check", "race.yaml", "--ignore", "startup-race-mesh-wide").exit_code == 0
    assert invoke("check", "race.yaml", "--select", "ML0").exit_code == 0
    result = invoke("check", "race.yaml", "--select", "ML999")
    assert (result.exit_code, result.output) == (2, "meshlint: error: --select: unknown rule selector 'ML999': not a rule code, code prefix or rule name\n")


def test_config_file_found_upward_and_applied(project):
    (project / ".meshlint.yaml").write_text("severity: {ML100: error}\nfail-on: error\n")
    sub = project / "sub"
    sub.mkdir()
    (sub / "race.yaml").write_text(RACE)
    import os

    os.chdir(sub)
    result = invoke("check", "race.yaml")
    assert result.exit_code == 1
    assert "error ML100" in result.output


def test_pyproject_section(project):
    (project / "pyproject.toml").write_text('[tool.meshlint]\nignore = ["ML100"]\n')
    assert invoke("check", "race.yaml").exit_code == 0


@pytest.mark.parametrize(
    "text, message",
    [
        ("fail-on: loud\n", ".meshlint.yaml:1: fail-on: 'loud' is not allowed; expected one of: error, warning, info, never"),
        ("kubernetes-version: 1.30\n", ".meshlint.yaml:1: kubernetes-version: 1.3 is not valid; expected a version in quotes, such as \"1.30\" (unquoted, 1.30 would be the number 1.3)"),
        ("mesh: {default-injection: maybe}\n", ".meshlint.yaml:1: mesh.default-injection: 'maybe' is not allowed; expected one of: auto, enabled, disabled"),
        ("selekt: [ML1]\n", ".meshlint.yaml:1: selekt: unknown setting; did you mean select?"),
        ("colour: auto\n", ".meshlint.yaml:1: colour: unknown setting; expected one of: baseline, docs-url, exclude, extend-ignore, extend-select, extends, fail-on, fail-on-skipped, format, ignore, istio-version, kubernetes-version, linkerd-version, max-file-size, mesh, render, rules, select, severity"),
        ("rules: {ML101: {require-evidense: true}}\n", ".meshlint.yaml:1: rules.ML101.require-evidense: unknown option; did you mean require-evidence?"),
        ("rules: {ML101: {strict: true}}\n", ".meshlint.yaml:1: rules.ML101.strict: unknown option; ML101 takes: require-evidence"),
        ("a: [\n", ".meshlint.yaml:2:1: invalid YAML: while parsing a flow node: did not find expected node content"),
    ],
)
def test_invalid_config_is_exit_2_naming_file_key_and_expectation(project, text, message):
    (project / ".meshlint.yaml").write_text(text)
    result = invoke("check", "race.yaml")
    assert (result.exit_code, result.output) == (2, f"meshlint: error: {message}\n")


def test_rule_option_group_false_says_the_mesh_wide_race_per_workload(project):
    (project / "two.yaml").write_text(RACE.replace("name: web", "name: two"))
    # Two workloads, and no mesh-wide configuration in the run to set the hold in: the summary counts them.
    assert [line.split(" ")[0] for line in invoke("check", "race.yaml", "two.yaml", "--format", "concise").output.splitlines()] == []
    result = invoke("check", "race.yaml", "two.yaml")
    assert (result.exit_code, result.output) == (0, (
        "2 files, 2 resources, 0 findings (0 error, 0 warning, 0 info), 0 suppressed, 0 skipped, 0 assumed meshed, 2 workloads start "
        "without holdApplicationUntilProxyStarts, and the run holds no mesh-wide configuration to set it in (ML100 require-source: "
        "false reports them)\n"
    ))
    (project / ".meshlint.yaml").write_text("rules:\n  ML100: {require-source: false}\n")
    assert [line.split(" ")[0] for line in invoke("check", "race.yaml", "two.yaml", "--format", "concise").output.splitlines()] == ["race.yaml:7:5:"]
    (project / ".meshlint.yaml").write_text("rules:\n  ML100: {group: false}\n")
    assert [line.split(" ")[0] for line in invoke("check", "race.yaml", "two.yaml", "--format", "concise").output.splitlines()] == ["race.yaml:7:5:", "two.yaml:7:5:"]


def test_suppressions_annotation_and_comment_are_counted(project):
    annotated = RACE.replace("      labels: {app: web, sidecar.istio.io/inject: \"true\"}", "      labels: {app: web, sidecar.istio.io/inject: \"true\"}\n      annotations: {meshlint.io/ignore: 'ML100 -- pure static site'}")
    (project / "race.yaml").write_text(annotated)
    result = invoke("check", "race.yaml")
    assert result.exit_code == 0 and ", 1 suppressed," in result.output
    commented = RACE.replace("    metadata:\n      labels", "    # meshlint: disable=startup-race-mesh-wide -- no outbound calls\n    metadata:\n      labels")
    (project / "race.yaml").write_text(commented)
    result = invoke("check", "race.yaml")
    assert result.exit_code == 0 and ", 1 suppressed," in result.output


def test_mesh_config_context_is_read_but_not_reported(project):
    (project / "operator.yaml").write_text(
        "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nmetadata: {name: io}\nspec:\n  meshConfig:\n"
        "    holdApplicationUntilProxyStarts: true\n    defaultConfig:\n      holdApplicationUntilProxyStarts: true\n"
    )
    result = invoke("check", "race.yaml", "--mesh-config", "operator.yaml")
    assert result.exit_code == 0, result.output  # hold comes from the context; its own ML004 is not reported
    assert invoke("check", "race.yaml", "operator.yaml", "--mesh-config", "operator.yaml").exit_code == 1


def test_versions_flag_validated(project):
    result = invoke("check", "race.yaml", "--istio-version", "banana")
    assert result.exit_code == 2


def test_no_color_off_a_tty_and_with_no_color(project, monkeypatch):
    assert "\033[" not in invoke("check", "race.yaml").output
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\033[" not in invoke("check", "race.yaml").output


def test_color_renderer_marks_severity():
    from meshlint.engine.results import Report, Summary
    from meshlint.findings import Finding, Severity
    from meshlint.report import render

    finding = Finding("a.yaml", 1, 1, "ML101", "startup-race", Severity.ERROR, "m", "h")
    text = render("text", Report([finding], Summary(), [], []), color=True)
    assert "\033[31merror\033[0m" in text


def test_rules_and_explain():
    rules = invoke("rules").output.splitlines()
    assert rules[0].split()[:3] == ["ML001", "yaml-syntax-error", "error"]
    explained = invoke("explain", "startup-race").output
    assert explained.startswith("ML101 startup-race (default severity: warning)\n")
    assert "## Use instead" in explained
    assert invoke("explain", "ML999").exit_code == 2


def test_rules_as_json():
    result = invoke("rules", "--format", "json")
    assert result.exit_code == 0
    listing = json.loads(result.stdout)
    assert listing["version"] == 1
    by_code = {r["code"]: r for r in listing["rules"]}
    assert [r["code"] for r in listing["rules"]] == [line.split()[0] for line in invoke("rules").output.splitlines()]
    assert by_code["ML301"] == {
        "code": "ML301",
        "name": "drain-exceeds-grace",
        "family": "shutdown",
        "default_severity": "error",
        "enabled_by_default": True,
        "fixable": True,
        "fix_safety": "unsafe",
        "summary": "A classic Istio sidecar whose drain does not fit in the pod's termination grace period.",
    }
    assert by_code["ML601"]["enabled_by_default"] is False
    assert (by_code["ML001"]["fixable"], by_code["ML001"]["fix_safety"]) == (False, None)
    families = {"ML0": "config", "ML1": "startup", "ML2": "jobs", "ML3": "shutdown", "ML4": "security", "ML5": "linkerd", "ML6": "sidecar-scoping"}
    assert all(r["family"] == families[r["code"][:3]] for r in listing["rules"])


def test_internal_error_is_one_line_without_traceback(project, monkeypatch):
    import meshlint.engine.run

    def boom(*a, **k):
        raise RuntimeError("kaput")

    monkeypatch.setattr(meshlint.engine.run, "run", boom)
    result = invoke("check", "race.yaml")
    assert (result.exit_code, result.output) == (2, "meshlint: error: internal error: RuntimeError: kaput (set MESHLINT_DEBUG=1 for details)\n")


def test_a_lost_worker_is_one_line_and_no_internal_error(project, monkeypatch):
    import meshlint.engine.run
    from meshlint.engine.forked import WorkerLost

    def lost(*a, **k):
        raise WorkerLost("a worker process ended with 3 of 8 tasks unfinished (killed, or out of memory?)")

    monkeypatch.setattr(meshlint.engine.run, "run", lost)
    result = invoke("check", "race.yaml")
    assert (result.exit_code, result.output) == (2, "meshlint: error: a worker process ended with 3 of 8 tasks unfinished (killed, or out of memory?)\n")
    monkeypatch.setenv("MESHLINT_DEBUG", "1")  # asked for, the traceback comes too
    result = invoke("check", "race.yaml")
    assert result.exit_code == 2 and "Traceback" in result.output and result.output.endswith("(killed, or out of memory?)\n")


def test_python_dash_m_and_inputs_untouched(project):
    before = (project / "race.yaml").read_bytes()
    proc = subprocess.run([sys.executable, "-m", "meshlint", "check", "race.yaml"], capture_output=True, text=True, check=False)
    assert proc.returncode == 1 and proc.stdout.startswith("race.yaml:7:5: warning ML100")
    assert (project / "race.yaml").read_bytes() == before


def test_directory_walk_skips_hidden_and_excluded_and_survives_loops(project):
    (project / ".git").mkdir()
    (project / ".git" / "x.yaml").write_text(RACE)
    (project / "charts").mkdir()
    (project / "charts" / "y.yaml").write_text(RACE)
    (project / "loop").symlink_to(project)
    (project / ".meshlint.yaml").write_text('exclude: ["charts/**"]\n')
    result = invoke("check", ".")
    assert [line.split(":")[0] for line in result.output.splitlines() if "ML100" in line] == ["race.yaml"]


def test_readme_example_output_is_what_meshlint_prints(monkeypatch):
    """The finding quoted in the README is the real output on the shipped examples."""
    import re

    monkeypatch.chdir(ROOT)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quoted = re.search(r"A finding looks like this:\n\n```\n(.*?)```", readme, re.S).group(1)
    result = invoke("check", "examples/")
    assert quoted in result.output
    assert result.exit_code == 1
    assert "7 findings" in result.output.splitlines()[-1]


def test_a_mesh_context_file_that_does_not_parse_is_reported_not_dropped(project):
    (project / ".meshlint.yaml").write_text("mesh:\n  context: [platform/istio.yaml, platform/values.yaml]\n")
    (project / "platform").mkdir()
    (project / "platform" / "istio.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: istio, namespace: istio-system}\ndata:\n  mesh: |-\n"
        "    defaultConfig: {holdApplicationUntilProxyStarts: true\n"
    )
    (project / "platform" / "values.yaml").write_text("global:\n  proxy: [\n")
    result = invoke("check", "race.yaml", "--format", "json")
    found = [(f["path"], f["line"], f["code"]) for f in json.loads(result.output)["findings"]]
    # The unclosed mapping is found where the string ends, one line past its last.
    assert found == [("platform/istio.yaml", 7, "ML001"), ("platform/values.yaml", 3, "ML001"), ("race.yaml", 7, "ML100")]
    assert json.loads(result.output)["findings"][0]["message"].startswith("data.mesh of ConfigMap istio does not parse")


def test_a_missing_mesh_context_file_is_exit_2(project):
    (project / ".meshlint.yaml").write_text("mesh:\n  context: [platform/gone.yaml]\n")
    result = invoke("check", "race.yaml")
    assert (result.exit_code, result.output) == (2, "meshlint: error: .meshlint.yaml:2: mesh.context: platform/gone.yaml: cannot read mesh context file: No such file or directory\n")


def test_skipped_inputs_are_listed_and_fail_on_skipped_exits_1(project):
    (project / "chart" / "templates").mkdir(parents=True)
    (project / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: chart\nversion: 0.1.0\n")
    (project / "chart" / "templates" / "svc.yaml").write_text("apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\n")
    (project / "tsconfig.json").write_text('{\n  // comments make this neither JSON nor YAML\n  "compilerOptions": {}\n}\n')
    result = invoke("check", "clean.yaml", "chart", "tsconfig.json")
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        "not checked: chart/templates/svc.yaml: a template of the Helm chart in chart; render it first: helm template chart | meshlint check -",
        "not checked: tsconfig.json: not a manifest (no document has apiVersion or kind) and it does not parse as YAML",
        "",
        "4 files, 1 resource, 0 findings (0 error, 0 warning, 0 info), 0 suppressed, 3 skipped, 0 assumed meshed, 1 deployment unit",
    ]
    assert invoke("check", "clean.yaml", "chart", "tsconfig.json", "--fail-on-skipped").exit_code == 1
    summary = json.loads(invoke("check", "chart", "--format", "json").stdout)["summary"]
    assert summary["skipped_inputs"] == [{"path": "chart/templates/svc.yaml", "reason": "a template of the Helm chart in chart; render it first: helm template chart | meshlint check -"}]


def test_a_skipped_input_the_text_report_names_is_not_named_again_on_stderr(project):
    (project / "chart" / "templates").mkdir(parents=True)
    (project / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: chart\nversion: 0.1.0\n")
    for n in range(12):
        (project / "chart" / "templates" / f"svc{n:02}.yaml").write_text("apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\n")
    reason = "a template of the Helm chart in chart; render it first: helm template chart | meshlint check -"
    result = invoke("check", "chart")
    assert result.stdout.splitlines()[:11] == [f"not checked: chart/templates/svc{n:02}.yaml: {reason}" for n in range(10)] + [
        "not checked: 2 more inputs (each is named on stderr)"
    ]
    assert result.stderr.splitlines() == [f"meshlint: chart/templates/svc{n:02}.yaml: skipped: {reason}" for n in (10, 11)]
    everyone = [f"meshlint: chart/templates/svc{n:02}.yaml: skipped: {reason}" for n in range(12)]
    assert invoke("check", "chart", "--format", "json").stderr.splitlines() == everyone  # no report names them
    assert invoke("check", "chart", "--output", "report.txt").stderr.splitlines() == everyone  # not on the screen


def test_stdin_filename_names_stdin_in_every_report(project):
    result = invoke("check", "-", "--stdin-filename", "rendered/web.yaml", "--format", "json", input=RACE)
    assert [f["path"] for f in json.loads(result.output)["findings"]] == ["rendered/web.yaml"]


RENDERED = """---
# Source: web/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    metadata: {labels: {sidecar.istio.io/inject: "true"}}
    spec: {containers: [{name: web, image: web, env: [{name: API_URL, value: "http://api:8080"}]}]}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  annotations:
    config.kubernetes.io/origin: |
      path: base/api.yaml
spec:
  template:
    metadata: {labels: {sidecar.istio.io/inject: "true"}}
    spec: {containers: [{name: api, image: api, env: [{name: ORDERS_URL, value: "http://orders:8080"}]}]}
"""


def test_rendered_streams_keep_the_file_each_object_came_from(project):
    (project / ".meshlint.yaml").write_text("rules:\n  ML100: {group: false}\n")  # a finding for each object
    result = invoke("check", "-", "--stdin-filename", "rendered.yaml", "--format", "json", input=RENDERED)
    assert [(f["path"], f["line"], f["code"], f.get("source")) for f in json.loads(result.stdout)["findings"]] == [
        ("rendered.yaml", 9, "ML100", "web/templates/deployment.yaml"),
        ("rendered.yaml", 21, "ML100", "base/api.yaml"),
    ]
    text = invoke("check", "-", "--stdin-filename", "rendered.yaml", input=RENDERED).stdout
    assert "    |     ^\n  source: web/templates/deployment.yaml\n  help: " in text


@pytest.mark.parametrize("injection, tail", [
    ("auto", "1 assumed meshed (Istio shown by Gateway edge, sign.yaml:1)"),
    ("enabled", "1 assumed meshed"),  # the config assumed it, not the Gateway: no sign to name
])
def test_the_summary_names_the_istio_sign_only_when_it_made_a_workload_count_as_meshed(tmp_path, monkeypatch, injection, tail):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".meshlint.yaml").write_text(f"mesh:\n  default-injection: {injection}\n")
    (tmp_path / "app.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n"
        "  containers: [{name: web, image: web, env: [{name: API_URL, value: \"http://api:8080\"}]}]\n"
    )
    (tmp_path / "sign.yaml").write_text("apiVersion: networking.istio.io/v1\nkind: Gateway\nmetadata: {name: edge}\n")
    out = invoke("check", ".").output
    assert out.splitlines()[-1] == f"2 files, 1 resource, 1 finding (0 error, 1 warning, 0 info), 0 suppressed, 1 skipped, {tail}"


class _CountingOut:
    """A stdout that counts its flushes."""

    def __init__(self):
        self.text, self.flushes = [], 0

    def write(self, text):
        self.text.append(text)
        return len(text)

    def flush(self):
        self.flushes += 1

    def isatty(self):
        return False


@pytest.mark.parametrize("fmt", ["text", "concise", "json", "sarif", "github", "gitlab", "junit"])
def test_a_report_on_stdout_is_flushed_once_not_once_a_finding(tmp_path, monkeypatch, fmt):
    from meshlint.config import load_config
    from meshlint.engine.run import run
    from meshlint.registry import load_rules
    from meshlint.report import chunks
    from meshlint.reportfiles import write_reports as _write_reports

    for n in range(30):
        (tmp_path / f"race{n}.yaml").write_text(RACE.replace("name: web", f"name: web{n}"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".meshlint.yaml").write_text("rules:\n  ML100: {group: false}\n")  # a finding for each workload
    report = run(["."], load_config(str(tmp_path / ".meshlint.yaml")), load_rules(), jobs=1)
    assert len(report.findings) == 30
    out = _CountingOut()
    monkeypatch.setattr(sys, "stdout", out)
    _write_reports(report, [(fmt, None)], color_choice="never", statistics=False, quiet=False)
    assert "".join(out.text) == "".join(chunks(fmt, report))
    assert out.flushes == 1
