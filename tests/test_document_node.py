"""A document's Node has its core (fields, `get`, `at`, `path`) in C (meshlint/source/_node.c) where it
is built, and in Python (`document._NodeCore`) where it is not: the two give the same nodes, at the
same places, for every step into every fixture and a sample of the corpus, and for the odd steps."""

from __future__ import annotations

import gc
import pickle
from typing import Any

import pytest

from helpers import ROOT
from meshlint.findings import Position
from meshlint.source import document
from meshlint.source.loader import decode, load_text

try:
    from meshlint.source import _node
except ImportError:
    _node = None

pytestmark = pytest.mark.skipif(_node is None, reason="the C core of Node is not built here (no compiler)")

# Node's own methods over the Python core: a Node as it is where the C core is not built.
PyNode: Any = type(
    "PyNode",
    (document._NodeCore,),
    {k: v for k, v in vars(document.Node).items() if k not in ("__slots__", "__module__", "__doc__", "__dict__", "__weakref__")} | {"__slots__": ()},
)


def as_python(node: document.Node) -> Any:
    return PyNode(node.value, node.table, node._pos, node._key_pos, node.style, node.raw, node.exists, node._mark, node._key_mark)


def seen(node: Any) -> tuple[Any, ...]:
    """Everything a node holds, its value and marks by identity (both walk the same data), and the
    positions it makes."""
    return (id(node.value), id(node.table), node.style, node.raw, node.exists, id(node._mark), id(node._key_mark), node.pos, node.key_pos)


def steps(node: Any) -> list[tuple[Any, ...]]:
    """Every step from `node` down: each entry and item, and the missing ones beside them."""
    out = [seen(node)]
    value = node.value
    if isinstance(value, dict):
        for key in value:
            out += steps(node.get(key))
        out += [seen(node.get("no such key")), seen(node.at(0))]
    elif isinstance(value, list):
        for index in range(len(value)):
            out += steps(node.at(index))
        out += [seen(node.at(len(value))), seen(node.at(-1)), seen(node.get("x"))]
    else:
        out += [seen(node.get("x")), seen(node.at(0))]
    return out


def documents() -> list[document.Document]:
    files = sorted(p for p in (ROOT / "testdata").rglob("*") if p.suffix in (".yaml", ".yml"))
    corpus = ROOT.parent / "shared" / "corpus"
    if corpus.is_dir():
        files += sorted(p for p in corpus.rglob("*") if p.suffix in (".yaml", ".yml"))[::10]
    found = []
    for path in files:
        loaded = load_text(str(path), decode(path.read_bytes())[0])
        found += loaded.documents
    return found


def test_both_cores_take_the_same_steps_through_every_document():
    checked = 0
    for doc in documents():
        root = doc.root
        assert type(root).__mro__[1] is _node.NodeCore
        assert steps(root) == steps(as_python(root)), doc.path
        checked += 1
    assert checked > 300


def test_paths_of_keys_and_indexes_are_steps_in_turn():
    (doc,) = load_text("p.yaml", "spec:\n  containers:\n    - name: web\n      ports: [80, 8080]\n").documents
    for node in (doc.root, as_python(doc.root)):
        for keys in (("spec", "containers", 0, "ports", 1), ("spec", "containers", 5, "name"), ("spec", True), (), ("nope", 0, "x")):
            walked = node
            for key in keys:
                walked = walked.at(key) if isinstance(key, int) else walked.get(key)
            assert seen(node.path(*keys)) == seen(walked), keys
    assert doc.root.path("spec", "containers", 0, "ports", 1).value == 8080


@pytest.mark.parametrize("core", ["c", "python"])
def test_odd_steps(core):
    (doc,) = load_text("p.yaml", "a: [1, 2]\nb: {c: 1}\n").documents
    node = doc.root if core == "c" else as_python(doc.root)
    items = node.get("a")
    assert items.at(True).value == 2  # a bool is an int
    assert not items.at(10**30).exists and not items.at(-(10**30)).exists  # past any end
    with pytest.raises(TypeError):
        node.get(["unhashable"])
    with pytest.raises(TypeError):
        items.at("0")
    missing = node.get("b").get("c").get("d")  # below a scalar
    assert (missing.exists, missing.value, missing.pos) == (False, None, node.get("b").get("c").pos)


@pytest.mark.parametrize("core", ["c", "python"])
def test_a_mapping_or_list_of_a_subclass_is_read_through_its_own_methods(core):
    class Odd(dict):
        def __contains__(self, key):
            return key == "there"

        def __getitem__(self, key):
            return "from getitem"

    class Short(list):
        def __len__(self):
            return 1

        def __getitem__(self, index):
            return "item"

    table = document.PositionTable("p.yaml", [], 0)
    make = document.Node if core == "c" else PyNode
    node = make(Odd(x=1), table, Position("p.yaml", 1, 1), None)
    assert (node.get("there").value, node.get("x").exists) == ("from getitem", False)
    items = make(Short([1, 2, 3]), table, Position("p.yaml", 1, 1), None)
    assert (items.at(0).value, items.at(1).exists) == ("item", False)


def test_a_node_pickles_and_is_collected_in_a_cycle():
    (doc,) = load_text("p.yaml", "a: {b: yes}\n").documents
    node = doc.root.get("a").get("b")
    copy = pickle.loads(pickle.dumps(node))
    assert (copy.value, copy.raw, copy.pos, copy.key_pos, copy.exists) == (True, "yes", node.pos, node.key_pos, True)
    gc.collect()
    data: dict[str, Any] = {}
    data["self"] = document.Node(data, doc.table, None, None)
    del data
    assert gc.collect() >= 2  # the node and the dict it sits in


@pytest.mark.parametrize("core", ["c", "python"])
def test_an_entry_the_table_has_no_marks_for_stands_where_its_container_does(core):
    table = document.PositionTable("p.yaml", [], 0)
    where = Position("p.yaml", 3, 5)
    node = (document.Node if core == "c" else PyNode)({"a": [7]}, table, where, None)
    entry = node.get("a")
    assert (entry.value, entry.pos, entry.key_pos, entry.exists) == ([7], where, where, True)
    item = entry.at(0)
    assert (item.value, item.pos, item.key_pos) == (7, where, None)
