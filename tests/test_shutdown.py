"""Shutdown facts (preStop sleeps, drain, grace) and the whole findings of ML301-ML303."""

from __future__ import annotations

import math

import pytest

from helpers import MESHED, lint, lint_text
from meshlint.mesh.facts.commands import CommandModel
from meshlint.model.pod import pod_templates
from meshlint.model.resource import resources_of
from meshlint.source.loader import load_text

CONTAINER = """apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  containers:
    - name: app
      image: app
      lifecycle:
        preStop:
{prestop}
"""


def sleep_of(prestop: str):
    text = CONTAINER.format(prestop=prestop)
    document = load_text("pod.yaml", text).documents[0]
    template = pod_templates(next(resources_of(document)))[0]
    return CommandModel(template.containers[0]).prestop_sleep


@pytest.mark.parametrize(
    "prestop, seconds, line, column, form",
    [
        ('          exec: {command: ["sleep", "10"]}', 10, 10, 37, "sleep 10"),
        ('          exec: {command: ["/bin/sleep", "2.5"]}', 2.5, 10, 42, "/bin/sleep 2.5"),
        ('          exec: {command: ["/usr/bin/sleep", "1m", "30"]}', 90, 10, 46, "/usr/bin/sleep 1m 30"),
        ('          exec: {command: ["sh", "-c", "sleep 5 && nginx -s quit"]}', 5, 10, 41, "sleep 5"),
        ('          exec: {command: ["/bin/bash", "-ec", "echo bye; sleep 3; sleep 4"]}', 7, 10, 59, "sleep 3; sleep 4"),
        ('          exec: {command: ["sleep", "infinity"]}', math.inf, 10, 37, "sleep infinity"),
        ("          sleep: {seconds: 12}", 12, 10, 28, "sleep: {seconds: 12}"),
    ],
)
def test_prestop_sleep_forms(prestop, seconds, line, column, form):
    sleep = sleep_of(prestop)
    assert (sleep.seconds, sleep.position.line, sleep.position.column, sleep.form) == (seconds, line, column, form)


@pytest.mark.parametrize(
    "prestop",
    [
        '          exec: {command: ["sh", "-c", "sleep $GRACE"]}',  # not in the manifest
        '          exec: {command: ["sleep"]}',
        '          exec: {command: ["sleep", "ten"]}',
        '          exec: {command: ["nginx", "-s", "quit"]}',
        '          exec: {command: "sleep 10"}',  # a string, not a list: Kubernetes rejects it
        "          sleep: {seconds: \"10\"}",
        "          sleep: {seconds: -1}",
        "          httpGet: {path: /stop, port: 8080}",
    ],
)
def test_prestop_without_a_known_sleep(prestop):
    assert sleep_of(prestop) is None


def findings(tmp_path, text, code):
    report = lint_text(tmp_path, text, MESHED)
    return [(f.line, f.column, f.message) for f in report.findings if f.code == code]


def test_drain_exceeds_grace_names_both_numbers_and_origins(tmp_path):
    (tmp_path / "mesh").mkdir()
    (tmp_path / "mesh" / "istio-operator.yaml").write_text(
        "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nmetadata: {name: io}\n"
        "spec:\n  meshConfig:\n    defaultConfig:\n      terminationDrainDuration: 1m30s\n"
    )
    text = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec:\n  template:\n"
        "    metadata: {labels: {app: api}}\n    spec:\n      containers: [{name: api, image: api}]\n"
    )
    (tmp_path / "api.yaml").write_text(text)

    report = lint([tmp_path / "mesh", tmp_path / "api.yaml"], base=str(tmp_path))
    found = [(f.path, f.line, f.column, f.message) for f in report.findings if f.code == "ML301"]
    operator = str(tmp_path / "mesh" / "istio-operator.yaml")
    assert found == [
        (
            str(tmp_path / "api.yaml"),
            6,
            5,
            f"terminationDrainDuration 90s ({operator}:7) > terminationGracePeriodSeconds 30 (default): "
            "the kubelet kills istio-proxy at the deadline, so its drain is cut short by 60s and the connections still open are reset",
        )
    ]


def test_exit_on_zero_compares_minimum_drain(tmp_path):
    text = """apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  template:
    metadata:
      annotations:
        proxy.istio.io/config: '{"proxyMetadata": {"EXIT_ON_ZERO_ACTIVE_CONNECTIONS": "1", "MINIMUM_DRAIN_DURATION": "20s"}}'
    spec:
      terminationGracePeriodSeconds: 15
      containers: [{name: api, image: api}]
"""
    path = tmp_path / "manifest.yaml"
    assert findings(tmp_path, text, "ML301") == [
        (
            8,
            118,
            f"MINIMUM_DRAIN_DURATION 20s ({path}:8) > terminationGracePeriodSeconds 15 ({path}:10), with "
            f"EXIT_ON_ZERO_ACTIVE_CONNECTIONS ({path}:8) the agent waits at least that long before it may exit: "
            "the kubelet kills istio-proxy at the deadline, so its drain is cut short by 5s and the connections still open are reset",
        )
    ]


PRESTOP_POD = """apiVersion: v1
kind: Pod
metadata: {{name: web}}
spec:
  terminationGracePeriodSeconds: {grace}
  containers:
    - name: web
      image: web
      lifecycle:
        preStop:
          exec:
            command: ["sh", "-c", "sleep 20; nginx -s quit"]
"""


