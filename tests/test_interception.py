"""Interception facts (reference §5) and the whole findings of ML401-ML404."""

from __future__ import annotations

import pytest

from helpers import lint
from meshlint.mesh.facts.interception import KNOBS, parse_cidrs, parse_ports


@pytest.mark.parametrize(
    "text, items, problem",
    [
        ("", (), None),
        ("  ", (), None),
        ("8080", (8080,), None),
        (" 8080 , 9090 ", (8080, 9090), None),  # items are trimmed
        ("0,65535", (0, 65535), None),
        ("8000-8010", (), "'8000-8010' is a port range, and port lists take single ports only"),
        ("80,", (), "an empty item (a stray comma) is not a port"),
        ("65536", (), "'65536' is not a port number (0-65535)"),
        ("http", (), "'http' is not a port number (0-65535)"),
        ("-1", (), "'-1' is not a port number (0-65535)"),
    ],
)
def test_port_lists(text, items, problem):
    parsed = parse_ports(text)
    assert (parsed.items, parsed.problem) == (items, problem)


@pytest.mark.parametrize(
    "text, items, problem",
    [
        ("", (), None),
        ("10.0.0.0/8,fd00::/8", ("10.0.0.0/8", "fd00::/8"), None),
        ("10.0.0.1/8", ("10.0.0.1/8",), None),  # host bits set: netip.ParsePrefix accepts it
        ("10.0.0.0/8, 172.16.0.0/12", (), "' 172.16.0.0/12' has spaces, which the injector does not trim"),
        ("10.0.0.1", (), "'10.0.0.1' is an address, not a CIDR (write 10.0.0.1/32)"),
        ("fd00::1", (), "'fd00::1' is an address, not a CIDR (write fd00::1/128)"),
        ("10.0.0.0/33", (), "'10.0.0.0/33' is not a CIDR such as 10.0.0.0/8"),
        ("10.0.0.0/255.0.0.0", (), "'10.0.0.0/255.0.0.0' is not a CIDR such as 10.0.0.0/8"),
        ("*", (), "'*' is allowed only in includeOutboundIPRanges"),
        ("10.0.0.0/8,", (), "'' is not a CIDR such as 10.0.0.0/8"),
    ],
)
def test_cidr_lists(text, items, problem):
    parsed = parse_cidrs(text)
    assert (parsed.items, parsed.problem) == (items, problem)


def test_star_only_where_allowed():
    from meshlint.mesh.facts.interception import parse

    assert parse(KNOBS["includeOutboundIPRanges"], "*").everything
    assert parse(KNOBS["includeInboundPorts"], "*").everything
    assert parse(KNOBS["excludeInboundPorts"], "*").problem == "'*' is not a port number (0-65535)"


WORKLOAD = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: ledger, namespace: payments}}
spec:
  template:
    metadata:
      labels: {{app: ledger, tier: db}}
      annotations:
        traffic.sidecar.istio.io/excludeInboundPorts: "{ports}"
    spec:
      containers:
        - name: ledger
          image: ledger
          ports: [{{name: admin, containerPort: 9000}}, {{containerPort: 8443}}]
