"""Edits inside ProxyConfig as written: set a top-level field of a pod's `proxy.istio.io/config` in the
form the annotation is written in (a YAML block, `|`, or one line of JSON or flow YAML, quoted as it
is quoted), and rename a misspelt field to the one it was meant to be.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from meshlint.fix import mapping
from meshlint.fix import text as src
from meshlint.fix.edits import insertion
from meshlint.fix.mapping import Change, Content
from meshlint.mesh.facts import proxyconfig
from meshlint.mesh.facts.proxyconfig import ProxyConfigAnnotation
from meshlint.schemas import fits
from meshlint.source.document import Node

if TYPE_CHECKING:
    from meshlint.mesh.sources import MeshSource


def set_field(annotation: ProxyConfigAnnotation, field: str, value: str) -> Change | None:
    """Set a top-level ProxyConfig field to `value` (YAML/JSON text such as `true`) inside the
    annotation: the field's own value is replaced when it is there (under its JSON or its proto name),
    else the field is added after the others, in the body's own style."""
    host, body = annotation.node, annotation.body
    if body is None or not body.is_map or annotation.problem is not None:
        return None
    current = proxyconfig.normalized_fields(body).get(field)
    touched = frozenset({(host.pos.line, host.pos.column)})
    if host.style == "|":
        change = _in_block(body, field, value, current)
    elif host.style in ('"', "'", None) and "\n" not in (host.text or ""):
        change = _in_one_line(host, body, field, value, current)
    else:
        return None  # folded or multi-line flow: positions inside do not map to the file line by line
    return change._replace(touched=change.touched | touched) if change is not None else None


def _in_block(body: Node, field: str, value: str, current: Node | None) -> Change | None:
    if current is not None:
        return mapping.replace_scalar(current, value) if not isinstance(current.value, (dict, list)) else None
    key = f'"{field}"' if src.is_flow(body) and _json_keys(body) else field
    return mapping.add(body, Content((f"{key}: {value}",), f"{key}: {value}"))


def _in_one_line(host: Node, body: Node, field: str, value: str, current: Node | None) -> Change | None:
    """A one-line annotation holds a flow mapping (JSON, usually): add `, "field": value` before its
    closing brace, escaped as the scalar's quotes need; or rewrite the field's value when the scalar
    has no escapes that would shift positions."""
    if current is not None:
        return mapping.replace_scalar(current, value) if not isinstance(current.value, (dict, list)) else None
    end = src.scalar_end(host)
    text = host.text or ""
    if end is None or not text.rstrip().endswith("}"):
        return None
    line = src.line_text(host, host.pos.line)
    written = line[host.pos.column - 1 : end[1] - 1]
    close = written.rfind("}")
    if close < 0:
        return None
    before = written[:close].rstrip()
    json = bool(re.match(r"\s*\{\s*(\"|\}|$)", text))
    item = f'"{field}": {value}' if json else f"{field}: {value}"
    item = (", " if body.value else "") + item
    escaped = src.in_scalar(item, host.style)
    if escaped is None or not before:
        return None
    column = host.pos.column + len(before)
    return Change((insertion(host.pos.line, column, escaped),), frozenset())


def _json_keys(body: Node) -> bool:
    """The body's keys are written in double quotes, as JSON writes them."""
    first = src.last_entry(body)
    if first is None or first.key_pos is None:
        return True
    return src.line_text(body, first.key_pos.line)[first.key_pos.column - 1 : first.key_pos.column] == '"'


def rename_field(body: Node, key: str, new: str) -> Change | None:
    """Rename the field `key` of a ProxyConfig mapping to `new`, when `new` is not set already (under
    either of its names) and the value is one `new` takes: a rename must not trade a silently ignored
    key for one the injector rejects."""
    value = body.get(key)
    if not value.exists or new in proxyconfig.normalized_fields(body) or not fits({new: value.value}, proxyconfig.schema()):
        return None
    return mapping.rename(body, key, new)


def inside(host: Node, change: Change | None) -> Change | None:
    """A change made inside a string that holds YAML (an annotation, `data.mesh`): the host scalar is
    what the file sees rewritten. Only a literal block (`|`) or a one-line scalar maps positions one to
    one; the edits were checked against the text they replace."""
    if change is None or not (host.style == "|" or "\n" not in (host.text or "")):
        return None
    return change._replace(touched=change.touched | {(host.pos.line, host.pos.column)})


def in_source(source: MeshSource, change: Change | None) -> Change | None:
    """A change made in a mesh source's MeshConfig: an `istio` ConfigMap holds it as YAML text in `data.mesh`."""
    if source.resource.kind != "ConfigMap":
        return change
    return inside(source.resource.root.path("data", "mesh"), change)


def retype_field(body: Node, field: str, host: Node | None = None) -> tuple[Change, bool] | None:
    """A top-level field written with the wrong type, when there is one obvious right spelling: a
    boolean in quotes (`"true"`) without them, which is safe; a bare number for a duration with the
    unit `s` (`20` as `20s`), which is not (the number might have meant another unit). The change, and
    whether it is safe. `host`: the one-line string holding the body, whose quotes an edit must escape."""
    node = proxyconfig.normalized_fields(body).get(field)
    if node is None:
        return None
    declared = proxyconfig.schema()["properties"].get(field, {})
    value = node.value
    if declared.get("type") == ["boolean", "null"] and value in ("true", "false") and node.style in ('"', "'"):
        text, safe = str(value), True
    elif str(declared.get("$ref", "")).endswith("duration") and isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        seconds = f"{src.written(value)}s"
        text, safe = (f'"{seconds}"' if src.is_flow(body) else seconds), False
    else:
        return None
    if host is not None and host.style in ('"', "'"):
        escaped = src.in_scalar(text, host.style)
        if escaped is None:
            return None
        text = escaped
    change = mapping.replace_scalar(node, text)
    return (change, safe) if change is not None else None
