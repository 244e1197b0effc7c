"""`Node.path_to` goes down one branch of a document read without aliases or merge keys, and searches
the whole tree otherwise: the two give the same path for every place of every fixture, the corpus,
and generated documents made of what could make them differ (explicit keys without values, empty
values, duplicate keys, flow collections, anchors, block scalars)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from helpers import ROOT
from meshlint.findings import Position
from meshlint.source import document, nodepaths
from meshlint.source.loader import decode, load_text


def places(doc: document.Document) -> list[Position]:
    """Each mark of the document, the places either side of it, and the start of its line."""
    table = doc.table
    marks: list[Any] = list(table.raw_starts.values())
    for entries in table.raw_maps.values():
        for entry in entries.values():
            marks += [entry[0], entry[1]]
    for items in table.raw_seqs.values():
        marks += [item[0] for item in items]
    found: set[tuple[int, int]] = set()
    for mark in marks:
        line, column = table.at(mark)
        found |= {(line, 1), (line, column - 1), (line, column), (line, column + 1)}
    return [Position(doc.path, line, column) for line, column in sorted(found) if column >= 1]


def both_ways(doc: document.Document, monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], list[str]]:
    """The paths to every place going down one branch, and searching the whole tree."""
    root, targets = doc.root, places(doc)
    # Below the root too: a rule asks for a place from a resource's own node, not only the document's.
    nodes = [root, *(root.get(key) for key in list(root.value if isinstance(root.value, dict) else ())[-2:])]
    down = [node.path_to(p) for node in nodes for p in targets]
    with monkeypatch.context() as patch:
        patch.setattr(nodepaths, "_descended", lambda *args: nodepaths._UNPLACED)
        searched = [node.path_to(p) for node in nodes for p in targets]
    return down, searched


def files() -> list[Any]:
    found = sorted(p for p in (ROOT / "testdata").rglob("*") if p.suffix in (".yaml", ".yml"))
    found += sorted((ROOT / "examples").rglob("*.yaml"))
    corpus = ROOT.parent / "shared" / "corpus"
    if corpus.is_dir():
        found += sorted(p for p in corpus.rglob("*") if p.suffix in (".yaml", ".yml"))[::5]
    return found


@pytest.mark.slow  # a fast path held against the plain one: CI runs the slower tier on every Python
def test_one_branch_and_the_whole_tree_agree_on_every_place_of_every_file(monkeypatch):
    went_down = 0
    for path in files():
        for doc in load_text(str(path), decode(path.read_bytes())[0]).documents:
            if len(doc.table.raw_maps) + len(doc.table.raw_seqs) > 60:
                continue  # every place of a CRD, searched each time, is minutes: the shapes repeat
            down, searched = both_ways(doc, monkeypatch)
            assert down == searched, doc.path
            went_down += doc.table.ordered and doc.table._place is None
    assert went_down > 500


# The pieces of generated documents: what could make two entries' stretches meet or reorder.
SCALARS = ["1", "web", '"a: b"', "'x'", "", "null", "~", "&anchor v", "!!str 3", "|\n{indent}  line one\n{indent}  line two", ">-\n{indent}  folded"]


def generated(rng: random.Random, depth: int = 0, indent: str = "") -> str:
    lines = []
    for _ in range(rng.randint(1, 4)):
        key = rng.choice(["a", "b", "name", "spec", "a"])  # "a" twice: duplicate keys
        shape = rng.random()
        if depth < 3 and shape < 0.25:
            lines.append(f"{indent}{key}:\n{generated(rng, depth + 1, indent + '  ')}")
        elif depth < 3 and shape < 0.4:
            items = "\n".join(
                f"{indent}- {rng.choice(['x', '', '{a: 1}', '[1, 2]'])}" if rng.random() < 0.5 else f"{indent}-\n{generated(rng, depth + 1, indent + '  ')}"
                for _ in range(rng.randint(1, 3))
            )
            lines.append(f"{indent}{key}:\n{items}")
        elif shape < 0.5:
            lines.append(f"{indent}? {key}")  # an explicit key without a value
        elif shape < 0.55:
            lines.append(f"{indent}? {key}\n{indent}: {rng.choice(['1', ''])}")
        elif shape < 0.65:
            lines.append(f"{indent}{key}: {{{rng.choice(['x: 1, y', 'x: , y: 2', '? z', ''])}}}")
        else:
            lines.append(f"{indent}{key}: {rng.choice(SCALARS).format(indent=indent)}".rstrip())
        if rng.random() < 0.1:
            lines.append(f"{indent}# a comment? with a mark")
    return "\n".join(lines)


@pytest.mark.slow  # a fast path held against the plain one: CI runs the slower tier on every Python
@pytest.mark.filterwarnings("ignore::ruamel.yaml.error.ReusedAnchorWarning")  # an anchor written twice is one of the cases
def test_one_branch_and_the_whole_tree_agree_on_generated_documents(monkeypatch):
    rng = random.Random(19)
    went_down = 0
    for n in range(500):
        text = "\n---\n".join(generated(rng) for _ in range(rng.randint(1, 2))) + "\n"
        for doc in load_text(f"gen{n}.yaml", text).documents:
            down, searched = both_ways(doc, monkeypatch)
            assert down == searched, text
            went_down += doc.table.ordered and doc.table._place is None
    assert went_down > 200


@pytest.mark.parametrize(
    "text",
    [
        # Where the file's lines, as Python splits them, are not the parser's (a form feed, a bare CR
        # or a NEL in a string): nothing may read the lines to decide.
        "# note\x0c\x0c\nkind: A\n---\n? k\nb: 1\n",
        'kind: A\ndata: "x\r\ry"\n---\n? k\nb: 1\n',
        'kind: A\ndata: "x\x85\x85y"\n---\n? k\nb: 1\n',
        'kind: A\ndata: "x\u2028y"\nspec:\n  ? k\nb: 1\n',
        # An explicit key without a value, at the top and below, before a list item and a flow entry.
        "? k\nb: 1\n",
        "spec:\n  inner:\n    ? k\nb: 1\n",
        "items:\n- ? k\n- x\n",
        "m: {? k, b: 1}\n",
    ],
)
def test_where_lines_are_not_the_parsers_and_where_stretches_meet(text, monkeypatch):
    for doc in load_text("odd.yaml", text).documents:
        down, searched = both_ways(doc, monkeypatch)
        assert down == searched
