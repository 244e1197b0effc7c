"""The reader interface (meshlint/source/readers/): every reader has the same three names, the chain
ends with the plain reader, and a reader that leaves a text has appended nothing. That the readers
read alike is tests/test_loader_parity.py's."""

from __future__ import annotations

import inspect

import pytest

from meshlint.source import readers
from meshlint.source.readers import events, native, plain
from meshlint.source.readers.interface import Target, Unread


@pytest.mark.parametrize("name", readers.CHAIN)
def test_each_reader_has_the_interface(name):
    reader = readers.reader(name)
    assert isinstance(reader.NAME, str) and reader.NAME
    assert list(inspect.signature(reader.read).parameters) == ["text", "target"]
    assert list(inspect.signature(reader.available).parameters) == []


def test_the_chain_tries_the_fastest_first_and_ends_with_the_reference():
    assert [readers.reader(name) for name in readers.CHAIN] == [native, events, plain]
    assert readers.PURE == ("plain",) and plain.available()


@pytest.mark.skipif(not native.available(), reason="the C reader is not built here")
def test_a_reader_that_leaves_a_text_has_appended_nothing():
    target = Target([], [], "f.yaml", ["a: &x 1", "b: *x"], 0, 0, None, None, False)
    with pytest.raises(Unread):
        native.read("a: &x 1\nb: *x\n", target)  # an anchor: the C reader leaves it
    assert (target.documents, target.problems, target.index) == ([], [], 0)
    assert readers.read(target.documents, target.problems, "a: &x 1\nb: *x\n", "f.yaml", ["a: &x 1", "b: *x"]) == 1
    assert target.documents[0].data == {"a": 1, "b": 1}
