"""The app calls out as it starts, before its Istio sidecar is ready: classic sidecar, no hold.

## What it does
For each workload that gets a classic (non-native) Istio sidecar (not gateways, whose proxy is the
workload, nor Linkerd-meshed or ambient pods) without `holdApplicationUntilProxyStarts` in effect (pod
annotation, mesh `defaultConfig` or Helm `global.proxy`), reports the workloads with strong evidence that
they call out before they serve, as an error, and lists that evidence with its lines. Strong: its own
command connects (`curl`, `wget`, `nc`, `psql`, `kubectl`, `wait-for`, `pip install`), runs a
migration (`migrate`, `flyway`), or is given a peer's address to dial; a co-located container that
dials out at start (`cloud_sql_proxy`); a database or broker connection string in env
(`postgres://`, `jdbc:`, `redis://`, `mongodb://`, `amqp://`), or a variable whose name says it holds
one (`DATABASE_URL`, `REDIS_URI`, `DB_DSN`) and whose value is in a Secret. Weak: any other peer's
address in env (a URL, `host:port` or `*.svc` name), a database's or cache's too (`REDIS_ADDR:
redis-cart:6379`, `MYSQL_HOST`), which an app may only dial per request (many clients open their
connection on the first request, once the pod and its proxy are ready). Workloads with weak or no
evidence are said once, mesh-wide, by ML100. Commands are read as the shell runs them: a comment, a
file path, a listen address (`0.0.0.0:8080`, `:8080`, `--listen`), the container's own loopback, a
`{{ }}` placeholder, a redirect or callback URI, or a call in an exit trap is no evidence, and being
a Job is none by itself. Nor is a call in a loop that retries until the network answers (`until
kubectl version; do sleep 2; done`), or any call after such a loop or after a `sleep` of 15 seconds or
more, nor a pod whose own script waits for the proxy (`localhost:15021/healthz/ready`, `pilot-agent
wait`). Where no option names the Istio release, the one the workload's own unit installs (an
IstioOperator's `spec.tag`, Helm `global.tag`, istiod's image) words the message and the help. Option `require-evidence` is kept for old configurations: evidence is always
required now. A pod with interception mode `NONE` is left alone (ML403 reports it): without iptables
its calls pass through the proxy only when the app sends them there itself
(`HTTP_PROXY=127.0.0.1:15002`), and then it is reported.

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

from meshlint.findings import Issue, Severity, recipe
from meshlint.mesh.istio import PROXY_CONFIG_ANNOTATION
from meshlint.mesh.options import at_least
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
    istio = workload.options.versions.istio
    if istio is not None and not at_least(istio, "1.24"):  # the annotation is read from 1.24 on
        return f"or upgrade to Istio 1.24+ (Kubernetes 1.29+) and enable native sidecars with {NATIVE_ANNOTATION_HINT}"
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
            "description": "kept for old configurations: only workloads with strong evidence of startup calls are reported",
        }
    },
)
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    if not startup_race_applies(workload) or not workload.strong_evidence:
        return  # no strong evidence: ML100 says it once for the mesh-wide source
    evidence = sorted(workload.startup_evidence, key=lambda e: not e.strong)
    message = (
        f"{workload.template.title} can start before its istio-proxy sidecar is ready{workload.classification.assumed_note}: "
        f"classic sidecar ({workload.native.cited}), holdApplicationUntilProxyStarts is false ({workload.hold.where})"
    )
    shown = [str(e) for e in evidence[:5]] + ([f"{len(evidence) - 5} more"] if len(evidence) > 5 else [])
    message += "; it calls out at startup: " + listing(shown)
    yield Issue(
        workload.template.fix_position,
        message,
        f"{HOLD_HELP}, {native_hint(workload)}",
        Severity.ERROR,
        related=origins(workload.hold),
        fix=recipe(hold_fix, workload),
    )


def startup_race_applies(workload: WorkloadView) -> bool:
    """A classic Istio sidecar without the hold, whose traffic the proxy captures: the app can call out
    before the proxy is ready (ML101 with strong evidence, ML100 without)."""
    # A hold that Helm global.proxy.lifecycle voids still counts here: ML105 reports that case once.
    if not workload.classic_sidecar or workload.hold.value or workload.waits_for_proxy is not None:
        return False
    # No iptables (or grpc-agent's, which captures nothing): the app's calls pass through istio-proxy
    # only if it sends them there.
    return not ((workload.interception_mode.value == "NONE" or workload.agent_only) and workload.app_sends_to_proxy is None)


def hold_fix(workload: WorkloadView) -> Fix | None:
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
