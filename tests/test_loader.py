"""The loader: positions, YAML 1.1 scalars, and every bad input of spec §8."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import MESHED, lint_text
from meshlint.engine.results import SkippedInput
from meshlint.model.resource import resources_of
from meshlint.source.loader import decode, load_file, load_text
from meshlint.source.syntax import MAX_DEPTH, SyntaxProblem


def test_positions_are_one_based_and_kept_beside_the_data():
    loaded = load_text("f.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n")
    doc = loaded.documents[0]
    assert doc.data == {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}}
    name = doc.root.path("metadata", "name")
    assert (name.pos.line, name.pos.column, name.key_pos.line, name.key_pos.column) == (4, 9, 4, 3)


def test_a_document_that_leaves_its_process_keeps_every_position_and_style():
    # Workers send their mesh context to the parent and the cache keeps it, nodes of its documents
    # included (a MeshSource keeps its resource and its settings' nodes): a node of the copy must
    # stand where the original does, so the copy's table must find the copy's containers, whose
    # identities differ from the original's.
    import pickle

    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: istio}\ndata:\n  mesh: |\n    defaultConfig:\n      holdApplicationUntilProxyStarts: true\n"
    document = load_text("istio.yaml", text).documents[0]
    copy = pickle.loads(pickle.dumps(document))
    for keys in (("data", "mesh"), ("metadata", "name"), ("metadata",), ("kind",)):
        before, after = document.root.path(*keys), copy.root.path(*keys)
        assert (after.value, after.pos, after.key_pos, after.style) == (before.value, before.pos, before.key_pos, before.style)
    assert copy.root.path("data", "mesh").style == "|" and copy.root.path("data", "mesh").pos.line == 5


def test_a_namespace_label_kept_by_the_mesh_context_holds_nothing_of_its_document():
    import pickle

    loaded = load_text("ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team\n  labels:\n    istio-injection: disabled\n")
    label = loaded.documents[0].root.path("metadata", "labels", "istio-injection")
    alone = label.detached()
    assert (alone.value, alone.pos, alone.key_pos) == ("disabled", label.pos, label.key_pos) and alone.pos.line == 6
    assert (alone.table.roots, alone.table.raw_maps, alone.table.lines) == ([], {}, [])
    copy = pickle.loads(pickle.dumps(label))  # a node sent alone carries its positions, not libyaml's marks
    assert (copy._mark, copy._key_mark, copy.pos, copy.key_pos) == (None, None, label.pos, label.key_pos)


def test_yaml_1_1_scalars_read_as_kubernetes_reads_them():
    doc = load_text("f.yaml", "a: 0400\nb: yes\nc: off\nd: 0x1F\ne: 1_000\nf: '0400'\ng: 1:30\n").documents[0]
    assert doc.data == {"a": 256, "b": True, "c": False, "d": 31, "e": 1000, "f": "0400", "g": 90}
    assert doc.root.get("a").text == "0400"  # as written, for annotation values


def test_yaml_1_1_boolean_keys_become_strings_as_in_kubernetes():
    assert load_text("f.yaml", "y: 1\non: 2\n5: 3\n").documents[0].data == {"true": 2, "5": 3}


def test_multi_document_stream_and_kind_list():
    text = "apiVersion: v1\nkind: Service\nmetadata: {name: a}\n---\n---\napiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: Pod\n    metadata: {name: b}\n  - {apiVersion: v1, kind: Namespace, metadata: {name: c}}\n"
    loaded = load_text("f.yaml", text)
    kinds = [(r.kind, r.name, r.root.pos.line) for d in loaded.documents for r in resources_of(d)]
    assert kinds == [("Service", "a", 1), ("Pod", "b", 9), ("Namespace", "c", 12)]


def test_json_file(tmp_path):
    path = tmp_path / "pod.json"
    path.write_text('{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "j"}}', encoding="utf-8")
    loaded = load_file(str(path))
    assert [r.name for d in loaded.documents for r in resources_of(d)] == ["j"]


@pytest.mark.parametrize("text", ["", "\n\n", "---\n---\n", "# only a comment\n", "--- ~\n"])
def test_empty_files_and_documents_are_quiet(text):
    loaded = load_text("e.yaml", text)
    assert loaded.problems == []
    assert [r for d in loaded.documents for r in resources_of(d)] == []


@pytest.mark.parametrize("text", ["- a\n- b\n", "just a string\n", "42\n"])
def test_non_mapping_documents_are_skipped_and_counted(tmp_path, text):
    report = lint_text(tmp_path, text)
    assert report.findings == []
    assert report.summary.skipped_documents == 1


def test_non_utf8_bytes_are_reported_and_the_rest_is_read():
    text, problem = decode(b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: caf\xe9\n")
    assert problem == SyntaxProblem(4, 12, "file is not valid UTF-8 (byte 0xe9); read with replacement characters")
    assert load_text("f.yaml", text).documents[0].data["metadata"]["name"] == "caf\ufffd"


def test_bom_is_accepted():
    text, problem = decode(b"\xef\xbb\xbfapiVersion: v1\nkind: Pod\n")
    assert problem is None
    assert load_text("f.yaml", text).documents[0].data == {"apiVersion": "v1", "kind": "Pod"}


def test_utf16_with_bom_is_decoded():
    text, problem = decode("kind: Pod\n".encode("utf-16"))
    assert (text, problem) == ("kind: Pod\n", None)


def test_tab_indentation_is_ml001_at_the_tab(tmp_path):
    report = lint_text(tmp_path, "apiVersion: v1\nkind: Pod\nmetadata:\n\tname: x\n")
    assert [(f.code, f.line, f.column) for f in report.findings] == [("ML001", 4, 1)]


def test_a_broken_document_does_not_hide_the_next(tmp_path):
    text = "a: [1\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\n  annotations: {sidecar.istio.io/inject: 'false'}\nspec: {}\n"
    report = lint_text(tmp_path, text)
    assert [(f.code, f.line) for f in report.findings] == [("ML001", 2), ("ML003", 7)]


def test_anchors_aliases_and_merge_keys():
    doc = load_text("f.yaml", "base: &b {x: 1, z: 2}\nuse:\n  <<: *b\n  z: 3\nlist: &l [1]\nagain: *l\n").documents[0]
    assert doc.data["use"] == {"x": 1, "z": 3}
    assert doc.data["again"] is doc.data["list"]
    assert doc.root.path("use", "x").pos.line == 1  # a merged value keeps the position of its anchor


def test_alias_bomb_is_bounded_by_sharing():
    # Nine levels of nine-fold aliases would expand to 9**9 (387 million) strings if copied.
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 10):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i-1}"] * 9) + "]")
    loaded = load_text("bomb.yaml", "\n".join(lines) + "\n")
    data = loaded.documents[0].data
    # Shared, not copied: the whole document holds at most one list object per anchor.
    assert data["a9"][0] is data["a8"] and data["a9"][8] is data["a8"]
    assert len(loaded.documents[0].table.seqs) == 10


def test_recursive_alias_is_cut_and_reported():
    loaded = load_text("r.yaml", "a: &x\n  b: *x\n")
    assert loaded.documents[0].data == {"a": {"b": None}}
    assert [p.line for p in loaded.problems] == [2]


@pytest.mark.parametrize("depth", [MAX_DEPTH + 5, 100_000])
def test_deep_nesting_is_refused_not_crashed(depth):
    loaded = load_text("deep.yaml", "a: " + "[" * depth + "]" * depth + "\n")
    assert loaded.documents == []
    assert [p.message for p in loaded.problems] == [f"document nests more than {MAX_DEPTH} levels deep; not read"]


def test_unsafe_tags_are_never_constructed(tmp_path):
    marker = tmp_path / "pwned"
    text = f"a: !!python/object/apply:os.system ['touch {marker}']\nb: !!python/name:os.system\n"
    doc = load_text("u.yaml", text).documents[0]
    assert not marker.exists()
    assert doc.data == {"a": [f"touch {marker}"], "b": ""}


@pytest.mark.parametrize(
    "containers, found",
    [
        ("containers: x", []),  # no containers: not a workload for the workload rules (wave 2 §W1)
        ("containers: [{name: odd, image: odd, env: [{name: API_URL, value: \"http://api:8080\"}]}, 7]", [("ML100", 6)]),
    ],
)
def test_wrong_types_where_kubernetes_expects_others(tmp_path, containers, found):
    text = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: odd}\nspec:\n  template:\n    metadata: {}\n"
        f"    spec:\n      terminationGracePeriodSeconds: '30'\n      {containers}\n      initContainers: [1, null]\n"
    )
    report = lint_text(tmp_path, text, MESHED)
    assert [(f.code, f.line) for f in report.findings] == found


def test_helm_template_is_skipped_with_a_note(tmp_path):
    text = "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\n  labels:\n{{ include \"labels\" . | indent 4 }}\n"
    report = lint_text(tmp_path, text)
    assert report.findings == []
    assert report.summary.skipped_files == 1
    path = str(tmp_path / "manifest.yaml")
    reason = "Helm template syntax ({{ ... }}); render it first: helm template ... | meshlint check -"
    assert report.summary.skipped_inputs == [SkippedInput(path, reason)]
    assert report.notes == []  # the command line prints skipped inputs first, from the summary


def test_huge_file_is_read_whole(tmp_path):
    doc = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n" + "".join(f"  k{i}: v{i}\n" for i in range(200_000))
    loaded = load_text("big.yaml", doc)
    assert len(loaded.documents[0].data["data"]) == 200_000
    assert loaded.documents[0].root.path("data", "k199999").pos.line == 200_004


def test_parts_read_alone_keep_the_files_positions():
    """The first pass composes single documents out of a file; their positions must be the file's."""
    from meshlint.source.loader import document_chunks, load_chunks

    text = (
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n# between\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: istio}\ndata:\n  mesh: |-\n    defaultConfig: {}\n"
        "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: s\n"
    )
    whole = load_text("f.yaml", text)
    parts = load_chunks("f.yaml", document_chunks(text), text.splitlines())

    def where(documents):
        return [(d.line, d.root.path("metadata", "name").pos.line, d.root.path("metadata", "name").pos.column) for d in documents]

    assert where(parts) == where(whole.documents) == [(1, 3, 18), (6, 8, 18), (13, 16, 9)]
    assert parts[1].table.lines[9] == "  mesh: |-"  # embedded YAML maps into the whole file's lines


