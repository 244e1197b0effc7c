"""meshlint's C reader (meshlint/source/csrc/fastread/): what it reads itself, what it leaves to the
Python reader, and its marks. That both read alike is tests/test_loader_parity.py's."""

from __future__ import annotations

import pickle

import pytest

from helpers import ROOT
from meshlint.source import readers
from meshlint.source.loader import decode
from meshlint.source.readers import native
from meshlint.source.syntax import MAX_DEPTH
from meshlint.source.yaml11 import implicit_first_characters, letter_words, resolve_plain

fast = native.module()
pytestmark = pytest.mark.skipif(fast is None, reason="the C reader is not built here (no compiler or no libyaml header)")


def read(text: str) -> list | None:
    return fast.read(text, implicit_first_characters(), letter_words(), resolve_plain, MAX_DEPTH)


def test_a_manifest_becomes_data_with_the_marks_of_its_entries():
    (root, root_mark, end_line, maps, seqs, starts), second = read("kind: Pod\nspec:\n  ports: [80, 'http', yes]\n---\n- x\n")
    assert root == {"kind": "Pod", "spec": {"ports": [80, "http", True]}}
    assert (root_mark.line, root_mark.column, end_line) == (0, 0, 3)
    entries = maps[id(root)]
    assert [(k, e[0].line, e[0].column, e[1].line, e[1].column, e[2], e[3]) for k, e in entries.items()] == [
        ("kind", 0, 0, 0, 6, None, None), ("spec", 1, 0, 2, 2, None, None),
    ]
    ports = root["spec"]["ports"]
    assert [(m.line, m.column, style, raw) for m, style, raw in seqs[id(ports)]] == [(2, 10, None, "80"), (2, 14, "'", None), (2, 22, None, "yes")]
    assert (starts[id(ports)].line, starts[id(ports)].column) == (2, 9)
    assert second[0] == ["x"] and second[1].line == 4


@pytest.mark.parametrize(
    "text",
    [
        "a: &x 1\n",  # an anchor
        "a: [&x 1, *x]\n",  # an alias
        "a: !!str 1\n",  # a scalar's tag
        "a: ! 1\n",  # the non-specific tag
        "a: 1\na: 2\n",  # a repeated key
        "? [a]\n: 1\n",  # a complex key
        "<<: {a: 1}\n",  # a merge key
        "a:\n  b: 1\n  <<: {a: 1}\n",
        "a: " + "[" * (MAX_DEPTH + 2) + "]" * (MAX_DEPTH + 2) + "\n",  # deeper than the limit
        "a: [\n",  # a syntax error
        "a: 1\n---\nb: \x07\n",  # one after a good document
        "a: \ud800\n",  # a lone surrogate, which UTF-8 cannot carry
        # What releases of libyaml parse differently (the system's may be older than PyYAML's):
        "data: [?]]\n", "a: [b: 1]\n",  # a single pair in a flow sequence
        "a: !t [1]\n", "a: !!map {b: 1}\n",  # a tag, on a container too
        "%YAML 1.1\n---\na: 1\n", "a: 1\n...\n%TAG ! tag:x,1:\n---\nb: 2\n",  # a directive
    ],
)
def test_what_needs_the_python_reader_is_left_to_it(text):
    assert read(text) is None


def test_a_merge_word_that_is_no_key_and_flow_mappings_in_sequences_are_read_here():
    assert read("a: <<\nb: {c: '<<'}\n")[0][0] == {"a": "<<", "b": {"c": "<<"}}
    assert read("é: [ü, {b: 1}]\n")[0][0] == {"é": ["ü", {"b": 1}]}  # libyaml counts characters, not bytes
    assert read("a: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "\n") is not None


def test_the_c_reader_reads_most_fixtures_itself():
    # The parity of the readers says little if the C one left every file to Python.
    files = sorted(p for p in (ROOT / "testdata").rglob("*") if p.suffix in (".yaml", ".yml"))
    taken = sum(read(decode(p.read_bytes())[0]) is not None for p in files)
    assert len(files) > 100 and taken / len(files) > 0.9


def test_parses_says_yes_only_where_pyyaml_does(monkeypatch):
    # A no only sends the text to be composed, where the error is worded; a yes lets it through. So
    # where releases of libyaml differ (nesting past 1000, `[?]`), the C parser says no.
    texts = ["a: 1\n", "a: [\n", "a: &x 1\nb: &x 2\n", "a: *nope\n", "\t- a\n", "a: \x07\n", "", "k: [{a: 1}, [b]]\n",
             "x: " + "[" * 1001 + "]" * 1001, "x: " + "- " * 1001 + "y\n", "data: [?]]\n", "[?]", "a: [b: 1]\n", "%YAML 1.1\n---\na: 1\n"]
    ours = [readers.parses(t) for t in texts]
    monkeypatch.setattr(native, "_module", False)
    theirs = [readers.parses(t) for t in texts]
    assert [t for t, o, p in zip(texts, ours, theirs, strict=True) if o and not p] == []
    assert ours[:8] == theirs[:8] == [True, False, True, True, False, False, True, True]
    assert ours[8:] == [False] * 6


def test_the_cache_key_names_the_readers_without_importing_pyyaml(tmp_path):
    import subprocess
    import sys

    # From another folder: the interpreter would take a checkout's meshlint, unbuilt, before the installed one.
    show = "import sys; from meshlint.source import readers; print(readers.names().decode(), 'yaml' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", show], capture_output=True, text=True, check=True, cwd=tmp_path).stdout.split()
    assert out == ["fastread", fast.LIBYAML_VERSION + ",", "then", "libyaml", "False"]


def test_a_mark_travels_between_processes_as_its_line_and_column():
    mark = read("a:\n  b: 1\n")[0][3]
    inner = next(v for v in mark.values() if "b" in v)["b"][1]
    copy = pickle.loads(pickle.dumps(inner))
    assert (type(copy), copy.line, copy.column, repr(copy)) == (type(inner), 1, 5, "Mark(line=1, column=5)")
    with pytest.raises(AttributeError):
        copy.line = 3


def test_plain_decimal_ints_read_here_are_what_the_resolver_makes_of_them():
    # Up to 18 digits with no leading zero are worked out in C; everything else a digit starts goes to
    # the resolver (octal, signs, `_`, sexagesimal, floats, 19 digits and more).
    texts = ["0", "7", "80", "8080", "123456789012345678", "999999999999999999", "1234567890123456789",
             "00", "010", "08", "0x1F", "+1", "-1", "1_000", "1:30", "1.5", "1e3", "12a", "１２"]
    for text in texts:
        ((root, _, _, maps, _, _),) = read(f"a: {text}\n")
        assert (root["a"], type(root["a"])) == (resolve_plain(text), type(resolve_plain(text))), text
        assert maps[id(root)]["a"][3] == (None if isinstance(root["a"], str) else text), text


def test_a_plain_decimal_int_needs_no_call_to_the_resolver():
    calls: list[str] = []

    def resolver(text: str) -> object:
        calls.append(text)
        return resolve_plain(text)

    ((root, *_),) = fast.read("a: 8080\nb: 010\nc: 0\n", implicit_first_characters(), letter_words(), resolver, MAX_DEPTH)
    assert root == {"a": 8080, "b": 8, "c": 0}
    assert calls == ["010"]
