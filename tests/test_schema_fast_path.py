"""The quick schema check that keeps jsonschema out of start-up never accepts what jsonschema rejects."""

from __future__ import annotations

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from meshlint.config import config_schema
from meshlint.mesh.facts import proxyconfig
from meshlint.schemas import fits

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 70000), st.floats(allow_nan=False), st.text(max_size=8),
                    st.sampled_from(["1.30", "v1.27.1", "5s", "1m30s", "true", "error", "warning", "enabled", "ML101", "REDIRECT", "stable-2.14.10", "edge-24.6.2", "2.20"]))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)), max_leaves=8)
CONFIG_KEYS = st.sampled_from(["select", "ignore", "severity", "fail-on", "format", "exclude", "kubernetes-version",
                               "istio-version", "linkerd-version", "mesh", "rules", "unknown"])
MESH_KEYS = st.sampled_from(["context", "default-injection", "injected-namespaces", "root-namespace", "other"])


@st.composite
def configs(draw):
    raw = draw(st.dictionaries(CONFIG_KEYS, VALUES, max_size=4))
    if draw(st.booleans()):
        raw["mesh"] = draw(st.dictionaries(MESH_KEYS, VALUES, max_size=3))
    return raw


@settings(max_examples=300, deadline=None)
@given(raw=configs())
def test_config_fast_path_agrees_with_jsonschema(raw):
    schema = config_schema()
    valid = jsonschema.validators.validator_for(schema)(schema).is_valid(raw)
    assert fits(raw, schema) == valid


FIELDS = st.sampled_from(sorted(proxyconfig.field_names()))


@settings(max_examples=300, deadline=None)
@given(body=st.dictionaries(FIELDS, VALUES, max_size=3))
def test_proxyconfig_fast_path_never_accepts_what_jsonschema_rejects(body):
    schema = proxyconfig.schema()
    valid = jsonschema.validators.validator_for(schema)(schema).is_valid(body)
    if fits(body, schema):
        assert valid
