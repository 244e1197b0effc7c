"""meshlint's YAML 1.1 table for plain scalars (meshlint/source/yaml11.py) is ruamel.yaml's for
version 1.1, written out so that reading YAML imports no ruamel: the two must resolve alike."""

import pytest
from ruamel.yaml.resolver import implicit_resolvers

from meshlint.source.yaml11 import resolve_plain

_KIND = {bool: "bool", int: "int", float: "float", type(None): "null", str: "str"}
SCALARS = [
    "yes", "No", "ON", "off", "y", "n", "true", "False", "maybe", "yess",
    "0400", "0o400", "0x1F", "0b101", "1_000", "-42", "+7", "1:30", "190:20:30", "08", "0",
    "1.5", "1.5e3", "1e3", "-.inf", ".NaN", ".5", "1:30.5", "1.2.3", "6.0.4",
    "~", "null", "NULL", "Null", "nul", "", "<<", "=", "2024-01-01", "http://x:80", "-", ".",
]


def _ruamel_kind(text: str) -> str:
    for versions, tag, regexp, first in implicit_resolvers:
        if (1, 1) in versions and (first is None or text[:1] in first) and regexp.match(text):
            suffix = str(tag).rsplit(":", 1)[-1]
            return suffix if suffix in ("bool", "int", "float", "null", "merge") else "str"
    return "null" if text == "" else "str"


@pytest.mark.parametrize("text", SCALARS)
def test_a_plain_scalar_resolves_as_ruamel_yaml_resolves_it_under_yaml_1_1(text):
    value = resolve_plain(text)
    ours = "merge" if text == "<<" else _KIND[type(value)]
    assert ours == _ruamel_kind(text)

