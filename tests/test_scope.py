"""Which mesh-wide facts apply to which workload (wave-2 spec §W2): the scope rule, revisions, nested
configuration, and runs of a few files that must agree with runs of the tree."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from meshlint.cli import main
from meshlint.mesh import contextqueries as context_module
from meshlint.mesh.context import MeshContext
from meshlint.mesh.options import MeshOptions
from meshlint.mesh.scope import Place, resolve
from meshlint.mesh.workloadbuild import build_view
from meshlint.model.pod import pod_templates
from meshlint.model.resource import resources_of
from meshlint.source.loader import load_text


def operator(name: str, drain: str, revision: str = "", hold: bool | None = None) -> str:
    rev = f"  revision: {revision}\n" if revision else ""
    held = f"      holdApplicationUntilProxyStarts: {str(hold).lower()}\n" if hold is not None else ""
    return (
        f"apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nmetadata: {{name: {name}}}\nspec:\n{rev}"
        f"  meshConfig:\n    defaultConfig:\n      terminationDrainDuration: {drain}\n{held}"
    )


# Injected by its labels, holding the app until the proxy starts, with a grace period of 10 s: a drain
# above 10 s is ML301 and names the source it came from.
APP = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    metadata:
      labels: {app: web, sidecar.istio.io/inject: "true"}
      annotations: {proxy.istio.io/config: '{"holdApplicationUntilProxyStarts": true}'}
    spec:
      terminationGracePeriodSeconds: 10
      containers: [{name: web, image: "web:1", env: [{name: API_URL, value: "http://api:8080"}]}]
"""


def ml301(source: str, line: int = 10, at: str = "apps/web/app.yaml") -> str:
    return (
        f"{at}:{line}:38: error ML301 drain-exceeds-grace: terminationDrainDuration 20s ({source}:7) > "
        f"terminationGracePeriodSeconds 10 ({at}:{line}): the kubelet kills istio-proxy at the deadline, "
        "so its drain is cut short by 10s and the connections still open are reset"
    )


def ml006(here: str, value: str, other: str, other_value: str, where: str, count: str = "1 workload gets") -> str:
    place = {
        "elsewhere": "elsewhere in the run, off the paths of the workloads that look for it",
        "tie": "at the same distance from the workloads that look for it",
    }[where]
    return (
        f"{here}:7:33: warning ML006 conflicting-mesh-config: meshConfig.defaultConfig.terminationDrainDuration is "
        f"{value} here but {other_value} ({other}:7) {place}: {count} none of them, and the built-in default applies instead"
    )


SCOPE_ROWS = {
    "same file": (
        {"apps/web/app.yaml": operator("here", "20s") + "---\n" + APP, "apps/web/istio.yaml": operator("beside", "50s")},
        [ml301("apps/web/app.yaml", line=18)],
    ),
    "same directory": (
        {"apps/web/app.yaml": APP, "apps/web/istio.yaml": operator("beside", "20s"), "apps/istio.yaml": operator("parent", "50s")},
        [ml301("apps/web/istio.yaml")],
    ),
    "parent": (
        {"apps/web/app.yaml": APP, "apps/istio.yaml": operator("parent", "20s"), "istio.yaml": operator("top", "50s")},
        [ml301("apps/istio.yaml")],
    ),
    "a sibling's, when the rest of the run agrees": (
        {"apps/web/app.yaml": APP, "apps/api/istio.yaml": operator("api", "20s")},
        [ml301("apps/api/istio.yaml")],
    ),
    "siblings that disagree are alternatives (wave-3 V1.3): none applies, and no ML006": (
        {"apps/web/app.yaml": APP, "apps/api/istio.yaml": operator("api", "20s"), "apps/db/istio.yaml": operator("db", "50s")},
        [],
    ),
    "sources of one folder elsewhere that disagree: none, and one ML006 at the first": (
        {"apps/web/app.yaml": APP, "apps/mesh/api.yaml": operator("api", "20s"), "apps/mesh/db.yaml": operator("db", "50s")},
        [ml006("apps/mesh/api.yaml", "20s", "apps/mesh/db.yaml", "50s", "elsewhere")],
    ),
    "a tie in one folder: none, and one ML006 at the first": (
        {"apps/web/app.yaml": APP, "apps/web/a.yaml": operator("a", "20s"), "apps/web/b.yaml": operator("b", "50s")},
        [ml006("apps/web/a.yaml", "20s", "apps/web/b.yaml", "50s", "tie")],
    ),
    "the nearest, whatever the rest of the run says": (
        {"apps/web/app.yaml": APP, "apps/web/istio.yaml": operator("web", "20s"), "apps/api/istio.yaml": operator("api", "50s")},
        [ml301("apps/web/istio.yaml")],
    ),
    "a mesh.context file counts as located beside its config": (
        # platform/ is a sibling of apps/, but the root config names it: it sits at the root, one folder
        # farther than apps/istio.yaml, and nearer than a sibling's.
        {
            ".meshlint.yaml": "mesh:\n  context: [platform/istio.yaml]\n",
            "apps/web/app.yaml": APP,
            "platform/istio.yaml": operator("platform", "20s"),
            "other/istio.yaml": operator("other", "50s"),
        },
        [ml301("platform/istio.yaml")],
    ),
}


