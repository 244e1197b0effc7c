"""An effective value and where it came from: the unit every mesh-context fact is made of."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from meshlint.findings import Position
from meshlint.source.document import Node

T = TypeVar("T")


class Setting(Generic[T]):
    """An effective value and where it came from; `origin` None means Istio's or Kubernetes' default.
    Treated as immutable (a slotted class: fields are set once, in `__init__`)."""

    __slots__ = ("local", "note", "origin", "revision", "value")

    value: T
    origin: Position | None
    note: str
    local: bool  # read from the workload's own manifest, so a finding can point at it
    revision: str  # the control-plane revision whose source says it; "" for the default revision

    def __init__(
        self,
        value: T,
        origin: Position | None = None,
        note: str = "",
        local: bool = False,
        revision: str = "",
    ) -> None:
        self.value = value
        self.origin = origin
        self.note = note
        self.local = local
        self.revision = revision

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Setting):
            return NotImplemented
        return (self.value, self.origin, self.note, self.local, self.revision) == (other.value, other.origin, other.note, other.local, other.revision)

    __hash__ = None  # type: ignore[assignment]  # equal by value and mutable in principle: unhashable, as a dataclass with eq was

    def __repr__(self) -> str:
        return f"Setting({self.value!r} @ {self.where})"

    @property
    def where(self) -> str:
        if self.origin is not None:
            place = f"{self.origin.path}:{self.origin.line}"
            return f"{place}, revision {self.revision}" if self.revision else place
        return self.note or "default"

    def _with_revision(self, revision: str) -> Setting[T]:
        return Setting(self.value, self.origin, self.note, self.local, revision) if revision else self

    def derived(self, value: Any, note: str | None = None) -> Setting[Any]:
        """Another value read from the same place (a parsed duration, a boolean from its text)."""
        return Setting(value, self.origin, self.note if note is None else note, self.local, self.revision)

    @property
    def cited(self) -> str:
        """The note and where it came from, each once: `ENABLE_NATIVE_SIDECARS=false, values.yaml:4`."""
        if self.origin is None:
            return self.note or "default"
        return f"{self.note}, {self.where}" if self.note else self.where

    @classmethod
    def of(cls, node: Node, value: Any = None, local: bool = False) -> Setting[Any]:
        return cls(node.value if value is None else value, node.pos, local=local)


def origins(*settings: Setting[Any] | None) -> tuple[Position, ...]:
    """Where the given settings were written (the defaults have no place), for `Issue(related=...)`."""
    return tuple(s.origin for s in settings if s is not None and s.origin is not None)
