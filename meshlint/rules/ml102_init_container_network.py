"""An init container that uses the network in a pod with a classic Istio sidecar.

## What it does
Reports init containers that show network use (the same evidence as ML101: URLs and service names in
env, `migrate`, `curl`, `wait-for`, `nc` in the command) when the pod gets a classic Istio sidecar.
Init containers that run as UID 1337 are left alone, and so are pods with native sidecars or with
interception mode `NONE` (nothing is captured; ML403). Under a
classic Linkerd proxy the same init containers are reported (those running as the proxy's UID 2102
are left alone).

Init containers that other webhooks add count too, though the manifest holds only the annotation that
asks for them: the Vault agent injector's `vault-agent-init` (`vault.hashicorp.com/agent-inject: "true"`
unless `agent-pre-populate: "false"`; silent with `agent-run-as-user` the proxy's UID) and bank-vaults'
`vault-agent` (`vault.security.banzaicloud.io/vault-ct-configmap`, or `vault-agent: "true"`). Both log in
to Vault before the app starts; when Vault's port is excluded from capture (or skipped by Linkerd) the
login goes out, and ML402 (ML510) reports that bypass instead. Webhooks run in the order of their
configurations' names, and with the usual names (`istio-sidecar-injector`, `linkerd-proxy-injector-…`
before `vault-agent-injector-cfg`) the mesh's runs first: Vault's init container is then appended after
`istio-init` / `linkerd-init`, and its login is refused (hashicorp/vault-k8s#29), unless
`agent-init-first: "true"` puts it first, where it goes out unmeshed.

An error when the run shows that the redirect is in place before any proxy listens: Istio CNI (Helm
`istio_cni.enabled` or `pilot.cni.enabled`, or an injected manifest with `istio-validation`), or the
Linkerd CNI plugin; a warning otherwise.

## Why is this bad?
Init containers run before any regular container, so before a classic sidecar exists. With Istio CNI
their outbound traffic is already redirected to a proxy that is not listening: it is blackholed. With
the `istio-init` container, which the injector moves last, they run unmeshed: no mTLS, so a STRICT
server refuses them. Either way the migration or the wait fails. Linkerd is the same: without its CNI
plugin `linkerd-init` is appended last, so app init containers run unmeshed (no mTLS, no identity for
a Server's authorization); with the CNI plugin they have no network at all.

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: billing
spec:
  selector: {matchLabels: {app: billing}}
  template:
    metadata:
      labels: {app: billing}
      annotations:
        proxy.istio.io/config: '{"holdApplicationUntilProxyStarts": true}'
    spec:
      initContainers:
        - name: migrate  # expect: ML102:warning
          image: billing:3.0
          command: ["flyway", "migrate"]
      containers:
        - name: billing
          image: billing:3.0
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: billing
spec:
  selector: {matchLabels: {app: billing}}
  template:
    metadata:
      labels: {app: billing}
      annotations:
        proxy.istio.io/config: '{"holdApplicationUntilProxyStarts": true}'
    spec:
      initContainers:
        - name: migrate
          image: billing:3.0
          command: ["flyway", "migrate"]
          securityContext:
            runAsUser: 1337
      containers:
        - name: billing
          image: billing:3.0
```

## References
- https://istio.io/latest/docs/setup/additional-setup/cni/#compatibility-with-application-init-containers
- istio/istio `pkg/kube/inject/webhook.go` `reorderPod` (istio-init moved last)
- https://linkerd.io/2-edge/features/cni/ ("Allowing initContainer networking"); linkerd/linkerd2
  `charts/patch/templates/patch.json` (linkerd-init appended; native proxy first)
- https://developer.hashicorp.com/vault/docs/platform/k8s/injector/annotations (`agent-inject`,
  `agent-pre-populate`, `agent-run-as-user`, `service`)
- bank-vaults/vault-secrets-webhook `pkg/webhook/pod.go` `getInitContainers` (the `vault-agent` init container)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from meshlint.findings import Issue, Severity
from meshlint.mesh import linkerd
from meshlint.mesh.facts.linkerdproxy import native_annotation_for
from meshlint.mesh.facts.webhookinit import WebhookInit
from meshlint.mesh.istio import PROXY_UID
from meshlint.mesh.setting import Setting, origins
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.rule import WORKLOAD, RuleContext, rule
from meshlint.wording import listing


@rule(code="ML102", name="init-container-network", severity=Severity.WARNING, scope=WORKLOAD, kinds=WORKLOAD_KINDS)
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    if workload.classic_linkerd:
        yield from _linkerd(workload)
        return
    if not workload.classic_sidecar or workload.interception_mode.value == "NONE":
        return  # without capture an init container's calls go out as the pod's others do (ML403 says so)
    cni = workload.istio_cni
    outcome = f"blackholed: Istio CNI ({cni.cited}) sends it to a proxy that is not listening yet" if cni is not None else "blackholed under Istio CNI, unmeshed (no mTLS) without it"
    severity = Severity.ERROR if cni is not None else None
    for container in workload.app_init_containers:
        evidence = workload.evidence(container)
        if not evidence or container.run_as_user == PROXY_UID:
            continue
        yield Issue(
            container.position,
            f"{container.label} uses the network ({listing(str(e) for e in evidence[:3])}) but runs before the "
            f"classic istio-proxy sidecar starts: {outcome}",
            "run it as UID 1337 (securityContext.runAsUser: 1337) so the proxy does not capture it, move the call "
            "into the app container, or enable native sidecars so init containers start after the proxy",
            severity,
            related=origins(cni),
        )
    for init in workload.webhook_inits:
        if init.run_as == PROXY_UID or workload.outbound_port_excluded(init.port) is not None:
            continue  # not captured; an excluded port is ML402's to report
        yield Issue(
            init.asked_by.pos,
            f"{init.asked_by_text} makes {init.webhook} add init container '{init.container}', which logs in to Vault "
            f"(port {init.port}) before the classic istio-proxy sidecar starts: {_webhook_outcome(init, cni, 'istio-init')}",
            "enable native sidecars so init containers start after the proxy (sidecar.istio.io/nativeSidecar: \"true\" on "
            "Istio 1.24+); or have the agent run as the proxy's UID 1337, which the proxy does not capture",
            severity,
            related=origins(cni),
        )


def _linkerd(workload: WorkloadView) -> Iterator[Issue]:
    """Linkerd's case (reference §11.5.6): unmeshed without CNI, no network with it."""
    proxy = workload.linkerd_proxy
    cni = proxy.cni
    outcome = "no network at all under the Linkerd CNI plugin" if cni is not None else "unmeshed (no mTLS) without the Linkerd CNI plugin, no network at all with it"
    severity = Severity.ERROR if cni is not None else None
    for container in workload.app_init_containers:
        evidence = workload.evidence(container)
        if not evidence or container.run_as_user == linkerd.PROXY_UID:
            continue
        yield Issue(
            container.position,
            f"{container.label} uses the network ({listing(str(e) for e in evidence[:3])}) but runs before the classic "
            f"linkerd-proxy starts ({proxy.mode}): {outcome}",
            f"enable native sidecars with the pod annotation {native_annotation_for(proxy.version)}, which start the proxy before "
            f"init containers; or run it as the proxy's UID (securityContext.runAsUser: {linkerd.PROXY_UID}), which the proxy "
            "does not capture (still without mTLS), or move the call into the app container",
            severity,
        )
    for init in workload.webhook_inits:
        if init.run_as == linkerd.PROXY_UID or proxy.skips_outbound(init.port):
            continue  # not captured; a skipped port is ML510's to report
        yield Issue(
            init.asked_by.pos,
            f"{init.asked_by_text} makes {init.webhook} add init container '{init.container}', which logs in to Vault "
            f"(port {init.port}) before the classic linkerd-proxy starts ({proxy.mode}): {_webhook_outcome(init, cni, 'linkerd-init')}",
            f"enable native sidecars with the pod annotation {native_annotation_for(proxy.version)}, which start the proxy before "
            "init containers",
            severity,
        )


def _webhook_outcome(init: WebhookInit, cni: Setting[Any] | None, capture_init: str) -> str:
    """What becomes of a webhook's init container's login. Webhooks run in the order of their
    configurations' names, so with the usual names the mesh's runs first and one appended later lands
    after the mesh's redirect (vault-k8s#29): refused, as under CNI. Put first, it runs before the
    redirect, unmeshed."""
    if cni is not None:
        return f"the redirect is in place before any proxy listens ({cni.cited}), so the login is refused and the pod never starts"
    if init.first:
        return f"it runs before {capture_init} sets up the redirect, so it goes out unmeshed (no mTLS), and is refused under CNI"
    return (
        f"appended after {capture_init} when {init.webhook} runs after the mesh's webhook (configurations run in name order, and "
        "the usual names put the mesh's first), its login is refused and the pod never starts; placed before it, the login "
        "goes out unmeshed (no mTLS)"
    )


RULE = check
