"""Probe facts (which probes the injector rewrites, which ports the sidecar captures) and the whole
findings of ML106 and ML107."""

from __future__ import annotations

import pytest

from helpers import MESHED, lint, lint_text
from meshlint.mesh.context import MeshContext
from meshlint.mesh.facts.probes import not_rewritten, probes, rewrite
from meshlint.mesh.options import parse_version
from meshlint.mesh.setting import Setting
from meshlint.mesh.workloadbuild import build_view
from meshlint.model.pod import pod_templates
from meshlint.model.resource import resources_of
from meshlint.source.loader import load_text

POD = """apiVersion: v1
kind: Pod
metadata:
  name: p
  annotations: {annotations}
spec:
  containers:
    - name: app
      image: app
      ports: [{{name: http, containerPort: 8080}}]
      livenessProbe: {{httpGet: {{path: /live, port: http}}}}
      readinessProbe: {{tcpSocket: {{port: 9000}}}}
      startupProbe: {{exec: {{command: [cat, /ready]}}}}
{more}"""

PROXY = """    - name: istio-proxy
      image: proxyv2:1.24.0
"""


def template_of(annotations: str = "{}", more: str = ""):
    document = load_text("pod.yaml", POD.format(annotations=annotations, more=more)).documents[0]
    return pod_templates(next(resources_of(document)))[0]


def test_probes_are_read_with_their_ports_resolved():
    found = probes(template_of().containers[0])
    assert [(p.role, p.action, p.port, p.position.line, p.position.column) for p in found] == [
        ("livenessProbe", "httpGet", 8080, 11, 52),
        ("readinessProbe", "tcpSocket", 9000, 12, 42),
        ("startupProbe", "exec", None, 13, 22),
    ]


@pytest.mark.parametrize(
    "annotations, helm, istio, on, note",
    [
        ("{}", None, None, True, "probe rewrite is on by default"),
        ('{sidecar.istio.io/rewriteAppHTTPProbers: "false"}', None, None, False, 'sidecar.istio.io/rewriteAppHTTPProbers: "false"'),
        ('{sidecar.istio.io/rewriteAppHTTPProbers: "F"}', True, None, False, 'sidecar.istio.io/rewriteAppHTTPProbers: "F"'),
        ('{sidecar.istio.io/rewriteAppHTTPProbers: "1"}', False, None, True, 'sidecar.istio.io/rewriteAppHTTPProbers: "1"'),
        # A value strconv.ParseBool cannot read falls back to the injector's Helm value.
        ('{sidecar.istio.io/rewriteAppHTTPProbers: "no"}', False, None, False, "sidecarInjectorWebhook.rewriteAppHTTPProbe: false"),
        ("{}", "false", None, False, "sidecarInjectorWebhook.rewriteAppHTTPProbe: false"),
        ("{}", None, "1.5", False, "Istio 1.5 does not rewrite probes by default"),
    ],
)
def test_probe_rewrite_pod_over_helm_over_default(annotations, helm, istio, on, note):
    setting = rewrite(template_of(annotations), Setting(helm, None) if helm is not None else None, parse_version(istio))
    assert (setting.value, setting.note) == (on, note)


def test_an_injected_manifest_keeps_its_probes_as_written_unless_a_webhook_injects_it_again():
    template = template_of('{sidecar.istio.io/rewriteAppHTTPProbers: "true", sidecar.istio.io/status: "{}"}', PROXY)
    setting = rewrite(template, None, None)
    assert (setting.value, setting.origin.line if setting.origin else None) == (False, 14)
    assert rewrite(template, None, None, reinjected=True).value is True
    # Without istio-init (or istio-validation) an injected pod captures nothing: proxyless gRPC's agent.
    view = build_view(MeshContext(), template)
    assert (view.inbound_captured(8080), view.no_capture.note) == (False, "the injected manifest has no istio-init or istio-validation container")


@pytest.mark.parametrize(
    "action, istio, expected",
    [
        ("httpGet", None, None),
        ("tcpSocket", "1.11", "Istio rewrites tcpSocket probes from 1.12 on, and the target is 1.11"),
        ("tcpSocket", "1.12", None),
        ("grpc", "1.12", "Istio rewrites grpc probes from 1.13 on, and the target is 1.12"),
        ("grpc", "1.13", None),
        ("exec", None, "exec probes are never rewritten"),
    ],
)
def test_which_probes_the_agent_takes_over(action, istio, expected):
    probe = probes(template_of().containers[0])[0]._replace(action=action)
    assert not_rewritten(probe, Setting(True, None), parse_version(istio)) == expected
    assert not_rewritten(probe, Setting(False, None, "off"), parse_version(istio)) == ("exec probes are never rewritten" if action == "exec" else "off")


