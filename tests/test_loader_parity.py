"""meshlint's C reader, the libyaml reader (PyYAML's C parser) and the ruamel.yaml reader they
replace read the same data, positions, problems and errors: every fixture, every corpus file and a
set of hard cases are read each way and compared entry by entry."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from helpers import ROOT
from meshlint.source import readers
from meshlint.source.embedded import parse_embedded
from meshlint.source.loader import decode, load_text
from meshlint.source.readers import events, native

CORPUS = ROOT.parent / "shared" / "corpus"

HARD = {
    "duplicate": "a: 1\nb: 2\na: 3\n",
    "duplicate-nested": "x:\n  y: 1\n  z: {q: 1, q: 2}\n",
    "merge": "base: &b {x: 1, w: 2}\nitem:\n  <<: *b\n  w: 3\n",
    "merge-list": "a: &a {x: 1}\nb: &b {y: 2}\nc:\n  <<: [*a, *b]\n  z: 3\n",
    "merge-explicit": "a: &a {x: 1}\nc:\n  !!merge <<: *a\n",
    "quoted-merge-is-a-key": "a: &a {x: 1}\nc:\n  '<<': *a\n",
    "recursive-seq": "a: &a [1, *a]\n",
    "recursive-map": "a: &a\n  b: *a\n",
    "recursive-key": "a: &a\n  ? *a\n  : 1\n",
    "alias-scalar-key": "k: &k name\nm:\n  *k : 1\n",
    "complex-key": "? [a, b]\n: {x: {y: 1, y: 2}}\nz: 1\n",
    "yaml11": "o: 0400\nb: yes\nn: ~\ne:\nf: 1.5e3\ns: 1:30\nh: 0x1F\nt: 2024-01-01\ninf: -.inf\nq: '0400'\n",
    "non-string-keys": "on: 1\n1: 2\n~: 3\n1.5: 4\nyes: 5\n",
    "tags": "a: !!str 123\nb: !!int '7'\nc: !custom {x: 1}\nd: !!python/object:os.system x\ne: ! 12\nf: !!float '1'\n",
    "styles": "a: |\n  line\nb: >\n  folded\nc: 'single'\nd: \"double\"\ne: plain\n",
    "documents": "# Source: chart/templates/a.yaml\na: 1\n---\n# Source: chart/templates/b.yaml\nb: 2\n--- 3\n---\n...\n---\n- x\n",
    "empty": "",
    "comment-only": "# nothing\n",
    "empty-documents": "---\n---\n---\na: 1\n",
    "directive": "%YAML 1.1\n---\na: yes\n",
    "tag-directive": "%TAG !e! tag:example.com,2000:\n---\na: !e!foo 1\n",
    "flow-json": '{"apiVersion": "v1", "kind": "List", "items": [{"a": 1}, {"a": 1, "a": 2}]}',
    "error-indent": "a:\n  b: 1\n c: 2\n",
    "error-tab": "a:\n\tb: 1\n",
    "error-undefined-alias": "a: *nope\n",
    "error-duplicate-anchor": "a: &x 1\nb: &x 2\n",
    "error-unclosed": "a: [1, 2\n",
    "error-after-good": "a: 1\n---\nb: [\n---\nc: 3\n",
    "error-control": "a: \x07\n",
    "flow-colon": "target: [ledgerwriter:8080/ready]\n",
    "deep": "a: " + "[" * 250 + "]" * 250 + "\n",
    "deep-ok": "a: " + "[" * 150 + "]" * 150 + "\n",
    "sequence-root": "- a\n- b: 1\n  b: 2\n",
    "scalar-root": "just text\n",
    "anchors-shared": "a: &s {x: 1}\nb: *s\nc: [*s, *s]\n",
    "crlf": "kind: Namespace\r\nmetadata:\r\n  name: x\r\n",
    "unicode": "name: café\nemoji: \"\\U0001F600 ok\"\nkey: 日本語: x\n",
    # Cases the C reader reads itself (the ones above it mostly leaves to Python).
    "plain-merge-as-value": "a: <<\nb: [<<]\n",
    "keys-of-every-type": "true: 1\nNo: 2\n~: 3\n0x1F: 4\n1.50: 5\n2024-01-01: 6\n-.inf: 7\n'q': 8\n",
    "empty-values": "a:\nb: ''\nc: []\nd: {}\ne: [~, null, ]\n",
    "multi-line": "a: one\n  two\n  three\nb: >-\n  x\n\n  y\nc: |+\n  z\n\nd: 'p\n  q'\n",
    "nested": "items:\n- name: x\n  ports:\n  - {port: 80, name: http}\n  - port: 443\n- - [1, [2, [3]]]\n",
    "bom": "\ufeffa: 1\n",
    "astral": "k: 𝔘𝔫𝔦\n𝔨𝔢𝔶: \"\\u00e9\"\n",
    "column-after-wide": "a: 日本語 x\nb: {日本: [語, 1]}\n",
    "explicit-document-end": "a: 1\n...\n---\nb: 2\n...\n",
    "letter-words": "a: [yes, Yes-no, nully, Null, Namespace, onion, ON, 'on', n, N/A, y, True1, off, t]\nOff: 1\nNULL: 2\n",
    # What releases of libyaml parse differently (Debian's 0.2.5 against the one in PyYAML's wheel;
    # `data: [?]]`, which ruamel.yaml.clib's libyaml reads too, is tests/test_fastread.py's).
    "pair-in-flow": "a: [b: 1, ? c, {d: 2}]\n",
    "container-tags": "a: !!map {x: 1}\nb: !custom [1, {c: 2}]\nc: !!seq\n- d\n",
    "deep-block": "x:\n" + "".join("  " * n + "- \n" for n in range(1, 210)),
    "comments-between": "# Source: x.yaml\n---\n# c\na: 1  # end\n---\n\n# Source: y.yaml\nb: 2\n",
}


# The readers a machine may have: (meshlint's C reader, PyYAML's C parser), None for "if built".
# "c-alone" is the C reader where PyYAML's extension is missing: what it leaves, ruamel.yaml reads.
WAYS = {"c": (None, None), "pyyaml": (False, None), "ruamel": (False, False), "c-alone": (None, False)}
HAS_C = native.available()
EVERY_WAY = [way for way in WAYS if HAS_C or not way.startswith("c")]


def use(way: str, monkeypatch: pytest.MonkeyPatch) -> None:
    reader, parser = WAYS[way]
    monkeypatch.setattr(native, "_module", reader)
    monkeypatch.setattr(events, "_parser", parser)


def read(text: str, way: str, monkeypatch: pytest.MonkeyPatch) -> object:
    use(way, monkeypatch)
    loaded = load_text("f.yaml", text)
    result = []
    for document in loaded.documents:
        table = document.table
        result.append((
            document.index, document.data, document.line, document.column, document.rendered_from,
            {k: table.maps[k] for k in table.maps}, {k: table.seqs[k] for k in table.seqs}, {k: table.starts[k] for k in table.starts},
        ))
    return _stable(result), loaded.problems


def _stable(value: object) -> object:
    """Tables are keyed by container identity, which differs between two reads: compare them in order."""
    if isinstance(value, dict):
        return [(_stable(k) if not isinstance(k, int) or k < 1 << 32 else "id", _stable(v)) for k, v in value.items()]
    if isinstance(value, (list, tuple)):
        return [_stable(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return value


@pytest.mark.skipif(not readers.libyaml_reads(), reason="PyYAML's C extension is not installed")
@pytest.mark.filterwarnings("ignore::ruamel.yaml.error.ReusedAnchorWarning")  # an anchor written twice is one of the cases
@pytest.mark.parametrize("name", sorted(HARD))
def test_hard_cases_read_alike(name, monkeypatch):
    first, *others = [read(HARD[name], way, monkeypatch) for way in EVERY_WAY]
    assert others == [first] * len(others)


@pytest.mark.skipif(not readers.libyaml_reads(), reason="PyYAML's C extension is not installed")
def test_hard_cases_are_hard():
    """The cases above do exercise what they are named for (a parity of two empty results proves nothing)."""
    duplicate = load_text("f.yaml", HARD["duplicate"])
    assert [p.line for p in duplicate.problems] == [3]
    assert load_text("f.yaml", HARD["merge"]).documents[0].data["item"] == {"x": 1, "w": 3}
    assert load_text("f.yaml", HARD["yaml11"]).documents[0].data["o"] == 256
    assert load_text("f.yaml", HARD["error-indent"]).problems[0].parse
    assert len(load_text("f.yaml", HARD["documents"]).documents) == 5
    assert load_text("f.yaml", HARD["documents"]).documents[1].rendered_from == "chart/templates/b.yaml"


def _files() -> list[str]:
    found = sorted(str(p) for p in (ROOT / "testdata").rglob("*") if p.suffix in (".yaml", ".yml", ".json"))
    if CORPUS.is_dir():
        found += sorted(str(p) for p in CORPUS.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))
    return found


@pytest.mark.slow  # a fast path held against the plain one: CI runs the slower tier on every Python
@pytest.mark.skipif(not readers.libyaml_reads(), reason="PyYAML's C extension is not installed")
def test_every_fixture_and_corpus_file_reads_alike(monkeypatch):
    files = _files()
    assert len(files) > 100
    differ = []
    for path in files:
        with open(path, "rb") as handle:
            text = decode(handle.read())[0]
        first, *others = [read(text, way, monkeypatch) for way in EVERY_WAY if way != "c-alone"]
        if others != [first] * len(others):
            differ.append(path)
    assert differ == []


@pytest.mark.skipif(not readers.libyaml_reads(), reason="PyYAML's C extension is not installed")
@pytest.mark.parametrize(
    "value",
    ['{"holdApplicationUntilProxyStarts": true}', "a: 1\nb: [x, y]\n", "a: 1\na: 2\n", "a: [\n", "a: 1\n---\nb: {c: 1, c: 2}\n", "x: " + "[" * 300 + "]" * 300],
)
def test_embedded_strings_read_alike(value, monkeypatch):
    host_text = "annotations:\n  config: |\n" + "".join(f"    {line}\n" for line in value.splitlines())
    results = []
    for way in EVERY_WAY:
        use(way, monkeypatch)
        host = load_text("f.yaml", host_text).documents[0].root.get("annotations").get("config")
        embedded = parse_embedded(host)
        root = embedded.root
        results.append((embedded.problem, None if root is None else (root.value, root.pos, root.key_pos, _stable(dict(root.table.maps)))))
    assert results[1:] == [results[0]] * (len(results) - 1)


def _legacy_path_to(node, position):
    """path_to as it was before positions were kept as marks: every child's path spelled out."""
    from meshlint.source.nodepaths import item_label as _item_label

    target = (position.line, position.column)
    maps, seqs = node.table.maps, node.table.seqs
    best = ((0, 0), -1, "")
    seen = set()
    stack = [(node.value, "", 0)]
    while stack:
        value, path, depth = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        children = []
        if isinstance(value, dict):
            entries = maps.get(id(value), {})
            for key, child in value.items():
                entry = entries.get(key)
                starts = ((entry[0], entry[1]), (entry[2], entry[3])) if entry is not None else ()
                children.append((f"{path}.{key}" if path else str(key), child, starts))
        elif isinstance(value, list):
            items = seqs.get(id(value), [])
            for n, child in enumerate(value):
                starts = ((items[n][0], items[n][1]),) if n < len(items) else ()
                children.append((f"{path}[{_item_label(child, n)}]", child, starts))
        for child_path, _, starts in children:
            for start in starts:
                if start <= target and (start, depth + 1) > best[:2]:
                    best = (start, depth + 1, child_path)
        stack.extend((child, child_path, depth + 1) for child_path, child, _ in reversed(children) if isinstance(child, (dict, list)))
    return best[2]