"""
MESH_STRICT = "apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata: {name: default, namespace: istio-system}\nspec: {mtls: {mode: STRICT}}\n"
NS_STRICT = "apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata: {name: default, namespace: payments}\nspec: {mtls: {mode: STRICT}}\n"
NS_PERMISSIVE = NS_STRICT.replace("STRICT", "PERMISSIVE")
SELECTOR_STRICT = "apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata: {name: db, namespace: payments}\nspec: {selector: {matchLabels: {tier: db}}, mtls: {mode: STRICT}}\n"
OTHER_SELECTOR = SELECTOR_STRICT.replace("tier: db", "tier: web")
PORT_STRICT = "apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata: {name: db, namespace: payments}\nspec:\n  selector: {matchLabels: {app: ledger}}\n  portLevelMtls:\n    9000: {mode: STRICT}\n"
SERVICE_NAMED = "apiVersion: v1\nkind: Service\nmetadata: {name: ledger-admin, namespace: payments}\nspec:\n  selector: {app: ledger}\n  ports: [{port: 80, targetPort: admin}]\n"
SERVICE_NO_TARGET = "apiVersion: v1\nkind: Service\nmetadata: {name: ledger, namespace: payments}\nspec:\n  selector: {app: ledger}\n  ports: [{port: 9000}]\n"
SERVICE_OTHER_NS = SERVICE_NAMED.replace("namespace: payments", "namespace: shop")


@pytest.mark.parametrize(
    "context, severity, reason",
    [
        ("", "warning", ""),
        (MESH_STRICT, "error", "; PeerAuthentication STRICT (ctx.yaml:4) is not enforced on port 9000"),
        (NS_STRICT, "error", "; PeerAuthentication STRICT (ctx.yaml:4) is not enforced on port 9000"),
        (MESH_STRICT + "---\n" + NS_PERMISSIVE, "warning", ""),  # the namespace relaxes the mesh
        (SELECTOR_STRICT, "error", "; PeerAuthentication STRICT (ctx.yaml:4) is not enforced on port 9000"),
        (OTHER_SELECTOR, "warning", ""),
        (PORT_STRICT, "error", "; PeerAuthentication STRICT (ctx.yaml:7) is not enforced on port 9000"),
        (SERVICE_NAMED, "error", "; Service ledger-admin sends traffic to port 9000 (ctx.yaml:6), and its meshed clients still send mTLS there (auto mTLS sees a "
         "meshed pod), which the app cannot read: their calls fail unless a DestinationRule for the Service sets tls.mode: DISABLE "
         "on port 9000"),
        (SERVICE_NO_TARGET, "error", "; Service ledger sends traffic to port 9000 (ctx.yaml:6), and its meshed clients still send mTLS there (auto mTLS sees a "
         "meshed pod), which the app cannot read: their calls fail unless a DestinationRule for the Service sets tls.mode: DISABLE "
         "on port 9000"),
        (SERVICE_OTHER_NS, "warning", ""),
    ],
)
def test_inbound_bypass_is_an_error_under_strict_or_behind_a_service(tmp_path, context, severity, reason):
    (tmp_path / "app.yaml").write_text(WORKLOAD.format(ports="9000"))
    paths = [tmp_path / "app.yaml"]
    if context:
        (tmp_path / "ctx.yaml").write_text(context)
        paths.insert(0, tmp_path / "ctx.yaml")
    report = lint(paths, base=str(tmp_path))
    found = [(f.line, f.column, f.severity.name.lower(), f.message.replace(str(tmp_path) + "/", "")) for f in report.findings if f.code == "ML401"]
    assert found == [
        (
            9,
            55,
            severity,
            'inbound port 9000 bypasses istio-proxy, excluded by traffic.sidecar.istio.io/excludeInboundPorts "9000" '
            "(app.yaml:9): connections reach the app directly, in plaintext, without mTLS identity or "
            f"AuthorizationPolicy{reason}",
        )
    ]


def test_outbound_exclusion_of_the_database_port_reads_as_a_startup_race_workaround(tmp_path):
    text = """apiVersion: batch/v1
kind: Job
metadata: {name: migrate}
spec:
  template:
    metadata:
      annotations:
        traffic.sidecar.istio.io/excludeOutboundPorts: "5432,6379"
    spec:
      restartPolicy: Never
      initContainers:
        - name: wait
          image: busybox
          env: [{name: DB_PORT, value: "5432"}]
      containers:
        - name: migrate
          image: flyway
          env:
            - {name: FLYWAY_URL, value: "jdbc:postgresql://pg.data:5432/app"}
