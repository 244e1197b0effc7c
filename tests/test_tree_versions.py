"""Versions from the tree (wave-3 spec V2.6): where the workload's own sources state the Istio release
(IstioOperator `spec.tag`, istiod Helm values `global.tag` or `tag`, the istiod image's tag), it is used
and named; the command line and config win; sources that disagree decide nothing and conflict in nothing."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from meshlint.cli import main

APP = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
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
OPERATOR = "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nmetadata: {{name: {name}, namespace: istio-system}}\nspec:\n  tag: {tag}\n"
ISTIOD = """apiVersion: apps/v1
kind: Deployment
metadata: {name: istiod, namespace: istio-system}
spec:
  template:
    spec:
      containers:
        - name: discovery
          image: docker.io/istio/pilot:1.22.3-distroless
"""
RACE = (
    "app.yaml:6:5: error ML101 [*] startup-race: Deployment web can start before its istio-proxy sidecar is ready: classic sidecar ({native}), "
    "holdApplicationUntilProxyStarts is false (default); it calls out at startup: command calls http://config/seed with curl (line 12)"
)


def run(tmp_path: Path, monkeypatch, files: dict[str, str], *args: str) -> list[str]:
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "--no-cache", "--select", "ML101,ML006", "--format", "concise", *args])
    return result.stdout.splitlines()


def test_the_operators_tag_names_the_release(tmp_path, monkeypatch):
    out = run(tmp_path, monkeypatch, {"app.yaml": APP, "iop.yaml": OPERATOR.format(name="mesh", tag="1.18.5")})
    assert out == [RACE.format(native="Istio 1.18 from IstioOperator spec.tag 1.18.5 at iop.yaml:5 does not default to native sidecars")]
    help_line = CliRunner().invoke(main, ["check", "--no-cache", "--select", "ML101"]).stdout.splitlines()[3]
    # The annotation that turns on native sidecars is read from Istio 1.24 on: an older release is told to upgrade.
    assert help_line.endswith('or upgrade to Istio 1.24+ (Kubernetes 1.29+) and enable native sidecars with the pod annotation '
                              'sidecar.istio.io/nativeSidecar: "true" (Istio 1.24+, Kubernetes 1.29+)')


def test_the_istiod_image_tag_names_the_release(tmp_path, monkeypatch):
    out = run(tmp_path, monkeypatch, {"app.yaml": APP, "istiod.yaml": ISTIOD})
    assert out == [RACE.format(native="Istio 1.22 from istiod image 1.22.3-distroless at istiod.yaml:9 does not default to native sidecars")]


def test_helm_global_tag_names_the_release(tmp_path, monkeypatch):
    values = "global:\n  tag: 1.20.1\n  hub: docker.io/istio\nmeshConfig:\n  accessLogFile: /dev/stdout\n"
    out = run(tmp_path, monkeypatch, {"app.yaml": APP, "values-istiod.yaml": values}, "--mesh-config", "values-istiod.yaml")
    assert out == [RACE.format(native="Istio 1.20 from Helm global.tag 1.20.1 at values-istiod.yaml:2 does not default to native sidecars")]


def test_the_command_line_wins(tmp_path, monkeypatch):
    out = run(tmp_path, monkeypatch, {"app.yaml": APP, "iop.yaml": OPERATOR.format(name="mesh", tag="1.18.5")}, "--istio-version", "1.23")
    assert out == [RACE.format(native="Istio 1.23 does not default to native sidecars")]


def test_two_releases_decide_nothing_and_conflict_in_nothing(tmp_path, monkeypatch):
    files = {"app.yaml": APP, "old.yaml": OPERATOR.format(name="old", tag="1.18.5"), "new.yaml": OPERATOR.format(name="new", tag="1.20.0")}
    assert run(tmp_path, monkeypatch, files) == [RACE.format(native="Istio/Kubernetes versions unknown")]


KIND = """kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
nodes:
  - role: control-plane
    image: kindest/node:v1.33.1@sha256:050072256b9a903bd914c0b2866828150cb229cea0efe5892e2b644d5dd3b34f
  - role: worker
    image: kindest/node:{worker}
