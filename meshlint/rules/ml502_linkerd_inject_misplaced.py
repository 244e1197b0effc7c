"""`linkerd.io/inject` where Linkerd never reads it: as a label, or on a controller's own metadata.

## What it does
Reports `linkerd.io/inject` written as a label (on a pod template or a Namespace), and the annotation
on a Deployment's, Job's or other controller's own `metadata` (or a CronJob's `jobTemplate.metadata`)
when its pod template does not carry it.

## Why is this bad?
Linkerd's proxy injector reads only annotations, and only the pod's and its namespace's: for a
workload that is the pod template's `metadata.annotations`. Istio's switch is a label, so the habit
carries over, and a Deployment's own annotations look like the right place. Either way nothing is
injected, silently.

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations:
    linkerd.io/inject: enabled  # expect: ML502:error
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: web:1.0
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata:
      labels: {app: web}
      annotations:
        linkerd.io/inject: enabled
    spec:
      containers:
        - name: web
          image: web:1.0
```

## Fix safety
Safe. `--fix` moves the label or the annotation, as written (its comments and quoting), to where
Linkerd reads it: a label becomes an annotation of the same metadata, a controller's own annotation or
label goes to its pod template's annotations (the emptied field goes). Not for a CronJob's
`jobTemplate.metadata`, nor for kinds with several pod templates.

## References
- linkerd/linkerd2 `pkg/inject/inject.go` `populateMeta` (the pod template's metadata is the pod's)
- https://linkerd.io/2-edge/features/proxy-injection/
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from meshlint.findings import FixRecipe, Issue, Position, Severity, recipe
from meshlint.mesh.linkerd import INJECT_ANNOTATION
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.model.pod import pod_templates
from meshlint.model.resource import Resource
from meshlint.rule import RESOURCE, RuleContext, rule
from meshlint.source.document import Node

if TYPE_CHECKING:
    from meshlint.fix.edits import Fix
    from meshlint.fix.mapping import Change


@rule(code="ML502", name="linkerd-inject-misplaced", severity=Severity.ERROR, scope=RESOURCE, kinds=WORKLOAD_KINDS | {"Namespace"}, fix="safe")
def check(resource: Resource, ctx: RuleContext) -> Iterator[Issue]:
    label = resource.labels.get(INJECT_ANNOTATION)
    if resource.kind in {"Namespace", "Pod"}:
        if label is not None and INJECT_ANNOTATION not in resource.annotations:
            yield _label(label.key_pos or label.pos, f"{resource.kind} {resource.name}", "metadata.annotations", recipe(_relabel, resource.root, resource.metadata))
        return
    templates = pod_templates(resource)
    if not templates:
        return
    missing = [t for t in templates if INJECT_ANNOTATION not in t.annotations()]
    own = [("metadata", resource.metadata)]
    if resource.kind == "CronJob":
        own.append(("spec.jobTemplate.metadata", resource.root.path("spec", "jobTemplate", "metadata")))
    for where, metadata in own:
        own_metadata = where == "metadata"  # a CronJob's jobTemplate metadata: no fix (two levels to move through)
        node = metadata.get("annotations").string_map().get(INJECT_ANNOTATION)
        if node is not None and missing:
            yield Issue(
                node.key_pos or node.pos,
                f"annotation {INJECT_ANNOTATION}: {node.text} is on the {resource.kind}'s own {where}; Linkerd reads it only from "
                "the pod template (or the namespace), so the pods are not injected",
                f"move it to {resource.template_path}.annotations",
                fix=recipe(_to_pod, resource, "annotations") if own_metadata else None,
            )
        node = metadata.get("labels").string_map().get(INJECT_ANNOTATION)
        if node is not None and missing:
            fix = recipe(_to_pod, resource, "labels") if own_metadata else None
            yield _label(node.key_pos or node.pos, f"the {resource.kind}'s own {where}", f"{resource.template_path}.annotations", fix)
    for template in templates:
        node = template.labels().get(INJECT_ANNOTATION)
        if node is not None and INJECT_ANNOTATION not in template.annotations():
            fix = recipe(_relabel, resource.root, template.metadata) if len(templates) == 1 else None
            yield _label(node.key_pos or node.pos, f"the pod template of {template.title}", "the pod template's annotations", fix)


def _label(position: Position, where: str, to: str, fix: FixRecipe | None = None) -> Issue:
    return Issue(
        position,
        f"{INJECT_ANNOTATION} is a label on {where}; Linkerd reads only the annotation, so it injects nothing",
        f"make it an annotation: move it to {to}",
        fix=fix,
    )


def _to_pod(resource: Resource, field: str) -> Fix | None:
    """From the controller's own metadata to its pod template's annotations, as written."""
    from meshlint.fix import annotation, mapping

    change = annotation.move_to_pod(resource, INJECT_ANNOTATION, field, "annotations")
    return mapping.as_fix(f"move {INJECT_ANNOTATION} to {resource.template_path}.annotations", resource.root, change)


def _relabel(root: Node, metadata: Node) -> Fix | None:
    """The label becomes an annotation of the same metadata."""
    from meshlint.fix import annotation, mapping

    change: Change | None = annotation.label_to_annotation(metadata, INJECT_ANNOTATION)
    return mapping.as_fix(f"make {INJECT_ANNOTATION} an annotation", root, change)


RULE = check
