"""A mesh annotation or label where Istio never reads it: on a controller, or a namespace label on a pod.

## What it does
Looks at the top-level `metadata` of Deployments, StatefulSets, DaemonSets, Jobs, CronJobs, Argo
Workflows and the other pod controllers, and at every metadata between them and their pods (a
CronJob's `jobTemplate.metadata`, a JobSet's Job templates), for `proxy.istio.io/config`,
`sidecar.istio.io/*` and `traffic.sidecar.istio.io/*` annotations or labels that the pod template
does not also carry with the same value (Kustomize's `commonAnnotations` writes both, and the pod's
copy is in effect). `sidecar.istio.io/status` is the injector's own record (`istioctl kube-inject`
writes it on a CronJob's `jobTemplate.metadata` too), never a setting. It also looks at every pod
template for the namespace label `istio-injection`, which on a pod injects nothing.

## Why is this bad?
The injection webhook only ever sees the Pod. Annotations on the Deployment object are not copied to
its pods, so the setting does nothing, and the workload runs with the mesh defaults you meant to
change: no hold, the default drain, capture of every port. `istioctl analyze` only checks this for
Deployments and Pods. Likewise `istio-injection: enabled` is read from Namespaces only: on a pod
template it does nothing, and the pod is meshed only if its namespace or a `sidecar.istio.io/inject`
label says so, while its author believes it is.

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  annotations:
    proxy.istio.io/config: '{"holdApplicationUntilProxyStarts": true}'  # expect: ML003:error
spec:
  selector: {matchLabels: {app: api}}
  template:
    metadata:
      labels: {app: api}
    spec:
      containers:
        - name: api
          image: api:1.0
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  selector: {matchLabels: {app: api}}
  template:
    metadata:
      labels: {app: api}
      annotations:
        proxy.istio.io/config: '{"holdApplicationUntilProxyStarts": true}'
    spec:
      containers:
        - name: api
          image: api:1.0
```

## Fix safety
Safe. `--fix` moves the annotation or label, as written (its comments and quoting), to the pod
template's own `annotations` or `labels`, and drops the emptied `annotations:` of the controller. When
the template has another value, or the kind has several pod templates, there is no fix: which was
meant is for a person to say. A `jobTemplate.metadata` that the move would leave empty keeps its
entry (an empty mapping would read as null): move it by hand. Namespace-only labels on a pod template
have no fix.

## References
- https://istio.io/latest/docs/ops/common-problems/injection/ ("The deployment's metadata is ignored")
- istioctl analyze IST0107 MisplacedAnnotation
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from meshlint.findings import Issue, Severity, recipe
from meshlint.mesh.istio import INJECTED_STATUS_ANNOTATION, NAMESPACE_ONLY_LABELS, is_pod_key
from meshlint.model.kinds import JOBSET, WORKLOAD_KINDS
from meshlint.model.pod import PodTemplate, pod_templates
from meshlint.model.resource import Resource
from meshlint.rule import RESOURCE, RuleContext, rule

if TYPE_CHECKING:
    from meshlint.fix.edits import Fix
    from meshlint.source.document import Node


@rule(code="ML003", name="misplaced-pod-annotation", severity=Severity.ERROR, scope=RESOURCE, kinds=WORKLOAD_KINDS, fix="safe")
def check(resource: Resource, ctx: RuleContext) -> Iterator[Issue]:
    templates = pod_templates(resource)
    for metadata, where in _metadata_the_injector_never_sees(resource):
        for field in ("annotations", "labels"):
            for key, value in metadata.get(field).string_map().items():
                if not is_pod_key(key) or key == INJECTED_STATUS_ANNOTATION or _every_pod_says(templates, field, key, value.text):
                    continue
                singular = field[:-1]
                yield Issue(
                    value.key_pos or value.pos,
                    f"{singular} {key} is on the {resource.kind}'s {where}; Istio reads it only from the pod template, so it has no effect",
                    f"move it to {resource.template_path}.{field}",
                    fix=recipe(_move, resource, field, key, metadata),
                )
    for template in templates:
        for key in NAMESPACE_ONLY_LABELS:
            node = template.labels().get(key)
            if node is not None:
                yield Issue(
                    node.key_pos or node.pos,
                    f"label {key}: {node.text} on the pod template of {template.title} is a namespace label: Istio reads it "
                    "only from Namespaces, so on a pod it injects nothing",
                    f'label the Namespace {key}: enabled, or give the pod the label sidecar.istio.io/inject: "true"',
                )


def _metadata_the_injector_never_sees(resource: Resource) -> Iterator[tuple[Node, str]]:
    """Each metadata of a pod-bearing object that is not its pods' (a Pod's own metadata is the pod's)."""
    if resource.kind == "Pod":
        return
    yield resource.metadata, "own metadata"
    if resource.kind == "CronJob":
        yield resource.root.path("spec", "jobTemplate", "metadata"), "jobTemplate.metadata"
    elif resource.kind == JOBSET:
        for job in resource.root.path("spec", "replicatedJobs").elements():
            yield job.path("template", "metadata"), f"Job template metadata (job {job.get('name').text or '(unnamed)'})"


def _every_pod_says(templates: list[PodTemplate], field: str, key: str, text: str | None) -> bool:
    """Do the pods carry the same key with the same value? Then the ignored copy changes nothing."""
    if not templates:
        return False
    for template in templates:
        there = (template.annotations() if field == "annotations" else template.labels()).get(key)
        if there is None or there.text != text:
            return False
    return True


def _move(resource: Resource, field: str, key: str, metadata: Node) -> Fix | None:
    from meshlint.fix import annotation, mapping

    title = f"move {field[:-1]} {key} to {resource.template_path}.{field}"
    return mapping.as_fix(title, resource.root, annotation.move_to_pod(resource, key, field, metadata=metadata))


RULE = check
