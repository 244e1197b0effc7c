"""The CI formats validated against their consumers' schemas: SARIF (OASIS), GitLab Code Quality,
JUnit (Jenkins' XSD); the concise format; several reports from one run."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from xml.etree import ElementTree

import jsonschema
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import ROOT
from meshlint.cli import main

SCHEMAS = ROOT / "tests" / "schemas"
HELM = "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\n  labels:\n{{ include \"labels\" . | indent 4 }}\n"
CLEAN = "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec:\n  ports: [{port: 80}]\n"


@pytest.fixture
def repo(tmp_path, monkeypatch):
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    (tmp_path / "examples" / "chart.yaml").write_text(HELM)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def invoke(*args):
    return CliRunner().invoke(main, list(args))


def rules_page_sections():
    """Each rule's section of the committed rules page, without its heading and with its own headings
    as the rule docs write them (`##`)."""
    text = (ROOT / "docs" / "rules.md").read_text()
    sections = re.split(r"^## (ML[0-9]+) \S+\n\n", text, flags=re.M)
    return {code: re.sub(r"^### ", "## ", section, flags=re.M).rstrip() + "\n" for code, section in zip(sections[1::2], sections[2::2], strict=True)}


def test_sarif_is_valid_with_uri_base_help_tags_security_severity_related_locations_and_notifications(repo):
    log = json.loads(invoke("check", "examples", "--format", "sarif").stdout)
    jsonschema.validate(log, json.loads((SCHEMAS / "sarif-schema-2.1.0.json").read_text()))
    run = log["runs"][0]
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": repo.resolve().as_uri() + "/"}}

    assert "informationUri" not in run["tool"]["driver"]  # no public home configured: no link to one
    sections = rules_page_sections()
    for rule in run["tool"]["driver"]["rules"]:
        assert "helpUri" not in rule
        assert rule["help"]["markdown"] == sections[rule["id"]]  # the rule's section of the rules page
        assert rule["help"]["text"].startswith(f"{rule['id']} {rule['name']} (default severity: ")
        tags = rule["properties"]["tags"]
        if rule["id"].startswith("ML4"):
            assert "security" in tags and 0 < float(rule["properties"]["security-severity"]) <= 10
        else:
            assert "security" not in tags and "security-severity" not in rule["properties"]
    by_rule = {r["ruleId"]: r for r in run["results"]}
    assert by_rule["ML301"]["relatedLocations"] == [
        {
            "id": 1,
            "physicalLocation": {
                "artifactLocation": {"uri": "examples/platform/istio-operator.yaml", "uriBaseId": "%SRCROOT%"},
                "region": {"startLine": 14, "startColumn": 33},
            },
            "message": {"text": "cited in the message"},
        }
    ]
    assert "relatedLocations" not in by_rule["ML004"]
    assert run["invocations"] == [
        {
            "executionSuccessful": True,
            "toolExecutionNotifications": [
                {
                    "level": "warning",
                    "message": {"text": "skipped: Helm template syntax ({{ ... }}); render it first: helm template ... | meshlint check -"},
                    "locations": [{"physicalLocation": {"artifactLocation": {"uri": "examples/chart.yaml", "uriBaseId": "%SRCROOT%"}}}],
                }
            ],
        }
    ]


@pytest.mark.parametrize("where", ["config", "command line", "both"])
def test_sarif_links_each_rule_to_the_rules_page_where_docs_url_says_it_is_published(repo, where):
    page = "https://docs.example.com/meshlint/rules.html"
    args = ["--docs-url", page] if where != "config" else []
    if where != "command line":
        (repo / ".meshlint.yaml").write_text(f"docs-url: {'https://stale.example.com/rules.md' if args else page}\n")
    log = json.loads(invoke("check", "examples", "--format", "sarif", *args).stdout)
    jsonschema.validate(log, json.loads((SCHEMAS / "sarif-schema-2.1.0.json").read_text()))
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == page
    headings = {line[3:] for line in (ROOT / "docs" / "rules.md").read_text().splitlines() if line.startswith("## ")}
    anchors = {h.lower().replace(" ", "-") for h in headings}  # the page's heading anchors, as GitHub names them
    for rule in driver["rules"]:
        assert rule["helpUri"] == f"{page}#{rule['id'].lower()}-{rule['name']}"
        assert rule["helpUri"].partition("#")[2] in anchors


@pytest.mark.parametrize("address", ["docs.example.com/rules.md", "https://docs.example.com/rules.md#top", "ftp://example.com/x"])
def test_a_docs_url_that_is_no_web_page_address_is_exit_2(repo, address):
    result = invoke("check", "examples", "--format", "sarif", "--docs-url", address)
    assert result.exit_code == 2 and "--docs-url" in result.stderr
    (repo / ".meshlint.yaml").write_text(f"docs-url: '{address}'\n")
    result = invoke("check", "examples", "--format", "sarif")
    assert result.exit_code == 2 and result.stderr.startswith("meshlint: error: .meshlint.yaml:1: docs-url: ")


def test_gitlab_report_has_code_quality_fields(repo):
    result = invoke("check", "examples", "--format", "gitlab")
    assert result.exit_code == 1
    issues = json.loads(result.stdout)
    jsonschema.validate(issues, json.loads((SCHEMAS / "gitlab-codequality.schema.json").read_text()))
    assert len({i["fingerprint"] for i in issues}) == len(issues) == 7  # GitLab shows one issue per fingerprint
    ml301 = next(i for i in issues if i["check_name"] == "ML301")
    assert ml301["location"] == {"path": "examples/apps/checkout.yaml", "lines": {"begin": 21}}
    assert (ml301["severity"], ml301["categories"]) == ("major", ["Bug Risk"])
    assert ml301["description"].startswith("ML301 drain-exceeds-grace: terminationDrainDuration 30s")
    ml402 = next(i for i in issues if i["check_name"] == "ML402")
    assert (ml402["severity"], ml402["categories"]) == ("major", ["Security"])  # a security warning ranks higher
    assert json.loads(invoke("check", "examples/platform/namespaces.yaml", "--format", "gitlab").stdout) == []


def junit(*args):
    from xmlschema import XMLSchema

    result = invoke("check", *args, "--format", "junit")
    XMLSchema(str(SCHEMAS / "junit-10.xsd")).validate(result.stdout)
    return result, ElementTree.fromstring(result.stdout)


def cases(tree):
    return [(c.get("classname"), c.get("name"), [child.tag for child in c]) for c in tree.iter("testcase")]


def test_junit_is_valid_for_jenkins_with_a_case_per_clean_file_and_failures_only_at_fail_on(repo):
    result, tree = junit("examples", "--fail-on", "error")
    assert result.exit_code == 1
    assert cases(tree) == [
        ("examples/apps/checkout.yaml", "Deployment shop/checkout ML301 drain-exceeds-grace", ["failure"]),
        ("examples/apps/orders-api.yaml", "Deployment shop/orders-api ML101 startup-race", ["failure"]),
        ("examples/apps/orders-api.yaml", "Deployment shop/orders-api ML402 outbound-mtls-bypass", ["system-out"]),  # a warning
        ("examples/apps/orders-api.yaml", "Deployment shop/orders-api ML102 init-container-network", ["system-out"]),
        ("examples/chart.yaml", "skipped", ["skipped"]),
        ("examples/jobs/nightly-report.yaml", "CronJob batch/nightly-report ML101 startup-race", ["failure"]),
        ("examples/jobs/nightly-report.yaml", "CronJob batch/nightly-report ML201 job-never-completes", ["failure"]),
        ("examples/platform/istio-operator.yaml", "IstioOperator istio-system/control-plane ML004 ignored-mesh-config-field", ["system-out"]),
        ("examples/platform/namespaces.yaml", "no findings", []),
    ]
    suite = tree.find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("9", "4", "0", "1")


def test_a_clean_junit_run_is_not_an_empty_suite_and_never_fails_with_fail_on_never(repo):
    Path("clean.yaml").write_text(CLEAN)
    result, tree = junit("clean.yaml")
    assert (result.exit_code, cases(tree)) == (0, [("clean.yaml", "no findings", [])])
    result, tree = junit("examples", "--fail-on", "never")
    assert result.exit_code == 0 and tree.find("testsuite").get("failures") == "0"


def test_every_ci_format_names_files_relative_to_the_repository_root_from_a_subfolder(repo, monkeypatch):
    (repo / ".git").mkdir()  # the root: what `git init` makes
    monkeypatch.chdir(repo / "examples")
    expected = {
        "examples/apps/checkout.yaml",
        "examples/apps/orders-api.yaml",
        "examples/jobs/nightly-report.yaml",
        "examples/platform/istio-operator.yaml",
    }
    github = invoke("check", ".", "--format", "github").stdout
    assert {re.search(r" file=([^,]+),", line).group(1) for line in github.splitlines()} == expected
    assert github.splitlines()[0].startswith("::error file=examples/apps/checkout.yaml,line=21,col=38,title=ML301 drain-exceeds-grace::")
    _, tree = junit(".", "--fail-on", "error")
    assert {c.get("classname") for c in tree.iter("testcase")} == expected | {"examples/chart.yaml", "examples/platform/namespaces.yaml"}
    checkout = next(c for c in tree.iter("testcase") if c.get("classname") == "examples/apps/checkout.yaml")
    assert checkout.find("failure").text.startswith("examples/apps/checkout.yaml:21:38: error ML301: ")
    sarif = json.loads(invoke("check", ".", "--format", "sarif").stdout)["runs"][0]["results"]
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in sarif} == expected
    gitlab = json.loads(invoke("check", ".", "--format", "gitlab").stdout)
    assert {i["location"]["path"] for i in gitlab} == expected


def test_junit_properties_carry_the_baseline(repo):
    invoke("check", "examples", "--write-baseline", "b.json")
    _, tree = junit("examples", "--baseline", "b.json")
    assert [(p.get("name"), p.get("value")) for p in tree.iter("property")] == [("baselined", "7")]


def test_concise_is_one_line_a_finding(repo):
    result = invoke("check", "examples", "--format", "concise")
    lines = result.stdout.splitlines()
    assert result.exit_code == 1 and len(lines) == 7
    assert lines[0].startswith("examples/apps/checkout.yaml:21:38: error ML301 drain-exceeds-grace: terminationDrainDuration 30s")
    assert all(re.match(r"^examples/\S+:\d+:\d+: (error|warning|info) ML\d{3}( \[\*\])? [a-z-]+: ", line) for line in lines)


def test_several_reports_from_one_run(repo):
    result = invoke("check", "examples", "--format", "sarif", "--output", "meshlint.sarif", "--format", "text")
    assert result.exit_code == 1
    assert result.stdout.startswith("examples/apps/checkout.yaml:21:38: error ML301")
    assert len(json.loads(Path("meshlint.sarif").read_text())["runs"][0]["results"]) == 7
    # The --output goes with the --format before it, whatever comes after.
    result = invoke("check", "examples", "--format", "text", "--format=gitlab", "-o", "gl.json", "--format", "junit", "-ojunit.xml")
    assert result.stdout.startswith("examples/apps/checkout.yaml:21:38:")
    assert len(json.loads(Path("gl.json").read_text())) == 7 and Path("junit.xml").read_text().startswith("<?xml")
    # An --output before any --format goes with the first one; with no --format, with the default.
    result = invoke("check", "examples", "-o", "first.json", "--format", "json", "--format", "concise")
    assert json.loads(Path("first.json").read_text())["version"] == 1 and len(result.stdout.splitlines()) == 7
    assert invoke("check", "examples", "-o", "plain.txt").stdout == ""
    assert Path("plain.txt").read_text().startswith("examples/apps/checkout.yaml:21:38: error ML301")


@pytest.mark.parametrize(
    "args, message",
    [
        (["--format", "json", "--format", "text"], "only one report can go to stdout (--format json and --format text); give the others an --output"),
        (["--format", "json", "-o", "a", "-o", "b"], "--format json has two --output files; give each report its own --format"),
        (["-o", "a", "-o", "b"], "more --output files than --format options; each --output follows its --format"),
        (["--format", "json", "-o", "a", "--format", "sarif", "-o", "a"], "two reports name the same --output file"),
    ],
)
def test_report_pairing_errors_are_usage_errors(repo, args, message):
    result = invoke("check", "examples", *args)
    assert result.exit_code == 2 and f"Error: {message}" in result.stderr


def test_check_help_documents_the_pairing():
    text = invoke("check", "--help").stdout
    assert "each --output FILE writes the report of the\n  --format just before it" in text
    assert "meshlint check . --format sarif --output meshlint.sarif --format text" in text


def test_sarif_with_a_baseline_and_a_diff_is_still_valid(repo):
    invoke("check", "examples", "--write-baseline", "b.json")
    (repo / "examples" / "apps" / "web.yaml").write_text((repo / "examples" / "jobs" / "nightly-report.yaml").read_text().replace("nightly-report", "weekly-report"))
    log = json.loads(invoke("check", "examples", "--baseline", "b.json", "--format", "sarif").stdout)
    jsonschema.validate(log, json.loads((SCHEMAS / "sarif-schema-2.1.0.json").read_text()))
    run = log["runs"][0]
    assert [(r["ruleId"], r["baselineState"]) for r in run["results"]] == [("ML101", "new"), ("ML201", "new")]
    assert run["properties"] == {"baselined": 7, "staleBaseline": [], "outsideDiff": 0}


@pytest.mark.parametrize("flag", [["--fail-on", "never"], ["--exit-zero"]])
def test_advisory_mode_reports_and_exits_0(repo, flag):
    result = invoke("check", "examples", *flag)
    assert result.exit_code == 0 and "7 findings (4 error, 3 warning, 0 info)" in result.stdout
    (repo / ".meshlint.yaml").write_text("fail-on: never\n")
    assert invoke("check", "examples").exit_code == 0
    assert invoke("check", "examples", "--fail-on", "error").exit_code == 1  # the command line wins
    assert invoke("check", "missing").exit_code == 2  # a tool error still is one


ESCAPING = """apiVersion: apps/v1
kind: Deployment
metadata: {name: "web\\e[2J\\e]0;pwned\\a"}
spec:
  template:
    metadata: {annotations: {sidecar.istio.io/inject: "true"}}
    spec:
      containers: [{name: app, image: app, env: [{name: DB_HOST, value: db}]}]
