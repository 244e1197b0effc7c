"""A run's first pass (its mesh context, engine/firstpass.py `ContextPass.kept`) as plain JSON, and back.

Like a kept result (engine/keptresult.py), a kept first pass is data only: each part of the mesh
context has a shape here, which writes exactly the types it knows (anything else: `Unkeepable`, and
the first pass is not kept) and reads back only what has that shape, field by field (anything else:
None, and the tree is read again). The context's options are not kept: they are the run's
own config, which the first pass's key covers.
"""

from __future__ import annotations

import json
from typing import Any

from meshlint.engine.shapes import (
    BOOL,
    CLAIM,
    INT,
    MAYBE_POSITION,
    MAYBE_SETTING,
    MAYBE_STR,
    PLACE,
    PLAIN,
    POSITION,
    SETTING,
    STR,
    Many,
    Mapping,
    Maybe,
    Record,
    Shape,
    Unkeepable,
    fields,
)
from meshlint.mesh.context import MeshContext
from meshlint.mesh.contextfacts import LinkerdServer, OptedOut, PeerAuthentication, RevisionTag, ServiceTargets
from meshlint.mesh.envsources import EnvKey, EnvSource, EnvSources
from meshlint.mesh.injection import Namespace
from meshlint.mesh.options import MeshOptions
from meshlint.mesh.sidecars import EgressListener, SidecarConfig
from meshlint.source.document import Node
from meshlint.source.positions import PositionTable, empty_table

BLOCK_STYLES = ("|", ">")


class NodeShape(Shape):
    """A scalar the context keeps (`Node.detached`): its value and positions, and for a block scalar the
    lines a place inside it is found from. A node of any other table is not kept."""

    def out(self, value: Any) -> Any:
        if value.__class__ is not Node:
            raise Unkeepable
        table = value.table
        if table.__class__ is not PositionTable or table._place is not None or table.raw_maps or table.raw_seqs or table.raw_starts or table.roots or table.kept:
            raise Unkeepable
        block = value.style in BLOCK_STYLES
        lines = LINES.out(table.lines) if block else None
        return [
            PLAIN.out(value.value), STR.out(table.path), INT.out(table._offset), lines, POSITION.out(value.pos), MAYBE_POSITION.out(value.key_pos),
            MAYBE_STR.out(value.style), MAYBE_STR.out(value.raw), BOOL.out(value.exists),
        ]

    def back(self, data: Any) -> Any:
        value, path, offset, lines, pos, key_pos, style, raw, exists = fields(data, 9)
        style = MAYBE_STR.back(style)
        if style in BLOCK_STYLES:
            table = PositionTable(STR.back(path), LINES.back(lines), INT.back(offset) - 1, None)
        else:
            table = empty_table(STR.back(path), INT.back(offset) - 1, None)
        return Node(PLAIN.back(value), table, POSITION.back(pos), MAYBE_POSITION.back(key_pos), style, MAYBE_STR.back(raw), BOOL.back(exists))


LINES = Many(STR)
NODE = NodeShape()
LABELS = Maybe(Mapping(STR, STR))
NAMESPACE = Record(Namespace, STR, Mapping(STR, NODE), Mapping(STR, NODE), MAYBE_POSITION)
SERVICE = Record(
    ServiceTargets, STR, STR, Many(Record(tuple, STR, MAYBE_STR), tuple), STR, Many(Record(tuple, PLAIN, INT, INT), tuple), INT, INT,
    Many(INT, tuple),
)
OPTED_OUT = Record(OptedOut, STR, Mapping(STR, STR))
PEER_AUTHENTICATION = Record(PeerAuthentication, STR, LABELS, MAYBE_SETTING, Mapping(INT, SETTING), PLACE, POSITION, STR)
SIDECAR = Record(
    SidecarConfig, STR, STR, LABELS, MAYBE_POSITION, Many(Record(EgressListener, Maybe(INT), Many(SETTING, tuple)), tuple), MAYBE_SETTING,
    PLACE, POSITION,
)
LINKERD_SERVER = Record(LinkerdServer, STR, STR, LABELS, PLAIN, POSITION)
REVISION_TAG = Record(RevisionTag, STR, STR, POSITION)
ENV_SOURCE = Record(EnvSource, STR, STR, STR, STR, Many(Record(EnvKey, STR, POSITION, MAYBE_STR, MAYBE_POSITION), tuple))

