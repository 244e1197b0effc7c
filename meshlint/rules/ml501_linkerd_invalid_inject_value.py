"""`linkerd.io/inject` with a value Linkerd does not know: the pod, or every pod of the namespace, is not meshed.

## What it does
Reports a `linkerd.io/inject` annotation whose value is not `enabled`, `disabled` or `ingress`, on a
pod template or on a Namespace (an empty value counts as unset, as the injector reads it).

## Why is this bad?
Linkerd's vocabulary is `enabled`/`disabled`, not Istio's `true`/`false`. The proxy injector checks the
namespace's value first: an unknown value there (`"true"`) means no pod in the namespace is injected,
not even pods annotated `enabled`. An unknown value on a pod template leaves that pod unmeshed. The
webhook says nothing: the pods run without a proxy, without mTLS, outside every Linkerd policy.

## Example
```yaml
apiVersion: v1
kind: Namespace
metadata:
  name: orders
  annotations:
    linkerd.io/inject: "true"  # expect: ML501:error
```

## Use instead
```yaml
apiVersion: v1
kind: Namespace
metadata:
  name: orders
  annotations:
    linkerd.io/inject: enabled
```

## Fix safety
Safe. `--fix` writes Istio's and Kubernetes' booleans the way Linkerd reads them, in the value's own
quotes: `true`, `yes` and `on` become `enabled`; `false`, `no` and `off` become `disabled`. Any other
value has no fix: what was meant is for a person to say.

## References
- linkerd/linkerd2 `pkg/inject/report.go` `disabledByAnnotation` (namespace value checked first)
- https://linkerd.io/2-edge/features/proxy-injection/
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from meshlint.findings import Issue, Severity, recipe
from meshlint.mesh.linkerd import INJECT_ANNOTATION, INJECT_VALUES
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.model.resource import Resource
from meshlint.rule import RESOURCE, WORKLOAD, RuleContext, rule
from meshlint.source.document import Node

if TYPE_CHECKING:
    from meshlint.fix.edits import Fix

HELP = "write enabled (or ingress for an ingress controller) to mesh, disabled to keep out; Linkerd does not read true/false"


# Istio's and Kubernetes' booleans, read as what they plainly mean (Linkerd's injector reads neither).
_MEANT = dict.fromkeys(("true", "yes", "on"), "enabled") | dict.fromkeys(("false", "no", "off"), "disabled")


@rule(
    code="ML501", name="linkerd-invalid-inject-value", severity=Severity.ERROR, scope=(WORKLOAD, RESOURCE), kinds=WORKLOAD_KINDS | {"Namespace"},
    fix="safe",
)
def check(subject: WorkloadView | Resource, ctx: RuleContext) -> Iterator[Issue]:
    if isinstance(subject, WorkloadView):
        node = subject.template.annotations().get(INJECT_ANNOTATION)
        # A value that is not a string is ML404's: the API server rejects it before Linkerd sees it.
        if node is not None and isinstance(node.value, str) and node.value not in INJECT_VALUES and node.value != "":
            yield Issue(
                node.pos,
                f'{INJECT_ANNOTATION}: "{node.value}" on the pod template of {subject.template.title} is not enabled, disabled '
                "or ingress: Linkerd's proxy injector does not inject the pod, so it runs without a proxy and without mTLS",
                HELP,
                fix=recipe(_meant, node),
            )
        return
    if subject.kind != "Namespace":
        return
    node = subject.annotations.get(INJECT_ANNOTATION)
    if node is not None and isinstance(node.value, str) and node.value not in INJECT_VALUES and node.value != "":
        yield Issue(
            node.pos,
            f'{INJECT_ANNOTATION}: "{node.value}" on Namespace {subject.name} is not enabled, disabled or ingress: Linkerd '
            "injects no pod in this namespace, not even pods annotated enabled",
            HELP,
            fix=recipe(_meant, node),
        )


def _meant(node: Node) -> Fix | None:
    """A boolean spelled the Istio way becomes Linkerd's word for it, in the value's own quotes; any
    other value is for a person to read."""
    from meshlint.fix import mapping
    from meshlint.fix import text as src

    word = _MEANT.get(str(node.value).strip().lower())
    if word is None:
        return None
    written = src.quoted(word, node.style) if node.style in ('"', "'") else word
    return mapping.as_fix(f"write {INJECT_ANNOTATION}: {word}", node, mapping.replace_scalar(node, written))


RULE = check
