"""Shapes of plain data: how a value meshlint keeps between runs is written as JSON, and read back.

A shape writes exactly the types it knows (`out`; anything else raises `Unkeepable`, and the value is
not kept) and reads back only data of its own shape (`back`; anything else raises ValueError or
TypeError, and the reader takes it as a miss). Reading builds nothing but the values named
here: no class is ever looked up from the data.
"""

from __future__ import annotations

import math
from typing import Any

from meshlint.findings import Position
from meshlint.mesh.scope import Claim, Conflict, Place
from meshlint.mesh.setting import Setting


class Unkeepable(Exception):
    """A value holding what this format cannot give back exactly."""


def write_value(value: Any) -> Any:
    """A value as YAML gave it: scalars as they are, containers tagged so that a tuple stays a tuple
    and a mapping keeps keys that are not strings."""
    kind = value.__class__
    if value is None or kind in (str, int, bool):
        return value
    if kind is float:
        if not math.isfinite(value):
            raise Unkeepable  # JSON has no spelling for them
        return value
    if kind is list:
        return {"l": [write_value(v) for v in value]}
    if kind is tuple:
        return {"t": [write_value(v) for v in value]}
    if kind is dict:
        return {"d": [[write_value(k), write_value(v)] for k, v in value.items()]}
    raise Unkeepable


def read_value(value: Any) -> Any:
    kind = value.__class__
    if value is None or kind in (str, int, bool, float):
        return value
    if kind is not dict or len(value) != 1:
        raise ValueError("not a kept value")
    ((tag, items),) = value.items()
    if tag == "l":
        return [read_value(v) for v in fields(items)]
    if tag == "t":
        return tuple(read_value(v) for v in fields(items))
    if tag == "d":
        mapping = {}
        for pair in fields(items):
            key, item = fields(pair, 2)
            mapping[read_value(key)] = read_value(item)  # an unhashable key: TypeError, unreadable
        return mapping
    raise ValueError("not a kept value")


def fields(data: Any, count: int | None = None) -> list[Any]:
    """A JSON list (of `count` items, when given)."""
    if data.__class__ is not list:
        raise ValueError("not a list")
    if count is not None and len(data) != count:
        raise ValueError(f"{len(data)} fields, not {count}")
    return list(data)


class Shape:
    """How one kind of value is written (`out`) and read back (`back`, which raises ValueError)."""

    def out(self, value: Any) -> Any:
        raise NotImplementedError

    def back(self, data: Any) -> Any:
        raise NotImplementedError


class Exactly(Shape):
    """A str, int or bool, and nothing else (a bool is no int here)."""

    def __init__(self, kind: type) -> None:
        self.kind: Any = kind

    def out(self, value: Any) -> Any:
        if value.__class__ is not self.kind:
            raise Unkeepable
        return value

    def back(self, data: Any) -> Any:
        if data.__class__ is not self.kind:
            raise ValueError(f"not a {self.kind.__name__}")
        return data


class Maybe(Shape):
    def __init__(self, shape: Shape) -> None:
        self.shape = shape

    def out(self, value: Any) -> Any:
        return None if value is None else self.shape.out(value)

    def back(self, data: Any) -> Any:
        return None if data is None else self.shape.back(data)


class Plain(Shape):
    """A value as YAML gave it (`write_value`)."""

    def out(self, value: Any) -> Any:
        return write_value(value)

    def back(self, data: Any) -> Any:
        return read_value(data)


class Many(Shape):
    """A list, tuple or set of one shape, written as a list (a set in its own order: it has no other)."""

    def __init__(self, shape: Shape, kind: type = list) -> None:
        self.shape = shape
        self.kind: Any = kind

    def out(self, value: Any) -> Any:
        if value.__class__ is not self.kind:
            raise Unkeepable
        return [self.shape.out(v) for v in value]

    def back(self, data: Any) -> Any:
        return self.kind(self.shape.back(v) for v in fields(data))


class Mapping(Shape):
    """A dict, written as a list of pairs (keys need not be strings)."""

    def __init__(self, key: Shape, value: Shape) -> None:
        self.key = key
        self.value = value

    def out(self, value: Any) -> Any:
        if value.__class__ is not dict:
            raise Unkeepable
        return [[self.key.out(k), self.value.out(v)] for k, v in value.items()]

    def back(self, data: Any) -> Any:
        mapping = {}
        for pair in fields(data):
            key, value = fields(pair, 2)
            mapping[self.key.back(key)] = self.value.back(value)
        return mapping


class Record(Shape):
    """A tuple of fixed fields: a NamedTuple of exactly this class, or a plain tuple (`kind` tuple)."""

    def __init__(self, kind: type, *fields: Shape) -> None:
        self.kind: Any = kind
        self.fields = fields

    def out(self, value: Any) -> Any:
        if value.__class__ is not self.kind or len(value) != len(self.fields):
            raise Unkeepable  # a class that gained a field since this shape was written, say
        return [shape.out(v) for shape, v in zip(self.fields, value, strict=True)]

    def back(self, data: Any) -> Any:
        values = [shape.back(v) for shape, v in zip(self.fields, fields(data, len(self.fields)), strict=True)]
        return self.kind(*values) if self.kind is not tuple else tuple(values)


class SettingShape(Shape):
    def out(self, value: Any) -> Any:
        if value.__class__ is not Setting:
            raise Unkeepable
        return [PLAIN.out(value.value), MAYBE_POSITION.out(value.origin), STR.out(value.note), BOOL.out(value.local), STR.out(value.revision)]

    def back(self, data: Any) -> Any:
        value, origin, note, local, revision = fields(data, 5)
        return Setting(PLAIN.back(value), MAYBE_POSITION.back(origin), STR.back(note), BOOL.back(local), STR.back(revision))


STR, INT, BOOL = Exactly(str), Exactly(int), Exactly(bool)
MAYBE_STR = Maybe(STR)
PLAIN = Plain()
POSITION = Record(Position, STR, INT, INT)
MAYBE_POSITION = Maybe(POSITION)
PLACE = Record(Place, STR, STR)
SETTING = SettingShape()
MAYBE_SETTING = Maybe(SETTING)
CLAIM = Record(Claim, SETTING, PLACE)
CONFLICT = Record(Conflict, STR, Many(CLAIM, tuple), Maybe(BOOL))
