"""`cached_property` without the lock that functools' takes in Python 3.11 on every first read.

A check reads a great many cached facts in a big tree, each once per object, and taking the lock
(dropped from functools in 3.12) for each weighed on a `--jobs 1` run. meshlint's objects are never
shared between threads, so the first read computes the fact and puts it in the instance's
`__dict__`, where every later read finds it without calling this descriptor at all (it defines no
`__set__`, so the instance's own attribute comes first). Unlike functools', it fails with an
AttributeError (not a TypeError) on a class with `__slots__` and no `__dict__`, it does not refuse one
descriptor under two names, and a read through `super()` works the value out again: meshlint's
cached facts meet none of these.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")


class cached_property(Generic[T]):

    def __init__(self, func: Callable[[Any], T]) -> None:
        self.func = func
        self.name = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type[Any] | None = None) -> cached_property[T]: ...
    @overload
    def __get__(self, instance: object, owner: type[Any] | None = None) -> T: ...
    def __get__(self, instance: object, owner: type[Any] | None = None) -> Any:
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.func(instance)
        return value