def test_broken_part_after_many_lines_is_placed_in_the_file(tmp_path):
    text = "".join(f"apiVersion: v1\nkind: Namespace\nmetadata: {{name: n{i}}}\n---\n" for i in range(300)) + "a: [\n"
    loaded = load_text("big.yaml", text)
    assert len(loaded.documents) == 300
    assert [(p.line, p.message.split(":")[0]) for p in loaded.problems] == [(1202, "while parsing a flow node")]


def test_the_short_class_placed_for_pyyaml_matches_the_characters_its_own_does():
    # Every code point, surrogates included: the two must find the same characters in any text.
    import re

    from meshlint.source.readers.events import NON_PRINTABLE, NON_PRINTABLE_SHORT

    every = "".join(map(chr, range(0x110000)))
    found = re.compile(NON_PRINTABLE_SHORT).findall(every)
    assert found == re.compile(NON_PRINTABLE).findall(every)
    assert found[:4] == ["\x00", "\x01", "\x02", "\x03"] and "\x85" not in found and "\ufffe" in found


def test_importing_pyyaml_through_meshlint_takes_the_short_class_for_the_readers_own():
    # In fresh interpreters: alone, PyYAML's and ruamel.yaml's readers compile the long text meshlint
    # names; imported through meshlint, both take the short form instead (so the text matched theirs).
    import subprocess
    import sys

    from meshlint.source.readers.events import NON_PRINTABLE, NON_PRINTABLE_SHORT

    show = "import yaml.reader, ruamel.yaml.reader; print(ascii(yaml.reader.Reader.NON_PRINTABLE.pattern)); print(ascii(ruamel.yaml.reader.Reader.NON_PRINTABLE.pattern))"
    alone = subprocess.run([sys.executable, "-c", show], capture_output=True, text=True, check=True).stdout.splitlines()
    through = subprocess.run([sys.executable, "-c", f"from meshlint.source.readers import events; assert events.available(); {show}"], capture_output=True, text=True, check=True).stdout.splitlines()
    assert alone == [ascii(NON_PRINTABLE)] * 2
    assert through == [ascii(NON_PRINTABLE_SHORT)] * 2


