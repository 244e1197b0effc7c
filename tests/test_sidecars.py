"""Sidecar scoping facts (what egress hosts import, which Sidecar scopes a pod, by nearness; which
Sidecars clash) and the whole findings of ML601-ML604."""

from __future__ import annotations

import pytest

from helpers import MESHED, lint, lint_text
from meshlint.findings import Position
from meshlint.mesh.scope import Place
from meshlint.mesh.setting import Setting
from meshlint.mesh.sidecars import EgressListener, SidecarConfig, clashes, scope_of
from meshlint.model.selectors import selects


def sidecar(name="default", namespace="shop", selector=None, hosts=("./*",), port=None, folder="/repo/mesh", line=1):
    egress = (EgressListener(port, tuple(Setting(h, Position(f"{folder}/sidecar.yaml", line, 1)) for h in hosts)),) if hosts is not None else ()
    return SidecarConfig(name, namespace, selector, None, egress, None, Place(f"{folder}/sidecar.yaml", folder), Position(f"{folder}/sidecar.yaml", line, 1))


@pytest.mark.parametrize(
    "hosts, port, listener_port, imported",
    [
        (["./*"], None, None, False),  # the Sidecar's namespace is shop, the Service's billing
        (["billing/*"], None, None, True),
        (["*/*"], 8080, None, True),
        (["*/payments.billing.svc.cluster.local"], None, None, True),
        (["billing/payments.billing.svc.cluster.example"], None, None, True),  # another cluster domain
        (["*/*.billing.svc.cluster.local"], None, None, True),
        (["*/*.svc.cluster.local"], None, None, True),
        (["billing/payments"], None, None, False),  # istiod compares the FQDN: a short name imports nothing
        (["~/*"], None, None, False),
        (["~billing/*", "*/*"], None, None, True),  # an exclusion only from Istio 1.31: never read as one
        (["billing"], None, None, False),  # not namespace/dnsName: istiod skips it
        (["billing/*"], 8080, 9090, False),  # a listener with a port imports only that port
        (["billing/*"], 9090, 9090, True),
        (["billing/*"], None, 9090, True),
    ],
)
def test_what_egress_hosts_import(hosts, port, listener_port, imported):
    found = sidecar(hosts=hosts, port=listener_port).imports("billing", "payments", port)
    assert (found is not None) is imported


def test_a_sidecar_without_egress_imports_everything():
    assert sidecar(hosts=None).imports("billing", "payments", 80) is not None


def test_dot_is_the_proxy_namespace_so_the_root_default_imports_each_namespace_own_services():
    root = sidecar(namespace="istio-system", hosts=("./*", "istio-system/*"))
    assert root.imports("billing", "payments", 80, proxy_namespace="billing") is not None
    assert root.imports("billing", "payments", 80, proxy_namespace="shop") is None


WEB = Place("/repo/apps/web/deploy.yaml", "/repo/apps/web")


def test_selector_first_then_namespace_then_root():
    by_app = sidecar("web", selector={"app": "web"}, line=5)
    namespace_wide = sidecar("default", line=10)
    root = sidecar("mesh", namespace="istio-system", line=15)
    root_selector = sidecar("root-web", namespace="istio-system", selector={"app": "web"}, line=20)
    everything = [by_app, namespace_wide, root, root_selector]
    assert scope_of(everything, "shop", {"app": "web"}, WEB, "istio-system").sidecar is by_app
    assert scope_of(everything, "shop", {"app": "api"}, WEB, "istio-system").sidecar is namespace_wide
    assert scope_of(everything, "other", {"app": "web"}, WEB, "istio-system").sidecar is root  # root selectors scope root pods only
    assert scope_of([root_selector], "other", {"app": "web"}, WEB, "istio-system").sidecar is None
    assert scope_of(everything, "shop", None, WEB, "istio-system").sidecar is namespace_wide


def test_nearest_on_the_path_wins_and_unrelated_folders_decide_nothing():
    near = sidecar("near", folder="/repo/apps")
    far = sidecar("far", folder="/repo")
    assert scope_of([near, far], "shop", {}, WEB, "istio-system").sidecar is near
    dev, prod = sidecar("dev", folder="/repo/envs/dev"), sidecar("prod", hosts=("*/*",), folder="/repo/envs/prod")
    assert scope_of([dev, prod], "shop", {}, WEB, "istio-system").undecided
    copies = [sidecar(folder="/repo/envs/dev"), sidecar(folder="/repo/envs/prod")]  # the same object, written twice
    assert scope_of(copies, "shop", {}, WEB, "istio-system").sidecar == copies[0]
    platform = [sidecar("a", folder="/repo/platform"), sidecar("b", folder="/repo/platform", line=9)]
    assert [s.name for s in scope_of(platform, "shop", {}, WEB, "istio-system").ambiguous] == ["a", "b"]


def test_clashes_are_sidecars_applied_together_that_match_the_same_pods():
    a, b = sidecar("a"), sidecar("b", line=9)
    wide, narrow = sidecar("wide", selector={"app": "web"}, line=20), sidecar("narrow", selector={"app": "web", "v": "2"}, line=30)
    apart = sidecar("apart", selector={"team": "x"}, line=40)
    elsewhere = sidecar("c", folder="/repo/other")
    again = sidecar("a", hosts=("*/*",), line=50)
    group = [a, b, wide, narrow, apart, elsewhere, again]
    assert [s.name for s in clashes(group, a)] == ["b"]
    assert [s.name for s in clashes(group, narrow)] == ["wide"]
    assert clashes(group, apart) == []


