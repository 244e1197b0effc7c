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



# Timestamps and `=` stay text in meshlint (Kubernetes reads them as strings); `-` alone is no scalar.
NOT_COMPARED = {"<<", "", "=", "-", "2024-01-01"}


@pytest.mark.parametrize("text", [s for s in SCALARS if s not in NOT_COMPARED])
def test_a_plain_scalar_has_the_value_ruamel_yamls_1_1_loader_gives_it(text):
    import math
    import warnings

    from ruamel.yaml import YAML

    loader = YAML(typ="safe", pure=True)
    loader.version = (1, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ruamel warns about 1.1 floats without a dot (`1e3`)
        theirs = loader.load(f"%YAML 1.1\n---\nv: {text}\n")["v"]
    ours = resolve_plain(text)
    assert type(ours) is type(theirs)
    assert ours == theirs or (isinstance(ours, float) and math.isnan(ours) and math.isnan(theirs))


def test_the_letter_words_are_every_non_string_a_letter_starts():
    # A reader takes any other plain scalar that starts with a letter as a string without matching:
    # each word must resolve, and every other text a letter starts (all up to four characters over
    # the letters the words use and a few others, and each word with a letter or mark added or cut
    # off) must stay a string.
    import itertools

    from meshlint.source.yaml11 import letter_words

    words = letter_words()
    assert {"yes", "No", "OFF", "null", "NULL", "y", "True"} <= words and len(words) == 25
    assert all(not isinstance(resolve_plain(word), str) for word in words)
    alphabet = sorted(set("".join(words)) | set("aZx-_ .1"))
    texts = {"".join(p) for n in range(1, 5) for p in itertools.product(alphabet, repeat=n)}
    texts |= {w + extra for w in words for extra in ("s", "e", "-", "_", " x", ".", "1", ":")} | {w[:-1] for w in words} | {w[1:] for w in words}
    stays = [t for t in texts if t[:1].isalpha() and t not in words]
    assert len(stays) > 100_000
    assert [t for t in stays if not isinstance(resolve_plain(t), str)] == []