"""
    (tmp_path / "job.yaml").write_text(text)
    report = lint([tmp_path / "job.yaml"], base=str(tmp_path))
    found = [(f.line, f.severity.name, f.message.replace(str(tmp_path) + "/", ""), f.help) for f in report.findings if f.code == "ML402"]
    assert found == [
        (
            8,
            "WARNING",
            'outbound ports 5432 and 6379 bypass istio-proxy, excluded by traffic.sidecar.istio.io/excludeOutboundPorts '
            '"5432,6379" (job.yaml:8): that traffic leaves without mesh mTLS or a client identity (a STRICT destination '
            "refuses it, a PERMISSIVE one accepts it as plaintext); this looks like a startup-race workaround (init "
            "container 'wait' env DB_PORT=5432 (line 14) uses 5432 and container 'migrate' env "
            "FLYWAY_URL=jdbc:postgresql://pg.data:5432/app (line 19) uses 5432): native sidecars (the proxy then "
            "starts before the init containers) would fix the race without losing mTLS",
            "remove the exclusion; to reach the service before the proxy is ready, use native sidecars (the proxy then "
            "starts before the init containers)",
        )
    ]


def test_helm_value_applies_until_an_annotation_replaces_it(tmp_path):
    (tmp_path / "values.yaml").write_text('global:\n  proxy:\n    excludeOutboundPorts: "3306"\n')
    app = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}}}
spec:
  template:
    metadata:
      annotations: {annotations}
    spec:
      containers: [{{name: app, image: app}}]
"""
    (tmp_path / "a.yaml").write_text(app.format(name="inherits", annotations="{}"))
    (tmp_path / "b.yaml").write_text(app.format(name="replaces", annotations='{traffic.sidecar.istio.io/excludeOutboundPorts: "9042"}'))
    report = lint([tmp_path], base=str(tmp_path))
    found = sorted((f.path.rsplit("/", 1)[1], f.line, f.message.split(":")[0]) for f in report.findings if f.code == "ML402")
    assert found == [
        ("a.yaml", 6, "outbound port 3306 bypasses istio-proxy, excluded by global.proxy.excludeOutboundPorts \"3306\" (" + str(tmp_path) + "/values.yaml"),
        ("b.yaml", 7, "outbound port 9042 bypasses istio-proxy, excluded by traffic.sidecar.istio.io/excludeOutboundPorts \"9042\" (" + str(tmp_path) + "/b.yaml"),
    ]


def test_a_startup_race_workaround_is_read_from_the_commands_too_and_never_from_a_listen_port(tmp_path):
    text = """apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  template:
    metadata:
      annotations:
        traffic.sidecar.istio.io/excludeOutboundPorts: "5432,8080"
    spec:
      initContainers:
        - name: wait
          image: busybox
          command: ["sh", "-c", "until nc -z db 5432; do sleep 1; done"]
      containers:
        - name: api
          image: api
          env: [{name: SERVER_PORT, value: "8080"}, {name: LISTEN_ADDR, value: "0.0.0.0:8080"}]
"""
    (tmp_path / "api.yaml").write_text(text)
    report = lint([tmp_path / "api.yaml"], base=str(tmp_path))
    [finding] = [f for f in report.findings if f.code == "ML402"]
    assert finding.message.endswith(
        "this looks like a startup-race workaround (init container 'wait' command calls db:5432 with nc (line 13) uses 5432): "
        "native sidecars (the proxy then starts before the init containers) would fix the race without losing mTLS"
    )


def test_interception_none_says_what_still_passes_through_the_proxy_when_the_app_sends_it_there(tmp_path):
    from helpers import MESHED, lint_text

    text = """apiVersion: apps/v1
kind: Deployment
metadata: {name: client}
spec:
  template:
    metadata:
      annotations: {sidecar.istio.io/interceptionMode: NONE}
    spec:
      containers:
        - name: client
          image: client:1
          env: [{name: HTTP_PROXY, value: "http://127.0.0.1:15002"}]
"""
    [finding] = [f for f in lint_text(tmp_path, text, MESHED).findings if f.code == "ML403"]
    assert finding.message == (
        f"interception mode is NONE (sidecar.istio.io/interceptionMode, {tmp_path / 'manifest.yaml'}:7): "
        "istio-proxy captures no traffic, so only what the app sends to it itself (env HTTP_PROXY=http://127.0.0.1:15002 in "
        "container 'client') gets mTLS; what the pod receives gets no mTLS, PeerAuthentication or AuthorizationPolicy unless a "
        "Sidecar's ingress listener takes it"
    )


INIT_NO_INTERCEPT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: hello}
spec:
  template:
    metadata:
      annotations: {sidecar.istio.io/interceptionMode: NONE}
    spec:
      initContainers:
        - name: init-one
          image: busybox
      containers:
        - name: hello
          image: hello:1
