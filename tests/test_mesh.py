"""The mesh context: each precedence rule of the reference, table-driven."""

from __future__ import annotations

import pytest

from meshlint.mesh.context import MeshContext
from meshlint.mesh.options import MeshOptions, Versions, parse_version
from meshlint.mesh.scope import Place
from meshlint.mesh.workloadbuild import build_view
from meshlint.model.pod import pod_templates
from meshlint.model.resource import resources_of
from meshlint.source.loader import load_text

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: app, namespace: {namespace}}}
spec:
  template:
    metadata:
      labels: {labels}
      annotations: {annotations}
    spec:
      containers: [{{name: app, image: app}}]
"""


def context(*texts, istio=None, kubernetes=None, **options):
    options.setdefault("default_injection", "enabled")
    resources = []
    for n, text in enumerate(texts):
        for doc in load_text(f"f{n}.yaml", text).documents:
            resources.extend(resources_of(doc))
    versions = Versions(parse_version(istio), parse_version(kubernetes))
    mesh = MeshContext(resources, MeshOptions(versions=versions, **options))
    workloads = [r for r in resources if r.is_workload]
    templates = [t for r in workloads for t in pod_templates(r)]
    return mesh, (build_view(mesh, templates[0]) if templates else None)


def deployment(namespace="apps", labels="{}", annotations="{}"):
    return DEPLOYMENT.format(namespace=namespace, labels=labels, annotations=annotations)


OPERATOR_HOLD_TRUE = "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nmetadata: {name: io}\nspec:\n  meshConfig:\n    defaultConfig:\n      holdApplicationUntilProxyStarts: true\n"
HELM_HOLD_TRUE = "global:\n  proxy:\n    holdApplicationUntilProxyStarts: true\n"
CONFIGMAP_HOLD_TRUE = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: istio, namespace: istio-system}\ndata:\n  mesh: |-\n    defaultConfig:\n      holdApplicationUntilProxyStarts: true\n"
INJECTOR_HOLD_TRUE = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: istio-sidecar-injector}\ndata:\n  values: \'{"global": {"proxy": {"holdApplicationUntilProxyStarts": true}}}\'\n'
POD_FALSE = "{proxy.istio.io/config: '{\"holdApplicationUntilProxyStarts\": false}'}"
POD_TRUE = "{proxy.istio.io/config: 'holdApplicationUntilProxyStarts: true'}"


@pytest.mark.parametrize(
    "mesh_texts, annotations, expected, where",
    [
        ((), "{}", False, "default"),
        ((), POD_TRUE, True, "f0.yaml:8"),
        ((OPERATOR_HOLD_TRUE,), "{}", True, "f0.yaml:7"),
        ((OPERATOR_HOLD_TRUE,), POD_FALSE, False, "f1.yaml:8"),  # pod false beats mesh defaultConfig true
        ((HELM_HOLD_TRUE,), POD_FALSE, True, "f0.yaml:3"),  # ...but not Helm global.proxy (OR)
        ((CONFIGMAP_HOLD_TRUE,), "{}", True, "f0.yaml:7"),  # data.mesh positions map into the file
        ((INJECTOR_HOLD_TRUE,), POD_FALSE, True, "f0.yaml:5"),  # data.values JSON of Helm values
    ],
)
def test_hold_precedence(mesh_texts, annotations, expected, where):
    _, workload = context(*mesh_texts, deployment(annotations=annotations))
    assert (workload.hold.value, workload.hold.where) == (expected, where)


@pytest.mark.parametrize(
    "namespace_labels, namespace, pod_labels, pod_annotations, sidecar, assumed",
    [
        (None, "apps", "{}", "{}", True, True),  # unknown namespace: default-injection
        (None, "apps", "{sidecar.istio.io/inject: 'false'}", "{}", False, False),
        (None, "apps", "{}", "{sidecar.istio.io/inject: 'false'}", False, False),  # annotation false still honoured
        ("{istio-injection: enabled}", "apps", "{}", "{}", True, False),
        ("{istio-injection: enabled}", "apps", "{sidecar.istio.io/inject: 'false'}", "{}", False, False),
        ("{istio-injection: disabled}", "apps", "{sidecar.istio.io/inject: 'true'}", "{}", False, False),
        ("{istio-injection: 'true'}", "apps", "{}", "{}", False, False),  # only "enabled" selects
        ("{istio.io/rev: canary}", "apps", "{}", "{}", True, False),
        ("{istio-injection: disabled, istio.io/rev: canary}", "apps", "{}", "{}", False, False),  # istio-injection wins
        ("{}", "apps", "{sidecar.istio.io/inject: 'true'}", "{}", True, False),  # label opts in
        ("{}", "apps", "{}", "{sidecar.istio.io/inject: 'true'}", False, False),  # annotation does not
        ("{}", "apps", "{istio.io/rev: canary}", "{}", True, False),
        ("{istio.io/dataplane-mode: ambient}", "apps", "{}", "{}", False, False),
        ("{istio-injection: enabled, istio.io/dataplane-mode: ambient}", "apps", "{}", "{}", True, False),  # sidecar wins
        (None, "kube-system", "{sidecar.istio.io/inject: 'true'}", "{}", False, False),
        (None, "apps", "{istio.io/dataplane-mode: ambient}", "{}", False, False),
    ],
)
def test_injection(namespace_labels, namespace, pod_labels, pod_annotations, sidecar, assumed):
    texts = []
    if namespace_labels is not None:
        texts.append(f"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {namespace}\n  labels: {namespace_labels}\n")
    _, workload = context(*texts, deployment(namespace, pod_labels, pod_annotations))
    assert (workload.istio_sidecar, workload.classification.assumed) == (sidecar, assumed)


def test_injected_namespaces_and_default_injection_disabled():
    _, listed = context(deployment("orders"), injected_namespaces=("orders",), default_injection="disabled")
    _, other = context(deployment("misc"), injected_namespaces=("orders",), default_injection="disabled")
    assert (listed.istio_sidecar, other.istio_sidecar) == (True, False)


def test_host_network_is_never_injected():
    text = deployment(labels="{sidecar.istio.io/inject: 'true'}").replace("containers:", "hostNetwork: true\n      containers:")
    _, workload = context(text)
    assert workload.istio_sidecar is False


OPERATOR_ENV = "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nmetadata: {name: io}\nspec:\n  values:\n    pilot:\n      env:\n        ENABLE_NATIVE_SIDECARS: \"%s\"\n"
OPERATOR_K8S_ENV = "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nmetadata: {name: io}\nspec:\n  components:\n    pilot:\n      k8s:\n        env:\n          - {name: ENABLE_NATIVE_SIDECARS, value: \"%s\"}\n"
HELM_FLAT_ENV = "env:\n  ENABLE_NATIVE_SIDECARS: \"%s\"\n"
COMPAT = "compatibilityVersion: \"1.25\"\n"


@pytest.mark.parametrize(
    "texts, annotations, istio, kubernetes, native",
    [
        ((), "{}", None, None, False),  # unknown versions: classic
        ((), "{sidecar.istio.io/nativeSidecar: 'true'}", None, None, True),
        ((), "{sidecar.istio.io/nativeSidecar: 'true'}", "1.23", None, False),  # annotation is 1.24+
        ((OPERATOR_ENV % "true",), "{}", None, None, True),
        ((OPERATOR_K8S_ENV % "true",), "{}", None, None, True),
        ((HELM_FLAT_ENV % "true",), "{}", None, None, True),
        ((OPERATOR_ENV % "true",), "{sidecar.istio.io/nativeSidecar: 'false'}", None, None, False),  # pod beats env
        ((OPERATOR_ENV % "maybe",), "{}", "1.28", "1.33", False),  # unknown value: disabled
        ((), "{}", "1.27", "1.33", True),  # auto
        ((), "{}", "1.27", "1.32", False),
        ((), "{}", "1.26", "1.33", False),
        ((COMPAT,), "{}", "1.27", "1.33", False),
        ((OPERATOR_ENV % "auto",), "{}", "1.28", "1.33", True),
    ],
)
def test_native_sidecar(texts, annotations, istio, kubernetes, native):
    _, workload = context(*texts, deployment(annotations=annotations), istio=istio, kubernetes=kubernetes)
    assert workload.native.value is native


INJECTED_NATIVE_POD = (
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations: {annotations}\nspec:\n  initContainers:\n"
    "    - name: istio-proxy\n      image: proxyv2\n      restartPolicy: Always\n"
    "  containers: [{{name: app, image: app}}]\n"
)


def test_kube_inject_output_decides_native_and_hold():
    _, workload = context(INJECTED_NATIVE_POD.format(annotations="{sidecar.istio.io/status: '{}'}"))
    assert (workload.istio_sidecar, workload.native.value, workload.native.where, workload.hold.value) == (True, True, "f0.yaml:8", False)


def test_a_pods_own_istio_proxy_without_the_injectors_record_is_a_customisation():
    # The injector merges it into the proxy it adds; native sidecars come from the settings, here
    # istiod's env (reference §18.3.1, istio/istio proxy-override-args-native.yaml.injected).
    istiod_env = "pilot:\n  env:\n    ENABLE_NATIVE_SIDECARS: \"false\"\n"
    _, workload = context(istiod_env, INJECTED_NATIVE_POD.format(annotations="{}"), istio="1.28", kubernetes="1.33")
    assert (workload.istio_sidecar, workload.native.value, workload.native.note, workload.injected_proxy) == (True, False, "ENABLE_NATIVE_SIDECARS=false", None)
    _, workload = context(INJECTED_NATIVE_POD.format(annotations="{}"), istio="1.28", kubernetes="1.33")
    assert (workload.native.value, workload.native.note) == (True, "ENABLE_NATIVE_SIDECARS=auto with Istio 1.28 on Kubernetes 1.33")


@pytest.mark.parametrize(
    "mesh_texts, annotations, drain, grace",
    [
        ((), "{}", 5.0, 30),
        (("meshConfig:\n  defaultConfig:\n    terminationDrainDuration: 1m30s\n",), "{}", 90.0, 30),
        (("meshConfig:\n  defaultConfig:\n    terminationDrainDuration: 1m30s\n",), "{proxy.istio.io/config: '{\"terminationDrainDuration\": \"500ms\"}'}", 0.5, 30),
        ((), "{proxy.istio.io/config: '{\"terminationDrainDuration\": 20}'}", None, 30),  # invalid: ML002's job
    ],
)
def test_drain_and_grace(mesh_texts, annotations, drain, grace):
    _, workload = context(*mesh_texts, deployment(annotations=annotations))
    assert (workload.drain.value, workload.grace_period.value) == (drain, grace)


def test_proxy_metadata_merges_by_key():
    mesh_text = "meshConfig:\n  defaultConfig:\n    proxyMetadata: {EXIT_ON_ZERO_ACTIVE_CONNECTIONS: 'true', MINIMUM_DRAIN_DURATION: 5s}\n"
    _, workload = context(mesh_text, deployment(annotations="{proxy.istio.io/config: '{\"proxyMetadata\": {\"MINIMUM_DRAIN_DURATION\": \"9s\"}}'}"))
    assert {k: s.value for k, s in workload.proxy_metadata.items()} == {"EXIT_ON_ZERO_ACTIVE_CONNECTIONS": "true", "MINIMUM_DRAIN_DURATION": "9s"}


def test_lifecycle_voids_hold_and_startup_probe_switch():
    values = "global:\n  proxy:\n    lifecycle: {preStop: {exec: {command: [sleep, '5']}}}\n    startupProbe: {enabled: false}\n"
    _, workload = context(values, deployment())
    assert workload.hold_override.where == "f0.yaml:3"
    assert workload.startup_probe_off.where == "f0.yaml:4"


PA = "apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata: {{name: p, namespace: {ns}}}\nspec: {spec}\n"


@pytest.mark.parametrize(
    "policies, port, mode",
    [
        ((), None, "PERMISSIVE"),
        ((("istio-system", "{mtls: {mode: STRICT}}"),), None, "STRICT"),
        ((("istio-system", "{mtls: {mode: STRICT}}"), ("apps", "{mtls: {mode: PERMISSIVE}}")), None, "PERMISSIVE"),
        ((("apps", "{mtls: {mode: STRICT}}"),), None, "STRICT"),
        ((("other", "{mtls: {mode: STRICT}}"),), None, "PERMISSIVE"),
        ((("apps", "{selector: {matchLabels: {app: web}}, mtls: {mode: STRICT}}"),), None, "STRICT"),
        ((("apps", "{selector: {matchLabels: {app: db}}, mtls: {mode: STRICT}}"),), None, "PERMISSIVE"),
        ((("apps", "{mtls: {mode: STRICT}}"), ("apps", "{selector: {matchLabels: {app: web}}, mtls: {mode: UNSET}}")), None, "STRICT"),
        ((("apps", "{selector: {matchLabels: {app: web}}, mtls: {mode: STRICT}, portLevelMtls: {8080: {mode: DISABLE}}}"),), 8080, "DISABLE"),
    ],
)
def test_peer_authentication_scopes(policies, port, mode):
    texts = [PA.format(ns=ns, spec=spec) for ns, spec in policies]
    mesh, _ = context(*texts)
    assert mesh.mtls_mode("apps", {"app": "web"}, port)[0].value == mode


NS = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: apps\n  labels: {labels}\n  annotations: {annotations}\n"


@pytest.mark.parametrize(
    "namespace, pod_labels, pod_annotations, mesh, reason",
    [
        # Linkerd's truth table (reference §11.1.2): the annotation, on the pod or its namespace.
        (None, "{}", "{linkerd.io/inject: enabled}", "linkerd", "the pod template has linkerd.io/inject: enabled"),
        (None, "{}", "{linkerd.io/inject: ingress}", "linkerd", "the pod template has linkerd.io/inject: ingress"),
        (None, "{linkerd.io/inject: enabled}", "{}", "istio-sidecar", None),  # a label is never read: the default decides
        (("{}", "{linkerd.io/inject: enabled}"), "{}", "{}", "linkerd", "namespace apps has linkerd.io/inject: enabled"),
        (("{}", "{linkerd.io/inject: enabled}"), "{}", "{linkerd.io/inject: disabled}", "not-meshed", "linkerd.io/inject: disabled on the pod template"),
        # An invalid namespace value un-meshes every pod in it, even one annotated enabled.
        (("{}", "{linkerd.io/inject: 'true'}"), "{}", "{linkerd.io/inject: enabled}", "not-meshed", None),
        (None, "{}", "{linkerd.io/inject: 'yes'}", "not-meshed", None),  # an invalid pod value: not injected
        (("{config.linkerd.io/admission-webhooks: disabled}", "{linkerd.io/inject: enabled}"), "{}", "{}", "not-meshed", None),
        # Both meshes would inject: Istio's sidecar is what is checked (ML005 reports the conflict).
        (("{istio-injection: enabled}", "{linkerd.io/inject: enabled}"), "{}", "{}", "istio-sidecar", "namespace apps has istio-injection=enabled"),
        # Istio gateways.
        (None, "{}", "{inject.istio.io/templates: gateway}", "istio-gateway", None),
        (None, "{}", "{inject.istio.io/templates: 'gateway,extra'}", "istio-gateway", None),
        (None, "{}", "{inject.istio.io/templates: sidecar}", "istio-sidecar", None),
        (("{istio.io/dataplane-mode: ambient}", "{}"), "{}", "{}", "istio-ambient", None),
    ],
)
def test_classification(namespace, pod_labels, pod_annotations, mesh, reason):
    texts = [NS.format(labels=namespace[0], annotations=namespace[1])] if namespace else []
    _, workload = context(*texts, deployment("apps", pod_labels, pod_annotations))
    assert workload.classification.mesh == mesh
    if reason is not None:
        assert workload.classification.reason == reason


GATEWAY_AUTO = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: gw}\nspec:\n  template:\n    spec:\n      containers: [{name: istio-proxy, image: auto}]\n"
INJECTED_LINKERD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  initContainers: [{name: linkerd-proxy, image: proxy, restartPolicy: Always}]\n  containers: [{name: app, image: app}]\n"


@pytest.mark.parametrize("text, mesh", [(GATEWAY_AUTO, "istio-gateway"), (INJECTED_LINKERD, "linkerd")])
def test_classification_from_the_containers(text, mesh):
    _, workload = context(text)
    assert workload.classification.mesh == mesh


@pytest.mark.parametrize(
    "signs, mesh, assumed, unchecked",
    [
        ((), "not-meshed", False, True),
        (("apiVersion: networking.istio.io/v1\nkind: Gateway\nmetadata: {name: g}\n",), "istio-sidecar", True, False),
        (("apiVersion: v1\nkind: Namespace\nmetadata: {name: other, labels: {istio-injection: disabled}}\n",), "istio-sidecar", True, False),
        (("meshConfig:\n  accessLogFile: /dev/stdout\n",), "istio-sidecar", True, False),  # istiod Helm values
        (("global:\n  image: {tag: 1.0}\n",), "not-meshed", False, True),  # another chart's values say nothing of Istio
        (("apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {proxy.istio.io/config: '{}'}}\nspec: {containers: [{name: a, image: a}]}\n",), "istio-sidecar", True, False),
    ],
)
def test_default_injection_auto_needs_a_sign_of_istio(signs, mesh, assumed, unchecked):
    _, workload = context(deployment("apps"), *signs, default_injection="auto")
    assert (workload.classification.mesh, workload.classification.assumed, workload.classification.unchecked) == (mesh, assumed, unchecked)


def test_the_sign_of_istio_that_holds_is_the_nearest_on_the_path_then_the_first_in_path_order_whatever_the_reading_order():
    gateway = "apiVersion: networking.istio.io/v1\nkind: Gateway\nmetadata: {name: g}\n"
    files = (("f1.yaml", gateway.replace("name: g", "name: h")), ("f0.yaml", gateway), ("apps/web/g.yaml", gateway.replace("name: g", "name: near")))
    answers = []
    for order in (files, files[::-1]):
        mesh = MeshContext(options=MeshOptions(default_injection="auto"))
        for name, text in order:
            for doc in load_text(name, text).documents:
                for resource in resources_of(doc):
                    mesh.add(resource)
        answers.append([(s.value, s.where) if s else None for s in map(mesh.istio_sign_at, (Place.of("w.yaml"), Place.of("apps/web/w.yaml"), Place.of("apps/api/w.yaml")))])
    assert answers[0] == answers[1] == [("Gateway g", "f0.yaml:1"), ("Gateway near", "apps/web/g.yaml:1"), ("Gateway g", "f0.yaml:1")]


def test_a_sign_of_istio_in_a_sibling_folder_holds_nothing_there():
    gateway = "apiVersion: networking.istio.io/v1\nkind: Gateway\nmetadata: {name: g}\n"
    mesh = MeshContext(options=MeshOptions(default_injection="auto"))
    for doc in load_text("samples/a/g.yaml", gateway).documents:
        for resource in resources_of(doc):
            mesh.add(resource)
    assert mesh.istio_sign_at(Place.of("samples/b/web.yaml")) is None
    assert mesh.istio_sign_at(Place.of("samples/a/sub/web.yaml")).where == "samples/a/g.yaml:1"


def test_service_targets_are_every_selecting_service_in_reading_order():
    # Services are looked up by one label their selector requires; the answer is still every Service
    # of the pod's namespace that selects it, in the order the run read them, as a scan gives.
    def service(name, selector, port, namespace="apps"):
        return (
            f"apiVersion: v1\nkind: Service\nmetadata: {{name: {name}, namespace: {namespace}}}\n"
            f"spec:\n  selector: {selector}\n  ports: [{{port: 80, targetPort: {port}}}]\n"
        )

    texts = (
        service("by-tier", "{tier: web}", 8080),
        service("other-app", "{app: b}", 8081),
        service("by-both", "{app: a, tier: web}", 8080),
        service("not-text", "{absent: {x: 1}}", 9090),  # a value that is no text compares as an absent label
        service("no-selector", "{}", 7070),
        service("elsewhere", "{app: a}", 8080, namespace="other"),
        service("by-app", "{app: a}", 8082),
        deployment(labels="{app: a, tier: web}"),
    )
    mesh, view = context(*texts)
    targets = mesh.service_targets(view.template)
    assert {port: [s.value for s in found] for port, found in targets.items()} == {
        8080: ["Service by-tier", "Service by-both"],
        9090: ["Service not-text"],
        8082: ["Service by-app"],
    }
    assert list(targets) == [8080, 9090, 8082]


def test_service_targets_say_where_each_target_and_the_name_are_written():
    """The places a Service's facts cite, kept as lines and columns of its file, come back as the
    positions of the nodes (whole, pickled as a worker or the cache sends them)."""
    import pickle

    from meshlint.findings import Position

    text = (
        "apiVersion: v1\nkind: Service\nmetadata:\n  namespace: apps\n  name: web\n"
        "spec:\n  selector: {app: web}\n  ports:\n    - port: 80\n      targetPort: http\n    - {port: 9090}\n"
        "---\napiVersion: v1\nkind: Service\nmetadata: {namespace: apps}\nspec: {ports: [{port: 81, targetPort: 8081}]}\n"
    )
    mesh, _ = context(text)
    web, unnamed = mesh.services["apps"]
    assert web.targets == (("http", Position("f0.yaml", 10, 19)), (9090, Position("f0.yaml", 11, 14)))
    assert web.position == Position("f0.yaml", 5, 9)
    assert web.selector == (("app", "web"),)
    assert unnamed.position == Position("f0.yaml", 13, 1)  # no name: the Service itself
    assert unnamed.targets == ((8081, Position("f0.yaml", 16, 39)),)
    again = pickle.loads(pickle.dumps(web, pickle.HIGHEST_PROTOCOL))
    assert (again, again.targets, again.position) == (web, web.targets, web.position)


def test_a_service_by_name_is_the_first_read_and_one_added_later_is_found():
    def service(name, port, namespace="apps"):
        return f"apiVersion: v1\nkind: Service\nmetadata: {{name: {name}, namespace: {namespace}}}\nspec: {{ports: [{{port: {port}}}]}}\n"

    mesh, _ = context(service("a", 1), service("b", 2), service("a", 3), service("a", 4, namespace="other"))
    assert [s.ports[0][0] for s in (mesh.service("a", "apps"), mesh.service("b", "apps"), mesh.service("a", "other"))] == [1, 2, 4]
    assert mesh.service("c", "apps") is None
    assert mesh.service("a", "nowhere") is None
    for doc in load_text("f9.yaml", service("c", 5)).documents:
        for resource in resources_of(doc):
            mesh.add(resource)
    assert mesh.service("c", "apps").ports[0][0] == 5
    later, _ = context(service("d", 6))
    mesh.merge(later)
    assert mesh.service("d", "apps").ports[0][0] == 6


def test_the_first_pass_scans_a_file_for_a_sign_of_istio_only_where_it_can_change_which_holds(monkeypatch):
    """A file's later signs change nothing, nor do those of a later file of a folder that showed one
    (in no other unit): such documents are neither scanned nor composed. Another folder's are; and each
    document's kind lines are found once for both pre-checks."""
    from meshlint.engine import firstpass as engine
    from meshlint.model import prefilter

    pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {proxy.istio.io/config: '{}'}}\nspec: {containers: [{name: a, image: a}]}\n"
    mesh, _ = context("apiVersion: networking.istio.io/v1\nkind: Gateway\nmetadata: {name: g}\n", default_injection="auto")
    assert mesh.signs["f0.yaml"][1].where == "f0.yaml:1"
    scanned, kinds = [], []
    monkeypatch.setattr(engine, "might_show_istio", lambda text: scanned.append(text) or prefilter.might_show_istio(text))
    monkeypatch.setattr(engine, "kind_lines", lambda text: kinds.append(text) or prefilter.kind_lines(text))
    known = list(engine.context_resources(mesh, "f0.yaml", pod + "---\n" + pod))
    same_folder = list(engine.context_resources(mesh, "f1.yaml", pod))
    assert (known, same_folder, len(scanned), len(kinds)) == ([], [], 0, 3)
    other = list(engine.context_resources(mesh, "sub/e.yaml", pod))
    assert [(resource.kind, resource.name, context_too) for _, resource, context_too in other] == [("Pod", "p", False)]
    assert (len(scanned), len(kinds)) == (1, 4)


