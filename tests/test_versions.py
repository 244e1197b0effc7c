"""Versions as clusters and meshes print them, read the same way by the command line and the config."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from packaging.version import Version

from helpers import RACE
from meshlint.cli import main
from meshlint.mesh.options import parse_linkerd_version, parse_version

NATIVE = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: shipper
spec:
  template:
    metadata:
      labels: {sidecar.istio.io/inject: "false"}
    spec:
      initContainers:
        - name: log-shipper
          image: fluent-bit:3.0
          restartPolicy: Always
      containers:
        - name: app
          image: app:1
"""
KUBERNETES = [("v1.28.9+k3s1", "1.28.9"), ("1.28.9-gke.1093000", "1.28.9"), ("v1.28.2-eks-1552ad0", "1.28.2"), ("1.28", "1.28"), ("v1.28.0", "1.28.0")]
ISTIO = [("1.22.3", "1.22.3"), ("v1.22.3", "1.22.3"), ("1.22-dev", "1.22"), ("1.22.0-rc.1", "1.22.0"), ("1.22.3-distroless", "1.22.3")]


@pytest.mark.parametrize("text, release", [*KUBERNETES, *ISTIO, ("1.29.3-gke.1093000", "1.29.3"), ("v1.30.2-eks-1552ad0", "1.30.2")])
def test_the_release_is_read_from_each_spelling(text, release):
    assert parse_version(text) == Version(release)


@pytest.mark.parametrize("text", ["banana", "1.", "v", "1.30-", "1..30", "1.2.3.4", "-1.30", "1.30rc1"])
def test_what_is_no_version(text):
    assert parse_version(text) is None


def test_linkerd_versions_read_their_numbers_the_same_way():
    assert [parse_linkerd_version(t) for t in ("2.16", "stable-2.14.10", "version-2.20", "edge-24.6.2", "v2.16.1")] == [
        Version("2.16"), Version("2.14.10"), Version("2.20"), Version("2.16"), Version("2.16.1")]


def run(tmp_path, manifest, *args):
    (tmp_path / "app.yaml").write_text(manifest)
    result = CliRunner().invoke(main, ["check", "app.yaml", "--format", "concise", "--no-cache", *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def native_unsupported(release):
    return (1, f"app.yaml:13:26: error ML104 native-sidecar-unsupported: init container 'log-shipper' is a native sidecar (restartPolicy: Always), "
            f"but Kubernetes {release} runs native sidecars only with the SidecarContainers feature gate switched on (alpha)\n", "")


@pytest.mark.parametrize("text, release", KUBERNETES)
def test_kubernetes_version_spellings_on_the_command_line_and_in_the_config(project, text, release):
    assert run(project, NATIVE, "--kubernetes-version", text) == native_unsupported(release)
    (project / ".meshlint.yaml").write_text(f'kubernetes-version: "{text}"\n')
    assert run(project, NATIVE) == native_unsupported(release)


@pytest.mark.parametrize("text, release", ISTIO)
def test_istio_version_spellings_on_the_command_line_and_in_the_config(project, text, release):
    race = (1, f"app.yaml:7:5: warning ML100 [*] startup-race-mesh-wide: Deployment web can start before its istio-proxy sidecar is ready: classic sidecar "
               f"(Istio {release} does not default to native sidecars), holdApplicationUntilProxyStarts is false (default); it names peers in env: "
               "env API_URL=http://api:8080 (line 13); nothing shows a call out at startup that needs the hold on this workload alone: set it mesh-wide\n", "")
    assert run(project, RACE, "--istio-version", text, "--kubernetes-version", "1.33") == race
    (project / ".meshlint.yaml").write_text(f'istio-version: "{text}"\nkubernetes-version: "1.33"\n')
    assert run(project, RACE) == race


@pytest.mark.parametrize(
    "setting, text, examples",
    [
        ("kubernetes-version", "banana", "1.30 or v1.28.9+k3s1"),
        ("istio-version", "1.22-", "1.24 or 1.22.3"),
        ("linkerd-version", "edge-x", "2.16, stable-2.14.10 or edge-24.6.2"),
    ],
)
def test_a_version_that_is_none_is_refused_alike_in_both_places(project, setting, text, examples):
    code, out, err = run(project, RACE, f"--{setting}", text)
    assert (code, out) == (2, "")
    assert err.endswith(f"Error: Invalid value for --{setting}: '{text}' is not a version such as {examples}\n")
    (project / ".meshlint.yaml").write_text(f'fail-on: error\n{setting}: "{text}"\n')
    assert run(project, RACE) == (2, "", f"meshlint: error: .meshlint.yaml:2: {setting}: '{text}' is not a version such as {examples}\n")