def write_tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def check(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["check", *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("files, expected", list(SCOPE_ROWS.values()), ids=list(SCOPE_ROWS))
def test_scope_rule(tmp_path, monkeypatch, files, expected):
    write_tree(tmp_path, files)
    monkeypatch.chdir(tmp_path)
    _, out, _ = check(".", "--format", "concise", "--select", "ML301,ML006")
    assert out.splitlines() == expected


NAMESPACE_ROWS = {
    # A Namespace defined beside the workload decides, not one of the same name in an unrelated sample.
    "the nearest Namespace": ({"apps/ns.yaml": "enabled", "samples/ns.yaml": "disabled"}, "istio-sidecar"),
    "the nearest Namespace, either way": ({"apps/ns.yaml": "disabled", "samples/ns.yaml": "enabled"}, "not-meshed"),
    "definitions elsewhere that agree": ({"samples/a/ns.yaml": "enabled", "samples/b/ns.yaml": "enabled"}, "istio-sidecar"),
    # Disagreeing definitions elsewhere decide nothing: the namespace is as if not among the inputs,
    # and default-injection (disabled here) decides.
    "definitions elsewhere that disagree": ({"samples/a/ns.yaml": "enabled", "samples/b/ns.yaml": "disabled"}, "not-meshed"),
}


@pytest.mark.parametrize("files, mesh", list(NAMESPACE_ROWS.values()), ids=list(NAMESPACE_ROWS))
def test_namespaces_by_nearness(files, mesh):
    context = MeshContext(options=MeshOptions(default_injection="disabled"))
    for name, label in files.items():
        text = f"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: orders\n  labels: {{istio-injection: {label}}}\n"
        for document in load_text(f"/tree/{name}", text).documents:
            for resource in resources_of(document):
                context.add(resource, Place.of(f"/tree/{name}"))
    pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: orders}\nspec:\n  containers: [{name: web, image: web}]\n"
    template = next(t for d in load_text("/tree/apps/pod.yaml", pod).documents for r in resources_of(d) for t in pod_templates(r))
    assert build_view(context, template, context.options).classification.mesh == mesh


# --- revisions: each row of reference §12.3 -------------------------------------------------------------

CANARY_CONFIGMAP = """apiVersion: v1
kind: ConfigMap
metadata: {name: istio-canary, namespace: istio-system}
data:
  mesh: |-
    defaultConfig:
      holdApplicationUntilProxyStarts: true
"""
DEFAULT_OPERATOR = operator("default", "5s", hold=False)
TAG_WEBHOOK = """apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: istio-revision-tag-prod
  labels: {istio.io/rev: canary, istio.io/tag: prod}
"""


def _view(namespace_labels: str, pod_labels: str, options: MeshOptions | None = None):
    texts = [DEFAULT_OPERATOR, CANARY_CONFIGMAP, TAG_WEBHOOK]
    if namespace_labels is not None:
        texts.append(f"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: apps\n  labels: {namespace_labels}\n")
    texts.append(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: apps\n"
        f"  labels: {pod_labels}\nspec:\n  containers: [{{name: web, image: web}}]\n"
    )
    mesh = MeshContext(options=options or MeshOptions(default_injection="disabled"))
    resources = []
    for n, text in enumerate(texts):
        for document in load_text(f"/tree/f{n}.yaml", text).documents:
            for resource in resources_of(document):
                resources.append(resource)
                mesh.add(resource, Place(f"/tree/f{n}.yaml", "/tree"))
    pod = next(r for r in resources if r.kind == "Pod")
    return build_view(mesh, next(iter(pod_templates(pod))), mesh.options)


REVISION_ROWS = {
    # 1. istio-injection=enabled: the default revision, whatever istio.io/rev says (on the namespace or pod).
    "1: istio-injection=enabled beats the namespace's istio.io/rev": ("{istio-injection: enabled, istio.io/rev: canary}", "{}", "istio-sidecar", "", False),
    "1: istio-injection=enabled beats the pod's istio.io/rev": ("{istio-injection: enabled}", "{istio.io/rev: canary}", "istio-sidecar", "", False),
    # 2. istio-injection=<anything else>: nothing injects.
    "2: istio-injection=disabled, whatever the revision labels": ("{istio-injection: disabled, istio.io/rev: canary}", "{istio.io/rev: canary}", "not-meshed", "", None),
    # 3. the namespace's istio.io/rev: that revision; the pod's istio.io/rev is ignored...
    "3: the namespace's istio.io/rev": ("{istio.io/rev: canary}", "{}", "istio-sidecar", "canary", True),
    "3: the namespace's istio.io/rev beats the pod's": ("{istio.io/rev: canary}", "{istio.io/rev: default}", "istio-sidecar", "canary", True),
    "3: the namespace's istio.io/rev naming a tag": ("{istio.io/rev: prod}", "{}", "istio-sidecar", "canary", True),
    # ...unless the pod says sidecar.istio.io/inject: "false".
    "3: unless the pod opts out": ("{istio.io/rev: canary}", '{sidecar.istio.io/inject: "false"}', "not-meshed", "", None),
    # 4. an unlabeled namespace: the pod's istio.io/rev, else its inject label, else nothing.
    "4: the pod's istio.io/rev in an unlabeled namespace": ("{}", "{istio.io/rev: canary}", "istio-sidecar", "canary", True),
    "4: the pod's inject label: the default revision": ("{}", '{sidecar.istio.io/inject: "true"}', "istio-sidecar", "", False),
    "4: nothing": ("{}", "{}", "not-meshed", "", None),
    # 5. a revision the run does not declare: no webhook matches, nothing injects.
    "5: an istio.io/rev naming no revision or tag": ("{istio.io/rev: blue}", "{}", "not-meshed", "", None),
}


@pytest.mark.parametrize("namespace, pod, mesh, revision, hold", list(REVISION_ROWS.values()), ids=list(REVISION_ROWS))
def test_revision_selection(namespace, pod, mesh, revision, hold):
    view = _view(namespace, pod)
    assert (view.classification.mesh, view.classification.revision) == (mesh, revision)
    if hold is not None:
        # Settings come only from the injecting revision's sources: the canary's ConfigMap holds, the
        # default revision's IstioOperator does not.
        assert view.hold.value is hold
        assert (view.hold.origin.path if view.hold.origin else None) == ("/tree/f1.yaml" if revision else "/tree/f0.yaml")


def test_an_unknown_revision_is_kept_for_ml008():
    view = _view("{istio.io/rev: blue}", "{}")
    assert view.classification.unknown_revision is not None and view.classification.unknown_revision.text == "blue"


# --- the same answer whatever the paths --------------------------------------------------------------

SEVERAL_SCOPES = {
    ".meshlint.yaml": "mesh:\n  default-injection: enabled\n",
    "dev/istio.yaml": operator("dev", "20s"),
    "dev/app.yaml": APP,
    "prod/istio.yaml": operator("prod", "50s"),
    "prod/app.yaml": APP.replace("name: web", "name: api"),
    "prod/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: default, labels: {istio-injection: enabled}}\n",
    "shared/peer.yaml": "apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata: {name: default, namespace: istio-system}\nspec:\n  mtls: {mode: STRICT}\n",
    "shared/lax/peer.yaml": "apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata: {name: lax, namespace: istio-system}\nspec:\n  mtls: {mode: PERMISSIVE}\n",
}


def test_every_order_of_the_paths_gives_the_same_bytes(tmp_path, monkeypatch):
    write_tree(tmp_path, SEVERAL_SCOPES)
    monkeypatch.chdir(tmp_path)
    paths = ["dev", "prod/app.yaml", "prod/istio.yaml", "prod/ns.yaml", "shared"]
    outputs = set()
    for order in itertools.permutations(paths):
        for fmt in ("text", "json"):
            outputs.add((fmt, check(*order, "--format", fmt, "--color", "never")))
    assert len(outputs) == 2  # one text, one JSON
    text = next(out for fmt, out in outputs if fmt == "text")
    assert "ML301" in text[1] and "ML006" in text[1]  # the tree does have findings of both kinds


def test_jobs_give_the_same_bytes_on_a_tree_with_several_scopes(tmp_path, monkeypatch):
    for n in range(20):  # 40 files and more: enough for the worker processes to share them
        for env, drain in (("dev", "20s"), ("prod", "50s")):
            write_tree(tmp_path, {f"{env}/team{n}/app.yaml": APP, f"{env}/istio.yaml": operator(env, drain)})
        write_tree(tmp_path, {f"dev/team{n}/.meshlint.yaml": "extends: ../../.meshlint.yaml\nignore: [ML101]\n" if n % 3 == 0 else ""})
    write_tree(tmp_path, {".meshlint.yaml": "mesh:\n  default-injection: enabled\n"})
    for n in range(20):
        if n % 3:
            os.remove(tmp_path / f"dev/team{n}/.meshlint.yaml")
    monkeypatch.chdir(tmp_path)
    runs = {check(".", "--format", "json", "--jobs", str(jobs)) for jobs in (1, 2, 5)}
    assert len(runs) == 1
    ((code, out, _),) = runs
    assert code == 1
    assert out.count('"ML301"') == 40


def test_a_named_file_gets_the_verdict_the_tree_gives(tmp_path, monkeypatch):
    """Rule 1 from the files beside and above a named file (§W2.7): its Namespace beside it, its
    IstioOperator in a parent folder."""
    pod = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: orders}\nspec:\n  template:\n    spec:\n      terminationGracePeriodSeconds: 10\n      containers: [{name: web, image: web}]\n"
    write_tree(
        tmp_path,
        {
            "apps/orders/web.yaml": pod,
            "apps/orders/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: orders, labels: {istio-injection: enabled}}\n",
            "apps/istio.yaml": operator("apps", "20s"),
            "other/istio.yaml": operator("other", "50s"),
            "other/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: orders, labels: {istio-injection: disabled}}\n",
            ".meshlint.yaml": "",
        },
    )
    monkeypatch.chdir(tmp_path)
    whole = check(".", "--format", "concise", "--select", "ML301")[1]
    alone = check("apps/orders/web.yaml", "--format", "concise", "--select", "ML301")[1]
    assert whole == alone != ""
    assert "terminationDrainDuration 20s (apps/istio.yaml:7)" in alone