@pytest.mark.filterwarnings("ignore::ruamel.yaml.error.ReusedAnchorWarning")  # an anchor written twice is one of the cases
def test_path_to_names_every_place_as_before():
    """Every line and column of every fixture and of the hard cases, as path_to named it before."""
    from meshlint.findings import Position

    texts = [*HARD.values()]
    texts += [decode(Path(p).read_bytes())[0] for p in _files() if "/testdata/" in p][::6]
    compared = 0
    for text in texts:
        loaded = load_text("f.yaml", text)
        for document in loaded.documents[:3]:
            root = document.root
            for line in range(document.line, document.line + 25):
                for column in (1, 5, 11):
                    position = Position("f.yaml", line, column)
                    assert root.path_to(position) == _legacy_path_to(root, position), (text[:200], line, column)
                    compared += 1
    assert compared > 3_000


def _legacy_nesting(text):
    """The nesting pre-check as it was: a match object per bracket."""
    import re

    from meshlint.source.syntax import MAX_DEPTH

    depth = 0
    for match in re.finditer(r"[\[\]{}]", text):
        depth += 1 if match.group() in "[{" else -1
        if depth > 4 * MAX_DEPTH:
            return text.count("\n", 0, match.start()) + 1
        depth = max(depth, 0)
    return 0


