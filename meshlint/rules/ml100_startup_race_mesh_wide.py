"""The hold is off mesh-wide, and workloads with classic Istio sidecars start without it: said once.

## What it does
Collects the workloads that ML101 leaves alone: a classic (non-native) Istio sidecar, no
`holdApplicationUntilProxyStarts`, and no strong evidence of a call at startup (their own command
connecting, a database or broker connection string). Peer addresses in env are weak evidence: an app
may never dial them before it serves, so only workloads that name one are counted: a workload that
names no peer has nothing at stake (option `require-peers: false` counts every workload, as before).
Instead of one warning per workload, it reports once per mesh-wide source and deployment unit (units
that share a workload, such as the overlays of one base, are one): at the source that sets the
proxies' defaults (IstioOperator `meshConfig.defaultConfig`, istiod Helm values, the `istio`
ConfigMap) when there is one. The message counts them and names the first; every one is a related
location (SARIF `relatedLocations`). A workload alone with no source to set is reported at itself, with
its own fix. Several workloads that no mesh-wide configuration of the run governs (an application
repository whose mesh is installed elsewhere) get no finding: the one line that fixes them belongs in a
file this run does not hold, so the summary counts them instead ("N workloads start without
holdApplicationUntilProxyStarts"; JSON `summary.unheld`). Name that configuration with `mesh.context`
to have them reported at it, or set option `require-source: false` to report them at the first of them,
without a fix. Option `group: false` reports each workload on its own instead, as ML101 did before this
rule existed.

## Why is this bad?
Kubernetes starts the app and the proxy side by side. Until Envoy has its configuration, outbound
connections from the app are refused, so any app that calls out before the proxy is ready fails "only
sometimes". When nothing shows which apps call out early, the remedy is not two hundred annotations but
one line in the mesh-wide configuration: hold every application until its proxy is ready.

## Example
```yaml
apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata:
  name: control-plane
spec:
  meshConfig:
    defaultConfig:  # expect: ML100:warning
      terminationDrainDuration: 5s
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    metadata:
      labels: {sidecar.istio.io/inject: "true"}
    spec:
      containers: [{name: web, image: "web:1", env: [{name: API_URL, value: "http://api:8080"}]}]
```

## Use instead
```yaml
apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata:
  name: control-plane
spec:
  meshConfig:
    defaultConfig:
      terminationDrainDuration: 5s
      holdApplicationUntilProxyStarts: true
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    metadata:
      labels: {sidecar.istio.io/inject: "true"}
    spec:
      containers: [{name: web, image: "web:1", env: [{name: API_URL, value: "http://api:8080"}]}]
```

## Fix safety
Unsafe: `--fix --unsafe-fixes` sets `holdApplicationUntilProxyStarts: true` in the source's
`meshConfig.defaultConfig` (made when missing; inside `data.mesh` of an `istio` ConfigMap). It changes
how every pod of the mesh starts, including pods outside this run, and an app whose own startup
blocks the proxy (a readiness gate on the app) would then never start. Without a source, a finding
about one workload offers ML101's safe fix (the hold in its own `proxy.istio.io/config`); one about
several offers none.

## References
- https://istio.io/latest/docs/reference/config/istio.mesh.v1alpha1/ (ProxyConfig holdApplicationUntilProxyStarts)
- https://istio.io/latest/docs/ops/common-problems/injection/
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from meshlint.findings import Finding, Issue, Position, Severity, recipe
from meshlint.mesh.workload import HOLD, WorkloadView
from meshlint.model.kinds import WORKLOAD_KINDS
from meshlint.rule import WORKLOAD, RuleContext, rule
from meshlint.rules.ml101_startup_race import HOLD_HELP, hold_fix, native_hint, startup_race_applies
from meshlint.wording import listing

if TYPE_CHECKING:
    from meshlint.fix.edits import Fix
    from meshlint.mesh.sources import MeshSource

ALONE = "nothing shows a call out at startup that needs the hold on this workload alone: set it mesh-wide"
NAMED = 3  # workloads a grouped finding names in its message (the rest are related locations)


@rule(
    code="ML100",
    name="startup-race-mesh-wide",
    severity=Severity.WARNING,
    scope=WORKLOAD,
    kinds=WORKLOAD_KINDS,
    fix="mixed",
    options={
        "group": {
            "type": "boolean",
            "default": True,
            "description": "one finding per mesh-wide source and deployment unit; false: one per workload",
        },
        "require-peers": {
            "type": "boolean",
            "default": True,
            "description": "count only workloads that name a peer in env; false: every workload that starts without the hold",
        },
        "require-source": {
            "type": "boolean",
            "default": True,
            "description": (
                "report several workloads only where the run holds the mesh-wide configuration to set the hold in (else the "
                "summary counts them); false: also at the first of them when it does not"
            ),
        },
    },
)
def check(workload: WorkloadView, ctx: RuleContext) -> Iterator[Issue]:
    """One workload of a group: combined with the others at the end of the run (`combine`)."""
    if not startup_race_applies(workload) or workload.strong_evidence:
        return
    weak = workload.startup_evidence
    if not weak and ctx.options.get("require-peers") is not False:
        return  # nothing it names could be dialled before the proxy is ready: advice, not a finding
    named = f"; it names peers in env: {listing([str(e) for e in weak[:3]])}" if weak else ""
    source = workload.settings.istio_source
    hold = workload.hold
    yield Issue(
        workload.template.fix_position,
        f"{workload.template.title} can start before its istio-proxy sidecar is ready{workload.classification.assumed_note}: "
        f"classic sidecar ({workload.native.cited}), holdApplicationUntilProxyStarts is false ({hold.where}){named}",
        f"{HOLD_HELP}, {native_hint(workload)}",  # what a workload said alone is told
        related=(source,) if source is not None else (),
        # Kept when the workload is said on its own (`group: false`, or no mesh-wide source to set and
        # no other workload): made only then.
        fix=recipe(hold_fix, workload) if source is None or ctx.options.get("group") is False else None,
    )


def combine(
    findings: Sequence[Finding],
    units_of: Callable[[Finding], list[str]],
    sources: Callable[[Position], MeshSource | None],
    options_of: Callable[[Finding], Mapping[str, Any]],
) -> list[Issue | Finding]:
    """The run's per-workload findings of this rule, one per mesh-wide source and deployment unit.
    `units_of` gives the units a finding holds in; `sources` finds the mesh-wide source written at a
    position (None: none there); `options_of` the rule's options where a finding is. A workload is
    counted once, however many overlays deploy it. A group of several that no source of the run
    governs is said nothing of (the summary counts its workloads) unless option `require-source` is
    false; a workload alone keeps its finding and its own fix."""
    # Each workload once, in every unit any of its findings holds in (overlays that deploy it with
    # different words say it again).
    places: dict[tuple[str, tuple[str, int, int]], tuple[Finding, set[str]]] = {}
    for found in findings:
        written = found.related[0].path if found.related else ""
        held = places.setdefault((written, (found.path, found.line, found.column)), (found, set()))[1]
        held.update(units_of(found))
    # Workloads of one source whose units overlap are one decision (a base and the overlays that swap
    # parts of it): their groups merge, and the finding names every unit.
    groups: list[tuple[str, set[str], list[Finding]]] = []
    for (written, _), (found, held) in places.items():
        joined = [g for g in groups if g[0] == written and (g[1] & held or not (g[1] or held))]
        for group in joined[1:]:
            joined[0][1].update(group[1])
            joined[0][2].extend(group[2])
            groups.remove(group)
        if joined:
            joined[0][1].update(held)
            joined[0][2].append(found)
        else:
            groups.append((written, set(held), [found]))
    issues: list[Issue | Finding] = []
    for _, units, members in sorted(((w, tuple(sorted(u)), m) for w, u, m in groups), key=lambda g: g[:2]):
        members.sort(key=lambda f: (f.path, f.line, f.column))
        anchor = members[0].related[0] if members[0].related else None
        source = sources(anchor) if anchor is not None else None
        if source is None and len(members) > 1 and all(options_of(m).get("require-source") is not False for m in members):
            continue  # its one fix is a line in a mesh-wide configuration this run does not hold: the summary counts them
        issues.append(_grouped(members, units, source))
    return issues


def _grouped(members: list[Finding], units: tuple[str, ...], source: MeshSource | None) -> Issue | Finding:
    if source is None and len(members) == 1:  # no source to set, no other workload: said at the workload, with its fix
        return members[0]._replace(message=f"{members[0].message}; {ALONE}")
    position = _position(source) if source is not None else Position(members[0].path, members[0].line, members[0].column)
    # A workload at the finding's own place is named alone; the others with where they are.
    names = [_title(f) if (f.path, f.line, f.column) == tuple(position) else f"{_title(f)} ({f.path}:{f.line})" for f in members[:NAMED]]
    more = len(members) - NAMED
    listed = listing(names + ([f"{more} more"] if more > 0 else []))
    scope = f" in {listing(list(units))}" if units else ""
    if len(members) == 1:
        said = f"{listed} starts with a classic istio-proxy sidecar without it{scope}"
    else:
        said = f"{len(members)} workloads with a classic istio-proxy sidecar start without it{scope}: {listed}"
    off = "off in this mesh-wide configuration" if source is not None else "off mesh-wide (Istio's default)"
    where = "here" if source is not None else "in the mesh-wide configuration (IstioOperator, istiod's Helm values or the istio ConfigMap)"
    return Issue(
        position,
        f"holdApplicationUntilProxyStarts is {off}: {said}; none shows a call out at startup that needs the hold on that workload alone",
        f"set meshConfig.defaultConfig.holdApplicationUntilProxyStarts: true {where}: every pod then waits for its proxy",
        related=tuple(Position(f.path, f.line, f.column) for f in members),
        fix=recipe(_hold_fix, source) if source is not None else None,
    )


def _title(found: Finding) -> str:
    resource = found.resource
    return f"{resource.kind} {resource.name or '(unnamed)'}" if resource is not None else found.path


def _position(source: MeshSource) -> Position:
    """Where the grouped finding points: the source's defaultConfig, else its meshConfig, else itself."""
    mesh = source.mesh_config
    if mesh is not None and mesh.exists:
        default = mesh.get("defaultConfig")
        node = default if default.exists else mesh
        return node.key_pos or node.pos
    return source.resource.root.pos


def _hold_fix(source: MeshSource) -> Fix | None:
    """holdApplicationUntilProxyStarts: true in the source's defaultConfig (made where missing)."""
    from meshlint.fix import mapping, proxy_config
    from meshlint.fix.edits import UNSAFE

    mesh = source.mesh_config
    if mesh is None or not mesh.is_map:
        return None
    default = mesh.get("defaultConfig")
    if default.exists and not default.is_map:
        return None
    if default.exists and default.get(HOLD).exists:
        change = mapping.replace_scalar(default.get(HOLD), "true")
    elif default.exists:
        change = mapping.add(default, mapping.entry(HOLD, "true"))
    else:
        change = mapping.add(mesh, mapping.entry(HOLD, "true"), missing=("defaultConfig",))
    title = f"set meshConfig.defaultConfig.{HOLD}: true (every pod of the mesh waits for its proxy)"
    return mapping.as_fix(title, mesh, proxy_config.in_source(source, change), UNSAFE)


RULE = check
RULE.combine = combine