# --- nested configuration ----------------------------------------------------------------------------


def test_a_nested_config_governs_its_folder_when_run_from_the_root(tmp_path, monkeypatch):
    write_tree(
        tmp_path,
        {
            ".meshlint.yaml": "mesh:\n  default-injection: enabled\n",
            "dev/.meshlint.yaml": "extends: ../.meshlint.yaml\nignore: [ML100]\nseverity: {ML301: info}\n",
            "dev/app.yaml": APP.replace("proxy.istio.io/config", "x"),
            "dev/istio.yaml": operator("dev", "20s"),
            "prod/app.yaml": APP.replace("proxy.istio.io/config", "x"),
            "prod/istio.yaml": operator("prod", "20s"),
        },
    )
    monkeypatch.chdir(tmp_path)
    out = check(".", "--format", "concise")[1].splitlines()
    assert [line.split(" ", 3)[:3] for line in out] == [
        ["dev/app.yaml:10:38:", "info", "ML301"],
        ["prod/app.yaml:10:38:", "error", "ML301"],
        ["prod/istio.yaml:6:5:", "warning", "ML100"],  # the mesh-wide startup race, at the source that can hold it
    ]
    # --config forces one config on every file.
    forced = check(".", "--format", "concise", "--config", ".meshlint.yaml")[1].splitlines()
    assert [line.split(" ", 3)[:3] for line in forced] == [
        ["dev/app.yaml:10:38:", "error", "ML301"],
        ["dev/istio.yaml:6:5:", "warning", "ML100"],
        ["prod/app.yaml:10:38:", "error", "ML301"],
        ["prod/istio.yaml:6:5:", "warning", "ML100"],
    ]