# Every attribute of a MeshContext, with its shape; None: a table made on demand, left empty. A context
# with an attribute not listed here (one added since) is not kept, rather than kept without it.
MESH_PARTS: dict[str, Shape | None] = {
    "options": None,  # the run's own
    "istio_in_use": MAYBE_SETTING,
    "signs": Mapping(STR, Record(tuple, PLACE, SETTING)),
    "units": None,  # the run's own, set once its files are known
    "_sign_memo": None,
    "_sign_index": None,
    "_places": None,
    "_signed_folders": None,  # what the first pass may skip: of no use once it is over
    "_scan": None,
    "claims": Mapping(Record(tuple, STR, STR), Many(CLAIM)),
    "namespaces": Mapping(STR, Many(Record(tuple, NAMESPACE, PLACE))),
    "peer_authentications": Many(PEER_AUTHENTICATION),
    "sidecars": Many(SIDECAR),
    "services": Mapping(STR, Many(SERVICE)),
    "_indexed": None,
    "linkerd_servers": Mapping(STR, Many(LINKERD_SERVER)),
    "opted_out": Mapping(STR, Many(Record(tuple, OPTED_OUT, STR))),
    "revisions": Mapping(STR, POSITION),
    "tags": Mapping(STR, REVISION_TAG),
    "injection_templates": Mapping(STR, STR),
    "webhook_services": Many(Record(tuple, STR, STR), set),
    "_settings": None,
    "_claim_files": None,
    "env_sources": None,  # below: its one table
}
ENV_SOURCES = Mapping(Record(tuple, STR, STR), Many(ENV_SOURCE))
STRINGS = Many(STR, set)
# The parts of `ContextPass.kept` besides the mesh context, with their shapes.
PASS_PARTS: dict[str, Shape] = {
    "as_input": Mapping(STR, STR),
    "placed": Many(Record(tuple, STR, STR), set),
    "configs_done": INT,
    "read_files": STRINGS,
    "context_reals": STRINGS,
    "facts": STR,
}


def encode(kept: dict[str, Any]) -> bytes | None:
    """A first pass as one line of ASCII JSON, or None when it holds anything this format does not spell."""
    mesh = kept["mesh"]
    try:
        if kept["broken"] or mesh.__class__ is not MeshContext or set(vars(mesh)) != set(MESH_PARTS) or set(vars(mesh.env_sources)) != {"_by_name"}:
            raise Unkeepable
        parts = {name: shape.out(getattr(mesh, name)) for name, shape in MESH_PARTS.items() if shape is not None}
        parts["env_sources"] = ENV_SOURCES.out(mesh.env_sources._by_name)
        body = [parts, {name: shape.out(kept[name]) for name, shape in PASS_PARTS.items()}]
    except Unkeepable:
        return None
    return json.dumps(body, separators=(",", ":"), allow_nan=False).encode()


def decode(data: bytes, options: MeshOptions) -> dict[str, Any] | None:
    """What `encode` wrote, with the run's `options`; None for anything else."""
    try:
        parts, rest = fields(json.loads(data), 2)
        if parts.__class__ is not dict or rest.__class__ is not dict:
            raise ValueError("not a kept first pass")
        mesh = MeshContext(options=options)
        for name, shape in MESH_PARTS.items():
            if shape is not None:
                setattr(mesh, name, shape.back(parts[name]))
        mesh.env_sources = EnvSources()
        mesh.env_sources._by_name = ENV_SOURCES.back(parts["env_sources"])
        kept = {name: shape.back(rest[name]) for name, shape in PASS_PARTS.items()}
    except (ValueError, TypeError, KeyError, RecursionError):  # JSON's own errors, a part missing or of another shape
        return None
    return {"mesh": mesh, "broken": [], **kept}
