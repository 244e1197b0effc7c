"""Real public manifests (../shared/corpus): meshlint reads every file without a crash."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from helpers import ROOT
from meshlint.cli import main

CORPUS = ROOT.parent / "shared" / "corpus"


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not beside the checkout")
def test_corpus_sweep_has_no_crash_and_exits_0_or_1():
    # Every corpus file: the walk passes `testdata` folders over, so they are named as well.
    tests = sorted(str(p) for p in CORPUS.rglob("testdata") if p.is_dir() and "testdata" not in p.parent.parts)
    result = CliRunner().invoke(main, ["check", str(CORPUS), *tests, "--format", "json"])
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.exit_code in (0, 1), result.output[-2000:]
    assert "internal error" not in result.output
    import json

    report = json.loads(result.stdout)
    assert report["summary"]["files"] > 1000
    for finding in report["findings"]:
        assert finding["line"] >= 1 and finding["column"] >= 1
        if finding["code"] in ("ML101", "ML102"):
            assert_evidence_is_calls(finding)


def assert_evidence_is_calls(finding):
    """Startup evidence never cites a comment, a file path, a listen or loopback address, or a
    template placeholder (wave-2 spec §W4)."""
    import re

    message = finding["message"]
    evidence = message.split("it calls out at startup: ", 1)[-1] if finding["code"] == "ML101" else message
    assert "{{" not in evidence, message
    assert not re.search(r"(0\.0\.0\.0|\[::\]|127\.0\.0\.1|localhost)[:/]|names /|=/|=:[0-9]", evidence), message
    with open(finding["path"], encoding="utf-8", errors="replace") as handle:
        lines = handle.read().splitlines()
    for line in re.findall(r"\(line ([0-9]+)\)", evidence):
        assert not lines[int(line) - 1].strip().startswith("#"), (message, lines[int(line) - 1])


INJECT_TESTDATA = CORPUS / "istio__istio" / "pkg" / "kube" / "inject" / "testdata" / "inject"


@pytest.mark.skipif(not INJECT_TESTDATA.is_dir(), reason="Istio's injector testdata is not in the corpus")
def test_every_annotation_istios_injector_tests_as_bad_is_one_ml404():
    """Istio's own injector tests name the annotation values it rejects; ML404 must agree with each."""
    from helpers import lint

    bad = sorted(INJECT_TESTDATA.glob("traffic-annotations-bad-*.yaml"))
    assert bad
    for path in bad:
        report = lint([path])
        assert [f.code for f in report.findings if f.code.startswith("ML4")] == ["ML404"], path.name


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not beside the checkout")
def test_first_pass_never_misses_a_mesh_context_document():
    """The first pass composes only documents that `might_hold_context`; on every corpus document that
    really holds a Namespace, Service, PeerAuthentication or mesh config, it must say yes."""
    from meshlint.model.kinds import MESH_CONTEXT_KINDS
    from meshlint.model.prefilter import might_hold_context
    from meshlint.model.resource import resources_of
    from meshlint.source.loader import decode, document_chunks, load_chunks

    checked = 0
    for path in sorted(CORPUS.rglob("*")):
        if path.suffix not in (".yaml", ".yml", ".json") or not path.is_file():
            continue
        text, _ = decode(path.read_bytes())
        lines = text.splitlines()
        for chunk in document_chunks(text):
            found = [r for d in load_chunks(str(path), [chunk], lines) for r in resources_of(d)]
            if any(r.kind in MESH_CONTEXT_KINDS - {"ConfigMap"} or (r.kind == "ConfigMap" and r.name.startswith("istio")) for r in found):
                checked += 1
                assert might_hold_context(chunk[1]), f"{path}:{chunk[0] + 1}"
    assert checked > 100


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not beside the checkout")
def test_first_pass_never_misses_a_pod_that_opts_out_of_injection():
    """The first pass keeps a workload for `leads_outside_mesh` only if `might_opt_out` says yes on its text:
    on every corpus workload that really opts out, it must."""
    from meshlint.mesh.contextfacts import opted_out_of
    from meshlint.model.prefilter import might_opt_out
    from meshlint.model.resource import resources_of
    from meshlint.source.loader import decode, document_chunks, load_chunks

    checked = 0
    for path in sorted(CORPUS.rglob("*")):
        if path.suffix not in (".yaml", ".yml", ".json") or not path.is_file():
            continue
        text, _ = decode(path.read_bytes())
        if "sidecar.istio.io/inject" not in text:
            continue
        lines = text.splitlines()
        for chunk in document_chunks(text):
            if any(opted_out_of(r) for d in load_chunks(str(path), [chunk], lines) for r in resources_of(d)):
                checked += 1
                assert might_opt_out(chunk[1]), f"{path}:{chunk[0] + 1}"
    assert checked > 10
