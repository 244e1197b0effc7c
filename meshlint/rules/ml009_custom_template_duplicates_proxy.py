"""A custom injection template that adds `istio-proxy` to `containers` while native sidecars put it in `initContainers`.

## What it does
For pods whose `inject.istio.io/templates` names the `sidecar` template and a custom template that the
run defines (`sidecarInjectorWebhook.templates` in istiod's Helm values or an IstioOperator), reports the
annotation when the custom template writes an `istio-proxy` container under `containers` and native
sidecars are in effect for the pod (as ML101 and ML104 read them).

## Why is this bad?
The injector renders each template and merges them into the pod by container name, list by list. With
native sidecars the `sidecar` template puts `istio-proxy` under `initContainers`; a custom template
written for classic sidecars still patches it under `containers`. The pod then holds two containers
named `istio-proxy`, which the API server refuses: the workload gets no pods. It happens on the upgrade
that turns native sidecars on (Istio 1.27+ on Kubernetes 1.33+, or `ENABLE_NATIVE_SIDECARS`), with no
change to the template.

## Example
```yaml
# config: {"istio-version": "1.28", "kubernetes-version": "1.33"}
apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata:
  name: control-plane
  namespace: istio-system
spec:
  values:
    sidecarInjectorWebhook:
      templates:
        proxy-resources: |
          spec:
            containers:
            - name: istio-proxy
              resources:
                limits: {memory: 1Gi}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    metadata:
      labels: {sidecar.istio.io/inject: "true"}
      annotations:
        inject.istio.io/templates: sidecar,proxy-resources  # expect: ML009:error
    spec:
      containers:
        - name: api
          image: api:1
```

## Use instead
```yaml
# config: {"istio-version": "1.28", "kubernetes-version": "1.33"}
apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata:
  name: control-plane
  namespace: istio-system
spec:
  values:
    sidecarInjectorWebhook:
      templates:
        proxy-resources: |
          spec:
            initContainers:
            - name: istio-proxy
              resources:
                limits: {memory: 1Gi}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    metadata:
      labels: {sidecar.istio.io/inject: "true"}
      annotations:
        inject.istio.io/templates: sidecar,proxy-resources
    spec:
      containers:
        - name: api
          image: api:1
```

## References
- istio/istio `pkg/kube/inject/inject.go` (templates rendered and merged in order), `custom-template.iop.yaml` testdata
- reference §18.2 H5, §18.3.2
"""

from __future__ import annotations

from collections.abc import Iterator

from meshlint.findings import Issue, Severity
from meshlint.mesh.classification import injection_templates
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.rule import WORKLOAD, RuleContext, rule


@rule(code="ML009", name="custom-template-duplicates-proxy", severity=Severity.ERROR, scope=WORKLOAD, kinds=WORKLOAD_KINDS)
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    if not workload.native_sidecar or not ctx.mesh.injection_templates:
        return
    names, node = injection_templates(workload.template)
    if node is None or "sidecar" not in names:
        return
    custom = [n for n in names if ctx.mesh.injection_templates.get(n) == "containers"]
    if not custom:
        return
    native = workload.native
    yield Issue(
        node.pos,
        f"custom injection template {custom[0]!r} adds istio-proxy under containers, while the sidecar template puts it under "
        f"initContainers as a native sidecar ({native.cited}): the pod gets two containers named istio-proxy and the API "
        "server rejects it",
        f"write istio-proxy under initContainers in template {custom[0]!r} (it then patches the native sidecar), or keep "
        "classic sidecars for this pod (sidecar.istio.io/nativeSidecar: \"false\")",
        related=(native.origin,) if native.origin is not None else (),
    )


RULE = check
