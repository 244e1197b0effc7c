"""Files with CRLF line ends are read like any other: the first pass's cheap text checks must see
`kind: Namespace\r` as a Namespace (testdata/crlf keeps its CRLF bytes: see its .gitattributes)."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from helpers import ROOT
from meshlint.cli import main
from meshlint.mesh.envsources import might_hold_env_source
from meshlint.model.prefilter import might_hold_context

CRLF = ROOT / "testdata" / "crlf"


def findings(path: str) -> list[tuple[str, int, str]]:
    result = CliRunner().invoke(main, ["check", path, "--format", "json", "--config", str(CRLF / ".meshlint.yaml")])
    return [(f["path"].rsplit("/", 1)[-1], f["line"], f["code"]) for f in json.loads(result.stdout)["findings"]]


def test_fixture_has_crlf_line_ends():
    assert b"kind: Namespace\r\n" in (CRLF / "namespace.yaml").read_bytes()


def test_crlf_namespace_with_injection_disabled_governs_its_workloads():
    assert findings(str(CRLF)) == []


def test_crlf_and_lf_trees_read_alike(tmp_path):
    for name in ("namespace.yaml", "worker.yaml"):
        (tmp_path / name).write_bytes((CRLF / name).read_bytes().replace(b"\r\n", b"\n"))
    assert findings(str(tmp_path)) == findings(str(CRLF)) == []
    (tmp_path / "namespace.yaml").unlink()  # without the Namespace the workload is checked, so the test can fail
    assert [code for _, _, code in findings(str(tmp_path))] == ["ML101"]


def test_prefilters_see_crlf_kinds():
    assert might_hold_context("apiVersion: v1\r\nkind: Namespace\r\nmetadata:\r\n  name: x\r\n")
    assert might_hold_env_source("kind: ConfigMap\r\ndata:\r\n  URL: http://db.x.svc:5432\r\n")


# What `envsources.worth_reading` answers, as one pattern (too slow on big ConfigMaps to use).
WORTH_READING = re.compile(
    r"://|\.svc\b|[A-Za-z0-9][:][0-9]{2,5}\b|(?:^[ \t]+|[{,][ \t]*)[\"']?[A-Z][A-Z0-9_]*(URL|URI|DSN|HOST|ADDR|ADDRESS|SERVER|DATABASE|REDIS|KAFKA)", re.M
)


def test_fast_prefilters_answer_as_the_patterns_they_stand_for():
    """The env-source and Istio pre-checks, answered with literals first, agree with the full patterns."""
    import random

    from meshlint.mesh import envsources
    from meshlint.model import prefilter

    pieces = ["a", "istio", "name: istio-x", " name:istio", "x:8080", ":8080", "a:80800", "svc.x.svc", ".svcx", "http://", "  DB_URL: x", "\n", "  ", "KAFKA", "\tREDIS_HOST", "{DB_HOST: x}", ", REDIS_URL: y", "{", "sidecar.istio.io/x", "istio-proxy", "apiVersion: security.istio.io/v1"]
    rng = random.Random(19)
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 8)))
        assert envsources.worth_reading(text) == bool(WORTH_READING.search(text)), text
        assert prefilter.might_show_istio(text) == bool(prefilter._ISTIO_HINT.search(text)), text


# The kinds the pre-checks look for, as the line patterns they stand for: anchored with `^` and re.M
# over the whole text (too slow: such a pattern is tried at every character).
CONTEXT_KIND = re.compile(
    r"^[\"']?kind[\"']?:[ \t]*[\"']?(Namespace|Service|Server|PeerAuthentication|Sidecar|IstioOperator|MutatingWebhookConfiguration|List|[A-Za-z]+List)[\"']?[ \t]*(#.*)?\r?$", re.M
)
CONFIGMAP_KIND = re.compile(r"^[\"']?kind[\"']?:[ \t]*[\"']?ConfigMap\b", re.M)
TOP_KIND = re.compile(r"^[\"']?kind[\"']?:", re.M)
DEPLOYMENT_KIND = re.compile(r"^[\"']?kind[\"']?:[ \t]*[\"']?Deployment[\"']?[ \t]*(#.*)?\r?$", re.M)
ENV_KIND = re.compile(r"^[\"']?kind[\"']?:[ \t]*[\"']?(ConfigMap|Secret)[\"']?[ \t]*(#.*)?\r?$", re.M)


def test_kind_lines_are_the_lines_the_anchored_pattern_finds():
    """The pre-checks find top-level `kind:` lines from the literal: the same lines, odd ones too."""
    import random

    from meshlint.mesh import envsources
    from meshlint.model import prefilter

    def as_patterns(text: str) -> tuple[bool, bool]:
        if CONTEXT_KIND.search(text):
            context = True
        elif CONFIGMAP_KIND.search(text):
            context = "istio" in text and bool(prefilter._ISTIO_NAME.search(text))
        elif prefilter._PILOT_ENV in text and DEPLOYMENT_KIND.search(text):
            context = bool(prefilter._ISTIOD_NAME.search(text))
        elif not TOP_KIND.search(text):
            context = bool(prefilter._HELM_KEY.search(text)) or text.lstrip().startswith(("{", "["))
        else:
            context = False
        return context, bool(ENV_KIND.search(text)) and envsources.worth_reading(text)

    pieces = ["kind", ":", " ", "\t", "'", '"', "\n", "\r\n", "Service", "ServiceList", "ConfigMap", "Secret", "Namespace", "x", "# c", "name: istio",
              "global:", "{", "a: http://b", "kind: Deployment\n", "  kind: Service\n", "name: istiod", "ENABLE_NATIVE_SIDECARS", "Deployment"]
    rng = random.Random(7)
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randrange(1, 12))) for _ in range(5000)]
    texts += [p.read_text(encoding="utf-8", errors="replace") for p in sorted((ROOT / "testdata").rglob("*.yaml"))]
    for text in texts:
        assert [line.rstrip("\n") for line in prefilter.kind_lines(text)] == [m.group(0) + text[m.end() :].split("\n", 1)[0] for m in TOP_KIND.finditer(text)], text
        assert (prefilter.might_hold_context(text), envsources.might_hold_env_source(text)) == as_patterns(text), text


def test_the_screens_count_of_top_level_keys_is_the_anchored_patterns():
    """`screen.plain_kind` counts the top-level kind and apiVersion keys (quoted or spaced) from their
    literal: as many as `^["']?key["']?[ \t]*:` under re.M finds."""
    import random

    from meshlint.source import screen
    from meshlint.source.toplevel import key_lines

    anchored = {screen._TOP_KIND: re.compile(r"^[\"']?kind[\"']?[ \t]*:", re.M), screen._TOP_API: re.compile(r"^[\"']?apiVersion[\"']?[ \t]*:", re.M)}
    pieces = ["kind", "apiVersion", ":", " ", "\t", "'", '"', "\n", "\r\n", "x", "kindkind", "\u2028", "v1"]
    rng = random.Random(3)
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randrange(1, 14))) for _ in range(5000)]
    texts += [p.read_text(encoding="utf-8", errors="replace") for p in sorted((ROOT / "testdata").rglob("*.yaml"))]
    for text in texts:
        for literal, pattern in anchored.items():
            assert len(key_lines(text, literal)) == len(pattern.findall(text)), text


@pytest.mark.parametrize("brk", ["\r", "\x85", "\u2028", "\u2029", "\r\n", "\r\r\n"])
def test_a_file_read_in_parts_places_its_documents_where_reading_it_whole_does(brk):
    """A big file is read part by part; each part's first line counts the line breaks before it as
    the parser counts them (a CR no LF follows, NEL, U+2028, U+2029), so every key stands on the
    line reading the file whole gives it."""
    from meshlint.source.loader import PARTS_FROM, load_text

    pad = "".join(f"  k{i}: v{i}\n" for i in range(PARTS_FROM // 10))
    text = f'kind: ConfigMap\ndata:\n  s: "a{brk}b"\n{pad}---\nkind: Service\nmetadata: {{name: c}}\n---\nd: [1,\n  2]\n'
    assert len(text) >= PARTS_FROM
    whole = load_text("big.yaml", text)
    parts = load_text("big.yaml", text, light=lambda *args: False)

    def keys(loaded):
        return [(doc.line, [doc.root.get(k).key_pos for k in doc.data]) for doc in loaded.documents]

    assert len(whole.documents) == 3
    assert keys(parts) == keys(whole)