DB_SERVICE = "apiVersion: v1\nkind: Service\nmetadata: {name: db, namespace: apps}\nspec:\n  selector: {app: db}\n  ports: [{port: 3306, targetPort: 13306}]\n"


@pytest.mark.parametrize(
    "labels, annotations, outside",
    [
        ('{app: db, sidecar.istio.io/inject: "false"}', "{}", True),
        ("{app: db}", '{sidecar.istio.io/inject: "false"}', True),  # the deprecated annotation still counts
        ('{app: db, sidecar.istio.io/inject: "maybe"}', '{sidecar.istio.io/inject: "false"}', True),  # a label neither true nor false: the annotation
        ('{app: db, sidecar.istio.io/inject: "true"}', '{sidecar.istio.io/inject: "false"}', False),  # the label wins (ref §6.2)
        ('{app: db, sidecar.istio.io/inject: "False"}', "{}", False),  # the webhooks match exactly "false"
        ('{app: other, sidecar.istio.io/inject: "false"}', "{}", False),  # the Service selects no such pod
        ("{app: db}", "{}", False),
    ],
)
def test_a_port_leads_outside_the_mesh_only_when_its_services_select_opted_out_pods(labels, annotations, outside):
    mesh, view = context(deployment(labels="{app: client}"), deployment(labels=labels, annotations=annotations), DB_SERVICE)
    assert mesh.leads_outside_mesh(view.template, 3306) is outside
    assert mesh.leads_outside_mesh(view.template, 13306) is False  # the Service's port is what clients dial, not its targetPort