_OLD_DOC_START = re.compile(r"^---(?=\s|$)", re.M)  # how documents were found: `---` at a line's start


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["---", "--", "-", "----", "--- ", "---\t", "\n", "\r\n", "\r", " ", "a: 1", "\x85", "\u2028", "#", "...", "\x0c"]), max_size=40).map("".join))
def test_documents_start_where_a_line_starting_with_a_lone_dash_marker_says(text):
    from meshlint.source.loader import each_chunk

    starts = [0] + [m.start() for m in _OLD_DOC_START.finditer(text) if m.start() > 0]
    expected = [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]
    assert [chunk for _, chunk in each_chunk(text)] == expected


@pytest.mark.parametrize(
    "text, line",
    [
        (" " * 5000 + "a: 1\n", 1),
        ("a: 1\nb:\n" + " " * 5000 + "c: 1\n", 3),
        ("a: 1\r\nb:\r\n" + " " * 5000 + "c: 1\r\n", 3),
        ("a: '" + " " * 5000 + "'\n", 0),  # not at a line's start
        ("a: 1\n" + " " * 4999 + "b\n", 0),
    ],
)
def test_the_line_indented_beyond_the_nesting_limit(text, line):
    from meshlint.source.loader import _nesting_beyond_limit

    assert _nesting_beyond_limit(text) == line


@pytest.mark.parametrize(
    "text, alike",
    [("%YAML 1.1\n---\na: 1\n", False), ("a: 1\n---\n%TAG ! x\n---\nb: 2\n", False), ("a: '100%'\n---\nb: 2\n", True), ("a: |\n  %\n", True)],
)
def test_a_directive_line_keeps_a_stream_whole(text, alike):
    from meshlint.source.loader import _parts_read_alike

    assert _parts_read_alike(text) is alike
