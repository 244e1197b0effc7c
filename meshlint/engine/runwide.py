"""What a run says once every file is checked: the findings of rules said once per group (ML100), of
rules about the run as a whole, and of mesh.context files that do not parse; placed in the files they
land in, under the configuration that governs each."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from meshlint.engine.filecheck import finding, source_line
from meshlint.engine.plan import Plan
from meshlint.engine.results import FileResult
from meshlint.engine.subjects import ResourceSubjects, subjects
from meshlint.findings import Finding, Issue, Position, SaidKey, said_key
from meshlint.fingerprint import fingerprinted
from meshlint.mesh.scope import MeshRun
from meshlint.mesh.sources import MeshSource, is_mesh_config, source_of
from meshlint.model.resource import resources_of
from meshlint.rule import FILE, RUN, Rule, RuleContext
from meshlint.source import inputs
from meshlint.source.loader import LoadedFile, decode, load_file, newline_of
from meshlint.suppressions import comment_suppression


def check_context_file(plan: Plan, loaded: LoadedFile) -> FileResult:
    """A mesh context file is read, not checked, unless it is also an input; but a context file that
    does not parse (or whose data.mesh / data.values does not) is never dropped in silence."""
    result = FileResult(loaded.path)
    findings = []
    governed = plan.governing.top
    for rule in governed.rules:
        if FILE not in rule.scopes:
            continue
        items = [ResourceSubjects(r, plan.mesh, governed.options) for d in loaded.documents for r in resources_of(d) if is_mesh_config(r)]
        for subject, about, _ in subjects(rule, loaded, items):
            for issue in rule.check(subject, governed.contexts[rule.code]):
                findings.append(finding(rule, issue, governed.severities[rule.code], about, source_line(loaded.lines, issue.position.line), marks=plan.marks, fixes=plan.fixes))
    result.findings = fingerprinted(findings, plan.root, plan.marks)
    return result


def check_run(plan: Plan, subject: MeshRun) -> list[Finding]:
    """Rules about the run as a whole, once every file is checked; their findings land in the mesh-wide
    sources, which may be files of any process or mesh.context files, so their lines are read here."""
    findings: list[Finding] = []
    lines: dict[str, tuple[list[str], str]] = {}
    top = plan.governing.top
    for rule in plan.governing.rules():
        if RUN in rule.scopes:
            findings.extend(_said(plan, rule, rule.check(subject, (top.contexts.get(rule.code) or _any_context(plan, rule))), lines))
    return fingerprinted(findings, plan.root, plan.marks)


def _said(plan: Plan, rule: Rule, issues: Iterable[Issue], read: dict[str, tuple[list[str], str]]) -> list[Finding]:
    """Issues said once for the run, as findings: each the rule's and severity of the config that
    governs the file it lands in, unless a comment there suppresses it. `read`: each file's lines and
    line break, as far as read."""
    findings = []
    top = plan.governing.top
    for issue in issues:
        path = issue.position.path
        governed = plan.of(path) if path != plan.stdin_name else top
        if rule.code not in governed.severities:
            continue  # the config of that file leaves the rule out
        if path not in read:
            try:
                text = decode(inputs.read(path))[0] if path != plan.stdin_name else ""
            except OSError:
                text = ""
            read[path] = (text.splitlines(), newline_of(text))
        lines, newline = read[path]
        if comment_suppression(lines, issue.position, rule) is not None:
            continue
        # A fix writes new lines as its file ends its own.
        findings.append(finding(rule, issue, governed.severities[rule.code], None, source_line(lines, issue.position.line), newline, fixes=plan.fixes))
    return findings


def combined(plan: Plan, findings: list[Finding], held_in: dict[SaidKey, list[str]]) -> tuple[list[Finding], int]:
    """The findings of rules that say theirs once per group (ML100), grouped; the others as they are.
    Also how many findings a group left unsaid, for the summary."""
    combining = {r.code: r for r in plan.governing.rules() if r.combine is not None}
    if not combining or not any(f.code in combining for f in findings):
        return findings, 0
    unsaid = 0
    kept: list[Finding] = []
    grouped: dict[str, list[Finding]] = {}
    for found in findings:
        (grouped.setdefault(found.code, []) if found.code in combining else kept).append(found)
    units = plan.mesh.units
    sources = _SourcesAt(plan)
    lines: dict[str, tuple[list[str], str]] = {}
    for code, each in grouped.items():
        rule = combining[code]
        combine = rule.combine
        # A file whose config says `group: false` keeps its findings one by one.
        members: list[Finding] = []
        for found in each:
            (members if _options(plan, found, code).get("group") is not False else kept).append(found)
        if combine is None or not members:
            continue
        def units_of(found: Finding) -> list[str]:
            return held_in.get(said_key(found)) or sorted(units.named(found.path))

        def options_of(found: Finding, code: str = code) -> Mapping[str, Any]:
            return _options(plan, found, code)

        said = combine(members, units_of, sources.at, options_of)
        made = [f for f in said if isinstance(f, Finding)]  # members kept as found, or reworded
        made.extend(fingerprinted(_said(plan, rule, [i for i in said if isinstance(i, Issue)], lines), plan.root, plan.marks))
        told = {p for f in said for p in (f.position, *f.related)}
        unsaid += len({m.position for m in members} - told)  # a workload once, however many overlays deploy it
        if held_in:  # what rendering found: the units of a combined finding are its members' own
            for found in made:
                places = {found.position, *found.related}
                held = sorted({u for m in members if m.position in places for u in units_of(m)})
                if held:
                    held_in[said_key(found)] = held
        kept.extend(made)
    kept.sort(key=order)
    return kept, unsaid


def _options(plan: Plan, found: Finding, code: str) -> Mapping[str, Any]:
    """The rule's options in the config that governs the finding's file."""
    governed = plan.of(found.path) if found.path != plan.stdin_name else plan.governing.top
    context = governed.contexts.get(code)
    return context.options if context is not None else {}


class _SourcesAt:
    """The mesh-wide source written at a place of the run (a grouped finding's fix edits it)."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.read: dict[str, list[MeshSource]] = {}

    def at(self, position: Position) -> MeshSource | None:
        path = position.path
        if path not in self.read:
            try:
                loaded = load_file(path, path, inputs.read(path), input_file=False) if path != self.plan.stdin_name else None
            except OSError:
                loaded = None
            found = [r for d in loaded.documents for r in resources_of(d)] if loaded is not None else []
            self.read[path] = [s for s in map(source_of, found) if s is not None]
        before = [s for s in self.read[path] if s.resource.document.line <= position.line]
        return before[-1] if before else None


def _any_context(plan: Plan, rule: Rule) -> RuleContext:
    return next(g.contexts[rule.code] for g in plan.governing.all() if rule.code in g.contexts)


def order(finding: Finding) -> tuple[str, int, int, str]:
    """Path, line, column and code; ties keep the order the files and rules were checked in, which is
    the same for any number of jobs. (A short key: a big report sorts without doubling its memory.)"""
    return finding.path, finding.line, finding.column, finding.code
