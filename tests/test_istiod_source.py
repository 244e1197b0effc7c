"""istiod's own Deployment is a mesh-wide source: its `discovery` container's env sets pilot settings
(reference §18.3.4), for the revision its label or name says."""

from __future__ import annotations

import pytest

from meshlint.mesh import istio
from meshlint.mesh.sources import is_mesh_config, mesh_source
from meshlint.model import prefilter
from meshlint.model.resource import resources_of
from meshlint.source.loader import load_text

ISTIOD = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  namespace: istio-system
  labels: {labels}
spec:
  template:
    spec:
      containers:
        - name: {container}
          env:
            - name: ENABLE_NATIVE_SIDECARS
              value: "true"
            - name: POD_NAME
              valueFrom: {{fieldRef: {{fieldPath: metadata.name}}}}
"""


def resource(text):
    (document,) = load_text("istiod.yaml", text).documents
    (found,) = resources_of(document)
    return found


@pytest.mark.parametrize(
    ("name", "labels", "revision"),
    [("istiod", "{}", ""), ("istiod-1-24", "{}", "1-24"), ("istiod-1-24", "{istio.io/rev: canary}", "canary"), ("istiod", "{istio.io/rev: default}", "")],
)
def test_the_discovery_containers_env_for_its_revision(name, labels, revision):
    source = mesh_source(resource(ISTIOD.format(name=name, labels=labels, container="discovery")))
    assert source is not None
    assert (source.revision, {key: node.text for key, node in source.env.items()}) == (revision, {"ENABLE_NATIVE_SIDECARS": "true"})
    assert [(key, setting.value, setting.origin.line) for key, setting in source.claims()] == [("env.ENABLE_NATIVE_SIDECARS", "true", 14)]


def test_another_container_or_deployment_says_nothing():
    assert mesh_source(resource(ISTIOD.format(name="istiod", labels="{}", container="sidecar"))) is None
    other = resource(ISTIOD.format(name="istio-ingressgateway", labels="{}", container="discovery"))
    assert not is_mesh_config(other)
    assert mesh_source(other) is None


def test_the_first_pass_reads_istiod_only_when_its_env_can_say_something():
    text = ISTIOD.format(name="istiod", labels="{}", container="discovery")
    assert prefilter.might_hold_context(text)
    assert not prefilter.might_hold_context(text.replace("ENABLE_NATIVE_SIDECARS", "PILOT_TRACE_SAMPLING"))
    assert not prefilter.might_hold_context(text.replace("name: istiod", "name: web"))
    assert prefilter._PILOT_ENV == istio.NATIVE_ENV
