"""Mesh annotations and labels with values that Istio or the API server rejects.

## What it does
Checks the values the Istio injector validates before it injects a pod: the CIDR lists of
`traffic.sidecar.istio.io/includeOutboundIPRanges` and `excludeOutboundIPRanges` (comma-separated,
each with `/len`, no spaces; `*` only in the include list), the port lists of `includeInboundPorts`,
`excludeInboundPorts` and `excludeOutboundPorts` (single ports, no ranges), `status.sidecar.istio.io/port`,
and `sidecar.istio.io/interceptionMode` (`REDIRECT`, `TPROXY` or `NONE`); the interface lists of
`traffic.sidecar.istio.io/excludeInterfaces`, `kubevirtInterfaces` and `istio.io/reroute-virtual-interfaces`
(validated from Istio 1.30: a warning while the version is unknown); the proxy resource annotations
`sidecar.istio.io/proxyCPU`, `proxyMemory`, `proxyCPULimit`, `proxyMemoryLimit` as Kubernetes quantities;
`readiness.status.sidecar.istio.io/*` as whole numbers; `prometheus.istio.io/merge-metrics` as a boolean. Also `sidecar.istio.io/inject`
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
        # meshlint: disable=ML402 -- the node's metadata service is reached outside the mesh, on purpose
        traffic.sidecar.istio.io/excludeOutboundIPRanges: "169.254.169.254/32, 169.254.170.2/32"  # expect: ML404:error
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
        proxy.istio.io/config: '{"holdApplicationUntilProxyStarts": true}'
        # meshlint: disable=ML402 -- the node's metadata service is reached outside the mesh, on purpose
        traffic.sidecar.istio.io/excludeOutboundIPRanges: "169.254.169.254/32,169.254.170.2/32"
    spec:
      containers: [{name: api, image: "api:1"}]
```

## Fix safety
Safe. A value that is not a string is quoted as written (`true` as `"true"`, in the quotes the values
beside it use); a CIDR list loses the spaces around its commas. When the value, once valid, would
send traffic around the sidecar (an exclusion ML402 reports), the fix is left out: the pod would run
with an mTLS bypass that the rejected manifest never had.

## References
- istio/istio `pkg/kube/inject/validate.go` (the annotation validators) and `inject.go` ("Injection failed due to invalid annotations")
- https://istio.io/latest/docs/reference/config/annotations/
- https://kubernetes.io/docs/concepts/overview/working-with-objects/annotations/ (values are strings)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from meshlint import numbers
from meshlint.findings import Issue, Severity, recipe
from meshlint.mesh.facts.interception import Knob, parse, parse_ports
from meshlint.mesh.istio import INJECT, INTERCEPTION_MODE, INTERCEPTION_MODES, NATIVE_ANNOTATION, STATUS_PORT_ANNOTATION
from meshlint.mesh.options import at_least
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import ARGO_WORKFLOW_KINDS, JOBSET, WORKLOAD_KINDS
from meshlint.model.pod import pod_templates
from meshlint.model.resource import Resource
from meshlint.rule import RESOURCE, WORKLOAD, RuleContext, rule
from meshlint.source.document import Node

if TYPE_CHECKING:
    from packaging.version import Version

    from meshlint.fix.edits import Fix

REJECTED = "the injector rejects the pod, so it is never created"


@rule(
    code="ML404",
    name="invalid-interception-annotation",
    severity=Severity.ERROR,
    scope=(WORKLOAD, RESOURCE),
    kinds=WORKLOAD_KINDS | {"Namespace"},
    fix="safe",
)
def check(subject: WorkloadView | Resource, ctx: RuleContext) -> Iterator[Issue]:
    resource = subject.owner if isinstance(subject, WorkloadView) else subject
    if not isinstance(subject, WorkloadView) or _first_pod(subject):  # the resource's own metadata, once
        yield from _not_strings(resource.kind, resource.labels, resource.annotations)
    if not isinstance(subject, WorkloadView):
        return
    template = subject.template
    if template.metadata.pos != resource.metadata.pos:  # a bare Pod's metadata is its template's: said once above
        yield from _not_strings("pod template", template.labels(), template.annotations())
    for item in subject.interception.values():
        where = item.problem_position
        if where is not None and item.knob.kind != "free":
            fix = recipe(_without_spaces, item.node, item.knob) if item.node is not None else None
            yield Issue(where, f'{item.knob.annotation} "{item.setting.value}": {item.parsed.problem}; {REJECTED}', _fix(item.knob), fix=fix)
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
    yield from _validated_values(annotations, subject.options.versions.istio)
    native = annotations.get(NATIVE_ANNOTATION)
    if native is not None and native.value not in ("true", "false"):
        yield Issue(
            native.pos,
            f'{NATIVE_ANNOTATION} is "{native.value}": Istio 1.27+ reads any value but "false" as native, '
            'Istio 1.24-1.26 anything but "true" as not native',
            'write "true" or "false"',
        )


# The injector's other validators (istio/istio pkg/kube/inject/validate.go `AnnotationValidation`), each
# with the first release that applies it (None: long-standing) and what it accepts (reference §18.1 R2/R3).
INTERFACE_NAME = re.compile(r"[a-zA-Z][a-zA-Z0-9_.\-]*")  # netutil.ValidateInterfaceNames, at most 15 characters
QUANTITY = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)?")  # resource.ParseQuantity
INTERFACE_ANNOTATIONS = ("traffic.sidecar.istio.io/excludeInterfaces", "traffic.sidecar.istio.io/kubevirtInterfaces", "istio.io/reroute-virtual-interfaces")
QUANTITY_ANNOTATIONS = ("sidecar.istio.io/proxyCPU", "sidecar.istio.io/proxyMemory", "sidecar.istio.io/proxyCPULimit", "sidecar.istio.io/proxyMemoryLimit")
UINT32_ANNOTATIONS = (
    "readiness.status.sidecar.istio.io/initialDelaySeconds",
    "readiness.status.sidecar.istio.io/periodSeconds",
    "readiness.status.sidecar.istio.io/failureThreshold",
)
MERGE_METRICS = "prometheus.istio.io/merge-metrics"
GO_BOOLS = frozenset(("1", "t", "T", "TRUE", "true", "True", "0", "f", "F", "FALSE", "false", "False"))


def _validated_values(annotations: dict[str, Node], istio: Version | None) -> Iterator[Issue]:
    """Interface lists (validated from Istio 1.30), proxy resource quantities (1.29; the API server
    refuses a bad quantity in the injected container anyway), readiness numbers and merge-metrics."""
    for name in INTERFACE_ANNOTATIONS:
        node = annotations.get(name)
        problem = _interfaces_problem(node.value) if node is not None else None
        if node is None or problem is None or (istio is not None and not at_least(istio, "1.30")):
            continue
        known = istio is not None
        yield Issue(
            node.pos,
            f'{name} "{node.value}": {problem}; ' + (REJECTED if known else "Istio 1.30 and later reject the pod, so it is never created"),
            "write interface names separated by commas: a letter, then letters, digits, '_', '.' or '-', at most 15 characters",
            None if known else Severity.WARNING,
        )
    for name in QUANTITY_ANNOTATIONS:
        node = annotations.get(name)
        if node is not None and not QUANTITY.fullmatch(node.value):
            yield Issue(
                node.pos,
                f'{name} "{node.value}" is not a Kubernetes quantity (such as 100m, 0.5, 128Mi or 1G): the injector (Istio 1.29+) or '
                "the API server rejects the pod, so it is never created",
                "write a quantity: cores or millicores for CPU (500m, 1), bytes with a suffix for memory (256Mi, 1Gi)",
            )
    for name in UINT32_ANNOTATIONS:
        node = annotations.get(name)
        if node is not None and numbers.whole(node.value, 2**32 - 1) is None:
            yield Issue(node.pos, f'{name} "{node.value}" is not a whole number of at most 4294967295; {REJECTED}', "write a whole number, such as 5")
    node = annotations.get(MERGE_METRICS)
    if node is not None and node.value not in GO_BOOLS:
        yield Issue(node.pos, f'{MERGE_METRICS} "{node.value}" is not a boolean; {REJECTED}', 'write "true" or "false"')


def _interfaces_problem(value: str) -> str | None:
    """Why netutil.ValidateInterfaceNames refuses a list, or None."""
    if not value:
        return None
    for name in (part.strip() for part in value.split(",")):
        if not name:
            return "it has an empty interface name"
        if len(name) > 15:
            return f"interface name {name!r} is longer than 15 characters"
        if not INTERFACE_NAME.fullmatch(name):
            return f"interface name {name!r} has characters an interface name cannot have"
    return None


def _first_pod(workload: WorkloadView) -> bool:
    """Is this the first pod template of its resource? A JobSet or an Argo workflow has several, each
    checked on its own, and the resource's own metadata is said once, with the first."""
    if workload.owner.kind != JOBSET and workload.owner.kind not in ARGO_WORKFLOW_KINDS:
        return True  # one pod template
    templates = pod_templates(workload.owner)
    return not templates or templates[0].node.pos == workload.template.node.pos