"""


def test_a_kind_clusters_oldest_node_names_the_kubernetes_release(tmp_path, monkeypatch):
    files = {"app.yaml": APP, "iop.yaml": OPERATOR.format(name="mesh", tag="1.28.0"), "kind.yaml": KIND.format(worker="v1.30.0")}
    assert run(tmp_path, monkeypatch, files) == [RACE.format(
        native="ENABLE_NATIVE_SIDECARS=auto with Istio 1.28 from IstioOperator spec.tag 1.28.0 at iop.yaml:5, "
               "on Kubernetes 1.30 from kind node image v1.30.0 at kind.yaml:7"
    )]


def test_istio_and_kubernetes_from_the_tree_that_default_to_native_sidecars_settle_the_race(tmp_path, monkeypatch):
    files = {"app.yaml": APP, "iop.yaml": OPERATOR.format(name="mesh", tag="1.28.0"), "kind.yaml": KIND.format(worker="v1.33.1")}
    assert run(tmp_path, monkeypatch, files) == []
    # The command line wins over the tree.
    assert run(tmp_path, monkeypatch, {}, "--kubernetes-version", "1.31") == [RACE.format(
        native="ENABLE_NATIVE_SIDECARS=auto with Istio 1.28 from IstioOperator spec.tag 1.28.0 at iop.yaml:5, on Kubernetes 1.31"
    )]


def test_a_cluster_api_cluster_names_the_kubernetes_release(tmp_path, monkeypatch):
    capi = "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata: {name: prod}\nspec:\n  topology:\n    class: quick\n    version: v1.29.4\n"
    files = {"app.yaml": APP, "iop.yaml": OPERATOR.format(name="mesh", tag="1.28.0"), "cluster.yaml": capi}
    assert run(tmp_path, monkeypatch, files) == [RACE.format(
        native="ENABLE_NATIVE_SIDECARS=auto with Istio 1.28 from IstioOperator spec.tag 1.28.0 at iop.yaml:5, "
               "on Kubernetes 1.29 from Cluster spec.topology.version v1.29.4 at cluster.yaml:7"
    )]


def test_a_cluster_elsewhere_in_the_run_says_nothing_of_a_workload(tmp_path, monkeypatch):
    (tmp_path / "apps").mkdir()
    (tmp_path / "ci").mkdir()
    files = {"apps/app.yaml": APP, "apps/iop.yaml": OPERATOR.format(name="mesh", tag="1.28.0"), "ci/kind.yaml": KIND.format(worker="v1.33.1")}
    # Istio 1.28 defaults to native sidecars only on Kubernetes 1.33+: the cluster in ci/ is not this workload's.
    assert run(tmp_path, monkeypatch, files) == [RACE.replace("app.yaml:", "apps/app.yaml:").format(
        native="Istio 1.28 from IstioOperator spec.tag 1.28.0 at apps/iop.yaml:5 defaults to native sidecars only on Kubernetes 1.33+, Kubernetes version unknown"
    )]


def test_another_charts_global_tag_names_no_istio_release(tmp_path, monkeypatch):
    """Any chart's values may hold `global.tag` (and `env`, which makes them read as Helm values): only
    istiod's own (mesh config, pilot, Istio's image hub) name Istio's release."""
    values = "global:\n  tag: 1.3.0\n  imageRegistry: registry.example.com\nenv:\n  LOG_LEVEL: debug\n"
    out = run(tmp_path, monkeypatch, {"app.yaml": APP, "values-app.yaml": values}, "--mesh-config", "values-app.yaml")
    assert out == [RACE.format(native="Istio/Kubernetes versions unknown")]


def test_a_source_that_states_only_a_release_is_no_place_to_set_the_hold(tmp_path, monkeypatch):
    """istiod's Deployment names the release by its image, and configures nothing: the grouped startup
    race stays at the workload, and is never put on the image line as if the hold could be set there."""
    quiet = APP.replace(  # no call out at startup, only a peer named in env (weak evidence): ML100, not ML101
        '          command: ["sh", "-c", "curl -sf http://config/seed && exec web"]\n', '          env: [{name: API_URL, value: "http://api:8080"}]\n'
    )
    for name, text in {"app.yaml": quiet, "istiod.yaml": ISTIOD}.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(main, ["check", "--no-cache", "--select", "ML100", "--format", "concise"]).stdout.splitlines()
    assert out == [
        "app.yaml:6:5: warning ML100 [*] startup-race-mesh-wide: Deployment web can start before its istio-proxy sidecar is ready: classic "
        "sidecar (Istio 1.22 from istiod image 1.22.3-distroless at istiod.yaml:9 does not default to native sidecars), "
        "holdApplicationUntilProxyStarts is false (default); it names peers in env: env API_URL=http://api:8080 (line 12); nothing shows "
        "a call out at startup that needs the hold on this workload alone: set it mesh-wide"
    ]


# GoogleCloudPlatform/anthos-service-mesh-packages asm/istio/istio-operator.yaml (commit
# c8d314482c81a7aba9e4d6128f4e77e9f9335403), its head: a release with a vendor suffix, and kpt setter
# comments on the lines that state it.
ASM_OPERATOR = """---
apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
spec:
  profile: empty
  hub: gke.gcr.io/asm # {"$ref":"#/definitions/io.k8s.cli.setters.anthos.servicemesh.hub"}
  tag: 1.23.3-asm.2 # {"$ref":"#/definitions/io.k8s.cli.setters.anthos.servicemesh.tag"}
"""
# shekar1221/kind-istio-payment-mesh kind/kind-config.yaml (commit d821177b4732cd6ba1619cf530d888bb5eb68a3d):
# node images pinned by digest.
KIND_CONFIG = """kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
nodes:
  - role: control-plane
    image: kindest/node:v1.35.5@sha256:ce977ae6d65918d0b58a5f8b5e940429c2ce42fa3a5619ec2bbc60b949c0ac95
  - role: worker
    image: kindest/node:v1.35.5@sha256:ce977ae6d65918d0b58a5f8b5e940429c2ce42fa3a5619ec2bbc60b949c0ac95
"""


def test_real_sources_beside_a_workload_name_both_releases(tmp_path, monkeypatch):
    """Two real files that state releases, beside a workload that calls out as it starts. Istio 1.23 (an
    ASM build) runs classic sidecars whatever the nodes, and the message says where it was read; with
    Istio 1.28 from the command line (which wins over the tag), the nodes' Kubernetes 1.35 turns native
    sidecars on by default and there is no race. Before versions were read from the tree, both said
    "versions unknown"."""
    files = {"app.yaml": APP, "istio-operator.yaml": ASM_OPERATOR, "kind-config.yaml": KIND_CONFIG}
    assert run(tmp_path, monkeypatch, files) == [RACE.format(native=(
        "Istio 1.23 from IstioOperator spec.tag 1.23.3-asm.2 at istio-operator.yaml:7 does not default to native sidecars"
    ))]
    assert run(tmp_path, monkeypatch, files, "--istio-version", "1.28") == []
    del files["kind-config.yaml"]
    (tmp_path / "kind-config.yaml").unlink()
    assert run(tmp_path, monkeypatch, files, "--istio-version", "1.28") == [
        RACE.format(native="Istio 1.28 defaults to native sidecars only on Kubernetes 1.33+, Kubernetes version unknown")
    ]