@pytest.mark.parametrize(
    "files, message",
    [
        ({"a/.meshlint.yaml": "extends: ../b/.meshlint.yaml\n", "b/.meshlint.yaml": "extends: ../a/.meshlint.yaml\n"}, "a/.meshlint.yaml: extends: comes back to this file (through a/.meshlint.yaml -> b/.meshlint.yaml -> a/.meshlint.yaml)"),
        ({"a/.meshlint.yaml": "extends: ../gone.yaml\n"}, "a/.meshlint.yaml:1: extends: ../gone.yaml: no such file"),
        ({"a/.meshlint.yaml": "extends: ../b.yaml\n", "b.yaml": "selekt: [ML1]\n"}, "b.yaml:1: selekt: unknown setting; did you mean select?"),
    ],
    ids=["cycle", "missing", "invalid parent"],
)
def test_extends_errors_name_the_file(tmp_path, monkeypatch, files, message):
    write_tree(tmp_path, {**files, "a/app.yaml": APP})
    monkeypatch.chdir(tmp_path)
    code, out, err = check("a/app.yaml")
    assert code == 2 and out == ""
    assert err.startswith("meshlint: error: ") and message in err
    assert err.count("\n") == 1


def test_extended_mesh_context_keeps_pointing_where_it_did(tmp_path, monkeypatch):
    write_tree(
        tmp_path,
        {
            ".meshlint.yaml": "mesh:\n  context: [platform/istio.yaml]\n",
            "platform/istio.yaml": operator("platform", "20s"),
            "apps/web/.meshlint.yaml": "extends: ../../.meshlint.yaml\n",
            "apps/web/app.yaml": APP,
        },
    )
    monkeypatch.chdir(tmp_path / "apps" / "web")
    out = check("app.yaml", "--format", "concise", "--select", "ML301")[1]
    assert out.splitlines() == [ml301("../../platform/istio.yaml", at="app.yaml")]


