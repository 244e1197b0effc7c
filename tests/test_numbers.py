"""One number parser (meshlint/numbers.py): ASCII digits of bounded length, or None. A manifest's
number that Python alone would take (`²`, `٣`, `８`) or refuse (thousands of digits) is read as no
number, and the file's findings are those of a value that is no number at all."""

from __future__ import annotations

import pytest
from hostile import HUGE, ODD_DIGITS, deployment, job

from helpers import lint_text
from meshlint import numbers


@pytest.mark.parametrize("text", ["", " 1", "1 ", "+1", "-1", "1_000", "0x10", "1.0", *ODD_DIGITS, "1" + ODD_DIGITS[0], HUGE])
def test_only_ascii_digits_of_bounded_length_are_numbers(text):
    assert numbers.whole(text) is None


def test_whole_reads_leading_zeros_as_go_does_and_refuses_what_is_out_of_range():
    assert [numbers.whole(t) for t in ("0", "007", "0" * 5000 + "42", "18446744073709551615")] == [0, 7, 42, 2**64 - 1]
    assert numbers.whole("18446744073709551616") is None
    assert numbers.whole("70000", numbers.UINT16_MAX) is None


def test_port_takes_yaml_integers_and_digit_strings_in_range():
    assert [numbers.port(v) for v in (80, "80", "00080", 65535, "65535")] == [80, 80, 80, 65535, 65535]
    assert [numbers.port(v) for v in (0, "0", 65536, "65536", -1, True, 8.0, None, "http", "８０", HUGE)] == [None] * 11
    assert numbers.port("0", zero=True) == 0


def findings(report):
    """Whole findings, and the inputs passed over (a file whose check failed is one)."""
    return [(f.code, str(f.severity), f.line, f.column, f.message) for f in report.findings] + [(s.reason,) for s in report.summary.skipped_inputs]


def same_findings(tmp_path, hostile: str, twin: str) -> None:
    """The hostile manifest gives the findings its twin does (the same manifest, the number replaced
    by a value that is plainly none), and the run goes on."""
    assert findings(lint_text(tmp_path, hostile, name="hostile.yaml")) == findings(lint_text(tmp_path, twin, name="twin.yaml"))


QUIT_SPELLINGS = [
    "curl -XPOST http://localhost:{}/quitquitquit",
    "pilot-agent request --debug-port={} POST quitquitquit",
    "pilot-agent request --debug-port {} POST quitquitquit",
    "python3 -c 'import http.client as h; c = h.HTTPConnection(\"localhost\", port={}); c.request(\"POST\", \"/quitquitquit\")'",
    "nc localhost {}; curl -XPOST localhost:15020/quitquitquit",
]


@pytest.mark.parametrize("spelling", QUIT_SPELLINGS)
@pytest.mark.parametrize("number", [HUGE, *ODD_DIGITS])
def test_a_port_in_a_command_that_is_no_number(tmp_path, spelling, number):
    same_findings(tmp_path, job("./work; " + spelling.format(number)), job("./work; " + spelling.format("$UNSET_PORT")))


@pytest.mark.parametrize("number", [HUGE, *ODD_DIGITS])
def test_a_linkerd_await_port_that_is_no_number(tmp_path, number):
    same_findings(tmp_path, job(f"linkerd-await --shutdown --port={number} -- ./work"), job("linkerd-await --shutdown --port=x -- ./work"))


@pytest.mark.parametrize("number", [HUGE, *ODD_DIGITS])
def test_probe_ports_that_are_no_number(tmp_path, number):
    meshed = {"sidecar.istio.io/inject": "true"}
    probes = 'readinessProbe: {{httpGet: {{port: "{}", path: /}}}}, livenessProbe: {{tcpSocket: {{port: "{}"}}}}'
    same_findings(tmp_path, deployment(meshed, probes.format(number, number)), deployment(meshed, probes.format("nameless", "nameless")))
    linkerd = {"linkerd.io/inject": "enabled"}
    same_findings(tmp_path, deployment(linkerd, probes.format(number, number)), deployment(linkerd, probes.format("nameless", "nameless")))


@pytest.mark.parametrize("number", [HUGE, *ODD_DIGITS])
def test_linkerd_port_annotations_that_are_no_number(tmp_path, number):
    def annotated(value: str) -> str:
        return deployment({"linkerd.io/inject": "enabled", "config.linkerd.io/skip-inbound-ports": f"{value},{value}-{value}"}, "ports: [{containerPort: 8080}]")

    same_findings(tmp_path, annotated(number), annotated("x"))


def test_an_istio_port_annotation_that_is_no_number(tmp_path):
    for number in (HUGE, *ODD_DIGITS):
        text = deployment({"sidecar.istio.io/inject": "true", "traffic.sidecar.istio.io/excludeInboundPorts": f"8080,{number}"})
        ml404 = [f for f in findings(lint_text(tmp_path, text)) if f[0] == "ML404"]
        assert ml404 == [("ML404", "error", 7, 110, f'traffic.sidecar.istio.io/excludeInboundPorts "8080,{number}": {number!r} is not a port number (0-65535); the injector rejects the pod, so it is never created')]


def test_a_wait_before_exit_that_is_no_uint64_is_ignored_by_the_injector(tmp_path):
    for value in ("18446744073709551616", HUGE, "²"):
        text = deployment({"linkerd.io/inject": "enabled", "config.alpha.linkerd.io/proxy-wait-before-exit-seconds": value})
        assert findings(lint_text(tmp_path, text)) == [
            ("ML507", "warning", 7, 111, f'config.alpha.linkerd.io/proxy-wait-before-exit-seconds: "{value}" on the pod template: not a whole number of seconds, so the injector ignores it')
        ]


def test_seconds_beyond_an_int64_are_no_grace_period_or_sleep(tmp_path):
    """The API server refuses them; as floats they would not even convert."""
    big = "9" * 400
    text = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n"
        '    metadata: {annotations: {sidecar.istio.io/inject: "true", proxy.istio.io/config: "terminationDrainDuration: 50s"}}\n'
        f"    spec:\n      terminationGracePeriodSeconds: {big}\n      containers:\n"
        f"        - {{name: app, image: app, lifecycle: {{preStop: {{sleep: {{seconds: {big}}}}}}}, "
        'env: [{name: API_URL, value: "http://api:8080"}]}\n'
    )
    assert [f[:4] for f in findings(lint_text(tmp_path, text))] == [("ML100", "warning", 6, 5)]


def test_a_yaml_integer_too_long_to_print_is_no_port(tmp_path):
    """YAML 1.1 reads `0x` with thousands of hex digits as an integer whose decimal form Python
    refuses to print: as a port it is none, not a message that fails to format."""
    huge = "0x" + "f" * 4000
    for mesh in ({"linkerd.io/inject": "enabled"}, {"sidecar.istio.io/inject": "true"}):
        probes = "readinessProbe: {{httpGet: {{port: {}}}}}, livenessProbe: {{tcpSocket: {{port: {}}}}}"
        same_findings(tmp_path, deployment(mesh, probes.format(huge, huge)), deployment(mesh, probes.format("nameless", "nameless")))
