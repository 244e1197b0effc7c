"""The app can start before its Istio sidecar is ready: classic sidecar, no hold, no native sidecar.

## What it does
For each workload that gets a classic (non-native) Istio sidecar (not gateways, whose proxy is the
workload, nor Linkerd-meshed or ambient pods), checks that
`holdApplicationUntilProxyStarts` is in effect (pod annotation, mesh `defaultConfig` or Helm
`global.proxy`). Without it the finding is a warning; it is an error when the workload shows that it
calls out before it serves, and the message lists that evidence with its lines: env values that are
URLs, `host:port` or `*.svc` names of a peer (in the container, or from an `envFrom` ConfigMap in the
inputs), env names such as `DATABASE_URL` or `REDIS_HOST` whose value is in a Secret, commands such
as `migrate`, `flyway`, `wait-for`, `curl`, `nc`, `pip install`, and a co-located container that dials
out at start (`cloud_sql_proxy`). Commands are read as the shell runs them: a comment, a file path, a
listen address (`0.0.0.0:8080`, `:8080`, `--listen`), the container's own loopback, a `{{ }}`
placeholder, a redirect or callback URI, or a call in an exit trap is no evidence, and being a Job is
none by itself. Option `require-evidence: true` reports only workloads with evidence. A pod with
interception mode `NONE` is left alone (ML403 reports it): without iptables its calls pass through
the proxy only when the app sends them there itself (`HTTP_PROXY=127.0.0.1:15002`), and then it is
reported.

## Why is this bad?
Kubernetes starts the app and the proxy side by side. Until Envoy has its configuration, outbound
connections from the app are refused or reset, so a service that opens its database pool, runs a
migration or calls a peer at startup fails "only sometimes", depending on which container wins.

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: orders
  namespace: shop
spec:
  selector: {matchLabels: {app: orders}}
  template:
    metadata:  # expect: ML101:error
      labels: {app: orders, sidecar.istio.io/inject: "true"}
    spec:
      containers:
        - name: orders
          image: orders:2.1
          env:
            - name: DATABASE_URL
              value: postgres://orders-db.shop.svc.cluster.local:5432/orders
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: orders
  namespace: shop
spec:
  selector: {matchLabels: {app: orders}}
  template:
    metadata:
      labels: {app: orders, sidecar.istio.io/inject: "true"}
      annotations:
        proxy.istio.io/config: '{"holdApplicationUntilProxyStarts": true}'
    spec:
      containers:
        - name: orders
          image: orders:2.1
          env:
            - name: DATABASE_URL
              value: postgres://orders-db.shop.svc.cluster.local:5432/orders
```

## Fix safety
Safe, mostly: `--fix` sets `holdApplicationUntilProxyStarts: true` in the pod template's own
`proxy.istio.io/config`, in the annotation's own form (a line in a YAML block, a member of a JSON
object, its quotes escaped as the annotation needs), or adds the annotation when there is none. When
the annotation itself turns the hold off, turning it on overrides a choice someone made: that fix is
unsafe. Not offered for kube-inject output (the injected proxy decides), when Helm's
`global.proxy.lifecycle` would replace the hold hook (ML105), or while the annotation misspells the
field (ML002's rename settles both).

## References
- https://istio.io/latest/docs/ops/common-problems/injection/ (holdApplicationUntilProxyStarts)
- https://istio.io/latest/blog/2023/native-sidecars/
- istio/istio `pkg/kube/inject/webhook.go` `reorderPod` (hold = mesh/pod ProxyConfig OR Helm value)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from meshlint.findings import Issue, Severity
from meshlint.mesh.istio import PROXY_CONFIG_ANNOTATION
from meshlint.mesh.setting import origins
from meshlint.mesh.workload import HOLD, VERSIONS_UNKNOWN, WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.rule import WORKLOAD, RuleContext, rule
from meshlint.wording import listing

if TYPE_CHECKING:
    from meshlint.fix.edits import Fix

HOLD_HELP = "add the pod-template annotation proxy.istio.io/config: '{\"holdApplicationUntilProxyStarts\": true}'"


NATIVE_ANNOTATION_HINT = 'the pod annotation sidecar.istio.io/nativeSidecar: "true" (Istio 1.24+, Kubernetes 1.29+)'


def native_hint(workload: WorkloadView) -> str:
    """How to let native sidecars settle the race, worded by what is known of the versions."""
    if workload.native.note == VERSIONS_UNKNOWN:
        return (
            f"or run native sidecars: {NATIVE_ANNOTATION_HINT}, or Istio 1.27+ with every node on Kubernetes 1.33+, which turns them on by default "
            "(pass --istio-version and --kubernetes-version so meshlint can tell)"
        )
    return f"or enable native sidecars with {NATIVE_ANNOTATION_HINT}"


@rule(
    code="ML101",
    name="startup-race",
    severity=Severity.WARNING,
    scope=WORKLOAD,
    kinds=WORKLOAD_KINDS,
    fix="mixed",
    options={
        "require-evidence": {
            "type": "boolean",
            "default": False,
            "description": "report only workloads with evidence of startup calls (network env values or commands)",
        }
    },
)
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    # A hold that Helm global.proxy.lifecycle voids still counts here: ML105 reports that case once.
    if not workload.classic_sidecar or workload.hold.value:
        return
    if (workload.interception_mode.value == "NONE" or workload.agent_only) and workload.app_sends_to_proxy is None:
        return  # no iptables (or grpc-agent's, which captures nothing): the app's calls pass through istio-proxy only if it sends them there
    evidence = workload.startup_evidence
    if not evidence and ctx.options.get("require-evidence"):
        return
    message = (
        f"{workload.template.title} can start before its istio-proxy sidecar is ready{workload.classification.assumed_note}: "
        f"classic sidecar ({workload.native.cited}), holdApplicationUntilProxyStarts is false ({workload.hold.where})"
    )
    if evidence:
        shown = [str(e) for e in evidence[:5]] + ([f"{len(evidence) - 5} more"] if len(evidence) > 5 else [])
        message += "; it calls out at startup: " + listing(shown)
    yield Issue(
        workload.template.fix_position,
        message,
        f"{HOLD_HELP}, {native_hint(workload)}",
        Severity.ERROR if evidence else None,
        related=origins(workload.hold),
        fix=_hold_fix(workload),
    )


def _hold_fix(workload: WorkloadView) -> Fix | None:
    """Hold in the pod's own proxy.istio.io/config: merged into the annotation in its form, or a new
    annotation. Not for kube-inject output (the injected proxy decides), nor when Helm's
    global.proxy.lifecycle would replace the hold hook (ML105), nor while the annotation misspells
    the hold field (ML002's rename settles both)."""
    from meshlint.fix import annotation, mapping, proxy_config
    from meshlint.fix.edits import SAFE, UNSAFE

    if workload.injected_proxy is not None or workload.hold_override is not None:
        return None
    config = workload.annotation
    if config is None:
        content = mapping.entry(PROXY_CONFIG_ANNOTATION, "'{\"holdApplicationUntilProxyStarts\": true}'")
        change = annotation.add_to_pod(workload.template, content)
        title = "add the pod-template annotation proxy.istio.io/config: '{\"holdApplicationUntilProxyStarts\": true}'"
        return mapping.as_fix(title, workload.template.node, change)
    if any(p.unknown_key and p.suggestion == HOLD for p in config.problems):
        return None
    change = proxy_config.set_field(config, HOLD, "true")
    # Turning around a hold the pod itself turns off overrides a choice someone made: unsafe.
    written = workload.pod_hold is not None
    title = "set holdApplicationUntilProxyStarts: true in proxy.istio.io/config" + (" (the pod turns it off)" if written else "")
    return mapping.as_fix(title, config.node, change, UNSAFE if written else SAFE)


RULE = check