def test_a_mesh_context_file_beside_a_named_file_counts_once_where_its_config_places_it(tmp_path, monkeypatch):
    # apps/istio.yaml is mesh.context of the root config, so it counts as located at the root; the named
    # file's neighbour apps/team.yaml is nearer and decides. Read a second time as a neighbour, at its own
    # path, the context file would tie with apps/team.yaml (ML006) instead.
    write_tree(
        tmp_path,
        {
            ".meshlint.yaml": "mesh:\n  context: [apps/istio.yaml]\n",
            "apps/istio.yaml": operator("platform", "5s"),
            "apps/team.yaml": operator("team", "20s"),
            "apps/web/app.yaml": APP,
        },
    )
    monkeypatch.chdir(tmp_path)
    out = check("apps/web/app.yaml", "--format", "concise", "--select", "ML301,ML006")[1]
    assert out.splitlines() == [ml301("apps/team.yaml")]


def test_a_widened_run_reads_a_nested_configs_mesh_context_once_where_that_config_places_it(tmp_path, monkeypatch):
    # Naming istio.yaml widens the run over the tree, where apps/.meshlint.yaml names web/ctx.yaml as
    # context (placed at apps/). apps/web/local.yaml is nearer to the workload and decides, as in a run
    # of the whole tree; read a second time by the walk at its own path, ctx.yaml would tie with it.
    write_tree(
        tmp_path,
        {
            ".meshlint.yaml": "mesh: {}\n",
            "istio.yaml": operator("root", "1s", hold=True),
            "apps/.meshlint.yaml": "mesh:\n  context: [web/ctx.yaml]\n",
            "apps/web/ctx.yaml": operator("ctx", "20s"),
            "apps/web/local.yaml": operator("local", "5s"),
            "apps/web/app.yaml": APP,
        },
    )
    monkeypatch.chdir(tmp_path)
    code, out, err = check("istio.yaml", "--format", "concise", "--select", "ML301,ML006")
    assert (code, out, err) == (0, "", "meshlint: istio.yaml changed: also checking 1 file\n")
    assert check(".", "--format", "concise", "--select", "ML301,ML006")[:2] == (0, "")


