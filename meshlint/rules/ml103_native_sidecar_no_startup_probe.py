"""A native sidecar proxy without a startup probe, so Kubernetes starts the app as soon as it runs.

## What it does
Reports an init container with `restartPolicy: Always` whose name or image names a proxy (`proxy`,
`envoy`, `linkerd`, `mesh`) and that has no `startupProbe`; and Istio native sidecars whose startup
probe is switched off (`status.sidecar.istio.io/port: "0"` on the pod, or Helm
`global.proxy.startupProbe.enabled: false`).

## Why is this bad?
Native sidecars fix the startup race only through their startup probe: the kubelet starts the next
container once the sidecar is "started", and without a probe that is the moment its process exists,
long before Envoy has configuration. The app then starts against a proxy that is not ready, and
`holdApplicationUntilProxyStarts` does nothing for native sidecars.

## Example
```yaml
apiVersion: v1
kind: Pod
metadata:
  name: reports
spec:
  initContainers:
    - name: envoy-proxy  # expect: ML103:error
      image: envoyproxy/envoy:v1.31.0
      restartPolicy: Always
  containers:
    - name: reports
      image: reports:1.0
```

## Use instead
```yaml
apiVersion: v1
kind: Pod
metadata:
  name: reports
spec:
  initContainers:
    - name: envoy-proxy
      image: envoyproxy/envoy:v1.31.0
      restartPolicy: Always
      startupProbe:
        httpGet: {path: /ready, port: 9901}
        periodSeconds: 1
        failureThreshold: 60
  containers:
    - name: reports
      image: reports:1.0
```

## References
- https://kubernetes.io/docs/concepts/workloads/pods/sidecar-containers/ (startup waits for the startupProbe)
- istio/istio injection template (startupProbe only when `global.proxy.startupProbe.enabled` and status port ≠ 0)
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from meshlint.findings import Issue, Severity
from meshlint.mesh.setting import origins
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.rule import WORKLOAD, RuleContext, rule

_PROXY_WORDS = re.compile(r"proxy|envoy|linkerd|mesh", re.I)


@rule(code="ML103", name="native-sidecar-no-startup-probe", severity=Severity.ERROR, scope=WORKLOAD, kinds=WORKLOAD_KINDS)
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    off = workload.startup_probe_off
    for container in workload.template.init_containers:
        if not container.is_native_sidecar or container.has_startup_probe:
            continue
        if _PROXY_WORDS.search(container.name) or _PROXY_WORDS.search(container.image):
            injected = workload.injected_proxy is not None and container.name == workload.injected_proxy.name
            yield Issue(
                container.position,
                f"native sidecar {container.name!r} has no startupProbe: Kubernetes starts the next containers as soon as its process runs, before the proxy is ready",
                # Injected output without the probe: the injector left it out for a reason written in the pod.
                f"the injector leaves it out because of {off.note} ({off.where}): remove that and inject again"
                if injected and off is not None else "add a startupProbe on the proxy's readiness endpoint (Istio: httpGet /healthz/ready on 15021)",
                related=origins(off) if injected and off is not None else (),
            )
    if off is not None and workload.native_sidecar and workload.injected_proxy is None:
        on_pod = off.origin is not None and off.origin.path == workload.owner.path and off.note.startswith("status.")
        yield Issue(
            off.origin if on_pod and off.origin is not None else workload.template.fix_position,
            f"Istio injects a native sidecar here without its startup probe ({off.note}, {off.where}); the app can start before the proxy is ready",
            "remove status.sidecar.istio.io/port: \"0\" / set global.proxy.startupProbe.enabled: true",
            related=origins(off),
        )


RULE = check
