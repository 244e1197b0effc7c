"""An AuthorizationPolicy with HTTP rules that ztunnel enforces, and so cannot enforce as written.

## What it does
Reports an Istio AuthorizationPolicy attached by `selector`, or namespace-wide (no `targetRef` or
`targetRefs`), in a namespace the run shows enrolled in ambient mode (a Namespace labelled
`istio.io/dataplane-mode: ambient` without a sidecar injection label; for a policy in the root
namespace, any such Namespace), when ztunnel would enforce it without what it says:
- a DENY policy whose rules match only on HTTP attributes has no effect at all (error);
- a DENY policy that also has L4 fields is enforced without its HTTP attributes, so it denies more;
- an ALLOW policy loses every rule that uses an HTTP attribute, so it allows less (when it loses all
  of them, every request to its workloads is denied);
- a CUSTOM or AUDIT policy is not enforced by ztunnel at all.
HTTP attributes are `hosts`, `methods` and `paths` (and their `not` forms) in `to`, `remoteIpBlocks`
and `requestPrincipals` (and `not` forms) in `from`, and every `when` key except `source.ip`,
`source.namespace`, `source.principal`, `destination.ip` and `destination.port`. Silent when the run
holds no Namespace that puts the policy's namespace in ambient mode.

## Why is this bad?
In ambient mode a policy attached by selector or namespace is enforced by ztunnel, the node proxy,
which sees only L4: connections, not requests. istiod translates the policy without its HTTP parts
and records a status message that nobody reads in a repository. A DENY meant to block `/admin`
silently allows everything; an ALLOW meant to open `GET /public` silently blocks the workload. HTTP
rules are enforced only by a waypoint proxy, which takes policies attached with `targetRefs`.

## Example
```yaml
apiVersion: v1
kind: Namespace
metadata:
  name: shop
  labels:
    istio.io/dataplane-mode: ambient
---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata:
  name: no-admin
  namespace: shop
spec:
  selector:
    matchLabels: {app: storefront}
  action: DENY
  rules:
    - to:
        - operation:
            paths: ["/admin/*"]  # expect: ML406:error
```

## Use instead
```yaml
apiVersion: v1
kind: Namespace
metadata:
  name: shop
  labels:
    istio.io/dataplane-mode: ambient
    istio.io/use-waypoint: waypoint
---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata:
  name: no-admin
  namespace: shop
spec:
  targetRefs:
    - kind: Service
      group: ""
      name: storefront
  action: DENY
  rules:
    - to:
        - operation:
            paths: ["/admin/*"]
```
The waypoint itself is deployed with `istioctl waypoint apply -n shop` (a Gateway of class
`istio-waypoint`).

## References
- istio/istio `pilot/pkg/serviceregistry/ambient/authorization.go` (`convertAuthorizationPolicy`, `handleRule`)
- https://istio.io/latest/docs/ambient/usage/l7-features/, https://istio.io/latest/docs/ambient/migrate/migrate-policies/
- reference §16.4
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from meshlint.findings import Issue, Position, Severity
from meshlint.mesh.ambient import ambient_namespace, waypoint
from meshlint.mesh.scope import Place
from meshlint.model.resource import Resource
from meshlint.rule import RESOURCE, RuleContext, rule
from meshlint.source.document import Node
from meshlint.wording import counted, listing

if TYPE_CHECKING:
    from meshlint.mesh.facts.authorization import ZtunnelPolicy


@rule(code="ML406", name="ztunnel-drops-http-rules", severity=Severity.WARNING, scope=RESOURCE, kinds={"AuthorizationPolicy"})
def check(resource: Resource, ctx: RuleContext) -> Iterator[Issue]:
    from meshlint.mesh.facts.authorization import ztunnel_policy  # only runs that hold a policy read it

    policy = ztunnel_policy(resource)
    if policy is None or not resource.namespace:
        return
    place = Place.of(resource.path)
    mesh_wide = resource.namespace == ctx.mesh_options.root_namespace and policy.attachment != "selector"
    enrolled = _ambient_namespaces(resource.namespace, mesh_wide, place, ctx)
    if not enrolled:
        return
    name, label = enrolled[0]
    where = f"ambient namespace {name} ({label.pos.path}:{label.pos.line})"
    if mesh_wide:
        where = f"the root namespace, so mesh-wide, over {where}" + (f" and {counted(len(enrolled) - 1, 'more')}" if len(enrolled) > 1 else "")
    head = f"AuthorizationPolicy {resource.name} ({policy.action}, attached {_attachment(policy)}) is enforced by ztunnel in {where}"
    found = _effect(policy)
    if found is None:
        return
    position, effect, severity = found
    yield Issue(position, f"{head}: {effect}", _help(resource, policy, ctx, place), severity, related=(label.pos,))


def _effect(policy: ZtunnelPolicy) -> tuple[Position, str, Severity | None] | None:
    names = listing(name for name, _ in policy.http)
    first = policy.http[0][1] if policy.http else policy.action_position
    if policy.action in ("CUSTOM", "AUDIT"):
        return policy.action_position, f"ztunnel does not support the {policy.action} action, so it does not enforce this policy at all", None
    if not policy.http:
        return None
    if policy.action == "DENY" and not policy.enforceable:
        return first, (
            f"its rules match only on HTTP attributes ({names}), which ztunnel cannot see; once they are omitted nothing "
            "is left to match, so the policy has no effect and what it means to deny is allowed"
        ), Severity.ERROR
    if policy.action == "DENY":
        return first, f"ztunnel enforces its rules without their HTTP attributes ({names}), so they match, and deny, more than written", None
    lost = "none is left, so every request to its workloads is denied" if policy.dropped == policy.rules else "what only those rules allowed is denied"
    return first, (
        f"ztunnel drops each ALLOW rule that uses HTTP attributes ({names}): {policy.dropped} of "
        f"{counted(policy.rules, 'rule')}, and {lost}"
    ), None


def _attachment(policy: ZtunnelPolicy) -> str:
    return "by selector" if policy.attachment == "selector" else "namespace-wide"


def _ambient_namespaces(namespace: str, mesh_wide: bool, place: Place, ctx: RuleContext) -> list[tuple[str, Node]]:
    """The ambient namespaces the policy governs: its own, or every one for a root-namespace policy
    without a selector (ztunnel's global scope)."""
    names = sorted(ctx.mesh.namespaces) if mesh_wide else [namespace]
    found = []
    for name in names:
        label = ambient_namespace(ctx.mesh.namespace_at(name, place)[0])
        if label is not None:
            found.append((name, label))
    return found


def _help(resource: Resource, policy: ZtunnelPolicy, ctx: RuleContext, place: Place) -> str:
    named = waypoint(ctx.mesh.namespace_at(resource.namespace, place)[0])
    target = (
        f"targetRefs: [{{kind: Gateway, group: gateway.networking.k8s.io, name: {named.text}}}] (the waypoint the namespace uses)"
        if named is not None
        else "targetRefs naming the Service (or the waypoint Gateway) and deploy a waypoint (istioctl waypoint apply)"
    )
    if policy.action in ("CUSTOM", "AUDIT"):
        return f"attach the policy to a waypoint, which supports the {policy.action} action, with {target}"
    return f"attach the policy to a waypoint, which enforces HTTP rules, with {target}; or keep only L4 fields (ports, principals, namespaces, ipBlocks) for ztunnel"


RULE = check