# --- a named file holding mesh-wide context checks what it governs (§W2.6) ------------------------------

WIDEN_TREE = {
    ".meshlint.yaml": "mesh:\n  default-injection: enabled\n",
    "platform/istio.yaml": operator("platform", "20s"),
    "apps/web/app.yaml": APP,
    "apps/api/app.yaml": APP.replace("name: web", "name: api"),
    "apps/api/service.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: api}\nspec:\n  selector: {app: api}\n  ports: [{port: 80}]\n",
    "apps/README.yaml": "just: notes\n",
}


def test_a_changed_istio_operator_checks_the_workloads_it_governs(tmp_path, monkeypatch):
    write_tree(tmp_path, WIDEN_TREE)
    monkeypatch.chdir(tmp_path)
    code, out, err = check("platform/istio.yaml", "--format", "concise")
    assert code == 1
    assert err == "meshlint: platform/istio.yaml changed: also checking 2 files\n"
    assert out.splitlines() == [ml301("platform/istio.yaml", at="apps/api/app.yaml"), ml301("platform/istio.yaml")]


def test_a_changed_namespace_checks_only_files_that_can_be_in_it(tmp_path, monkeypatch):
    write_tree(tmp_path, WIDEN_TREE)
    write_tree(tmp_path, {"apps/api/app.yaml": APP.replace("name: web}", "name: api, namespace: payments}")})
    write_tree(tmp_path, {"platform/ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: payments, labels: {istio-injection: enabled}}\n"})
    monkeypatch.chdir(tmp_path)
    _, _, err = check("platform/ns.yaml", "--format", "concise")
    assert err == "meshlint: platform/ns.yaml changed: also checking 1 file\n"


def test_a_nearer_source_keeps_its_files_out(tmp_path, monkeypatch):
    """apps/web has its own drain: the change of the one above every workload cannot alter it."""
    tree = {k: v for k, v in WIDEN_TREE.items() if not k.startswith("platform/")}
    write_tree(tmp_path, {**tree, "istio.yaml": operator("mesh", "20s"), "apps/web/istio.yaml": operator("web", "5s")})
    monkeypatch.chdir(tmp_path)
    _, out, err = check("istio.yaml", "--format", "concise")
    assert err == "meshlint: istio.yaml changed: also checking 1 file\n"
    assert out.splitlines() == [ml301("istio.yaml", at="apps/api/app.yaml")]


def test_a_changed_service_or_workload_checks_nothing_more(tmp_path, monkeypatch):
    write_tree(tmp_path, WIDEN_TREE)
    monkeypatch.chdir(tmp_path)
    for path in ("apps/api/service.yaml", "apps/web/app.yaml"):
        _, _, err = check(path, "--format", "concise")
        assert "also checking" not in err


def test_a_named_folder_is_not_widened(tmp_path, monkeypatch):
    write_tree(tmp_path, WIDEN_TREE)
    monkeypatch.chdir(tmp_path)
    code, out, err = check("platform", "--format", "concise")
    assert (code, out, err) == (0, "", "")


