"""YAML read the way Kubernetes reads it: ruamel.yaml's C parser with the YAML 1.1 scalar rules.

`0400` is octal 256, `yes`/`on` are booleans, `1:30` is sexagesimal. Tags are never constructed into
objects: an unknown or unsafe tag (`!!python/object`) is read as the plain value its node holds.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import re

_TAG = "tag:yaml.org,2002:"
_TRUE = frozenset(("yes", "true", "on", "y"))

_loader_classes: dict[bool, Any] = {}


def compose_all(text: str, pure: bool = False) -> Iterator[Any]:
    """The composer's nodes for each document of `text`, read as YAML 1.1: libyaml's C parser, or with
    `pure` ruamel.yaml's Python one, which accepts what YAML allows and libyaml does not (a `:` inside a
    plain scalar of a flow collection, `[host:8080/ready]`), as Kubernetes' own YAML reader does.

    One loader per text, with no reference back to itself: ruamel.yaml's own `YAML.compose_all`
    builds a loader class per call whose instance refers to itself, so its C buffers wait for the
    cyclic garbage collector, and a run over a big tree grows by the size of the tree.
    """
    loader_class = _loader_classes.get(pure)
    if loader_class is None:
        loader_class = _loader_classes[pure] = _make_loader_class(pure)
    loader = loader_class(text)
    try:
        while loader.check_node():
            yield loader.get_node()
    finally:
        loader.dispose()


def _make_loader_class(pure: bool) -> Any:
    """A parser with a resolver that has its YAML 1.1 table looked up once.

    The stock `resolve` asks which YAML version the document declares for each scalar it sees, which
    costs more than composing the scalar; meshlint reads every document as YAML 1.1, as Kubernetes does.
    """
    from ruamel.yaml.nodes import ScalarNode
    from ruamel.yaml.resolver import VersionedResolver, implicit_resolvers
    from ruamel.yaml.tag import Tag

    parser = _pure_parser() if pure else _c_parser()

    table: dict[Any, list[tuple[str, Any]]] = {}
    for versions, tag, regexp, first in implicit_resolvers:
        if (1, 1) in versions:
            for char in first if first is not None else [None]:
                table.setdefault(char, []).append((tag, regexp))
    tags: dict[str, Any] = {}

    class Loader11(parser, VersionedResolver):  # type: ignore[misc,valid-type]
        def __init__(self, text: str) -> None:
            parser.__init__(self, text)
            VersionedResolver.__init__(self, version=(1, 1), loader=None if not pure else self)

        def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
            if kind is ScalarNode and implicit[0]:
                for tag, regexp in (*table.get(value[:1], ()), *table.get(None, ())):
                    if regexp.match(value):
                        cached = tags.get(tag)
                        if cached is None:
                            cached = tags[tag] = Tag(suffix=tag)
                        return cached
            return VersionedResolver.resolve(self, kind, value, (False, False))

    return Loader11


def _c_parser() -> Any:
    from ruamel.yaml import CParser  # type: ignore[attr-defined]  # the C extension, untyped

    return CParser


def _pure_parser() -> Any:
    from ruamel.yaml.composer import Composer
    from ruamel.yaml.parser import Parser
    from ruamel.yaml.reader import Reader
    from ruamel.yaml.scanner import Scanner

    class PureParser(Reader, Scanner, Parser, Composer):
        max_depth = None  # meshlint bounds depth itself (syntax.MAX_DEPTH)
        comment_handling = None

        def __init__(self, text: str) -> None:
            Reader.__init__(self, text, loader=self)
            Scanner.__init__(self, loader=self)
            Parser.__init__(self, loader=self)
            Composer.__init__(self, loader=self)

    return PureParser


def node_tag(node: Any) -> str:
    """The node's tag as text; resolved tags (no handle) skip ruamel.yaml's slower conversion."""
    ctag = node.ctag
    if ctag is None:
        return ""
    return str(ctag.suffix if ctag.handle is None else str(ctag))


def scalar_value(node: Any) -> Any:
    """A scalar node's value as Kubernetes reads it."""
    return scalar_of(node_tag(node), node.value)


# YAML 1.1's implicit types for plain scalars, by the first characters each can start with: the table
# ruamel.yaml's resolver holds for version (1, 1), written out so that reading YAML imports no ruamel
# (tests/test_yaml11.py holds the two equal). Timestamps, `=` and `!&*` stay text, as they do there.
_IMPLICIT = (
    ("bool", "yYnNtTfFoO", r"""^(?:y|Y|yes|Yes|YES|n|N|no|No|NO
        |true|True|TRUE|false|False|FALSE
        |on|On|ON|off|Off|OFF)$"""),
    ("float", "-+0123456789.", r"""^(?:
         [-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
        |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
        |\.[0-9_]+(?:[eE][-+][0-9]+)?
        |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*  # sexagesimal float
        |[-+]?\.(?:inf|Inf|INF)
        |\.(?:nan|NaN|NAN))$"""),
    ("int", "-+0123456789", r"""^(?:[-+]?0b[0-1_]+
        |[-+]?0?[0-7_]+
        |[-+]?(?:0|[1-9][0-9_]*)
        |[-+]?0x[0-9a-fA-F_]+
        |[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$"""),
    ("merge", "<", r"""^(?:<<)$"""),
    ("null", "~nN", r"""^(?: ~
        |null|Null|NULL
        | )$"""),
)