@pytest.mark.parametrize(
    "annotations, captured",
    [
        ("{}", {8080: True, 15020: False, 15021: False}),
        ('{traffic.sidecar.istio.io/excludeInboundPorts: "8080"}', {8080: False, 9000: True}),
        ('{traffic.sidecar.istio.io/includeInboundPorts: "9000"}', {8080: False, 9000: True}),
        ('{traffic.sidecar.istio.io/includeInboundPorts: ""}', {8080: False}),
        ("{sidecar.istio.io/interceptionMode: NONE}", {8080: False}),
        ('{traffic.sidecar.istio.io/excludeInboundPorts: "80-90"}', {8080: False}),  # rejected: no pod at all
        ("{inject.istio.io/templates: grpc-agent}", {8080: False}),  # proxyless gRPC: no iptables
        ('{inject.istio.io/templates: "sidecar,custom"}', {8080: True}),
    ],
)
def test_inbound_ports_the_sidecar_captures(annotations, captured):
    view = build_view(MeshContext(), template_of(annotations))
    assert {port: view.inbound_captured(port) for port in captured} == captured


STRICT = """apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: default, namespace: shop}
spec:
  mtls: {mode: STRICT}
---
"""


def findings(report, *codes):
    return [(f.code, str(f.severity), f.line, f.column, f.message, f.help) for f in report.findings if f.code in codes]


def test_probe_rules_whole_findings(tmp_path):
    text = STRICT + POD.format(annotations='{sidecar.istio.io/rewriteAppHTTPProbers: "false"}', more="").replace("name: p\n", "name: p\n  namespace: shop\n")
    path = tmp_path / "manifest.yaml"
    report = lint_text(tmp_path, text, MESHED)
    why = f'sidecar.istio.io/rewriteAppHTTPProbers: "false", {path}:12'
    assert findings(report, "ML106", "ML107") == [
        (
            "ML106",
            "error",
            18,
            52,
            f"livenessProbe httpGet on port 8080 of container 'app' is not rewritten ({why}), and istio-proxy captures port 8080 "
            f"under PeerAuthentication STRICT ({path}:5): the kubelet has no mesh certificate, so the sidecar refuses the probe "
            "and it always fails: the kubelet restarts the container again and again",
            'remove sidecar.istio.io/rewriteAppHTTPProbers: "false", so the agent on port 15020 takes the probe over; or use an '
            "exec probe, or probe a port excluded from capture",
        ),
        (
            "ML107",
            "warning",
            19,
            42,
            f"readinessProbe tcpSocket on port 9000 of container 'app' is not rewritten ({why}), and istio-proxy captures port "
            "9000: the sidecar accepts the kubelet's connection itself, so the probe passes as long as the proxy runs, whatever "
            "the app does: the pod stays in rotation while the app cannot serve",
            'remove sidecar.istio.io/rewriteAppHTTPProbers: "false", so the agent on port 15020 takes the probe over; or use an '
            "exec probe that checks the app",
        ),
    ]


def test_a_rewrite_conflict_is_reported_only_where_it_changes_a_finding(tmp_path):
    """Two injector configs disagree on probe rewrite: ML006 names the pod whose TCP probe depends on it,
    not the one whose HTTP probe passes under PERMISSIVE either way."""
    for name, value in (("mesh", "true"), ("mesh/b", "false")):  # one folder holds the other: applied together
        (tmp_path / name).mkdir()
        (tmp_path / name / "values.yaml").write_text(f"global: {{proxy: {{}}}}\nsidecarInjectorWebhook:\n  rewriteAppHTTPProbe: {value}\n")
    (tmp_path / "apps").mkdir()
    pod = "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n  containers: [{{name: app, image: app, readinessProbe: {probe}}}]\n"
    (tmp_path / "apps" / "web.yaml").write_text(pod.format(name="web", probe="{httpGet: {port: 8080}}"))
    (tmp_path / "apps" / "cache.yaml").write_text(pod.format(name="cache", probe="{tcpSocket: {port: 6379}}"))
    report = lint([tmp_path], MESHED, base=str(tmp_path))
    messages = [f.message for f in report.findings if f.code == "ML006"]
    assert len(messages) == 1 and all("rewriteAppHTTPProbe" in m and "1 workload gets none of them" in m for m in messages)
    assert [f.code for f in report.findings if f.code in ("ML106", "ML107")] == []  # undecided: the default, rewrite on


def test_injected_native_proxy_without_startup_probe_names_the_status_port_that_removed_it(tmp_path):
    text = """apiVersion: apps/v1
kind: Deployment
metadata: {name: hello}
spec:
  template:
    metadata:
      annotations:
        status.sidecar.istio.io/port: "0"
        sidecar.istio.io/status: '{"initContainers":["istio-init","istio-proxy"]}'
    spec:
      initContainers:
        - name: istio-init
          image: docker.io/istio/proxyv2:1.27.0
        - name: istio-proxy
          image: docker.io/istio/proxyv2:1.27.0
          restartPolicy: Always
          args: [proxy, sidecar]
      containers:
        - name: hello
          image: hello:1
"""
    [finding] = [f for f in lint_text(tmp_path, text, MESHED).findings if f.code == "ML103"]
    assert (finding.line, finding.column, str(finding.severity)) == (14, 17, "error")
    assert finding.help == (
        'the injector leaves it out because of status.sidecar.istio.io/port: "0" (' + str(tmp_path / "manifest.yaml") + ':8): '
        "remove that and inject again"
    )
