"""A `helm template ... | meshlint check -` stream: the formats that annotate files (SARIF, GitHub,
GitLab, JUnit) put each finding at the chart file its `# Source:` comment names, never at `<stdin>`,
and name no line there (the template's lines are not the stream's); the stream's line goes along."""

from __future__ import annotations

import json

from click.testing import CliRunner

from meshlint.cli import main

STREAM = """---
# Source: mychart/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    metadata:
      labels: {app: web, sidecar.istio.io/inject: "true"}
    spec:
      containers:
        - name: web
          image: web
          command: ["sh", "-c", "curl -sf http://config/seed && exec web"]
"""
MESSAGE = (
    "Deployment web can start before its istio-proxy sidecar is ready: classic sidecar (Istio/Kubernetes versions unknown), "
    "holdApplicationUntilProxyStarts is false (default); it calls out at startup: command calls http://config/seed with curl (line 15)"
)


def report(fmt: str) -> str:
    result = CliRunner().invoke(main, ["check", "--no-cache", "--select", "ML101", "--format", fmt, "-"], input=STREAM)
    assert result.exit_code == 1, result.output
    return result.stdout


def test_github_annotates_the_template_file_without_a_line():
    [line] = report("github").splitlines()
    assert line.startswith("::error file=mychart/templates/deployment.yaml,title=ML101 startup-race::" + MESSAGE)


def test_gitlab_names_the_template_file():
    [issue] = json.loads(report("gitlab"))
    assert issue["location"] == {"path": "mychart/templates/deployment.yaml", "lines": {"begin": 1}}


def test_sarif_locates_the_template_and_keeps_the_stream_line_as_related():
    [result] = json.loads(report("sarif"))["runs"][0]["results"]
    assert result["locations"] == [{"physicalLocation": {"artifactLocation": {"uri": "mychart/templates/deployment.yaml", "uriBaseId": "%SRCROOT%"}}}]
    assert result["relatedLocations"] == [{
        "id": 1, "physicalLocation": {"artifactLocation": {"uri": "%3Cstdin%3E", "uriBaseId": "%SRCROOT%"}, "region": {"startLine": 9, "startColumn": 5}},
        "message": {"text": "in the rendered stream"},
    }]


def test_junit_files_the_failure_under_the_template():
    text = report("junit")
    assert '<testcase classname="mychart/templates/deployment.yaml" name="Deployment web ML101 startup-race">' in text
    assert "&lt;stdin&gt;" in text and 'classname="&lt;stdin&gt;"' not in text


def test_a_named_stream_file_keeps_its_own_lines(tmp_path, monkeypatch):
    (tmp_path / "rendered.yaml").write_text(STREAM, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "--no-cache", "--select", "ML101", "--format", "github", "rendered.yaml"])
    assert result.stdout.startswith("::error file=rendered.yaml,line=9,col=5,title=ML101 startup-race::")
