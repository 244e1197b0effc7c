"""An effective value and where it came from: the unit every mesh-context fact is made of."""

from __future__ import annotations

from typing import Any, NamedTuple

from meshlint.document import Node
from meshlint.findings import Position


class Setting(NamedTuple):
    """An effective value and where it came from; `origin` None means Istio's or Kubernetes' default."""

    value: Any
    origin: Position | None = None
    note: str = ""
    local: bool = False  # read from the workload's own manifest, so a finding can point at it

    @property
    def where(self) -> str:
        if self.origin is not None:
            return f"{self.origin.path}:{self.origin.line}"
        return self.note or "default"

    @classmethod
    def of(cls, node: Node, value: Any = None, local: bool = False) -> "Setting":
        return cls(node.value if value is None else value, node.pos, local=local)