def _not_strings(where: str, labels: dict[str, Node], annotations: dict[str, Node]) -> Iterator[Issue]:
    """Mesh labels and annotations whose YAML value is a boolean or a number, not a string."""
    quote: str | None = None
    for field, values in (("labels", labels), ("annotations", annotations)):
        for key, node in values.items():
            if ("istio.io/" not in key and "linkerd.io/" not in key and key != "istio-injection") or node.value is None or isinstance(node.value, str):
                continue
            written = node.raw if node.raw is not None else str(node.value)
            kind = "boolean" if isinstance(node.value, bool) else "number" if isinstance(node.value, (int, float)) else "mapping or list"
            if quote is None:
                quote = _quote_style(labels, annotations)
            yield Issue(
                node.pos,
                f"{where} {field[:-1]} {key} is the {kind} {written}, not a string: the API server rejects the manifest",
                f'quote it: {key}: "{written}"',
                fix=recipe(_quoted, node, written, quote) if kind != "mapping or list" else None,
            )


def _quote_style(labels: dict[str, Node], annotations: dict[str, Node]) -> str:
    """The quote the other values beside it use: double, unless single quotes are the more common."""
    styles = [n.style for n in (*labels.values(), *annotations.values()) if n.style in ('"', "'")]
    return "'" if styles.count("'") > styles.count('"') else '"'


