"""A document's Node has its core (fields, `get`, `at`, `path`) in C (meshlint/source/csrc/node.c) where it
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


# --- what the C core leaves to the Python core, and what Python code may do in the middle of a step ---

WHERE = Position("p.yaml", 9, 9)


class _Mark:
    def __init__(self, line: int, column: int) -> None:
        self.line, self.column = line, column


KEY_MARK, VALUE_MARK = _Mark(0, 0), _Mark(0, 4)


class _Lookup:
    """A table part that is no dict but answers `get`."""

    def __init__(self, held: dict[Any, Any]) -> None:
        self.held = held

    def get(self, key: Any, default: Any = None) -> Any:
        return self.held.get(key, default)


def _table(maps: Any = None, seqs: Any = None) -> document.PositionTable:
    table = document.PositionTable("p.yaml")
    if maps is not None:
        table.raw_maps = maps
    if seqs is not None:
        table.raw_seqs = seqs
    return table


MAPPING, ITEMS = {"a": 1}, [1, 2]
ODD_STEPS = {
    "a str index on a scalar": lambda N: N(5, _table(), WHERE, None).at("0"),
    "a float index past a list's end": lambda N: N([1], _table(), WHERE, None).at(5.0),
    "None as the index of a mapping": lambda N: N({}, _table(), WHERE, None).at(None),
    "a bool key": lambda N: N({1: "one"}, _table(), WHERE, None).get(True),
    "an unhashable key on a list": lambda N: N([1], _table(), WHERE, None).get([1]),
    "2**63 and -2**63": lambda N: (N([1], _table(), WHERE, None).at(2**63), N([1], _table(), WHERE, None).at(-(2**63)))[1],
    "no table": lambda N: N({"a": 1}, None, WHERE, None).get("a"),
    "marks by id in no dict": lambda N: N(MAPPING, _table(maps=_Lookup({id(MAPPING): {"a": (KEY_MARK, VALUE_MARK, "'", None)}})), WHERE, None).get("a"),
    "entries in no dict": lambda N: N(MAPPING, _table(maps={id(MAPPING): _Lookup({"a": (KEY_MARK, VALUE_MARK, "'", None)})}), WHERE, None).get("a"),
    "an entry as a list": lambda N: N(MAPPING, _table(maps={id(MAPPING): {"a": [KEY_MARK, VALUE_MARK, "'", None]}}), WHERE, None).get("a"),
    "an entry too short": lambda N: N(MAPPING, _table(maps={id(MAPPING): {"a": (KEY_MARK, VALUE_MARK, "'")}}), WHERE, None).get("a"),
    "an entry that is a number": lambda N: N(MAPPING, _table(maps={id(MAPPING): {"a": 7}}), WHERE, None).get("a"),
    "items as a tuple": lambda N: N(ITEMS, _table(seqs={id(ITEMS): ((VALUE_MARK, '"', None),)}), WHERE, None).at(0),
    "an item entry too short": lambda N: N(ITEMS, _table(seqs={id(ITEMS): [(VALUE_MARK, '"')]}), WHERE, None).at(0),
    "an item entry of None": lambda N: N(ITEMS, _table(seqs={id(ITEMS): [None]}), WHERE, None).at(0),
    "keywords": lambda N: N(value={"a": 1}, table=_table(), pos=WHERE, key_pos=None, exists=False).get("a"),
}


def outcome(step: Any, make: Any) -> tuple[Any, ...]:
    try:
        node = step(make)
    except Exception as err:
        return ("raised", type(err))
    return ("node", node.value, node.style, node.raw, node.exists, id(node._mark), id(node._key_mark), node._pos, node._key_pos)


@pytest.mark.parametrize("name", sorted(ODD_STEPS))
def test_an_odd_step_comes_out_as_the_python_core_makes_it(name):
    assert outcome(ODD_STEPS[name], document.Node) == outcome(ODD_STEPS[name], PyNode)


@pytest.mark.parametrize("make", ["c", "python"])
def test_a_deleted_field_is_an_attribute_error(make):
    node = (document.Node if make == "c" else PyNode)({"a": 1}, _table(), WHERE, None)
    del node.value
    with pytest.raises(AttributeError):
        node.get("a")
    with pytest.raises(AttributeError):
        node.at(0)


def meddled_step(Make: Any) -> Any:
    """A step whose key's comparison, run in the middle of the step, empties the table's marks and
    drops the node's mapping: what the step already read must stay alive."""
    table = _table()

    class Meddling(str):
        def __hash__(self) -> int:
            return hash(str(self))

        def __eq__(self, other: object) -> bool:
            table.raw_maps = {}
            node.value = None
            return str.__eq__(self, other)

    mapping = {"a": [1, 2, 3]}
    table.raw_maps = {id(mapping): {"a": (KEY_MARK, VALUE_MARK, None, None)}}
    node = Make(mapping, table, WHERE, None)
    del mapping
    return node.get(Meddling("a"))


def test_python_code_that_changes_the_node_or_its_table_mid_step_changes_nothing_already_read():
    assert meddled_step(document.Node).value == [1, 2, 3]
    assert outcome(meddled_step, document.Node) == outcome(meddled_step, PyNode)
