"""JSON Schemas shipped with meshlint (config file, ProxyConfig)."""

from __future__ import annotations

import json
import os
import re
from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))


def read_schema(name: str) -> dict[str, Any]:
    """A shipped schema by file name; plain file access keeps start-up free of importlib.resources."""
    with open(os.path.join(_HERE, name), encoding="utf-8") as handle:
        schema: dict[str, Any] = json.load(handle)
        return schema


_KNOWN = frozenset(("$schema", "$id", "title", "description", "type", "properties", "additionalProperties",
                    "items", "enum", "pattern", "minLength", "anyOf", "$ref", "$defs"))
_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def fits(value: Any, schema: dict[str, Any], root: dict[str, Any] | None = None) -> bool:
    """True when `value` surely satisfies `schema`, judged on the keywords meshlint's schemas use.

    The quick answer for the common, valid case: importing jsonschema costs more than a pre-commit
    run's whole check. Any keyword not understood here answers False, and jsonschema then decides and
    words the error, so it stays the judge of every value this does not accept.
    """
    root = schema if root is None else root
    if not _KNOWN.issuperset(schema):
        return False
    if "$ref" in schema:
        ref = schema["$ref"]
        return ref.startswith("#/$defs/") and fits(value, root["$defs"][ref[len("#/$defs/"):]], root)
    if not _scalar_fits(value, schema, root):
        return False
    if isinstance(value, list) and "items" in schema:
        return all(fits(item, schema["items"], root) for item in value)
    if isinstance(value, dict):
        return _mapping_fits(value, schema, root)
    return True


def _scalar_fits(value: Any, schema: dict[str, Any], root: dict[str, Any]) -> bool:
    """The keywords that judge a value whatever its shape: type, enum, anyOf, a string's length and pattern."""
    if "type" in schema:
        wanted = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(t in _TYPES and _TYPES[t](value) for t in wanted):
            return False
    if "enum" in schema and not any(value == option and type(value) is type(option) for option in schema["enum"]):
        return False
    if "anyOf" in schema and not any(fits(value, option, root) for option in schema["anyOf"]):
        return False
    return not (isinstance(value, str) and (len(value) < schema.get("minLength", 0) or ("pattern" in schema and not re.search(schema["pattern"], value))))


def _mapping_fits(value: dict[Any, Any], schema: dict[str, Any], root: dict[str, Any]) -> bool:
    properties, extra = schema.get("properties", {}), schema.get("additionalProperties", True)
    for key, item in value.items():
        if key in properties:
            if not fits(item, properties[key], root):
                return False
        elif extra is False or (isinstance(extra, dict) and not fits(item, extra, root)):
            return False
    return True
