"""One run: paths → loaded files → resources → mesh context → rules → suppressions → findings."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial

from meshlint.config import Config, ConfigError
from meshlint.engine import parallel
from meshlint.engine.results import FileResult, Report, SkippedInput, Summary
from meshlint.engine.selection import active_rules, rule_options, severity_for
from meshlint.engine.subjects import ResourceSubjects, subjects
from meshlint.findings import Finding, Issue, Severity
from meshlint.mesh.context import MeshContext
from meshlint.mesh.envsources import ENV_SOURCE_KINDS, might_hold_env_source
from meshlint.mesh.options import MeshOptions, Versions, parse_version
from meshlint.mesh.setting import Setting
from meshlint.mesh.sources import MeshSource, mesh_source
from meshlint.model.kinds import MESH_CONFIG_KINDS, MESH_CONTEXT_KINDS, WORKLOAD_KINDS
from meshlint.model.prefilter import might_hold_context, might_show_istio
from meshlint.model.resource import Resource, resources_of
from meshlint.rule import FILE, Rule, RuleContext
from meshlint.source import inputs
from meshlint.source.kustomize import patch_fragments
from meshlint.source.loader import LoadedFile, decode, document_chunks, load_chunks, load_file
from meshlint.suppressions import annotation_suppresses, comment_suppresses


@dataclass(eq=False, repr=False)
class Plan:
    """Everything the second pass needs, made once; worker processes inherit it when forked."""

    stdin: bytes | None
    stdin_name: str
    fragments: frozenset[str]  # Kustomize patches: syntax only
    mesh: MeshContext
    rules: list[Rule]
    contexts: dict[str, RuleContext]
    severities: dict[str, Severity | None]


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
    fragments = patch_fragments(collected.files)
    broken: list[LoadedFile] = []
    mesh = _mesh_context([f for f in collected.files if os.path.realpath(f) not in fragments], stdin, config, mesh_config, broken)
    plan = Plan(
        stdin=stdin,
        stdin_name=config.stdin_filename or inputs.STDIN_NAME,
        fragments=fragments,
        mesh=mesh,
        rules=active,
        contexts={rule.code: RuleContext(mesh=mesh, options=options[rule.code]) for rule in active},
        severities={rule.code: severity_for(rule, config) for rule in active},
    )
    check = partial(_check_file, plan)
    results: Iterable[FileResult]
    if len(collected.files) >= parallel.PARALLEL_FROM:
        # Big trees are checked in worker processes, even with one job: a worker's per-file garbage
        # never mixes with the findings this process keeps, so memory stays flat as trees grow.
        results = parallel.check_files(check, collected.files, max(1, jobs))
    else:
        results = map(check, collected.files)

    summary, findings = Summary(), []
    for result in [*(_check_context_file(plan, loaded) for loaded in broken), *results]:
        summary.add(result.summary)
        findings.extend(result.findings)
        notes.extend(result.notes)
    findings.sort(key=_order)
    for finding in findings:
        summary.by_severity[str(finding.severity)] += 1
    return Report(findings, summary, active, notes)


def _mesh_context(
    files: list[str], stdin: bytes | None, config: Config, mesh_config: Iterable[str], broken: list[LoadedFile] | None = None
) -> MeshContext:
    """The first pass. The context takes its facts from each resource as it is read, and the resource
    is dropped: a tree with thousands of Services keeps thousands of small facts, not documents."""
    options = MeshOptions(
        default_injection=config.default_injection,
        injected_namespaces=config.injected_namespaces,
        root_namespace=config.root_namespace,
        versions=Versions(parse_version(config.istio_version), parse_version(config.kubernetes_version)),
    )
    mesh = MeshContext(options=options, istio_in_use=_configured_istio(config, mesh_config))
    targets = {os.path.realpath(p) for p in files if p != inputs.STDIN}
    for path in list(config.mesh_context) + list(mesh_config):
        if os.path.realpath(path) in targets:
            continue
        display = os.path.relpath(path) if os.path.isabs(path) else path
        try:
            loaded = load_file(path, display, input_file=False)  # messages name it as the user would
        except OSError as err:
            raise ConfigError(f"{display}: cannot read mesh context file: {err.strerror or err}") from err
        resources = [r for d in loaded.documents for r in resources_of(d)]
        for resource in resources:
            mesh.add(resource)
        if broken is not None and (loaded.problems or any(s is not None and s.problems for s in map(_source, resources))):
            broken.append(loaded)
    for path in files:
        if inputs.helm_chart_of(path) is not None:
            continue  # a chart's template says nothing until Helm renders it
        try:
            data = stdin if path == inputs.STDIN and stdin is not None else inputs.read(path)
        except OSError:
            continue  # the second pass reports it
        _read_context(mesh, config.stdin_filename or inputs.STDIN_NAME if path == inputs.STDIN else path, decode(data)[0])
    return mesh


def _read_context(mesh: MeshContext, path: str, text: str) -> None:
    """Compose the parts of one input that could hold mesh context, or the first sign of Istio."""
    lines: list[str] | None = None
    for line_offset, chunk in document_chunks(text):
        context = might_hold_context(chunk) or might_hold_env_source(chunk)
        sign = not context and might_show_istio(chunk) and mesh.wants_istio_sign(path, line_offset + 1)
        if not (context or sign):
            continue
        lines = text.splitlines() if lines is None else lines
        for document in load_chunks(path, [(line_offset, chunk)], lines):
            for resource in resources_of(document):
                if resource.kind in MESH_CONTEXT_KINDS or resource.kind in ENV_SOURCE_KINDS or sign:
                    mesh.add(resource)


def _configured_istio(config: Config, mesh_config: Iterable[str]) -> Setting[str] | None:
    """A configuration that names mesh context or injected namespaces is about an Istio mesh."""
    for key, value in (("mesh.context", config.mesh_context), ("mesh.injected-namespaces", config.injected_namespaces)):
        if value:
            return Setting(f"{key} is set", None, config.path or "config")
    if tuple(mesh_config):
        return Setting("--mesh-config is given", None, "command line")
    return None


def _source(resource: Resource) -> MeshSource | None:
    return mesh_source(resource) if resource.kind in MESH_CONFIG_KINDS else None


def _check_context_file(plan: Plan, loaded: LoadedFile) -> FileResult:
    """A mesh context file is read, not checked, unless it is also an input; but a context file that
    does not parse (or whose data.mesh / data.values does not) is never dropped in silence."""
    result = FileResult()
    for rule in plan.rules:
        if FILE not in rule.scopes:
            continue
        items = [ResourceSubjects(r, plan.mesh) for d in loaded.documents for r in resources_of(d) if r.kind in MESH_CONFIG_KINDS]
        for subject, about, _ in subjects(rule, loaded, items):
            for issue in rule.check(subject, plan.contexts[rule.code]):
                result.findings.append(_finding(rule, issue, plan.severities[rule.code], about, _source_line(loaded.lines, issue.position.line)))
    return result


def _source_line(lines: list[str], line: int) -> str | None:
    return lines[line - 1] if 1 <= line <= len(lines) else None


def _check_file(plan: Plan, path: str) -> FileResult:
    result = FileResult()
    try:
        if path == inputs.STDIN:
            loaded = load_file(path, plan.stdin_name, plan.stdin)
        else:
            loaded = load_file(path)
    except OSError as err:
        result.notes.append(f"{path}: {err.strerror or err}; skipped")
        return result
    summary = result.summary
    summary.files = 1
    if loaded.skipped:
        summary.skipped_files += 1
        summary.skipped_inputs.append(SkippedInput(loaded.path, loaded.skipped))
        result.notes.append(f"{loaded.path}: skipped: {loaded.skipped}")
    resources: list[ResourceSubjects] = []
    fragment = path != inputs.STDIN and os.path.realpath(path) in plan.fragments
    for document in loaded.documents if not fragment else ():
        found = list(resources_of(document))
        if not found:
            summary.skipped_documents += 1
        for resource in found:
            if resource.kind in WORKLOAD_KINDS or resource.kind in MESH_CONTEXT_KINDS:
                resources.append(ResourceSubjects(resource, plan.mesh))
            else:
                summary.skipped_documents += 1
    if fragment:
        summary.skipped_documents += len(loaded.documents)  # a patch is part of an object, not one
    summary.resources = len(resources)
    summary.assumed_meshed = sum(1 for r in resources for v in r.views if v.istio_sidecar and v.classification.assumed)
    summary.not_checked = sum(1 for r in resources for v in r.views if v.classification.unchecked)
    lines = loaded.lines
    for rule in plan.rules:
        context = plan.contexts[rule.code]
        for subject, about, pods in subjects(rule, loaded, resources):
            for issue in rule.check(subject, context):
                if annotation_suppresses(about, pods, rule) or comment_suppresses(lines, issue.position.line, rule):
                    summary.suppressed += 1
                    continue
                result.findings.append(_finding(rule, issue, plan.severities[rule.code], about, _source_line(lines, issue.position.line)))
    return result


def _order(finding: Finding) -> tuple[str, int, int, str]:
    """Path, line, column and code; ties keep the order the files and rules were checked in, which is
    the same for any number of jobs. (A short key: a big report sorts without doubling its memory.)"""
    return finding.path, finding.line, finding.column, finding.code


def _finding(rule: Rule, issue: Issue, configured: Severity | None, resource: Resource | None, source: str | None) -> Finding:
    severity = configured or issue.severity or rule.severity
    return Finding(
        path=issue.position.path,
        line=issue.position.line,
        column=issue.position.column,
        code=rule.code,
        name=rule.name,
        severity=severity,
        message=issue.message,
        help=sys.intern(issue.help),  # most help texts repeat; one copy each
        resource=resource.identity if resource is not None else None,
        source=source,
        rendered_from=resource.rendered_from if resource is not None else None,
    )