def test_proxy_exits_before_app_message(tmp_path):
    assert findings(tmp_path, PRESTOP_POD.format(grace=60), "ML302") == [
        (
            12,
            36,
            "container 'web' preStop `sleep 20` waits 20s ≥ terminationDrainDuration 5s (default): istio-proxy stops "
            "while the app is still sleeping, so requests still routed to the pod and the app's outbound calls "
            "during shutdown fail",
        )
    ]


def test_prestop_exceeds_grace_message(tmp_path):
    path = tmp_path / "manifest.yaml"
    assert findings(tmp_path, PRESTOP_POD.format(grace=20), "ML303") == [
        (
            12,
            36,
            f"container 'web' preStop `sleep 20` waits 20s ≥ terminationGracePeriodSeconds 20 ({path}:5): the grace "
            "period runs during preStop, so when the sleep ends the container is left about 2 s (the kubelet's one-off "
            "extension) to shut down before it is killed",
        )
    ]


def test_prestop_sleep_action_beyond_grace_is_rejected_by_the_api_server(tmp_path):
    text = PRESTOP_POD.format(grace=20).replace('exec:\n            command: ["sh", "-c", "sleep 20; nginx -s quit"]', "sleep: {seconds: 25}")
    path = tmp_path / "manifest.yaml"
    assert findings(tmp_path, text, "ML303") == [
        (
            11,
            28,
            f"container 'web' preStop `sleep: {{seconds: 25}}` waits 25s ≥ terminationGracePeriodSeconds 20 ({path}:5): "
            "the API server rejects the pod: a preStop sleep action may not be longer than the grace period",
        )
    ]


def test_proxy_exits_before_app_help_raises_the_grace_period_when_the_drain_cannot_fit(tmp_path):
    report = lint_text(tmp_path, PRESTOP_POD.format(grace=15), MESHED)
    [finding] = [f for f in report.findings if f.code == "ML302"]
    assert finding.help.startswith(
        "raise terminationGracePeriodSeconds (now 15) above 20s plus the app's shutdown time, "
        "then terminationDrainDuration above the sleep and below the new grace period; "
    )


SLEEP_ACTION = """apiVersion: v1
kind: Pod
metadata: {{name: web}}
spec:
  containers:
    - name: web
      image: web
      lifecycle:
        preStop:
          sleep: {{seconds: {seconds}}}
"""


@pytest.mark.parametrize(
    "version, seconds, what, help_text",
    [
        (
            "1.29",
            10,
            "Kubernetes 1.29 drops the preStop sleep action without an error (the PodLifecycleSleepAction gate is alpha and off "
            "in 1.29, on from 1.30): the pod gets SIGTERM at once, while its endpoints are still being removed, and requests "
            "still routed to it fail",
            'use an exec hook (`exec: {command: ["sleep", "10"]}`, which needs a sleep binary in the image), or target Kubernetes 1.30 or later',
        ),
        (
            "1.31",
            0,
            "Kubernetes 1.31 rejects the pod: a zero-second sleep needs the PodLifecycleSleepActionAllowZero gate, on by default "
            "from 1.33 (before, the seconds must be greater than 0)",
            "remove the zero-second sleep, which waits for nothing",
        ),
    ],
)
def test_prestop_sleep_unsupported_whole_findings(tmp_path, version, seconds, what, help_text):
    report = lint_text(tmp_path, SLEEP_ACTION.format(seconds=seconds), {"kubernetes-version": version})
    assert [(f.code, str(f.severity), f.line, f.column, f.message, f.help) for f in report.findings if f.code == "ML304"] == [
        ("ML304", "error", 10, 28, f"container 'web' preStop `sleep: {{seconds: {seconds}}}`: {what}", help_text)
    ]
    assert [f.code for f in lint_text(tmp_path, SLEEP_ACTION.format(seconds=seconds), {"kubernetes-version": "1.33"}).findings if f.code == "ML304"] == []


def test_drain_setting_ignored_native_whole_finding(tmp_path):
    text = """apiVersion: v1
kind: Pod
metadata:
  name: api
  annotations:
    sidecar.istio.io/nativeSidecar: "true"
    proxy.istio.io/config: '{"terminationDrainDuration": "45s"}'
spec:
  terminationGracePeriodSeconds: 60
  containers: [{name: api, image: api}]
"""
    path = tmp_path / "manifest.yaml"
    report = lint_text(tmp_path, text, MESHED)
    assert [(f.code, str(f.severity), f.line, f.column, f.message, f.help) for f in report.findings if f.code == "ML305"] == [
        (
            "ML305",
            "info",
            7,
            58,
            f"terminationDrainDuration 45s ({path}:7) is ignored: istio-proxy runs as a native sidecar "
            f"(sidecar.istio.io/nativeSidecar annotation, {path}:6); its injected preStop starts the drain when the pod begins "
            "terminating (Istio 1.21+), and the agent exits at once on the SIGTERM that follows the app's exit, so the setting "
            "is never waited on",
            "remove it; terminationGracePeriodSeconds (now 60) is what bounds the shutdown of the app and its proxy together",
        )
    ]