class _Implicit:
    """One implicit type's pattern, compiled the first time a scalar could be of that type: most runs
    meet booleans, few meet floats, and compiling all five would slow every pre-commit run's start."""

    __slots__ = ("_regexp", "kind", "pattern")

    def __init__(self, kind: str, pattern: str) -> None:
        self.kind, self.pattern = kind, pattern
        self._regexp: re.Pattern[str] | None = None

    def match(self, text: str) -> bool:
        if self._regexp is None:
            import re

            self._regexp = re.compile(self.pattern, re.X)
        return self._regexp.match(text) is not None


def _table() -> dict[str, list[_Implicit]]:
    table: dict[str, list[_Implicit]] = {}
    for kind, firsts, pattern in _IMPLICIT:
        entry = _Implicit(kind, pattern)
        for char in firsts:
            table.setdefault(char, []).append(entry)
    table[""] = [_Implicit("null", r"^$")]  # an empty plain scalar (`key:`) is null
    return table


_BY_FIRST = _table()
_FIRSTS = frozenset(_BY_FIRST)


def resolve_plain(text: str) -> Any:
    """A plain (unquoted, untagged) scalar's value under YAML 1.1."""
    for entry in _BY_FIRST.get(text[:1], ()):
        if entry.match(text):
            return _VALUE[entry.kind](text)
    return text


def implicit_first_characters() -> frozenset[str]:
    """The characters a plain scalar of some other type than string can start with ("" for empty)."""
    return _FIRSTS


@lru_cache(maxsize=1)
def letter_words() -> frozenset[str]:
    """Every plain scalar that starts with a letter and is not a string. The only implicit types a
    letter can start (booleans and null) are lists of words in their patterns, read off here, so a
    reader can tell `team-1` or `Namespace` from `true` without a regex match."""
    words: set[str] = set()
    for _, firsts, pattern in _IMPLICIT:
        if any(char.isalpha() for char in firsts):
            body = "".join(pattern.split())  # the patterns are verbose: spaces and line breaks are layout
            words.update(word for word in body.removeprefix("^(?:").removesuffix(")$").split("|") if word[:1].isalpha())
    return frozenset(words)  # tests/test_yaml11.py: each resolves, and nothing else a letter starts does


def scalar_of(tag: str, text: str) -> Any:
    """A scalar's value as Kubernetes reads it, from its (resolved or explicit) tag and its text."""
    if not tag.startswith(_TAG):
        return text
    kind = tag[len(_TAG):]
    if kind == "str":
        return text
    if kind == "null":
        return None
    if kind == "bool":
        return text.lower() in _TRUE
    if kind == "int":
        return _int11(text)
    if kind == "float":
        return _float11(text)
    return text  # timestamps, binary and anything else stay as written



def _int11(text: str) -> Any:
    body = text.replace("_", "")
    sign = -1 if body.startswith("-") else 1
    body = body.lstrip("+-")
    try:
        if body.startswith(("0b", "0B")):
            return sign * int(body[2:], 2)
        if body.startswith(("0x", "0X")):
            return sign * int(body[2:], 16)
        if body.startswith(("0o", "0O")):
            return sign * int(body[2:], 8)
        if ":" in body:
            total = 0
            for part in body.split(":"):
                total = total * 60 + int(part)
            return sign * total
        if len(body) > 1 and body.startswith("0"):
            return sign * int(body, 8)
        return sign * int(body)
    except ValueError:
        return text


def _float11(text: str) -> Any:
    body = text.replace("_", "").lower()
    if body in (".nan",):
        return math.nan
    if body.lstrip("+-") == ".inf":
        return -math.inf if body.startswith("-") else math.inf
    try:
        if ":" in body:
            sign = -1.0 if body.startswith("-") else 1.0
            total = 0.0
            for part in body.lstrip("+-").split(":"):
                total = total * 60 + float(part)
            return sign * total
        return float(body)
    except ValueError:
        return text


_VALUE: dict[str, Any] = {
    "bool": lambda text: text.lower() in _TRUE,
    "float": _float11,
    "int": _int11,
    "merge": lambda text: text,
    "null": lambda text: None,
}
