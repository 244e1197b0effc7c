"""An `istio.io/rev` label that a stronger injection label overrides, so another revision (or none) injects.

## What it does
Reports a Namespace that carries both `istio-injection` and `istio.io/rev`, and a pod template's
`istio.io/rev` that its namespace's own injection label overrides; either is an error when
`istio-injection` is set to anything but `enabled`: then no webhook injects at all. A pod that opts
out (`sidecar.istio.io/inject: "false"`, as istiod and the gateways of every revisioned install do)
carries `istio.io/rev` only as its revision's own mark, and is left alone.

## Why is this bad?
The webhooks give `istio-injection` precedence over `istio.io/rev` on a namespace, and a namespace's
`istio.io/rev` over the pod's (reference §12.3). During a canary upgrade the pods labelled for the new
revision keep being injected by the old one, or, with `istio-injection: disabled`, by none, and the
upgrade looks done when it is not.

## Example
```yaml
apiVersion: v1
kind: Namespace
metadata:
  name: orders
  labels:
    istio-injection: enabled  # expect: ML007:warning
    istio.io/rev: canary
```

## Use instead
```yaml
apiVersion: v1
kind: Namespace
metadata:
  name: orders
  labels:
    istio.io/rev: canary
```

## References
- https://istio.io/latest/docs/setup/upgrade/canary/#data-plane ("The istio-injection label must be removed")
- istio/istio#42654 ("namespace takes precedence over pod"); `istioctl analyze` IST0123
"""

from __future__ import annotations

from collections.abc import Iterator

from meshlint.findings import Issue, Severity
from meshlint.mesh.istio import INJECT, NAMESPACE_INJECTION_LABEL, REV_LABEL
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.model.resource import Resource
from meshlint.rule import RESOURCE, WORKLOAD, RuleContext, rule
from meshlint.source.document import Node


@rule(code="ML007", name="revision-label-shadowed", severity=Severity.WARNING, scope=(WORKLOAD, RESOURCE), kinds=WORKLOAD_KINDS | {"Namespace"})
def check(subject: WorkloadView | Resource, ctx: RuleContext) -> Iterator[Issue]:
    if isinstance(subject, Resource):
        if subject.kind == "Namespace":
            yield from _namespace(subject)
        return
    template = subject.template
    pod_rev = template.labels().get(REV_LABEL)
    namespace = subject.namespace
    if pod_rev is None or namespace is None or _opts_out(template.labels(), template.annotations()):
        return
    injection, ns_rev = namespace.labels.get(NAMESPACE_INJECTION_LABEL), namespace.labels.get(REV_LABEL)
    shadow = injection if injection is not None else ns_rev
    if shadow is None or (shadow is ns_rev and (ns_rev.text or "") == (pod_rev.text or "")):
        return
    label = NAMESPACE_INJECTION_LABEL if shadow is injection else REV_LABEL
    if shadow is injection and injection.text != "enabled":
        effect, severity = f"which matches no webhook, so nothing injects its pods, whatever {REV_LABEL}={pod_rev.text} says", Severity.ERROR
    else:
        effect, severity = "which decides the revision for every pod in it", None
    yield Issue(
        pod_rev.key_pos or pod_rev.pos,
        f"{REV_LABEL}={pod_rev.text} on {template.title} is ignored: its namespace {namespace.name} has "
        f"{label}={shadow.text} ({shadow.pos.path}:{shadow.pos.line}), {effect}",
        f"label the namespace {REV_LABEL}={pod_rev.text} (and remove {NAMESPACE_INJECTION_LABEL}) to move its pods, "
        f"or drop the pod's {REV_LABEL}",
        severity,
        related=(shadow.pos,),
    )


def _opts_out(labels: dict[str, Node], annotations: dict[str, Node]) -> bool:
    """A pod that asks not to be injected (the label, or the deprecated annotation the gateways of
    older charts carry): its `istio.io/rev` is only the mark of the revision it belongs to."""
    return any(values.get(INJECT) is not None and values[INJECT].text == "false" for values in (labels, annotations))


def _namespace(namespace: Resource) -> Iterator[Issue]:
    injection, rev = namespace.labels.get(NAMESPACE_INJECTION_LABEL), namespace.labels.get(REV_LABEL)
    if injection is None or rev is None:
        return
    if injection.text == "enabled":
        effect, severity = f"istio-injection wins, so the default revision injects its pods, not {rev.text}", None
    else:
        effect = f"istio-injection={injection.text} matches no webhook, so nothing injects its pods, whatever {REV_LABEL}={rev.text} says"
        severity = Severity.ERROR
    yield Issue(
        injection.key_pos or injection.pos,
        f"Namespace {namespace.name} has both {NAMESPACE_INJECTION_LABEL}={injection.text} and {REV_LABEL}={rev.text}: {effect}",
        f"remove {NAMESPACE_INJECTION_LABEL} and keep {REV_LABEL}={rev.text} (or remove {REV_LABEL} to stay on the default revision)",
        severity,
    )


RULE = check