def test_nesting_check_finds_the_line_it_found_before():
    import random

    from meshlint.source.loader import _nesting_beyond_limit

    rng = random.Random(19)
    texts = ["a: " + "[" * 900 + "]" * 900, "x: 1\n" * 3 + "{a: " * 850, "]" * 500 + "[" * 700 + "\n" + "[" * 200]
    for _ in range(40):
        texts.append("".join(rng.choice(["[", "[", "{", "]", "}", "\n", "a: 1\n"]) for _ in range(rng.randrange(200, 4000))))
    for _ in range(20):  # deep ones, near the limit on either side
        texts.append("".join(rng.choice(["[" * 50, "{", "]" * rng.randrange(1, 30), "\n", "}"]) for _ in range(rng.randrange(20, 60))))
    texts += ["[" * 790 + "]" * 10 + "\n" + "[" * 20, "[" * 790 + "]" * 5 + "\n" + "[" * 20, "]" * 900 + "{" * 801]  # at, past, past
    found = [_nesting_beyond_limit(text) for text in texts]
    assert found == [_legacy_nesting(text) for text in texts]
    assert found[-3:] == [0, 2, 1]
    assert found[0] == 1 and found[1] == 4 and found[2] == 2


@pytest.mark.slow  # a fast path held against the plain one: CI runs the slower tier on every Python
def test_the_ruamel_fallback_reports_what_libyaml_reports(monkeypatch):
    """A machine without PyYAML's C extension reads every input with meshlint's C reader and
    ruamel.yaml, or with ruamel.yaml alone: the same report as with both extensions."""
    import json

    from click.testing import CliRunner

    from meshlint.cli import main

    reports = []
    for way in EVERY_WAY:
        use(way, monkeypatch)
        result = CliRunner().invoke(main, ["check", str(ROOT / "examples"), str(ROOT / "testdata"), "--format", "json", "--no-cache"])
        assert result.exit_code == 1
        reports.append(result.stdout)
    assert reports[1:] == [reports[0]] * (len(reports) - 1) and len(json.loads(reports[0])["findings"]) > 50
