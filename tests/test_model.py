"""One extractor knows where every workload kind keeps its pod template."""

from __future__ import annotations

import pytest

from helpers import MESHED, lint_text
from meshlint.model.pod import pod_templates
from meshlint.model.resource import resources_of
from meshlint.source.loader import load_text

POD_SPEC = "containers: [{name: app, image: app}]"


def wrap(kind: str, api: str) -> tuple[str, int]:
    """A manifest of `kind` and the line of its pod template's metadata."""
    if kind == "Pod":
        return f"apiVersion: {api}\nkind: Pod\nmetadata:\n  name: w\nspec: {{{POD_SPEC}}}\n", 3
    if kind == "CronJob":
        body = f"spec:\n  jobTemplate:\n    spec:\n      template:\n        metadata: {{}}\n        spec: {{{POD_SPEC}}}\n"
        return f"apiVersion: {api}\nkind: CronJob\nmetadata:\n  name: w\n{body}", 9
    body = f"spec:\n  template:\n    metadata: {{}}\n    spec: {{{POD_SPEC}}}\n"
    return f"apiVersion: {api}\nkind: {kind}\nmetadata:\n  name: w\n{body}", 7


KINDS = [
    ("Pod", "v1"),
    ("Deployment", "apps/v1"),
    ("StatefulSet", "apps/v1"),
    ("DaemonSet", "apps/v1"),
    ("ReplicaSet", "apps/v1"),
    ("ReplicationController", "v1"),
    ("Job", "batch/v1"),
    ("CronJob", "batch/v1"),
    ("CronJob", "batch/v1beta1"),
    ("Rollout", "argoproj.io/v1alpha1"),
]


@pytest.mark.parametrize("kind, api", KINDS)
def test_pod_template_and_containers_of_every_workload_kind(kind, api):
    text, _ = wrap(kind, api)
    resource = next(resources_of(load_text("w.yaml", text).documents[0]))
    [template] = pod_templates(resource)
    assert [c.name for c in template.containers] == ["app"]


@pytest.mark.parametrize("kind, api", KINDS)
def test_missing_hold_points_at_the_template_metadata(tmp_path, kind, api):
    text, line = wrap(kind, api)
    # The bare template names no peer: count it anyway, this test is about where the finding points.
    report = lint_text(tmp_path, text, {**MESHED, "rules": {"ML100": {"require-peers": False}}})
    assert [(f.code, f.line) for f in report.findings if f.code == "ML100"] == [("ML100", line)]


def test_non_workloads_have_no_pod_template():
    resource = next(resources_of(load_text("s.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\n").documents[0]))
    assert pod_templates(resource) == []


@pytest.mark.parametrize(
    "text, expected",
    [
        ("apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n", True),
        ('"kind": "Service"\n', True),
        ("kind: ConfigMap\nmetadata: {name: istio, namespace: istio-system}\n", True),  # flow-style name
        ("kind: ConfigMap\nmetadata:\n  name: istio-sidecar-injector\n", True),
        ("kind: ConfigMap\nmetadata:\n  name: app-config\n", False),
        ("meshConfig:\n  defaultConfig: {}\n", True),  # Helm values have no kind
        ('{"apiVersion": "v1", "kind": "Namespace"}\n', True),
        ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n", False),
        ("kind: PodList\nitems: []\n", True),
        ("apiVersion: networking.istio.io/v1\nkind: Sidecar\n", True),  # Sidecar scoping (ML601-ML604)
        ("apiVersion: apps.kruise.io/v1alpha1\nkind: SidecarSet\n", False),
        ("apiVersion: security.istio.io/v1\nkind: AuthorizationPolicy\n", False),  # checked as written, not context
    ],
)
def test_first_pass_picks_the_documents_that_can_hold_mesh_context(text, expected):
    from meshlint.model.prefilter import might_hold_context

    assert might_hold_context(text) is expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ('sidecar.istio.io/inject: "false"', True),
        ('"sidecar.istio.io/inject": "false"', True),
        ("sidecar.istio.io/inject: 'false'", True),
        ("sidecar.istio.io/inject: false", True),
        ('sidecar.istio.io/inject:\n          "false"', True),  # the value on the next line
        ('sidecar.istio.io/inject: "true"\n  other: {sidecar.istio.io/inject: "false"}', True),  # not the first
        ('sidecar.istio.io/inject: "true"', False),
        ("sidecar.istio.io/injectTemplates: false", False),
        ("kind: Deployment", False),
    ],
)
def test_the_opt_out_prefilter_finds_every_spelling(text, expected):
    from meshlint.model.prefilter import might_opt_out

    assert might_opt_out(text) is expected
