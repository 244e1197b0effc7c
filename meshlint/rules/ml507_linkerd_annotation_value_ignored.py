"""A Linkerd proxy annotation whose value, or whose name on this release, the injector ignores.

## What it does
On pod templates and Namespaces, reports Linkerd annotations the injector passes over:
`config.linkerd.io/proxy-await` and `proxy-admin-shutdown` other than `enabled`/`disabled`; the
native-sidecar switch (`config.linkerd.io/`, `config.beta.linkerd.io/`, `config.alpha.linkerd.io/`
`proxy-enable-native-sidecar`) that is not a Go boolean; `proxy-wait-before-exit-seconds` that is not a
whole number; `shutdown-grace-period` that is not a Go duration. With `--linkerd-version`, also the
native-sidecar names that release does not read: the GA name before 2.20, and the beta name on a
Namespace from 2.20 on, where pods no longer inherit it (also without a version, as 2.20 is assumed).

## Why is this bad?
Linkerd's vocabulary changes between annotations: `enabled`/`disabled` for await, shutdown and
injection, but a boolean for native sidecars, so `proxy-enable-native-sidecar: enabled` does nothing and
`proxy-await: "false"` keeps the default. The injector logs a warning at most; the pod runs with
settings nobody chose. On upgrade to 2.20, a namespace's beta native-sidecar opt-out stops applying
while native sidecars become the default.

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: worker
spec:
  selector: {matchLabels: {app: worker}}
  template:
    metadata:
      labels: {app: worker}
      annotations:
        linkerd.io/inject: enabled
        config.linkerd.io/proxy-enable-native-sidecar: enabled  # expect: ML507:warning
        config.linkerd.io/proxy-await: "false"  # expect: ML507:warning
    spec:
      containers:
        - name: worker
          image: worker:1.0
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: worker
spec:
  selector: {matchLabels: {app: worker}}
  template:
    metadata:
      labels: {app: worker}
      annotations:
        linkerd.io/inject: enabled
        config.linkerd.io/proxy-enable-native-sidecar: "true"
    spec:
      containers:
        - name: worker
          image: worker:1.0
```

## References
- linkerd/linkerd2 `pkg/inject/inject.go` (`ApplyAnnotationOverrides`, native sidecar parsed with `strconv.ParseBool`,
  `AppendNamespaceAnnotations`)
- linkerd/linkerd2 `cli/cmd/doc.go` (annotation values)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from meshlint import numbers
from meshlint.findings import Issue, Severity
from meshlint.mesh import linkerd
from meshlint.mesh.facts.durations import parse_duration
from meshlint.mesh.facts.linkerdproxy import VERSION_UNKNOWN, version_text
from meshlint.mesh.options import at_least
from meshlint.mesh.workload import WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.model.resource import Resource
from meshlint.rule import RESOURCE, WORKLOAD, RuleContext, rule
from meshlint.source.document import Node

if TYPE_CHECKING:
    from packaging.version import Version

NATIVE_NAMES = tuple(name for name, _ in linkerd.NATIVE_ANNOTATIONS)


@rule(code="ML507", name="linkerd-annotation-value-ignored", severity=Severity.WARNING, scope=(WORKLOAD, RESOURCE), kinds=WORKLOAD_KINDS | {"Namespace"})
def check(subject: WorkloadView | Resource, ctx: RuleContext) -> Iterator[Issue]:
    if isinstance(subject, WorkloadView):
        annotations, where, namespace = subject.template.annotations(), "the pod template", False
    elif subject.kind == "Namespace":
        annotations, where, namespace = subject.annotations, f"Namespace {subject.name}", True
    else:
        return
    version = ctx.mesh_options.versions.linkerd
    for key, node in annotations.items():
        if not isinstance(node.value, str):
            continue  # not a string: the API server rejects it first (ML404)
        problem = _value_problem(key, node.value) or _name_problem(key, version, namespace)
        if problem is not None:
            yield Issue(node.pos, f"{key}: {_quoted(node)} on {where}: {problem[0]}", problem[1])


def _value_problem(key: str, value: str) -> tuple[str, str] | None:
    if key in (linkerd.AWAIT, linkerd.ADMIN_SHUTDOWN) and value not in linkerd.ENABLED_DISABLED:
        return "Linkerd reads only enabled or disabled here; it logs a warning and keeps the default", "write enabled or disabled"
    if key in NATIVE_NAMES and value not in linkerd.GO_BOOLS:
        return (
            "the native-sidecar switch is read as a Go boolean, so this value is silently ignored and the default applies",
            'write "true" or "false" (unlike the other Linkerd annotations, not enabled/disabled)',
        )
    if key == linkerd.WAIT_BEFORE_EXIT and numbers.whole(value.strip()) is None:
        return "not a whole number of seconds, so the injector ignores it", 'write a number of seconds, e.g. "10"'
    if key == linkerd.SHUTDOWN_GRACE_PERIOD and parse_duration(value) is None:
        return "not a Go duration, so the injector ignores it and the proxy keeps its 120 s default", 'write a duration such as "25s"'
    return None


def _name_problem(key: str, known: Version | None, namespace: bool) -> tuple[str, str] | None:
    if key == linkerd.NATIVE_GA and known is not None and not at_least(known, "2.20"):
        older = linkerd.NATIVE_BETA if at_least(known, "2.19") else linkerd.NATIVE_ALPHA
        return f"{version_text(known)} does not read this name (GA from 2.20), so it does nothing", f"write {older} until the upgrade to 2.20"
    if key == linkerd.NATIVE_BETA and namespace and (known is None or at_least(known, "2.20")):
        assumed = version_text(known) if known is not None else f"{VERSION_UNKNOWN}, 2.20 assumed"
        return (
            f"from Linkerd 2.20 pods no longer inherit the beta name from their namespace ({assumed}), while native sidecars "
            "become the default",
            f"write {linkerd.NATIVE_GA} on the Namespace (2.20+)",
        )
    return None


def _quoted(node: Node) -> str:
    return f'"{node.value}"' if node.style in ('"', "'") else str(node.value)


RULE = check
