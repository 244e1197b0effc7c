"""Native sidecars requested on a Kubernetes version that does not run them.

## What it does
With `--kubernetes-version` (or `kubernetes-version:` in the config) below 1.29, reports what asks for
native sidecars: an init container with `restartPolicy: Always`, the pod annotation
`sidecar.istio.io/nativeSidecar: "true"`, and `ENABLE_NATIVE_SIDECARS: "true"` in istiod's settings;
for Linkerd-meshed pods, the native-sidecar annotation (on the pod or its namespace) or Helm
`proxy.nativeSidecar: true` that Linkerd reads as true (its injector does not check the Kubernetes
version). Silent when no Kubernetes version is given.

## Why is this bad?
The `SidecarContainers` feature is alpha (off by default) in 1.28 and on by default only from 1.29.
With the gate off the API server drops the field or the kubelet rejects the pod, and a sidecar that
ends up as a plain init container never finishes, so the pod is stuck initialising forever.

## Example
```yaml
# config: {"kubernetes-version": "1.27"}
apiVersion: v1
kind: Pod
metadata:
  name: agent
spec:
  initContainers:
    - name: log-shipper
      image: fluent-bit:3.0
      restartPolicy: Always  # expect: ML104:error
  containers:
    - name: agent
      image: agent:1.0
```

## Use instead
```yaml
# config: {"kubernetes-version": "1.30"}
apiVersion: v1
kind: Pod
metadata:
  name: agent
spec:
  initContainers:
    - name: log-shipper
      image: fluent-bit:3.0
      restartPolicy: Always
  containers:
    - name: agent
      image: agent:1.0
```

## References
- KEP-753 (SidecarContainers): alpha 1.28, beta and on by default 1.29, GA 1.33
- https://kubernetes.io/docs/concepts/workloads/pods/sidecar-containers/
- linkerd/linkerd2 commit 009a25fa3 (native sidecars "require Kubernetes v1.29 or later"; no version check in the injector)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from meshlint.findings import Issue, Severity
from meshlint.mesh.facts.linkerdproxy import said
from meshlint.mesh.istio import NATIVE_ANNOTATION, NATIVE_ENV
from meshlint.mesh.options import at_least
from meshlint.mesh.setting import origins
from meshlint.mesh.sources import MeshSource
from meshlint.mesh.workload import WorkloadView
from meshlint.rule import MESH_CONFIG, WORKLOAD, RuleContext, rule

if TYPE_CHECKING:
    from packaging.version import Version

SUPPORTED = "1.29"
HELP = "upgrade to Kubernetes 1.29 or later first, or keep a classic sidecar with holdApplicationUntilProxyStarts"


def _why(version: Version) -> str:
    if at_least(version, "1.28"):
        return f"Kubernetes {version} runs native sidecars only with the SidecarContainers feature gate switched on (alpha)"
    return f"Kubernetes {version} has no native sidecars (SidecarContainers is alpha in 1.28, on by default from 1.29)"


@rule(code="ML104", name="native-sidecar-unsupported", severity=Severity.ERROR, scope=(WORKLOAD, MESH_CONFIG))
def check(subject: WorkloadView | MeshSource, ctx: RuleContext) -> Iterator[Issue]:
    version = ctx.mesh_options.versions.kubernetes
    if version is None or at_least(version, SUPPORTED):
        return
    if isinstance(subject, MeshSource):
        env = subject.env.get(NATIVE_ENV)
        if env is not None and (env.text or "").lower() == "true":
            yield Issue(env.pos, f"ENABLE_NATIVE_SIDECARS=true makes istiod inject native sidecars, but {_why(version)}", HELP)
        return
    template = subject.template
    native = subject.linkerd_proxy.native if subject.linkerd and subject.linkerd_proxy.injected is None else None
    if native is not None and native.value and native.origin is not None:
        # Asked for by an annotation or a Helm value: Linkerd's injector renders it whatever the cluster runs.
        yield Issue(
            subject.point_at(native),
            f"{said(native)} asks Linkerd ({subject.linkerd_proxy.assumed}) for a native proxy sidecar, but {_why(version)}",
            "upgrade to Kubernetes 1.29 or later first, or keep the classic proxy (remove the annotation, Helm proxy.nativeSidecar: false)",
            related=origins(native),
        )
    for container in template.init_containers:
        if container.is_native_sidecar:
            yield Issue(container.restart_policy_position, f"{container.label} is a native sidecar (restartPolicy: Always), but {_why(version)}", HELP)
    annotation = template.annotations().get(NATIVE_ANNOTATION)
    if annotation is not None and annotation.text == "true":
        yield Issue(annotation.pos, f'{NATIVE_ANNOTATION}: "true" asks Istio for a native sidecar, but {_why(version)}', HELP)


RULE = check
