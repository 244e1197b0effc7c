"""One finding per fact (wave-3 spec V2.5), counted: fixture markers compare sets, so a fact said twice
at one place would pass them. Each case is distilled from the real file it was seen in."""

from __future__ import annotations

from helpers import lint_text

# istio/istio pkg/config/analysis/analyzers/testdata/misannotated.yaml (commit 86c9f01fd735fb01d8192f5bcaf0d424afb7f14c):
# a bare Pod with an invalid annotation, once reported both as a Pod annotation and as a pod template's.
BARE_POD = """apiVersion: v1
kind: Pod
metadata:
  name: invalid-annotations
  annotations:
    # Validation checks this is an int - this should be invalid
    readiness.status.sidecar.istio.io/initialDelaySeconds: bar
    # Validation checks this is an int - this should be valid
    readiness.status.sidecar.istio.io/periodSeconds: "10"
spec:
  containers:
    - name: "foo"
      command: ['curl']
"""


def test_a_bare_pods_invalid_annotation_is_one_finding(tmp_path):
    report = lint_text(tmp_path, BARE_POD, {"mesh": {"default-injection": "enabled"}})
    found = [(f.line, f.column, f.code, str(f.severity), f.message) for f in report.findings if f.code == "ML404"]
    assert found == [(
        7, 60, "ML404", "error",
        'readiness.status.sidecar.istio.io/initialDelaySeconds "bar" is not a whole number of at most 4294967295; the injector rejects the '
        "pod, so it is never created",
    )]