"""


def test_control_characters_a_manifest_holds_are_shown_as_escapes_never_written_raw(tmp_path, monkeypatch):
    # A double-quoted YAML string can hold ESC and BEL: raw, they would clear the reader's terminal
    # and set its title, and no XML parser would read the JUnit report.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "web.yaml").write_text(ESCAPING)
    shown = "Deployment web\\x1b[2J\\x1b]0;pwned\\x07 can start before"
    for fmt in ("text", "concise", "github", "junit"):
        out = invoke("check", "web.yaml", "--no-cache", "--format", fmt, "--color", "always").stdout
        assert shown in out and "\x07" not in out and "\x1b]" not in out and "\x1b[2J" not in out, fmt
    ElementTree.fromstring(invoke("check", "web.yaml", "--no-cache", "--format", "junit").stdout)
    data = json.loads(invoke("check", "web.yaml", "--no-cache", "--format", "json").stdout)
    assert data["findings"][0]["resource"]["name"] == "web\x1b[2J\x1b]0;pwned\x07"  # JSON keeps the value, escaped its own way


def test_a_name_with_a_line_break_a_bidi_control_or_a_lone_surrogate_cannot_forge_a_line_or_stop_the_report(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    forged = ESCAPING.replace('"web\\e[2J\\e]0;pwned\\a"', '"x\\nfake.yaml:1:1: error ML999 forged: y\\ud800\\u202eb\\u2028"')
    (tmp_path / "web.yaml").write_text(forged)
    for fmt in ("concise", "text"):
        result = invoke("check", "web.yaml", "--no-cache", "--format", fmt)
        assert result.exit_code == 1, result.stderr
        assert not any(line.startswith("fake.yaml") for line in result.stdout.splitlines())
        assert "Deployment x\\x0afake.yaml:1:1: error ML999 forged: y\\ud800\\u202eb\\u2028 can start" in result.stdout
        assert "\u202e" not in result.stdout and "\u2028" not in result.stdout
    assert invoke("check", "web.yaml", "--no-cache", "--format", "json").exit_code == 1  # fingerprints hash it too


@pytest.mark.parametrize("fmt", ["sarif", "json", "gitlab"])
@pytest.mark.parametrize("shape", ["findings", "baseline", "clean"])
def test_json_reports_are_laid_out_as_json_dumps_lays_out_what_they_hold(repo, fmt, shape):
    """Written a piece at a time (SARIF, JSON) or laid out by meshlint.report.indented: the text is
    json.dumps(indent=2) of its own content, byte for byte, with findings, with a baseline (SARIF's
    baselineState and run properties) and without findings."""
    args = ["check", "examples", "--format", fmt]
    if shape == "baseline":
        assert invoke("check", "examples", "--write-baseline", "baseline.json").exit_code == 0
        kept = json.loads(Path("baseline.json").read_text())
        kept["findings"] = kept["findings"][::2]  # half of them new again
        Path("baseline.json").write_text(json.dumps(kept))
        args += ["--baseline", "baseline.json"]
    if shape == "clean":
        Path("clean.yaml").write_text(CLEAN)
        args[1] = "clean.yaml"
    text = invoke(*args).stdout
    held = json.loads(text)
    assert text == json.dumps(held, indent=2, ensure_ascii=fmt != "gitlab") + "\n"
    found = held["runs"][0]["results"] if fmt == "sarif" else held["findings"] if fmt == "json" else held
    assert bool(found) == (shape != "clean")
    if fmt == "sarif" and shape == "baseline":
        assert {r["baselineState"] for r in found} == {"new"} and "properties" in held["runs"][0]


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab &<>\"'\n\r\t\x00\x1b\u2028\u202e\ud800é"), max_size=10))
def test_junit_text_and_attributes_are_escaped_as_saxutils_escapes_them(text):
    """Text without anything to escape is written as it is; the rest goes through saxutils."""
    from xml.sax.saxutils import escape, quoteattr

    from meshlint.report import junit, visible

    assert junit.escape(text) == escape(visible(text))
    assert junit.quoteattr(text) == quoteattr(visible(text))


@settings(max_examples=600, deadline=None)
@given(st.text(alphabet=st.sampled_from("a Z~\x7f\x80\x9f\x1f \t\n\r\x0b\x00\x1b\u00a0\u2028\u202e\u200e\ud800\ufffeé"), max_size=8), st.booleans())
def test_visible_escapes_what_the_patterns_name_and_nothing_else(text, one_line):
    """The shortcut for plain ASCII text gives what the escaping itself gives, for every character the
    patterns name or pass, on both sides of printable ASCII (DEL and C1 controls among them)."""
    from meshlint.report import _escaped, visible

    pattern = r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]"
    expected = re.sub(pattern if one_line else pattern.replace(r"\x0a-\x1f", r"\x0b-\x1f"), _escaped, text)
    assert visible(text, one_line=one_line) == expected
