"""One run: paths → loaded files → resources → mesh context → rules → suppressions → findings."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from meshlint import inputs as inputs_mod
from meshlint.config import Config, ConfigError
from meshlint.findings import Finding, Issue, Severity
from meshlint.loader import LoadedFile, decode, document_chunks, load_chunks, load_text
from meshlint.mesh import MeshContext, MeshOptions, Versions, parse_version
from meshlint.model import (
    MESH_CONTEXT_KINDS,
    WORKLOAD_KINDS,
    Resource,
    might_hold_context,
    resources_of,
)
from meshlint.rule import Rule, RuleContext
from meshlint.suppressions import annotation_suppresses, comment_suppresses


@dataclass(eq=False, repr=False)
class Summary:
    files: int = 0
    resources: int = 0
    by_severity: dict[str, int] = field(default_factory=lambda: {"error": 0, "warning": 0, "info": 0})
    suppressed: int = 0
    skipped_documents: int = 0
    skipped_files: int = 0
    assumed_meshed: int = 0

    def add(self, other: "Summary") -> None:
        for name in ("files", "resources", "suppressed", "skipped_documents", "skipped_files", "assumed_meshed"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def as_dict(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "resources": self.resources,
            "findings": dict(self.by_severity),
            "suppressed": self.suppressed,
            "skipped_documents": self.skipped_documents,
            "skipped_files": self.skipped_files,
            "assumed_meshed": self.assumed_meshed,
        }


@dataclass(eq=False, repr=False)
class Report:
    findings: list[Finding]
    summary: Summary
    rules: list[Rule]
    notes: list[str]  # for stderr: skipped Helm templates, unreadable files found in a walk


def selects(rule: Rule, selector: str) -> bool:
    if selector in (rule.code, rule.name):
        return True
    return bool(selector) and selector[0].isalpha() and selector.isupper() and rule.code.startswith(selector)


def active_rules(rules: list[Rule], config: Config) -> list[Rule]:
    for selector in (config.select or ()) + config.ignore:
        if not any(selects(r, selector) for r in rules):
            raise ConfigError(f"unknown rule selector {selector!r}: not a rule code, code prefix or rule name")
    chosen = []
    for rule in rules:
        if config.select is not None and not any(selects(rule, s) for s in config.select):
            continue
        if any(selects(rule, s) for s in config.ignore):
            continue
        chosen.append(rule)
    return chosen


def rule_options(rule: Rule, config: Config) -> dict[str, Any]:
    options = rule.default_options()
    given = dict(config.rule_options.get(rule.code, {}))
    given.update(config.rule_options.get(rule.name, {}))
    for key, value in given.items():
        spec = rule.options.get(key)
        where = f"{config.path or 'config'}: rules.{rule.code}.{key}"
        if spec is None:
            known = ", ".join(sorted(rule.options)) or "none"
            raise ConfigError(f"{where}: unknown option; {rule.code} takes: {known}")
        if spec.get("type") == "boolean" and not isinstance(value, bool):
            raise ConfigError(f"{where}: {value!r} is not valid; expected true or false")
        options[key] = value
    return options


def _check_rule_keys(rules: list[Rule], config: Config) -> None:
    known = {r.code for r in rules} | {r.name for r in rules}
    for key in list(config.rule_options) + list(config.severity):
        if key not in known:
            raise ConfigError(f"{config.path or 'config'}: {key}: unknown rule; expected a rule code or name")


def load_file(path: str, display: str | None = None, data: bytes | None = None) -> LoadedFile:
    if data is None:
        data = inputs_mod.read(path)
    text, problem = decode(data)
    loaded = load_text(display or inputs_mod.display_name(path), text)
    if problem is not None:
        loaded.problems.insert(0, problem)
    return loaded


@dataclass(eq=False, repr=False)
class FileResult:
    """What checking one file gives; results of many files merge in file order."""

    findings: list[Finding] = field(default_factory=list)
    summary: Summary = field(default_factory=Summary)
    notes: list[str] = field(default_factory=list)


@dataclass(eq=False, repr=False)
class _Plan:
    """Everything the second pass needs, made once; worker processes inherit it when forked."""

    files: list[str]
    stdin: bytes | None
    mesh: MeshContext
    rules: list[Rule]
    contexts: dict[str, RuleContext]
    severities: dict[str, Severity | None]


def run(
    paths: list[str], config: Config, rules: list[Rule], mesh_config: Iterable[str] = (), jobs: int = 1
) -> Report:
    """Two passes. The first reads only what the mesh context needs (context files, and the documents of
    the inputs that could be Namespaces, Services, PeerAuthentications or mesh config); the second
    reads each input on its own, checks it against that context and lets it go, so memory holds the
    context and the findings, never the whole tree. A big tree's second pass runs in `jobs` worker
    processes (one at least); the report is the same, byte for byte, for any number of them."""
    _check_rule_keys(rules, config)
    active = active_rules(rules, config)
    options = {rule.code: rule_options(rule, config) for rule in active}
    collected = inputs_mod.collect(paths or ["."], config.exclude, config.base)
    notes = list(collected.warnings)

    stdin = inputs_mod.read(inputs_mod.STDIN) if inputs_mod.STDIN in collected.files else None
    mesh = _mesh_context(collected.files, stdin, config, mesh_config)
    plan = _Plan(
        files=collected.files,
        stdin=stdin,
        mesh=mesh,
        rules=active,
        contexts={rule.code: RuleContext(mesh=mesh, options=options[rule.code]) for rule in active},
        severities={rule.code: _severity_for(rule, config) for rule in active},
    )
    if len(plan.files) >= _PARALLEL_FROM:
        # Big trees are checked in worker processes, even with one job: a worker's per-file garbage
        # never mixes with the findings this process keeps, so memory stays flat as trees grow.
        results = _parallel(plan, max(1, jobs))
    else:
        results = map(lambda p: _check_file(plan, p), plan.files)

    summary, findings = Summary(), []
    for result in results:
        summary.add(result.summary)
        findings.extend(result.findings)
        notes.extend(result.notes)
    findings.sort(key=_order)
    for finding in findings:
        summary.by_severity[str(finding.severity)] += 1
    return Report(findings, summary, active, notes)


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
    targets = {os.path.realpath(p) for p in files if p != inputs_mod.STDIN}
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
            data = stdin if path == inputs_mod.STDIN else inputs_mod.read(path)
        except OSError:
            continue  # the second pass reports it
        text, _ = decode(data)
        chunks = [c for c in document_chunks(text) if might_hold_context(c[1])]
        if not chunks:
            continue
        for document in load_chunks(inputs_mod.display_name(path), chunks, text.splitlines()):
            yield from (r for r in resources_of(document) if r.kind in MESH_CONTEXT_KINDS)


# Forking workers costs more than checking a handful of files (a pre-commit run).
_PARALLEL_FROM = 32
_PLAN: _Plan | None = None


def _parallel(plan: _Plan, jobs: int) -> Iterator[FileResult]:
    """Each file's result, in file order, as the workers finish them (never all held at once)."""
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        yield from (_check_file(plan, p) for p in plan.files)  # workers could not inherit the context
        return
    global _PLAN
    _PLAN = plan
    try:
        size = max(1, min(64, len(plan.files) // (jobs * 8)))
        batches = [range(i, min(i + size, len(plan.files))) for i in range(0, len(plan.files), size)]
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            for batch in pool.imap(_check_batch, batches):
                yield from batch
    finally:
        _PLAN = None


def _check_batch(indexes: range) -> list[FileResult]:
    plan = _PLAN
    return [_check_file(plan, plan.files[i]) for i in indexes]


def _check_file(plan: _Plan, path: str) -> FileResult:
    result = FileResult()
    try:
        loaded = load_file(path, data=plan.stdin if path == inputs_mod.STDIN else None)
    except OSError as err:
        result.notes.append(f"{path}: {err.strerror or err}; skipped")
        return result
    summary = result.summary
    summary.files = 1
    if loaded.skipped:
        summary.skipped_files += 1
        result.notes.append(f"{loaded.path}: skipped: {loaded.skipped}")
    resources: list[Resource] = []
    for document in loaded.documents:
        found = list(resources_of(document))
        if not found:
            summary.skipped_documents += 1
        for resource in found:
            if resource.kind in WORKLOAD_KINDS or resource.kind in MESH_CONTEXT_KINDS:
                resources.append(resource)
            else:
                summary.skipped_documents += 1
    summary.resources = len(resources)
    mesh = plan.mesh
    for resource in resources:
        view = mesh.workload(resource) if resource.is_workload else None
        if view is not None and view.injection.sidecar and view.injection.assumed:
            summary.assumed_meshed += 1
    lines = loaded.lines
    for rule in plan.rules:
        context = plan.contexts[rule.code]
        for subject, resource in _subjects(rule, [loaded], resources, mesh):
            for issue in rule.check(subject, context):
                if annotation_suppresses(resource, rule) or comment_suppresses(lines, issue.position.line, rule):
                    summary.suppressed += 1
                    continue
                source = lines[issue.position.line - 1] if 1 <= issue.position.line <= len(lines) else None
                result.findings.append(_finding(rule, issue, plan.severities[rule.code], resource, source))
    return result


def _order(finding: Finding) -> tuple:
    """Path, line, column and code; ties keep the order the files and rules were checked in, which is
    the same for any number of jobs. (A short key: a big report sorts without doubling its memory.)"""
    return finding[:4]


def _subjects(rule: Rule, files: list[LoadedFile], resources: list[Resource], mesh: MeshContext):
    if rule.scope == "file":
        for loaded in files:
            yield loaded, None
        return
    for resource in resources:
        if rule.kinds is not None and resource.kind not in rule.kinds:
            continue
        if rule.scope == "workload":
            view = mesh.workload(resource)
            if view is not None:
                yield view, resource
        else:
            yield resource, resource


def _severity_for(rule: Rule, config: Config) -> Severity | None:
    return config.severity.get(rule.code) or config.severity.get(rule.name)


def _finding(rule: Rule, issue: Issue, configured: Severity | None, resource: Resource | None, source: str | None = None) -> Finding:
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
    )

