"""ProxyConfig: its field names, how Istio spells and types them, and validation of a parsed body.

The shipped JSON Schema is the one list of fields and JSON types; everything here reads it.
"""

import json
import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple

from meshlint.findings import Position
from meshlint.schemas import fits, read_schema
from meshlint.source.document import Node
from meshlint.source.embedded import parse_embedded
from meshlint.source.syntax import SyntaxProblem

if TYPE_CHECKING:
    import jsonschema


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    return read_schema("proxyconfig.schema.json")


@lru_cache(maxsize=1)
def field_names() -> frozenset[str]:
    return frozenset(schema()["properties"])


def camel_case(key: str) -> str:
    """Istio accepts both the JSON name and the proto name (`hold_application_until_proxy_starts`)."""
    return re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), key) if "_" in key else key


def normalized_fields(body: Node) -> dict[str, Node]:
    """The body's top-level fields by their JSON name; unknown keys are kept under their own name."""
    fields: dict[str, Node] = {}
    for key, node in body.items():
        name = camel_case(str(key))
        fields[name if name in field_names() else str(key)] = node
    return fields


def suggestion(key: str) -> str | None:
    import difflib

    close = difflib.get_close_matches(camel_case(key), sorted(field_names()), n=1, cutoff=0.75)
    return close[0] if close else None


class SchemaProblem(NamedTuple):
    position: Position
    field: str
    message: str
    unknown_key: bool  # True: ignored by Istio (warning); False: rejected by the injector (error)
    suggestion: str | None = None  # for an unknown key: the one field it was probably meant to be


def validate(body: Node) -> list[SchemaProblem]:
    """Type errors (the injector rejects the pod) and unknown keys (Istio ignores them)."""
    problems: list[SchemaProblem] = []
    if not body.is_map:
        return [SchemaProblem(body.pos, "", f"ProxyConfig must be a mapping of fields, not {_json_type(body.value)}", False)]
    fields = normalized_fields(body)
    known = {name: node for name, node in fields.items() if name in field_names()}
    for name, node in fields.items():
        if name not in known:
            hint = suggestion(name)
            tail = f"; did you mean {hint!r}?" if hint else ""
            problems.append(SchemaProblem(node.key_pos or node.pos, name, f"unknown ProxyConfig field {name!r} is silently ignored by Istio{tail}", True, hint))
    if not known:
        return problems
    instance = {name: node.value for name, node in known.items()}
    if fits(instance, schema()):
        return problems
    validator = _validator()
    for error in sorted(validator.iter_errors(instance), key=lambda e: [str(p) for p in e.absolute_path]):
        path = list(error.absolute_path)
        node = body
        if path:
            node = known[path[0]]
            for part in path[1:]:
                node = node.get(part) if node.is_map else node.at(part) if isinstance(part, int) else node
        field = ".".join(str(p) for p in path)
        problems.append(SchemaProblem(node.pos, field, _explain(error, field, node), False))
    return problems


@lru_cache(maxsize=1)
def _validator() -> Any:
    import jsonschema  # only runs that meet a ProxyConfig pay for this import

    return jsonschema.validators.validator_for(schema())(schema())


def _explain(error: "jsonschema.ValidationError", field: str, node: Node) -> str:
    written = node.raw if node.raw is not None else json.dumps(node.value) if not isinstance(node.value, (dict, list)) else _json_type(node.value)
    sub = schema()["properties"].get(field.split(".", maxsplit=1)[0], {})
    expected = _expected(sub, field)
    return f"{field} is {written} ({_json_type(node.value)}), but Istio expects {expected}"


def _expected(sub: dict[str, Any], field: str) -> str:
    ref = sub.get("$ref", "")
    if ref.endswith("duration"):
        return 'a duration string such as "5s" or "1m30s"'
    if ref.endswith("int"):
        return "a number"
    if "." in field and sub.get("additionalProperties", {}).get("type") == "string":
        return 'a string (quote it: "true", "5")'
    types = sub.get("type")
    if types == ["boolean", "null"]:
        return "a boolean (true or false, unquoted)"
    if "anyOf" in sub:
        names = [v for alt in sub["anyOf"] for v in alt.get("enum", [])]
        if names:
            return "one of " + ", ".join(names)
    if types == "object":
        return "a mapping"
    if types == "array":
        return "a list of strings"
    return "a string" if types == "string" else "another type"


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    return "mapping"


class ProxyConfigAnnotation(NamedTuple):
    """A pod template's `proxy.istio.io/config`: its node, its parsed body, or why it did not parse."""

    node: Node
    body: Node | None
    problem: SyntaxProblem | None

    @property
    def problems(self) -> list[SchemaProblem]:
        """Type errors (the injector rejects the pod) and unknown keys (Istio ignores them) of the body."""
        return validate(self.body) if self.body is not None else []


def read_annotation(node: Node) -> ProxyConfigAnnotation:
    parsed = parse_embedded(node)
    return ProxyConfigAnnotation(node, parsed.root, parsed.problem)
