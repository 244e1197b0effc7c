"""Ambient facts (which namespaces and pods are enrolled, what ztunnel makes of an AuthorizationPolicy)
and the whole findings of ML405-ML407."""

from __future__ import annotations

import pytest

from helpers import lint_text
from meshlint.mesh.ambient import ambient_namespace, sidecar_only, waypoint
from meshlint.mesh.facts.authorization import ztunnel_policy
from meshlint.mesh.injection import Namespace
from meshlint.model.resource import resources_of
from meshlint.source.loader import load_text


def namespace(labels: str) -> Namespace:
    document = load_text("ns.yaml", f"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  labels: {labels}\n").documents[0]
    resource = next(resources_of(document))
    return Namespace(resource.name, resource.labels, resource.annotations)


@pytest.mark.parametrize(
    "labels, enrolled",
    [
        ("{istio.io/dataplane-mode: ambient}", True),
        ("{istio.io/dataplane-mode: ambient, istio-injection: disabled}", True),
        ("{istio.io/dataplane-mode: ambient, istio-injection: enabled}", False),  # the sidecar wins
        ("{istio.io/dataplane-mode: ambient, istio.io/rev: canary}", False),
        ("{istio.io/dataplane-mode: none}", False),
        ("{}", False),
    ],
)
def test_which_namespaces_enrol_their_pods_in_ambient(labels, enrolled):
    assert (ambient_namespace(namespace(labels)) is not None) is enrolled


def test_waypoints_and_sidecar_only_annotations():
    assert waypoint(namespace("{istio.io/use-waypoint: shop-waypoint}")).text == "shop-waypoint"
    assert waypoint(namespace("{istio.io/use-waypoint: none}")) is None
    assert [k for k in ("traffic.sidecar.istio.io/excludeInboundPorts", "proxy.istio.io/config", "sidecar.istio.io/interceptionMode",
                        "ambient.istio.io/bypass-inbound-capture", "sidecar.istio.io/inject") if sidecar_only(k)] == [
        "traffic.sidecar.istio.io/excludeInboundPorts", "proxy.istio.io/config", "sidecar.istio.io/interceptionMode"]


def policy(spec: str, api: str = "security.istio.io/v1"):
    text = f"apiVersion: {api}\nkind: AuthorizationPolicy\nmetadata: {{name: p, namespace: shop}}\nspec:\n{spec}"
    return ztunnel_policy(next(resources_of(load_text("p.yaml", text).documents[0])))


@pytest.mark.parametrize(
    "spec, action, http, dropped, enforceable",
    [
        ("  action: DENY\n  rules: [{to: [{operation: {paths: [/admin]}}]}]\n", "DENY", ["paths"], 1, False),
        ("  action: DENY\n  rules: [{to: [{operation: {ports: ['8080'], methods: [POST]}}]}]\n", "DENY", ["methods"], 1, True),
        ("  action: DENY\n  rules: [{from: [{source: {requestPrincipals: ['*']}}], when: [{key: source.ip, values: [10.0.0.0/8]}]}]\n", "DENY", ["requestPrincipals"], 1, False),
        ("  action: DENY\n  rules: [{when: [{key: 'request.auth.claims[groups]', values: [admin]}]}, {}]\n", "DENY", ["when request.auth.claims[groups]"], 1, True),
        ("  rules: [{from: [{source: {remoteIpBlocks: [1.2.3.4/32]}}]}, {from: [{source: {namespaces: [a]}}]}]\n", "ALLOW", ["remoteIpBlocks"], 1, True),
        ("  selector: {matchLabels: {app: a}}\n  rules: [{to: [{operation: {notHosts: [x]}}]}]\n", "ALLOW", ["notHosts"], 1, False),
        ("  action: DENY\n  rules: [{to: [{operation: {ports: ['22']}}]}]\n", "DENY", [], 0, True),
    ],
)
def test_what_ztunnel_keeps_of_a_policy(spec, action, http, dropped, enforceable):
    found = policy(spec)
    assert (found.action, [name for name, _ in found.http], found.dropped, found.enforceable) == (action, http, dropped, enforceable)


def test_policies_ztunnel_never_sees():
    assert policy("  targetRefs: [{kind: Service, group: '', name: a}]\n  action: DENY\n  rules: [{to: [{operation: {paths: [/x]}}]}]\n") is None
    assert policy("  targetRef: {kind: Gateway, group: gateway.networking.k8s.io, name: w}\n") is None
    assert policy("  targetRef: {kind: Server, name: web}\n", api="policy.linkerd.io/v1alpha1") is None


def findings(report, *codes):
    return [(f.code, str(f.severity), f.line, f.column, f.message, f.help) for f in report.findings if f.code in codes]


AMBIENT = """apiVersion: v1
kind: Namespace
metadata:
  name: shop
  labels: {istio.io/dataplane-mode: ambient, istio.io/use-waypoint: waypoint}
---
apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: default, namespace: shop}
spec: {mtls: {mode: STRICT}}
---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: no-admin, namespace: shop}
spec:
  action: DENY
  rules: [{to: [{operation: {paths: ["/admin"]}}]}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  template:
    metadata:
      annotations:
        ambient.istio.io/bypass-inbound-capture: "true"
        proxy.istio.io/config: '{"holdApplicationUntilProxyStarts": true}'
    spec:
      containers: [{name: web, image: web}]
"""


def test_ambient_rules_whole_findings(tmp_path):
    path = tmp_path / "manifest.yaml"
    enrolment = f"istio.io/dataplane-mode=ambient on Namespace shop, {path}:5"
    assert findings(lint_text(tmp_path, AMBIENT), "ML405", "ML406", "ML407") == [
        (
            "ML406",
            "error",
            17,
            30,
            f"AuthorizationPolicy no-admin (DENY, attached namespace-wide) is enforced by ztunnel in ambient namespace shop "
            f"({path}:5): its rules match only on HTTP attributes (paths), which ztunnel cannot see; once they are omitted "
            "nothing is left to match, so the policy has no effect and what it means to deny is allowed",
            "attach the policy to a waypoint, which enforces HTTP rules, with targetRefs: [{kind: Gateway, group: "
            "gateway.networking.k8s.io, name: waypoint}] (the waypoint the namespace uses); or keep only L4 fields (ports, "
            "principals, namespaces, ipBlocks) for ztunnel",
        ),
        (
            "ML405",
            "error",
            26,
            50,
            f'ambient.istio.io/bypass-inbound-capture: "true" on Deployment web, in ambient mode ({enrolment}): inbound '
            "connections skip ztunnel and reach the app directly, in plaintext, without mTLS identity or AuthorizationPolicy; "
            f"PeerAuthentication STRICT ({path}:10) cannot apply to it; before Istio 1.29 inbound HBONE connections from meshed "
            "clients also time out (istio/istio#58546)",
            "remove the annotation unless only clients outside the mesh ever call this workload; to admit such clients "
            "alongside mesh traffic, set the port PERMISSIVE with PeerAuthentication portLevelMtls instead",
        ),
        (
            "ML407",
            "info",
            27,
            9,
            f"proxy.istio.io/config does nothing on Deployment web: the pod is in ambient mode ({enrolment}), has no sidecar, "
            "and the ambient node agent reads none of the sidecar's annotations",
            "remove it; in ambient mode traffic is redirected to ztunnel on the node, and per-workload L7 settings belong to a waypoint",
        ),
    ]


def test_bypass_inbound_capture_needs_istio_1_24(tmp_path):
    assert findings(lint_text(tmp_path, AMBIENT, {"istio-version": "1.23"}), "ML405") == []
