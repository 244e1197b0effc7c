"""Documents read for their syntax alone (meshlint/source/screen.py) and files read part by part: the
screen never calls a document valid that the composer would fault, and reading part by part gives
what reading whole gives."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import ROOT
from meshlint.source import readers, screen
from meshlint.source.loader import decode, document_chunks, load_text
from meshlint.source.screen import plain_kind, surely_valid

CORPUS = ROOT.parent / "shared" / "corpus"
needs_libyaml = pytest.mark.skipif(not readers.libyaml_reads(), reason="PyYAML's C extension is not installed")


def _texts() -> list[str]:
    found = sorted(p for p in (ROOT / "testdata").rglob("*") if p.suffix in (".yaml", ".yml", ".json"))
    if CORPUS.is_dir():
        found += sorted(p for p in CORPUS.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))
    return [decode(p.read_bytes())[0] for p in found]


def composed_cleanly(text: str) -> bool:
    loaded = load_text("f.yaml", text)
    return not loaded.problems and len(loaded.documents) <= 1


@needs_libyaml
def test_every_part_the_screen_passes_composes_without_a_problem():
    passed = 0
    for text in _texts():
        for _, chunk in document_chunks(text):
            if plain_kind(chunk) is not None and surely_valid(chunk):  # as the loader asks
                passed += 1
                assert composed_cleanly(chunk), chunk[:400]
    # The screen does pass most real documents (2,269 of the corpus's 3,074 plain ones); the fixtures
    # alone are built to be hard (201 of 605), which is what a checkout without ../shared has.
    assert passed > (2000 if CORPUS.is_dir() else 150)


@needs_libyaml
def test_parts_with_a_line_repeated_are_never_passed_when_they_hold_a_duplicate():
    """Every line of real documents repeated in turn (a duplicate key wherever the line is a key)."""
    rng = random.Random(19)
    chunks = [c for text in _texts() for _, c in document_chunks(text) if plain_kind(c) is not None and surely_valid(c)]
    checked = 0
    for chunk in rng.sample(chunks, min(150, len(chunks))):
        lines = chunk.splitlines(keepends=True)
        for n in rng.sample(range(len(lines)), min(12, len(lines))):
            mutated = "".join([*lines[: n + 1], lines[n], *lines[n + 1 :]])
            if surely_valid(mutated):
                checked += 1
                assert composed_cleanly(mutated), mutated[:400]
    assert checked > 100


KEYS = st.sampled_from(["a", "b", "name", "x-y", "a.b/c", "on", "1", "'a'", '"b"', "? a"])
SCALARS = st.sampled_from(["1", "x", "'q'", '"d"', "|\n  block: 1\n  block: 2", "[1, 2]", "{a: 1}", "&k v", "*k", "", "- i"])


@st.composite
def documents(draw: st.DrawFn, depth: int = 0) -> str:
    lines = []
    for _ in range(draw(st.integers(1, 4))):
        key = draw(KEYS)
        if depth < 3 and draw(st.booleans()):
            inner = draw(documents(depth + 1))
            if draw(st.booleans()):
                body = "".join(("- " if i == 0 else "  ") + line + "\n" for i, line in enumerate(inner.splitlines()))
            else:
                body = "".join("  " + line + "\n" for line in inner.splitlines())
            lines.append(f"{key}:\n" + "".join("  " + line + "\n" for line in body.splitlines()))
        else:
            lines.append(f"{key}: {draw(SCALARS)}\n")
    return "".join(lines)


@needs_libyaml
@settings(max_examples=400, deadline=None)
@given(documents())
def test_generated_documents(text):
    if surely_valid(text):
        assert composed_cleanly(text), text


def test_plain_kind():
    assert plain_kind("apiVersion: v1\nkind: Secret\nmetadata: {name: x}\n") == ("Secret", "v1")
    assert plain_kind("apiVersion: v1\r\nkind: Secret # a comment\r\n") == ("Secret", "v1")
    assert plain_kind("apiVersion: v1\nkind: Secret\n  Continued\n") is None  # the value is "Secret Continued"
    assert plain_kind("apiVersion: v1\nkind: Secret\n\n  Continued\n") is None
    assert plain_kind("apiVersion: 1\nkind: Secret\n") is None  # not a string: no resource
    assert plain_kind("apiVersion: v1\nkind: Secret\nkind: Service\n") is None
    assert plain_kind('{"apiVersion": "v1", "kind": "Secret"}') is None
    assert plain_kind("apiVersion: v1\n'kind': Secret\n") is None


@needs_libyaml
@pytest.mark.parametrize(
    "text",
    [
        "a: 1\na: 2\n",
        "a:\n  b: 1\n  c:\n    d: 1\n  b: 2\n",
        "items:\n- name: x\n  v: 1\n  name: y\n",
        "a:\n- 1\na: 2\n",
        "on: 1\ntrue: 2\n",
        "'a': 1\na: 2\n",
        "a: {b: 1, b: 2}\n",
        "x: &a 1\ny: *a\ny: 2\n",
        'a: "multi\nline"\na: 2\n',
        "a: [1,\nb: 2]\na: 3\n",
        "a: 1\n...\n---\na: 1\na: 2\n",
        "a: 1\nb: [\n",
    ],
)
def test_what_the_screen_does_not_pass(text):
    assert not surely_valid(text)


@needs_libyaml
@pytest.mark.parametrize("text", ["a: 1\nb: 2\n", "a:\n  b: 1\nc:\n  b: 1\n", "l:\n- name: a\n  v: 1\n- name: b\n  v: 2\n"])
def test_what_it_passes(text):
    assert surely_valid(text)


def _read(text: str, light: object) -> object:
    loaded = load_text("f.yaml", text, light=light)  # type: ignore[arg-type]  # PARTS_FROM is 0 in these tests
    return (
        [(d.index, d.data, d.line, d.column, d.rendered_from, dict(d.table.maps).values().__repr__()) for d in loaded.documents],
        loaded.problems,
        loaded.light,
    )


@pytest.fixture
def parts_always(monkeypatch):
    from meshlint.source import loader

    monkeypatch.setattr(loader, "PARTS_FROM", 0)


@needs_libyaml
def test_reading_part_by_part_reads_what_reading_whole_reads(parts_always):
    """Helm's `# Source:` comments, directives, broken parts, empty parts: every fixture and corpus
    file, read whole and part by part (composing every part)."""
    texts = [*_texts(), "# Source: a.yaml\n---\nx: 1\n", "x: 1\n# Source: b.yaml\n---\ny: 2\n", "--- 1\n# Source: c\n---\na: 1\n", "%YAML 1.1\n---\na: 1\n"]
    for text in texts:
        assert _read(text, lambda *_: False) == _read(text, None), text[:300]


@needs_libyaml
def test_syntax_only_parts_are_counted_not_composed(parts_always):
    text = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: t\n  name: u\n"
    loaded = load_text("f.yaml", text, light=lambda kind, api, chunk: kind == "Secret")
    assert loaded.light == [("Secret", "v1")]  # the first part: valid, read for its syntax alone
    assert [d.index for d in loaded.documents] == [1]  # the second has a duplicate key: composed, reported
    assert [p.line for p in loaded.problems] == [10]


# The screen's patterns as they were first written, with `^` under re.M: each lined pattern (searched
# with a line break put before the text) must find a match exactly where its `^` spelling does.
_LEAD_M = r"^[ ]*(?:-[ ]+)*"
_AS_WRITTEN = [
    r"^[ ]*\t",
    r"(?:^|[\s\[{,])&[^\s]",
    r"(?:^|[\s\[{,])\*[^\s]",
    r"(?:^|[:\-\[,])[ \t]*\{",
    _LEAD_M + r"\?(?:\s|$)",
    _LEAD_M + r"[\"'][^\n]*[\"'][ \t]*:(?:\s|$)",
    r"(?:^|[:\-\[,][ \t])[ \t]*\"(?:[^\"\\\n]|\\.)*\\?$",
    r"(?:^|[:\-\[,][ \t])[ \t]*'(?:[^'\n]|'')*$",
    r"\[[^\]\n]*$",
    r"^\.\.\.(?:\s|$)",
    r"(?<=\n)---(?:\s|$)",
    r"^---[ \t]*[^\s#]",
    r"^ {150}",
    _LEAD_M
    + r"(?:(?:[yYnN]|yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|~|null|Null|NULL|<<|(?:[+.0-9]|-(?=\S))[^:\n]*)[ \t]*)?:(?:\s|$)",
]
_KEY_AS_WRITTEN = re.compile(r"^([ ]*(?:-[ ]+)*)([^\s#'\"?:&*!|>%@`\[\]{},\-]" + screen._BODY + r"|-[^\s]" + screen._BODY + r")[ \t]*:(?:[ \t]|\r?$)", re.M)
PIECES = st.sampled_from(["\n", " ", "  ", "\t", "-", " - ", "&", "*", "{", "}", "[", "]", ",", ":", ": ", '"', "'", "\\", "?", "#", "...", "---", "a", "on", "1", "~", "<<", "\r", "\x85", " " * 150])


def _agrees_with_as_written(text: str) -> None:
    lined = "\n" + text
    for (_, pattern), written in zip(screen._UNFOLLOWABLE, _AS_WRITTEN, strict=True):
        assert bool(pattern.search(lined)) == bool(re.search(written, text, re.M)), (written, text)
    assert [m.groups() for m in screen._KEY.finditer(lined)] == [m.groups() for m in _KEY_AS_WRITTEN.finditer(text)]


@pytest.mark.slow  # a fast path held against the plain one: CI runs the slower tier on every Python
@settings(max_examples=3000, deadline=None)
@given(st.lists(PIECES, max_size=24).map("".join))
def test_the_lined_patterns_find_what_their_line_start_spellings_find(text):
    _agrees_with_as_written(text)


@pytest.mark.slow  # a fast path held against the plain one: CI runs the slower tier on every Python
def test_the_lined_patterns_agree_on_real_documents():
    for text in _texts():
        for _, chunk in document_chunks(text):
            _agrees_with_as_written(chunk)