def test_the_summary_says_when_a_named_file_saw_no_mesh_settings(tmp_path, monkeypatch):
    write_tree(tmp_path, {".meshlint.yaml": "", "apps/web/app.yaml": APP, "platform/values.yaml": "x: 1\n"})
    monkeypatch.chdir(tmp_path)
    out = check("apps/web/app.yaml", "--select", "ML301")[1]
    assert out.endswith(
        "1 file, 1 resource, 0 findings (0 error, 0 warning, 0 info), 0 suppressed, 0 skipped, 0 assumed meshed, "
        "1 on Istio's defaults (no mesh-wide settings beside or above the named files; settings kept elsewhere "
        "count when mesh.context names them)\n"
    )
    # The whole tree, or mesh.context, leaves nothing unseen.
    assert "on Istio's defaults" not in check(".", "--select", "ML301")[1]
    write_tree(tmp_path, {".meshlint.yaml": "mesh:\n  context: [platform/values.yaml]\n"})
    assert "on Istio's defaults" not in check("apps/web/app.yaml", "--select", "ML301")[1]


def test_ml006_names_each_other_value_once_with_how_many_sources_give_it(tmp_path, monkeypatch):
    write_tree(
        tmp_path,
        {
            "apps/web/app.yaml": APP,
            "apps/api/app.yaml": APP.replace("name: web", "name: api"),
            "apps/mesh/a.yaml": operator("a", "20s"),
            "apps/mesh/b.yaml": operator("b", "50s"),
            "apps/mesh/c.yaml": operator("c", "50s"),
        },
    )
    monkeypatch.chdir(tmp_path)
    out = check(".", "--format", "concise", "--select", "ML006")[1].splitlines()
    assert out[0] == ml006("apps/mesh/a.yaml", "20s", "apps/mesh/b.yaml", "50s", "elsewhere", count="2 workloads get").replace(
        "(apps/mesh/b.yaml:7)", "(apps/mesh/b.yaml:7 and 1 other place)"
    )
    assert len(out) == 1  # the one conflict, once


def test_namespace_definitions_that_inject_alike_leave_the_namespace_known():
    # testdata/ML006/silent_linkerd_inject_disabled_or_absent: linkerd.io/inject disabled and absent agree,
    # so the namespace is known, has no Istio label, and no sidecar is assumed for its DaemonSet.
    from helpers import TESTDATA

    code, out, _ = check(str(TESTDATA / "ML006" / "silent_linkerd_inject_disabled_or_absent"), "--format", "concise")
    assert (code, out) == (0, "")


def test_the_files_of_a_folder_share_settings_unless_a_source_is_in_one_of_them(monkeypatch):
    mesh = MeshContext()
    for path, drain in (("/tree/mesh.yaml", "5s"), ("/tree/apps/near.yaml", "20s")):
        for document in load_text(path, operator("op", drain)).documents:
            for resource in resources_of(document):
                mesh.add(resource, Place.of(path))
    resolved = []

    def counted(field, claims, place, units=None):
        resolved.append(place)
        return resolve(field, claims, place, units)

    monkeypatch.setattr(context_module, "resolve", counted)

    def drain(path: str) -> tuple[str, str]:
        setting = mesh.settings_at(Place.of(path)).default_config["terminationDrainDuration"]
        return setting.value, setting.origin.path

    # Beside the near source, every file of apps/ takes it; the source's own file too, worked out apart.
    assert [drain(f"/tree/apps/{name}.yaml") for name in ("a", "b", "c")] == [("20s", "/tree/apps/near.yaml")] * 3
    assert drain("/tree/apps/near.yaml") == ("20s", "/tree/apps/near.yaml")
    assert drain("/tree/other/d.yaml") == ("5s", "/tree/mesh.yaml")
    # One field, resolved once for apps/ (a, b and c), once for near.yaml, once for other/.
    assert [place.file for place in resolved] == ["/tree/apps/a.yaml", "/tree/apps/near.yaml", "/tree/other/d.yaml"]
    assert mesh.settings_at(Place.of("/tree/apps/a.yaml")) is mesh.settings_at(Place.of("/tree/apps/b.yaml"))

