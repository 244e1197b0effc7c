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

## References
- linkerd/linkerd2 `pkg/inject/inject.go` `populateMeta` (the pod template's metadata is the pod's)
- https://linkerd.io/2-edge/features/proxy-injection/
"""

from __future__ import annotations

from collections.abc import Iterator

from meshlint.findings import Issue, Position, Severity
from meshlint.mesh.linkerd import INJECT_ANNOTATION
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.model.pod import pod_templates
from meshlint.model.resource import Resource
from meshlint.rule import RESOURCE, RuleContext, rule


@rule(code="ML502", name="linkerd-inject-misplaced", severity=Severity.ERROR, scope=RESOURCE, kinds=WORKLOAD_KINDS | {"Namespace"})
def check(resource: Resource, ctx: RuleContext) -> Iterator[Issue]:
    label = resource.labels.get(INJECT_ANNOTATION)
    if resource.kind in {"Namespace", "Pod"}:
        if label is not None and INJECT_ANNOTATION not in resource.annotations:
            yield _label(label.key_pos or label.pos, f"{resource.kind} {resource.name}", "metadata.annotations")
        return
    templates = pod_templates(resource)
    if not templates:
        return
    missing = [t for t in templates if INJECT_ANNOTATION not in t.annotations()]
    own = [("metadata", resource.metadata)]
    if resource.kind == "CronJob":
        own.append(("spec.jobTemplate.metadata", resource.root.path("spec", "jobTemplate", "metadata")))
    for where, metadata in own:
        node = metadata.get("annotations").string_map().get(INJECT_ANNOTATION)
        if node is not None and missing:
            yield Issue(
                node.key_pos or node.pos,
                f"annotation {INJECT_ANNOTATION}: {node.text} is on the {resource.kind}'s own {where}; Linkerd reads it only from "
                "the pod template (or the namespace), so the pods are not injected",
                f"move it to {resource.template_path}.annotations",
            )
        node = metadata.get("labels").string_map().get(INJECT_ANNOTATION)
        if node is not None and missing:
            yield _label(node.key_pos or node.pos, f"the {resource.kind}'s own {where}", f"{resource.template_path}.annotations")
    for template in templates:
        node = template.labels().get(INJECT_ANNOTATION)
        if node is not None and INJECT_ANNOTATION not in template.annotations():
            yield _label(node.key_pos or node.pos, f"the pod template of {template.title}", "the pod template's annotations")


def _label(position: Position, where: str, to: str) -> Issue:
    return Issue(
        position,
        f"{INJECT_ANNOTATION} is a label on {where}; Linkerd reads only the annotation, so it injects nothing",
        f"make it an annotation: move it to {to}",
    )


RULE = check
