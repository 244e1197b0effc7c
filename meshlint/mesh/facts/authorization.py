"""What ztunnel makes of an AuthorizationPolicy (reference §16.4.2).

In ambient mode a policy attached by `selector`, or namespace-wide (no `targetRef`/`targetRefs`), is
enforced by ztunnel, which sees only L4. istiod translates it without its HTTP attributes
(`pilot/pkg/serviceregistry/ambient/authorization.go` `convertAuthorizationPolicy`): an ALLOW rule
that uses any of them is dropped whole; a DENY keeps what is left of each rule, and has no effect
when nothing enforceable is left; CUSTOM and AUDIT are not translated at all. A policy with targetRefs
is for a waypoint and never reaches ztunnel.
"""

from typing import NamedTuple

from meshlint.findings import Position
from meshlint.model.resource import Resource
from meshlint.source.document import Node

SECURITY_GROUP = "security.istio.io"
HTTP_OPERATION = ("hosts", "notHosts", "methods", "notMethods", "paths", "notPaths")
HTTP_SOURCE = ("remoteIpBlocks", "notRemoteIpBlocks", "requestPrincipals", "notRequestPrincipals")
L4_OPERATION = ("ports", "notPorts")
L4_SOURCE = ("ipBlocks", "notIpBlocks", "namespaces", "notNamespaces", "serviceAccounts", "notServiceAccounts", "principals", "notPrincipals")
L4_WHEN = frozenset(("source.ip", "source.namespace", "source.principal", "destination.ip", "destination.port"))


class ZtunnelPolicy(NamedTuple):
    """An AuthorizationPolicy that ztunnel enforces, and what it loses there."""

    action: str  # ALLOW (the default), DENY, CUSTOM or AUDIT
    action_position: Position
    attachment: str  # `selector` or `namespace-wide`
    http: tuple[tuple[str, Position], ...]  # the HTTP attributes it uses, each where first written
    rules: int  # how many rules it has
    dropped: int  # ALLOW: rules ztunnel drops whole
    enforceable: bool  # DENY: a rule still matches something once the HTTP attributes are gone


def ztunnel_policy(resource: Resource) -> ZtunnelPolicy | None:
    """The policy as ztunnel enforces it, or None when it is not an Istio AuthorizationPolicy or it
    is attached by targetRef(s), to a waypoint."""
    if resource.kind != "AuthorizationPolicy" or resource.api_version.split("/", 1)[0] != SECURITY_GROUP:
        return None
    spec = resource.root.get("spec")
    if any(_present(spec.get(key)) for key in ("targetRef", "targetRefs")):
        return None
    action_node = spec.get("action")
    action = (action_node.text or "ALLOW").upper() if action_node.exists else "ALLOW"
    http: dict[str, Position] = {}
    rules = list(spec.get("rules").elements())
    dropped, enforceable = 0, False
    for rule in rules:
        found = _http_attributes(rule)
        for name, position in found:
            http.setdefault(name, position)
        dropped += bool(found)
        enforceable = enforceable or _enforceable(rule)
    return ZtunnelPolicy(
        action=action,
        action_position=(action_node.pos if action_node.exists else resource.root.get("spec").key_pos or resource.root.pos),
        attachment="selector" if _present(spec.get("selector")) else "namespace-wide",
        http=tuple(http.items()),
        rules=len(rules),
        dropped=dropped,
        enforceable=enforceable,
    )


def _http_attributes(rule: Node) -> list[tuple[str, Position]]:
    found = []
    for to in rule.get("to").elements():
        operation = to.get("operation")
        found += [(k, operation.get(k).key_pos or operation.get(k).pos) for k in HTTP_OPERATION if _present(operation.get(k))]
    for source_entry in rule.get("from").elements():
        source = source_entry.get("source")
        found += [(k, source.get(k).key_pos or source.get(k).pos) for k in HTTP_SOURCE if _present(source.get(k))]
    for when in rule.get("when").elements():
        key = when.get("key")
        if key.text not in L4_WHEN:
            found.append((f"when {key.text}", key.pos))
    return found


def _enforceable(rule: Node) -> bool:
    """What is left of a DENY rule at ztunnel still matches something: every part it keeps (its `to`,
    its `from`, each `when`) holds an L4 field. A rule with no parts matches every request."""
    parts = []
    if rule.get("to").is_list and list(rule.get("to").elements()):
        parts.append(any(_present(t.path("operation", k)) for t in rule.get("to").elements() for k in L4_OPERATION))
    if rule.get("from").is_list and list(rule.get("from").elements()):
        parts.append(any(_present(f.path("source", k)) for f in rule.get("from").elements() for k in L4_SOURCE))
    for when in rule.get("when").elements():
        parts.append(when.get("key").text in L4_WHEN and (_present(when.get("values")) or _present(when.get("notValues"))))
    return all(parts)


def _present(node: Node) -> bool:
    """Set to something: a non-empty list or mapping, or a scalar."""
    return node.exists and node.value not in (None, "", [], {})