@pytest.mark.parametrize(
    "selector, labels, expected",
    [
        ({}, {"a": "1"}, True),
        ({"matchLabels": {"mesh": "on"}}, {"mesh": "on"}, True),
        ({"matchLabels": {"mesh": "on"}}, {}, False),
        ({"matchExpressions": [{"key": "env", "operator": "In", "values": ["prod", "stage"]}]}, {"env": "prod"}, True),
        ({"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["dev"]}]}, {}, True),
        ({"matchExpressions": [{"key": "env", "operator": "Exists"}]}, {}, False),
        ({"matchExpressions": [{"key": "env", "operator": "DoesNotExist"}]}, {}, True),
        ({"matchExpressions": [{"key": "env", "operator": "Gt", "values": ["1"]}]}, {"env": "2"}, False),
        ("not a selector", {}, False),
    ],
)
def test_label_selectors(selector, labels, expected):
    assert selects(selector, labels) is expected


def findings(report, *codes):
    return [(f.code, str(f.severity), f.line, f.column, f.message, f.help) for f in report.findings if f.code in codes]


SCOPED = """apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: default, namespace: shop}
spec:
  outboundTrafficPolicy: {mode: REGISTRY_ONLY}
  egress:
    - hosts: ["./*"]
---
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: mesh, namespace: istio-system}
spec:
  workloadSelector: {labels: {app: web}}
---
apiVersion: v1
kind: Service
metadata: {name: payments, namespace: billing}
spec: {selector: {app: payments}, ports: [{port: 8080}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: checkout, namespace: shop}
spec:
  template:
    spec:
      containers:
        - name: checkout
          image: checkout:1
          env:
            - {name: PAYMENTS_URL, value: "http://payments.billing:8080"}
"""


def test_sidecar_rules_whole_findings(tmp_path):
    path = tmp_path / "manifest.yaml"
    report = lint_text(tmp_path, SCOPED, MESHED)
    assert findings(report, "ML602", "ML603", "ML604") == [
        (
            "ML604",
            "warning",
            13,
            3,
            "Sidecar mesh is in the root namespace istio-system but has a workloadSelector (app=web): it is not the mesh-wide "
            "default and scopes only matching pods of istio-system itself, so no other namespace's proxies are scoped by it",
            "remove the workloadSelector to make it the default for every namespace without a Sidecar, or move it to the "
            "namespaces of the pods it should select",
        ),
        (
            "ML602",
            "error",
            30,
            43,
            f"Deployment checkout calls Service payments of namespace billing on port 8080 (env PAYMENTS_URL=http://payments.billing:8080), "
            f"which Sidecar default ({path}:3) does not import (egress hosts: ./*; it scopes this pod because it has no "
            f"workloadSelector in namespace shop): under outboundTrafficPolicy REGISTRY_ONLY ({path}:5) the proxy drops it",
            'add "billing/payments.billing.svc.cluster.local" (or "billing/*") to the egress hosts of Sidecar default',
        ),
    ]


NAMESPACES = """apiVersion: v1
kind: Namespace
metadata:
  name: orders
  labels: {istio-injection: enabled}
---
apiVersion: v1
kind: Service
metadata: {name: orders, namespace: orders}
spec: {selector: {app: orders}, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: payments, namespace: payments}
spec: {selector: {app: payments}, ports: [{port: 80}]}
"""


def test_unscoped_sidecar_config_is_opt_in_and_says_there_is_no_figure(tmp_path):
    assert findings(lint_text(tmp_path, NAMESPACES, {"rules": {"ML601": {"min-services": 2}}}), "ML601") == []
    report = lint_text(tmp_path, NAMESPACES, {"select": ["ML601"], "rules": {"ML601": {"min-services": 2}}})
    assert findings(report, "ML601") == [
        (
            "ML601",
            "info",
            5,
            12,
            "Namespace orders injects sidecars (istio-injection=enabled) and no Sidecar scopes its proxies (none without a "
            "workloadSelector in orders or in the root namespace istio-system): each proxy holds the configuration of every "
            "Service in the mesh (2 Services in the inputs), so its memory and istiod's pushes grow with the mesh, not with "
            "what the app calls. Istio publishes no per-service memory figure; its docs say only that a proxy's memory "
            "depends on the configuration it holds",
            'add a Sidecar to namespace orders that imports what its workloads call (egress hosts such as "./*" and '
            '"istio-system/*" plus each namespace they call), or a default Sidecar without a selector in istio-system',
        )
    ]
    assert findings(lint_text(tmp_path, NAMESPACES, {"select": ["ML601"]}), "ML601") == []  # 2 < 100, the default


def test_a_changed_sidecar_is_context_for_a_file_named_alone(tmp_path):
    """Pre-commit: the Sidecar beside a named workload file is read, so the workload is judged by it."""
    (tmp_path / "sidecar.yaml").write_text(SCOPED.split("---\n", maxsplit=1)[0])
    (tmp_path / "app.yaml").write_text("---\n".join(SCOPED.split("---\n")[2:]))
    report = lint([tmp_path / "app.yaml"], MESHED, base=str(tmp_path))
    assert [(f.code, f.path) for f in report.findings if f.code == "ML602"] == [("ML602", str(tmp_path / "app.yaml"))]
