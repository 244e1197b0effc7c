"""One run: paths → loaded files → resources → mesh context → rules → suppressions → findings."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import partial

from meshlint.config import Config, ConfigError
from meshlint.engine import parallel
from meshlint.engine.results import FileResult, Report, Skipped, Summary
from meshlint.engine.selection import active_rules, rule_options, severity_for
from meshlint.engine.subjects import ResourceSubjects, subjects
from meshlint.findings import Finding, Issue, Position, Severity
from meshlint.fingerprint import fingerprinted, repository_root
from meshlint.mesh.context import MeshContext
from meshlint.mesh.options import MeshOptions, Versions, parse_version
from meshlint.model.kinds import MESH_CONTEXT_KINDS, WORKLOAD_KINDS
from meshlint.model.prefilter import might_hold_context
from meshlint.model.resource import Resource, resources_of
from meshlint.rule import Rule, RuleContext
from meshlint.source import inputs
from meshlint.source.loader import LoadedFile, decode, document_chunks, load_chunks, load_file
from meshlint.suppressions import annotation_suppression, comment_suppression, entry_matches, suppressions_in


@dataclass(eq=False, repr=False)
class Plan:
    """Everything the second pass needs, made once; worker processes inherit it when forked."""

    stdin: bytes | None
    mesh: MeshContext
    rules: list[Rule]
    contexts: dict[str, RuleContext]
    severities: dict[str, Severity | None]
    root: str  # the repository root that fingerprints are relative to
    known: frozenset[str]  # every rule's code and name (and ALL), upper-cased: suppressions may name them
    report_unused: bool  # list suppression entries that silenced nothing


def run(paths: list[str], config: Config, rules: list[Rule], mesh_config: Iterable[str] = (), jobs: int = 1) -> Report:
    """Two passes. The first reads only what the mesh context needs (context files, and the documents of
    the inputs that could be Namespaces, Services, PeerAuthentications or mesh config); the second
    reads each input on its own, checks it against that context and lets it go, so memory holds the
    context and the findings, never the whole tree. A big tree's second pass runs in `jobs` worker
    processes (one at least); the report is the same, byte for byte, for any number of them."""
    active = active_rules(rules, config)
    options = {rule.code: rule_options(rule, config) for rule in active}
    collected = inputs.collect(paths or ["."], config.exclude, config.base)
    notes = list(collected.warnings)

    stdin = inputs.read(inputs.STDIN) if inputs.STDIN in collected.files else None
    mesh = _mesh_context(collected.files, stdin, config, mesh_config)
    plan = Plan(
        stdin=stdin,
        mesh=mesh,
        rules=active,
        contexts={rule.code: RuleContext(mesh=mesh, options=options[rule.code]) for rule in active},
        severities={rule.code: severity_for(rule, config) for rule in active},
        root=repository_root(config.path),
        known=frozenset(["ALL"] + [r.code.upper() for r in rules] + [r.name.upper() for r in rules]),
        report_unused=config.report_unused_suppressions,
    )
    check = partial(_check_file, plan)
    results: Iterable[FileResult]
    if len(collected.files) >= parallel.PARALLEL_FROM:
        # Big trees are checked in worker processes, even with one job: a worker's per-file garbage
        # never mixes with the findings this process keeps, so memory stays flat as trees grow.
        results = parallel.check_files(check, collected.files, max(1, jobs))
    else:
        results = map(check, collected.files)

    report = Report([], Summary(), active, notes, root=plan.root, fail_on=config.fail_on)
    for result in results:
        report.summary.add(result.summary)
        report.findings.extend(result.findings)
        report.notes.extend(result.notes)
        report.skipped.extend(result.skipped)
        report.files.append(result.path)
    report.findings.sort(key=_order)
    report.summary.count(report.findings)
    return report


def _mesh_context(files: list[str], stdin: bytes | None, config: Config, mesh_config: Iterable[str]) -> MeshContext:
    """The first pass. The context takes its facts from each resource as it is read, and the resource
    is dropped: a tree with thousands of Services keeps thousands of small facts, not documents."""
    options = MeshOptions(
        default_injection=config.default_injection,
        injected_namespaces=config.injected_namespaces,
        root_namespace=config.root_namespace,
        versions=Versions(parse_version(config.istio_version), parse_version(config.kubernetes_version)),
    )
    return MeshContext(_context_resources(files, stdin, config, mesh_config), options)


def _context_resources(files: list[str], stdin: bytes | None, config: Config, mesh_config: Iterable[str]) -> Iterator[Resource]:
    targets = {os.path.realpath(p) for p in files if p != inputs.STDIN}
    for path in list(config.mesh_context) + list(mesh_config):
        if os.path.realpath(path) in targets:
            continue
        display = os.path.relpath(path) if os.path.isabs(path) else path
        try:
            loaded = load_file(path, display)  # messages name it as the user would
        except OSError as err:
            raise ConfigError(f"{display}: cannot read mesh context file: {err.strerror or err}") from err
        yield from (r for d in loaded.documents for r in resources_of(d))
    for path in files:
        try:
            data = stdin if path == inputs.STDIN and stdin is not None else inputs.read(path)
        except OSError:
            continue  # the second pass reports it
        text, _ = decode(data)
        chunks = [c for c in document_chunks(text) if might_hold_context(c[1])]
        if not chunks:
            continue
        for document in load_chunks(inputs.display_name(path), chunks, text.splitlines()):
            yield from (r for r in resources_of(document) if r.kind in MESH_CONTEXT_KINDS)


def _check_file(plan: Plan, path: str) -> FileResult:
    result = FileResult(inputs.display_name(path))
    try:
        loaded = load_file(path, data=plan.stdin if path == inputs.STDIN else None)
    except OSError as err:
        reason = err.strerror or str(err)
        result.skipped.append(Skipped(result.path, reason, f"{path}: {reason}; skipped"))
        return result
    summary = result.summary
    summary.files = 1
    if loaded.skipped:
        summary.skipped_files += 1
        result.skipped.append(Skipped(loaded.path, loaded.skipped, f"{loaded.path}: skipped: {loaded.skipped}"))
    resources: list[ResourceSubjects] = []
    for document in loaded.documents:
        found = list(resources_of(document))
        if not found:
            summary.skipped_documents += 1
        for resource in found:
            if resource.kind in WORKLOAD_KINDS or resource.kind in MESH_CONTEXT_KINDS:
                resources.append(ResourceSubjects(resource, plan.mesh))
            else:
                summary.skipped_documents += 1
    summary.resources = len(resources)
    summary.assumed_meshed = sum(1 for r in resources for v in r.views if v.injection.sidecar and v.injection.assumed)
    lines = loaded.lines
    findings: list[Finding] = []
    used: set[tuple[Position, str | None]] = set()  # (suppression, entry) pairs that silenced a finding
    for rule in plan.rules:
        context = plan.contexts[rule.code]
        for subject, about, pods in subjects(rule, loaded, resources):
            for issue in rule.check(subject, context):
                suppression = annotation_suppression(about, pods, rule) or comment_suppression(lines, issue.position, rule)
                if suppression is not None:
                    summary.suppressed += 1
                    used.add((suppression.position, suppression.entry_for(rule)))
                    continue
                source = lines[issue.position.line - 1] if 1 <= issue.position.line <= len(lines) else None
                findings.append(_finding(rule, issue, plan.severities[rule.code], about, source))
    result.findings = fingerprinted(findings, plan.root)
    result.notes.extend(_suppression_notes(plan, loaded, resources, used))
    return result


def _suppression_notes(plan: Plan, loaded: LoadedFile, resources: list[ResourceSubjects], used: set[tuple[Position, str | None]]) -> Iterator[str]:
    """Entries that name no rule (a typo silences nothing), and, when asked, entries that silenced
    nothing in this run. Notes, not findings: a typo only lets a finding through, which the run shows."""
    pods = [(item.resource, [view.template for view in item.views]) for item in resources]
    for suppression in suppressions_in(loaded.path, loaded.lines, pods):
        where = f"{suppression.position.path}:{suppression.position.line}"
        for entry in sorted(suppression.entries):
            if entry.upper() not in plan.known:
                yield f"{where}: unknown rule {entry!r} in {suppression.kind}; `meshlint rules` lists codes and names"
            elif plan.report_unused and (suppression.position, entry) not in used and any(entry_matches(r, entry) for r in plan.rules):
                yield f"{where}: unused suppression: {entry!r} in {suppression.kind} silenced no finding"


def _order(finding: Finding) -> tuple[str, int, int, str]:
    """Path, line, column and code; ties keep the order the files and rules were checked in, which is
    the same for any number of jobs. (A short key: a big report sorts without doubling its memory.)"""
    return finding.path, finding.line, finding.column, finding.code


def _finding(rule: Rule, issue: Issue, configured: Severity | None, resource: Resource | None, source: str | None) -> Finding:
    severity = configured or issue.severity or rule.severity
    position = issue.position
    return Finding(
        path=position.path,
        line=position.line,
        column=position.column,
        code=rule.code,
        name=rule.name,
        severity=severity,
        message=issue.message,
        help=sys.intern(issue.help),  # most help texts repeat; one copy each
        resource=resource.identity if resource is not None else None,
        source=source,
        related=tuple(p for p in dict.fromkeys(issue.related) if p != position),
        node_path=sys.intern(resource.root.path_to(position)) if resource is not None else "",  # they repeat too
    )
