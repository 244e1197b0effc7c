"""Streams that stream: a big file's documents are read, checked and let go one at a time, and the
report is the one reading the file whole gives."""

from __future__ import annotations

import sys
import weakref

import pytest
from click.testing import CliRunner

from helpers import ROOT
from meshlint.cli import main
from meshlint.source import loader, readers

sys.path.insert(0, str(ROOT / "benchmarks"))
from generate import generate

needs_libyaml = pytest.mark.skipif(not readers.libyaml_reads(), reason="PyYAML's C extension is not installed")


@pytest.fixture(scope="module")
def stream(tmp_path_factory) -> str:
    tree = tmp_path_factory.mktemp("tree")
    generate(str(tree), 300)
    parts = [p.read_text() for p in sorted(tree.rglob("*.yaml"))]
    return "".join(f"---\n# Source: chart/templates/{n}.yaml\n{part}" for n, part in enumerate(parts))


@pytest.fixture
def ranges(monkeypatch) -> list[int]:
    """Every stream counts as big; each split into ranges adds its count of ranges here."""
    from meshlint.engine import parallel

    monkeypatch.setattr(parallel, "PARALLEL_BYTES", 0)
    counts: list[int] = []
    original = parallel.map_in_workers

    def counted(task, items, workers, meanwhile=None):
        counts.append(len(items))
        return original(task, items, workers, meanwhile)

    monkeypatch.setattr(parallel, "map_in_workers", counted)
    return counts


def report(text: str, *args: str, fmt: str = "json") -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["check", "-", "--format", fmt, "--no-cache", *args], input=text)
    return result.exit_code, result.stdout, result.stderr


@needs_libyaml
def test_a_streamed_stdin_reports_what_a_whole_read_reports(stream, monkeypatch):
    assert len(stream) > loader.PARTS_FROM
    streamed = report(stream)
    monkeypatch.setattr(loader, "PARTS_FROM", 10**12)  # read whole, as before streams streamed
    assert report(stream) == streamed
    assert '"ML101"' in streamed[1]


@needs_libyaml
def test_a_broken_document_in_a_stream_is_reported_in_place(stream, monkeypatch):
    broken = stream.replace("kind: Service\n", "kind: Service\nkind: [\n", 1)
    streamed = report(broken)
    assert '"ML001"' in streamed[1]
    monkeypatch.setattr(loader, "PARTS_FROM", 10**12)
    assert report(broken) == streamed


@needs_libyaml
def test_a_helm_template_stream_is_passed_over_as_before(stream, monkeypatch):
    template = stream + "---\nmetadata:\n  name: {{ .Release.Name }\n"
    streamed = report(template)
    assert "Helm template syntax" in streamed[2] and '"findings": []' in streamed[1]
    monkeypatch.setattr(loader, "PARTS_FROM", 10**12)
    assert report(template) == streamed


@needs_libyaml
def test_documents_are_let_go_one_at_a_time(stream):
    loaded = loader.load_file("-", "<stdin>", stream.encode(), light=lambda *_: False, stream=True)
    assert loaded.documents == [] and loaded.pending is not None
    alive = []
    for n, document in enumerate(loaded.each_document()):
        alive.append(weakref.ref(document))
        del document
        assert all(ref() is None for ref in alive[:-1]), f"an earlier document is still held at {n}"
    assert len(alive) > 250


@pytest.mark.slow  # a fast path held against the plain one: CI runs the slower tier on every Python
@needs_libyaml
@pytest.mark.parametrize("jobs", ["2", "3"])
def test_a_stream_shared_among_workers_by_ranges_reports_the_same_bytes(stream, ranges, jobs):
    broken = stream.replace("kind: Service\n", "kind: Service\nkind: [\n", 1)  # a problem inside one range
    crlf = stream.replace("\n", "\r\n")  # fixes write the stream's own line breaks, in every range
    for text in (stream, broken, crlf):
        one = report(text, "--jobs", "1")
        assert report(text, "--jobs", jobs) == one
        sarif = report(text, "--jobs", "1", fmt="sarif")
        assert sarif[0] == 1 and report(text, "--jobs", jobs, fmt="sarif") == sarif
        named = ("--stdin-filename", "all.yaml")  # findings name it; the JUnit report's files still say <stdin>
        junit = report(text, "--jobs", "1", *named, fmt="junit")
        assert "&lt;stdin&gt;" in junit[1] and report(text, "--jobs", jobs, *named, fmt="junit") == junit
    assert ranges and min(ranges) >= 2 * int(jobs)  # the stream was split
    assert '"content": "\\r\\n' in report(crlf, "--jobs", jobs)[1]


@pytest.mark.slow  # a fast path held against the plain one: CI runs the slower tier on every Python
@needs_libyaml
def test_a_big_file_alone_is_shared_among_workers_as_stdin_is(stream, ranges, tmp_path, monkeypatch):
    """`helm template ... > all.yaml; meshlint check all.yaml`: the file's documents are shared by
    ranges, and every report (fixes and --diff too) is one job's."""
    monkeypatch.chdir(tmp_path)
    for name, text in (("all.yaml", stream), ("crlf.yaml", stream.replace("\n", "\r\n"))):
        (tmp_path / name).write_bytes(text.encode())
        for args in (["--format", "json"], ["--diff"]):
            one = CliRunner().invoke(main, ["check", name, "--no-cache", "--jobs", "1", *args])
            shared = CliRunner().invoke(main, ["check", name, "--no-cache", "--jobs", "2", *args])
            assert (shared.exit_code, shared.stdout, shared.stderr) == (one.exit_code, one.stdout, one.stderr)
            assert one.exit_code == 1 and one.stdout.count("ML101" if args != ["--diff"] else "+        proxy.istio.io/config") > 10
    assert len(ranges) == 6 and set(ranges) == {8}  # every shared run (--diff checks twice) split its file in 8
    crlf = CliRunner().invoke(main, ["check", "crlf.yaml", "--no-cache", "--jobs", "2", "--format", "json"])
    assert '"content": "\\r\\n' in crlf.stdout  # the fixes of every range write the file's line breaks