def _quoted(node: Node, written: str, quote: str) -> Fix | None:
    from meshlint.fix import mapping
    from meshlint.fix.text import quoted

    text = quoted(written, quote)
    return mapping.as_fix(f"quote the value: {text}", node, mapping.replace_scalar(node, text))


def _without_spaces(node: Node, knob: Knob) -> Fix | None:
    """A CIDR list with spaces around its commas, written without them (when that is all that is wrong)."""
    from meshlint.fix import mapping
    from meshlint.fix.text import in_scalar

    value = node.value if isinstance(node.value, str) else ""
    tight = ",".join(part.strip() for part in value.split(","))
    if knob.kind != "cidrs" or tight == value or parse(knob, tight).problem is not None or node.style not in ('"', "'", None):
        return None
    inner = in_scalar(tight, node.style)
    if inner is None:
        return None
    text = f"{node.style}{inner}{node.style}" if node.style else inner
    return mapping.as_fix(f"remove the spaces: {text}", node, mapping.replace_scalar(node, text))


def _fix(knob: Knob) -> str:
    if knob.kind == "cidrs":
        return 'write CIDRs with a /length, separated by commas without spaces, e.g. "10.0.0.0/8,172.16.0.0/12"'
    return 'write single ports separated by commas, e.g. "8080,9090"; list each port of a range'


RULE = check
