"""Judging what the overlays deploy (wave-3 spec V1, "Rendering"): each root kustomization that builds is
checked as built, in its own unit, and what it finds is reported at the file and line the object was
written in.

Rendered findings take the place of the raw ones in the files every unit of which was built: a finding
an overlay's patch settles is gone, one a patch brings is there, and one that holds in several overlays
is said once, naming them. A rendered finding at the very place and with the very words of the raw one
is the raw one (its fix, its fingerprint, its suppression comments). Files in a unit that did not build
keep their raw findings, and the notes say why that unit was not built.
"""

import os
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from meshlint.engine.filecheck import check_file
from meshlint.engine.relocation import Relocation, Sources
from meshlint.findings import Finding, SaidKey, said_key
from meshlint.fingerprint import fingerprinted
from meshlint.rule import Rule
from meshlint.source import inputs
from meshlint.source.render import Rendered, Renderer, render
from meshlint.source.units import Root, Units
from meshlint.suppressions import comment_suppression

if TYPE_CHECKING:
    from meshlint.engine.plan import Plan
    from meshlint.engine.results import Report


class Outcome(NamedTuple):
    """The run's findings once rendering has spoken, the units each rendered finding holds in, notes."""

    findings: list[Finding]
    units: dict[SaidKey, list[str]]
    failed: list[tuple[str, str, str]]  # (unit, who said so, why) of each root not rendered
    rendered: int  # roots built


def judge_rendered(plan: "Plan", report: "Report", units: Units, checked: list[str], jobs: int, diff_files: frozenset[str] | None) -> None:
    """What the root kustomizations deploy, judged as built (engine/rendering.py), in place of the raw
    findings of the files they cover. `diff_files`: a --diff-base run's changed files: the roots that reach
    none are not built, unless a changed file lies in no unit (a platform's mesh config governs every one)."""
    from meshlint.source import render as renderers  # looked up at the call: a test may stand in for the search

    renderer = renderers.find_renderer()
    names = {inputs.real(f): f for f in checked if f != inputs.STDIN}
    # Only the roots that reach a file of the run: a pre-commit run's units hold the whole repository's.
    roots = [root for root in units.roots if not root.component and any(os.path.realpath(f) in names for f in root.files)]
    if diff_files is not None and all(units.of(path) for path in diff_files):
        roots = [root for root in roots if any(os.path.realpath(f) in diff_files for f in root.files)]
    if not roots:
        return
    if renderer is None:
        report.notes.append(f"{len(roots)} root kustomization{'s' if len(roots) != 1 else ''} not rendered: neither kustomize nor kubectl "
                            "is on PATH; their files are checked as written (--render never says this is meant)")
        return
    rules = plan.governing.rules()
    outcome = apply(
        report.findings, units, roots, renderer, lambda path, text: check_file(plan, path, text).findings, names, rules,
        lambda found: fingerprinted(found, plan.root, plan.marks), plan.governing.top.config.max_file_size, jobs,
    )
    report.findings = outcome.findings
    failed = sorted(outcome.failed)
    report.notes.extend(f"{unit}: not rendered ({who}): {why}; its files are checked as written" for unit, who, why in failed)
    report.held_in = outcome.units
    report.summary.rendered = {
        "renderer": renderer.name, "roots": len(roots), "rendered": outcome.rendered,
        "not_rendered": [{"unit": unit, "reason": why} for unit, _, why in failed],
    }


