"""meshlint's cached_property: computed on the first read only, then an ordinary attribute."""

from __future__ import annotations

import pickle

from meshlint.memo import cached_property


class Counted:
    reads = 0

    @cached_property
    def fact(self) -> list[int]:
        """A fact worked out once."""
        Counted.reads += 1
        return [Counted.reads]


def test_computes_once_per_object_and_keeps_the_value_in_the_object() -> None:
    Counted.reads = 0
    one, two = Counted(), Counted()
    assert one.fact is one.fact
    assert one.fact == [1]
    assert two.fact == [2]
    assert Counted.reads == 2
    assert vars(one) == {"fact": [1]}


def test_the_class_attribute_is_the_descriptor_with_the_function_s_doc() -> None:
    descriptor = Counted.fact
    assert isinstance(descriptor, cached_property)
    assert descriptor.__doc__ == "A fact worked out once."


def test_a_cached_value_travels_with_its_object() -> None:
    Counted.reads = 0
    original = Counted()
    _ = original.fact
    copy = pickle.loads(pickle.dumps(original))
    assert copy.fact == [1]
    assert Counted.reads == 1
