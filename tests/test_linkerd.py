"""Linkerd facts (reference §10, §11): versions, the control plane's Helm values as a scoped source, the
proxy settings each pod gets with their origins, the version gates, and whole findings of ML5xx."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from helpers import lint_text
from meshlint.cli import main
from meshlint.engine.reach import is_mesh_wide
from meshlint.mesh.context import MeshContext
from meshlint.mesh.options import MeshOptions, Versions, parse_linkerd_version, parse_version
from meshlint.mesh.workloadbuild import build_view
from meshlint.model.kinds import HELM_VALUES, LINKERD_HELM_VALUES
from meshlint.model.pod import pod_templates
from meshlint.model.resource import resources_of
from meshlint.source.loader import load_text

JOB = """apiVersion: batch/v1
kind: Job
metadata: {{name: job, namespace: {namespace}}}
spec:
  template:
    metadata:
      annotations: {annotations}
    spec:
      restartPolicy: Never
      containers: [{{name: job, image: job, command: {command}}}]
"""


def job(annotations="{linkerd.io/inject: enabled}", namespace="batch", command='["./job"]'):
    return JOB.format(annotations=annotations, namespace=namespace, command=command)


def proxy(*texts, linkerd=None):
    """The Linkerd proxy facts of the first workload among the texts (each its own file)."""
    resources = []
    for n, text in enumerate(texts):
        for doc in load_text(f"f{n}.yaml", text).documents:
            resources.extend(resources_of(doc))
    mesh = MeshContext(resources, MeshOptions(versions=Versions(linkerd=parse_linkerd_version(linkerd))))
    template = next(t for r in resources if r.is_workload for t in pod_templates(r))
    view = build_view(mesh, template)
    assert view.linkerd
    return view.linkerd_proxy


@pytest.mark.parametrize(
    "text, line",
    [
        ("2.16", "2.16"),
        ("v2.14.3", "2.14.3"),
        ("stable-2.14.10", "2.14.10"),
        ("version-2.20", "2.20"),
        ("edge-24.6.2", "2.16"),  # the first edge release with /shutdown off
        ("edge-24.6.1", "2.15"),
        ("edge-26.5.2", "2.20"),
        ("edge-19.5.2", "2.10"),
        ("edge-x", None),
        ("latest", None),
    ],
)
def test_linkerd_versions_read_as_their_stable_line(text, line):
    assert parse_linkerd_version(text) == parse_version(line)


@pytest.mark.parametrize(
    "text, kind",
    [
        ("proxy:\n  await: false\nproxyInit:\n  runAsRoot: true\n", LINKERD_HELM_VALUES),
        ("linkerdVersion: stable-2.14.10\n", LINKERD_HELM_VALUES),
        ("identity:\n  issuer: {}\nproxy:\n  logLevel: warn\n", LINKERD_HELM_VALUES),
        # Old Linkerd charts have `global:` too: still Linkerd's, never read as istiod's global.proxy.
        ("global:\n  proxy: {enableShutdownEndpoint: true}\nproxy: {}\nproxyInit: {}\n", LINKERD_HELM_VALUES),
        ("global:\n  proxy:\n    holdApplicationUntilProxyStarts: true\n", HELM_VALUES),
        ("proxy:\n  image: envoy\n", None),  # some other chart's values
    ],
)
def test_linkerd_control_plane_values_are_their_own_kind(text, kind):
    kinds = [r.kind for d in load_text("values.yaml", text).documents for r in resources_of(d)]
    assert kinds == ([kind] if kind else [])


def test_defaults_by_release():
    unknown = proxy(job())
    assert (unknown.native.value, unknown.native_assumed, unknown.shutdown_endpoint.value) == (False, True, False)
    assert unknown.native.cited == "Linkerd version unknown, so classic assumed; 2.20 and later default to native sidecars"
    old = proxy(job(), linkerd="2.14")
    assert (old.native.value, old.shutdown_endpoint.value) == (False, True)
    assert proxy(job(), linkerd="2.20").native.value is True
    assert proxy(job(), linkerd="edge-24.6.2").shutdown_endpoint.cited == "the /shutdown endpoint is off by default since 2.16"


def test_pod_over_namespace_over_helm_with_origins():
    namespace = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: batch\n  annotations: {config.linkerd.io/proxy-admin-shutdown: enabled}\n"
    helm = "proxy:\n  enableShutdownEndpoint: false\n  await: false\nproxyInit: {}\n"
    facts = proxy(job(), namespace, helm, linkerd="2.18")
    assert (facts.shutdown_endpoint.value, facts.shutdown_endpoint.where) == (True, "f1.yaml:5")
    assert (facts.await_disabled.value, facts.await_disabled.cited) == ("disabled", "Helm proxy.await: false, f2.yaml:3")
    own = proxy(job("{linkerd.io/inject: enabled, config.linkerd.io/proxy-admin-shutdown: disabled}"), namespace, helm, linkerd="2.18")
    assert (own.shutdown_endpoint.value, own.shutdown_endpoint.local) == (False, True)


@pytest.mark.parametrize(
    "name, value, linkerd, native",
    [
        ("config.linkerd.io/proxy-enable-native-sidecar", '"true"', "2.20", True),
        ("config.linkerd.io/proxy-enable-native-sidecar", '"true"', "2.19", False),  # GA name from 2.20 only
        ("config.beta.linkerd.io/proxy-enable-native-sidecar", '"true"', "2.19", True),
        ("config.beta.linkerd.io/proxy-enable-native-sidecar", '"true"', "2.18", False),
        ("config.alpha.linkerd.io/proxy-enable-native-sidecar", "T", "2.15", True),  # strconv.ParseBool
        ("config.alpha.linkerd.io/proxy-enable-native-sidecar", "enabled", "2.15", False),  # not a bool: ignored
        ("config.alpha.linkerd.io/proxy-enable-native-sidecar", '"true"', "2.14", False),  # no native before 2.15
        ("config.linkerd.io/proxy-enable-native-sidecar", '"false"', "2.20", False),
    ],
)
def test_native_sidecar_names_and_vocabulary(name, value, linkerd, native):
    assert proxy(job(f"{{linkerd.io/inject: enabled, {name}: {value}}}"), linkerd=linkerd).native.value is native


def test_the_first_native_name_present_decides_even_when_it_does_not_parse():
    both = '{linkerd.io/inject: enabled, config.linkerd.io/proxy-enable-native-sidecar: enabled, config.alpha.linkerd.io/proxy-enable-native-sidecar: "false"}'
    assert proxy(job(both), linkerd="2.20").native.value is True  # the 2.20 default: the alpha opt-out is never read
    assert proxy(job(both), linkerd="2.19").native.value is False  # 2.19 does not know the GA name: the alpha one decides


@pytest.mark.parametrize("linkerd, native", [("2.19", False), ("2.20", True)])
def test_namespace_beta_opt_out_is_lost_on_2_20(linkerd, native):
    """2.20 copies the GA and alpha native-sidecar names from a namespace, not the beta one (§11.1.6)."""
    namespace = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: batch\n  annotations: {config.beta.linkerd.io/proxy-enable-native-sidecar: \"false\"}\n"
    assert proxy(job(), namespace, linkerd=linkerd).native.value is native


def _found(tmp_path, text, code, settings=None):
    report = lint_text(tmp_path, text, settings)
    return [(f.line, f.column, f.severity.name.lower(), f.message, f.help) for f in report.findings if f.code == code]


def test_job_without_shutdown_whole_finding(tmp_path):
    assert _found(tmp_path, job(), "ML504") == [
        (
            6,
            5,
            "warning",
            "Job job never completes: its linkerd-proxy (Linkerd version unknown, so classic assumed; 2.20 and later default to "
            "native sidecars) keeps running after container 'job' exits, because nothing runs linkerd-await --shutdown or POSTs to "
            "localhost:4191/shutdown",
            'enable native sidecars with the pod annotation config.linkerd.io/proxy-enable-native-sidecar: "true" (Linkerd 2.20+; '
            "config.alpha.linkerd.io/proxy-enable-native-sidecar on 2.15-2.19), Kubernetes 1.29+, which Kubernetes stops when the "
            "work ends; or run the program as `linkerd-await --shutdown -- <program>` (the binary in the app image) and, on Linkerd "
            "2.16+, enable the endpoint with the pod annotation config.linkerd.io/proxy-admin-shutdown: enabled",
        )
    ]


def test_shutdown_call_on_2_16_whole_finding(tmp_path):
    text = job(command='["linkerd-await", "-S", "--", "./job"]')
    assert _found(tmp_path, text, "ML505", {"linkerd-version": "2.16"}) == [
        (
            10,
            54,
            "error",
            "container 'job' asks its Linkerd proxy to shut down (linkerd-await -S -- ./job), but the proxy answers 404 and keeps "
            "running: the /shutdown endpoint is off by default since 2.16 (Linkerd 2.16), so Job job never completes",
            'enable native sidecars with the pod annotation config.alpha.linkerd.io/proxy-enable-native-sidecar: "true" '
            "(Kubernetes 1.29+), which need no shutdown call; or add the pod annotation config.linkerd.io/proxy-admin-shutdown: "
            "enabled (or Helm proxy.enableShutdownEndpoint: true)",
        )
    ]
    assert _found(tmp_path, text, "ML505", {"linkerd-version": "2.15"}) == []


def test_wait_before_exit_under_the_2_20_default(tmp_path):
    text = job("{linkerd.io/inject: enabled, config.alpha.linkerd.io/proxy-wait-before-exit-seconds: \"10\"}")
    assert _found(tmp_path, text, "ML509", {"linkerd-version": "2.20"}) == [
        (
            7,
            105,
            "warning",
            "config.alpha.linkerd.io/proxy-wait-before-exit-seconds: 10 on the pod template: Linkerd 2.20 ignores "
            "proxy-wait-before-exit-seconds for native sidecars (Linkerd 2.20 defaults to native sidecars), so the proxy gets no "
            "preStop delay",
            "drop it: a native proxy is stopped only after the app containers have exited; to give the app time to drain, give the "
            "app container its own preStop sleep within terminationGracePeriodSeconds",
        )
    ]
    assert _found(tmp_path, text, "ML509", {"linkerd-version": "2.19"}) == []


def test_linkerd_values_are_mesh_wide_for_pre_commit():
    values = next(r for d in load_text("values.yaml", "proxy:\n  await: false\nproxyInit: {}\n").documents for r in resources_of(d))
    assert is_mesh_wide(values)
    quiet = next(r for d in load_text("values.yaml", "proxy:\n  logLevel: warn\nproxyInit: {}\n").documents for r in resources_of(d))
    assert not is_mesh_wide(quiet)  # says nothing the Linkerd facts read


def test_linkerd_version_flag_and_config(tmp_path):
    path = tmp_path / "job.yaml"
    path.write_text(job(command='["linkerd-await", "-S", "--", "./job"]'), encoding="utf-8")
    runner = CliRunner()
    result = runner.invoke(main, ["check", str(path), "--linkerd-version", "2.14", "--format", "concise"])
    assert (result.exit_code, result.output) == (0, "")
    result = runner.invoke(main, ["check", str(path), "--linkerd-version", "two"])
    assert result.exit_code == 2
    assert "'two' is not a version such as 2.16, stable-2.14.10 or edge-24.6.2" in result.output
    (tmp_path / ".meshlint.yaml").write_text("linkerd-version: 2.16\n", encoding="utf-8")
    result = runner.invoke(main, ["check", str(path), "--config", str(tmp_path / ".meshlint.yaml")])
    assert result.exit_code == 2


def test_empty_pod_value_is_as_if_unset():
    """`isInjectAnnotationValid` takes "" as valid: the namespace's enabled then injects the pod."""
    namespace = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: batch\n  annotations: {linkerd.io/inject: enabled}\n"
    assert proxy(job('{linkerd.io/inject: ""}'), namespace).native.value is False  # meshed (proxy() asserts it)
