"""Mesh annotations and labels with values that Istio or the API server rejects.

## What it does
Checks the values the Istio injector validates before it injects a pod: the CIDR lists of
`traffic.sidecar.istio.io/includeOutboundIPRanges` and `excludeOutboundIPRanges` (comma-separated,
each with `/len`, no spaces; `*` only in the include list), the port lists of `includeInboundPorts`,
`excludeInboundPorts` and `excludeOutboundPorts` (single ports, no ranges), `status.sidecar.istio.io/port`,
and `sidecar.istio.io/interceptionMode` (`REDIRECT`, `TPROXY` or `NONE`). Also `sidecar.istio.io/inject`
and `sidecar.istio.io/nativeSidecar` values other than `"true"` and `"false"`, and any mesh annotation
or label (an `istio.io` or `linkerd.io` key, or `istio-injection`) whose value is not a string.

## Why is this bad?
The injector refuses a pod with a malformed interception annotation, and its webhook fails closed:
the ReplicaSet or Job simply never gets its pods, and the reason is only in events. An unquoted `true`
or `5432` is not a string, so the API server refuses the whole manifest. Other values of the inject
label are ignored with a warning (the namespace or the default policy then decides), and other values
of `nativeSidecar` mean native to Istio 1.27+ but not to 1.24-1.26.

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    metadata:
      labels:
        sidecar.istio.io/inject: true  # expect: ML404:error
      annotations:
        traffic.sidecar.istio.io/excludeOutboundIPRanges: "10.0.0.0/8, 172.16.0.0/12"  # expect: ML404:error
    spec:
      containers: [{name: api, image: "api:1"}]
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    metadata:
      labels:
        sidecar.istio.io/inject: "true"
      annotations:
        traffic.sidecar.istio.io/excludeOutboundIPRanges: "10.0.0.0/8,172.16.0.0/12"
    spec:
      containers: [{name: api, image: "api:1"}]
```

## References
- istio/istio `pkg/kube/inject/validate.go` (the annotation validators) and `inject.go` ("Injection failed due to invalid annotations")
- https://istio.io/latest/docs/reference/config/annotations/
- https://kubernetes.io/docs/concepts/overview/working-with-objects/annotations/ (values are strings)
"""

from __future__ import annotations

from collections.abc import Iterator

from meshlint.findings import Issue, Severity
from meshlint.mesh.facts.interception import Knob, parse_ports
from meshlint.mesh.istio import INJECT, INTERCEPTION_MODE, INTERCEPTION_MODES, NATIVE_ANNOTATION, STATUS_PORT_ANNOTATION
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.model.resource import Resource
from meshlint.rule import RESOURCE, WORKLOAD, RuleContext, rule
from meshlint.source.document import Node

REJECTED = "the injector rejects the pod, so it is never created"


@rule(
    code="ML404",
    name="invalid-interception-annotation",
    severity=Severity.ERROR,
    scope=(WORKLOAD, RESOURCE),
    kinds=WORKLOAD_KINDS | {"Namespace"},
)
def check(subject: WorkloadView | Resource, ctx: RuleContext) -> Iterator[Issue]:
    resource = subject.owner if isinstance(subject, WorkloadView) else subject
    yield from _not_strings(resource.kind, resource.labels, resource.annotations)
    if not isinstance(subject, WorkloadView):
        return
    template = subject.template
    yield from _not_strings("pod template", template.labels(), template.annotations())
    for item in subject.interception.values():
        where = item.problem_position
        if where is not None and item.knob.kind != "free":
            yield Issue(where, f'{item.knob.annotation} "{item.setting.value}": {item.parsed.problem}; {REJECTED}', _fix(item.knob))
    annotations = {k: v for k, v in template.annotations().items() if isinstance(v.value, str)}
    port = annotations.get(STATUS_PORT_ANNOTATION)
    if port is not None:
        parsed = parse_ports(port.value)
        if parsed.problem is not None or len(parsed.items) != 1:
            problem = parsed.problem or "it must be exactly one port"
            yield Issue(
                port.position_at(parsed.offset),
                f'{STATUS_PORT_ANNOTATION} "{port.value}": {problem}; {REJECTED}',
                'write one port, or "0" to disable the status port',
            )
    mode = annotations.get(INTERCEPTION_MODE)
    if mode is not None and mode.value not in INTERCEPTION_MODES:
        yield Issue(
            mode.pos,
            f'{INTERCEPTION_MODE} "{mode.value}" is not REDIRECT, TPROXY or NONE (upper case); {REJECTED}',
            "write REDIRECT (the default), TPROXY or NONE",
        )
    for where_name, values in (("label", template.labels()), ("annotation", template.annotations())):
        node = values.get(INJECT)
        if node is not None and isinstance(node.value, str) and node.value not in ("true", "false"):
            yield Issue(
                node.pos,
                f'{where_name} {INJECT} is "{node.value}", but Istio reads only "true" or "false": it ignores the value '
                "with a warning and the namespace or the default policy decides",
                'write "true" or "false"',
            )
    native = annotations.get(NATIVE_ANNOTATION)
    if native is not None and native.value not in ("true", "false"):
        yield Issue(
            native.pos,
            f'{NATIVE_ANNOTATION} is "{native.value}": Istio 1.27+ reads any value but "false" as native, '
            'Istio 1.24-1.26 anything but "true" as not native',
            'write "true" or "false"',
        )


def _not_strings(where: str, labels: dict[str, Node], annotations: dict[str, Node]) -> Iterator[Issue]:
    """Mesh labels and annotations whose YAML value is a boolean or a number, not a string."""
    for field, values in (("labels", labels), ("annotations", annotations)):
        for key, node in values.items():
            if ("istio.io/" not in key and "linkerd.io/" not in key and key != "istio-injection") or node.value is None or isinstance(node.value, str):
                continue
            written = node.raw if node.raw is not None else str(node.value)
            kind = "boolean" if isinstance(node.value, bool) else "number" if isinstance(node.value, (int, float)) else "mapping or list"
            yield Issue(
                node.pos,
                f"{where} {field[:-1]} {key} is the {kind} {written}, not a string: the API server rejects the manifest",
                f'quote it: {key}: "{written}"',
            )


def _fix(knob: Knob) -> str:
    if knob.kind == "cidrs":
        return 'write CIDRs with a /length, separated by commas without spaces, e.g. "10.0.0.0/8,172.16.0.0/12"'
    return 'write single ports separated by commas, e.g. "8080,9090"; list each port of a range'


RULE = check