"""


@pytest.mark.parametrize(
    "istio, tail",
    [
        (None, "; Istio 1.25 and earlier also removes the pod's own init containers ('init-one') when it injects with NONE"),
        ("1.25", "; Istio 1.25 also removes the pod's own init containers ('init-one') when it injects with NONE"),
        ("1.26", ""),
    ],
)
def test_interception_none_on_istio_before_1_26_also_drops_the_pods_own_init_containers(tmp_path, istio, tail):
    # Reference §18.1 R8; istio/istio pkg/kube/inject/testdata/inject/init-no-intercept-no-native-sidecar.yaml
    # (commit 86c9f01fd735) is the injector's own case, added with the 1.26 fix.
    from helpers import MESHED, lint_text

    settings = {**MESHED, **({"istio-version": istio} if istio else {})}
    findings = [(f.code, str(f.severity), f.line, f.column, f.message, f.help) for f in lint_text(tmp_path, INIT_NO_INTERCEPT, settings).findings if f.code == "ML403"]
    assert findings == [
        (
            "ML403", "warning", 7, 56,
            f"interception mode is NONE (sidecar.istio.io/interceptionMode, {tmp_path / 'manifest.yaml'}:7): istio-proxy captures no "
            f"traffic, so nothing this pod sends or receives gets mTLS, PeerAuthentication or AuthorizationPolicy{tail}",
            "remove the setting (REDIRECT is the default), or use TPROXY to keep client source addresses",
        )
    ]


@pytest.mark.parametrize(
    "address, port",
    [
        ("127.0.0.1:15002", 15002),
        ("http://127.0.0.1:15002", 15002),
        ("http://user:secret@localhost:15002/", 15002),
        ("LOCALHOST:15002", 15002),
        ("[::1]:15002", 15002),
        ("127.9.9.9:15002", 15002),
        ("http://127.proxy.corp.example:3128", None),  # a host name that starts like an address
        ("10.0.0.1:3128", None),
        ("proxy.corp:3128", None),
    ],
)
def test_a_proxy_address_is_on_loopback_only_as_an_address(address, port):
    from meshlint.mesh.facts.addresses import parse

    parsed = parse(address)
    assert (parsed.port if parsed is not None and parsed.loopback else None) == port


def test_a_loopback_proxy_another_container_serves_is_not_the_sidecar(tmp_path):
    from helpers import MESHED, lint_text

    text = """apiVersion: apps/v1
kind: Deployment
metadata: {name: client}
spec:
  template:
    metadata:
      annotations: {sidecar.istio.io/interceptionMode: NONE}
    spec:
      containers:
        - name: client
          image: client:1
          args: [fetch, http://orders:8080/]
          env: [{name: HTTPS_PROXY, value: "http://127.0.0.1:3128"}]
        - name: squid
          image: squid:6
          ports: [{containerPort: 3128}]
"""
    findings = lint_text(tmp_path, text, MESHED).findings
    assert [f.code for f in findings] == ["ML403"]  # no startup race: the app's calls go through squid, not istio-proxy
    assert findings[0].message.endswith("so nothing this pod sends or receives gets mTLS, PeerAuthentication or AuthorizationPolicy")


def test_a_label_that_is_not_a_string_is_reported_once_for_a_bare_pod_and_for_a_jobset(tmp_path):
    # A bare Pod's metadata is its pod template's, and a JobSet has a pod template per job: the resource's
    # own label is one fact, said once (issue "Fewer, truer findings": one finding per fact).
    from helpers import lint_text

    text = """apiVersion: v1
kind: Pod
metadata:
  name: debug
  labels:
    sidecar.istio.io/inject: true
spec:
  containers: [{name: debug, image: busybox}]
---
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: js
  labels:
    istio.io/rev: 1
spec:
  replicatedJobs:
    - name: a
      template: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: a, image: a}]}}}}
    - name: b
      template: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: b, image: b}]}}}}
"""
    found = [(f.line, f.column, str(f.severity), f.message) for f in lint_text(tmp_path, text).findings if f.code == "ML404"]
    assert found == [
        (6, 30, "error", "Pod label sidecar.istio.io/inject is the boolean true, not a string: the API server rejects the manifest"),
        (15, 19, "error", "JobSet label istio.io/rev is the number 1, not a string: the API server rejects the manifest"),
    ]
