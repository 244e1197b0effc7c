"""A pod-level mesh annotation or label on a controller's own metadata, where Istio never reads it.

## What it does
Looks at the top-level `metadata` of Deployments, StatefulSets, DaemonSets, Jobs, CronJobs and the other
pod controllers for `proxy.istio.io/config`, `sidecar.istio.io/*` and `traffic.sidecar.istio.io/*`
annotations or labels.

## Why is this bad?
The injection webhook only ever sees the Pod. Annotations on the Deployment object are not copied to
its pods, so the setting does nothing, and the workload runs with the mesh defaults you meant to
change: no hold, the default drain, capture of every port. `istioctl analyze` only checks this for
Deployments and Pods.

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

## References
- https://istio.io/latest/docs/ops/common-problems/injection/ ("The deployment's metadata is ignored")
- istioctl analyze IST0107 MisplacedAnnotation
"""

from __future__ import annotations

from collections.abc import Iterator

from meshlint.findings import Issue, Severity
from meshlint.mesh.istio import is_pod_key
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.model.resource import Resource
from meshlint.rule import RESOURCE, RuleContext, rule


@rule(
    code="ML003",
    name="misplaced-pod-annotation",
    severity=Severity.ERROR,
    scope=RESOURCE,
    kinds=WORKLOAD_KINDS - {"Pod"},
)
def check(resource: Resource, ctx: RuleContext) -> Iterator[Issue]:
    for field, values in (("annotations", resource.annotations), ("labels", resource.labels)):
        for key, value in values.items():
            if not is_pod_key(key):
                continue
            singular = field[:-1]
            yield Issue(
                value.key_pos or value.pos,
                f"{singular} {key} is on the {resource.kind}'s own metadata; Istio reads it only from the pod template, so it has no effect",
                f"move it to {resource.template_path}.{field}",
            )


RULE = check