def apply(
    findings: list[Finding], units: Units, roots: list[Root], renderer: Renderer, check: Callable[[str, bytes], Iterable[Finding]], names: dict[str, str],
    rules: Sequence[Rule], fingerprint: Callable[[list[Finding]], list[Finding]], limit: int, jobs: int,
) -> Outcome:
    """`check(path, text)`: a rendered stream's findings, as if it were the file at `path`; `names`: the run's
    name of each file it checks, by real path. Only those files' findings change: a unit's other files
    (a base beside a named overlay file in a pre-commit run) are not reported on."""
    built = render(roots, renderer, limit, jobs, inputs.OVERLAY)
    failed = [(r.root.name, renderer.name, r.error) for r in built if r.text is None and r.error is not None]
    sources = Sources(names)
    placed = _placed(built, check, names, sources, units, failed)
    done = {each.root.name for each, _ in placed}
    if not done:
        return Outcome(findings, {}, failed, 0)
    # A file some of whose units were built: each built unit speaks for itself, and the file as written
    # speaks for the others only (a base one overlay of which needs a remote base).
    reached = {os.path.realpath(f): f for each, _ in placed for f in each.root.files if os.path.realpath(f) in names}
    unbuilt = {real: sorted(units.of(f) - done) for real, f in reached.items() if not units.of(f) <= done}
    kept, held = _raw_kept(findings, set(reached), unbuilt)
    raw = {said_key(f): f for f in findings}
    found = _rendered_found(placed, set(reached), sources, rules, raw, held)
    kept.extend(f for k, f in found.items() if k in raw)
    kept.extend(fingerprint([f for k, f in found.items() if k not in raw]))
    return Outcome(kept, {k: sorted(v) for k, v in held.items()}, failed, len(done))


def _placed(
    built: list[Rendered], check: Callable[[str, bytes], Iterable[Finding]], names: dict[str, str], sources: Sources, units: Units,
    failed: list[tuple[str, str, str]],
) -> list[tuple[Rendered, list[Finding | None]]]:
    """Each built unit's findings, placed where their objects were written (None: nowhere in the run);
    a build whose findings cannot be placed is one not rendered, added to `failed`, never a traceback."""
    placed: list[tuple[Rendered, list[Finding | None]]] = []
    for each in built:
        if each.text is None:
            continue
        stream = names.get(os.path.realpath(each.root.kustomization), each.root.kustomization)
        try:
            moved = Relocation(each, stream, sources, units.fragments)
            placed.append((each, [moved.finding(f) for f in check(stream, each.text)]))
        except Exception as err:
            failed.append((each.root.name, "meshlint", f"it could not check what it builds ({type(err).__name__}: {err})"))
    return placed


def _raw_kept(findings: list[Finding], covered: set[str], unbuilt: dict[str, list[str]]) -> tuple[list[Finding], dict[SaidKey, list[str]]]:
    """The raw findings that still speak: of files no built unit covers, and of files some of whose units
    were not built (held for those units only)."""
    kept: list[Finding] = []
    held: dict[SaidKey, list[str]] = {}
    for f in findings:
        real = os.path.realpath(f.path) if f.resource is not None else ""
        if real not in covered:
            kept.append(f)
        elif real in unbuilt:
            kept.append(f)
            held[said_key(f)] = list(unbuilt[real])
    return kept, held


def _rendered_found(
    placed: list[tuple[Rendered, list[Finding | None]]], covered: set[str], sources: Sources, rules: Sequence[Rule],
    raw: dict[SaidKey, Finding], held: dict[SaidKey, list[str]],
) -> dict[SaidKey, Finding]:
    """One finding per place, rule and words, however many units say it (their names added to `held`);
    a rendered finding that is the raw one is the raw one. Suppression comments in the written files hold."""
    found: dict[SaidKey, Finding] = {}
    by_code = {rule.code: rule for rule in rules}
    for each, moved_findings in placed:
        for finding in moved_findings:
            if finding is None or os.path.realpath(finding.path) not in covered:
                continue
            rule = by_code.get(finding.code)
            lines = sources.lines(finding.path)
            if rule is not None and lines is not None and comment_suppression(lines, finding.position, rule) is not None:
                continue
            key = said_key(finding)
            if key not in found and key not in held:
                found[key] = raw.get(key, finding)
            held.setdefault(key, [])
            if each.root.name not in held[key]:
                held[key].append(each.root.name)
    return found
