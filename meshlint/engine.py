"""One run: paths → loaded files → resources → mesh context → rules → suppressions → findings."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Iterable

from meshlint import inputs as inputs_mod
from meshlint.config import Config, ConfigError
from meshlint.findings import Finding, Issue, Severity
from meshlint.loader import LoadedFile, decode, load_text
from meshlint.mesh import MeshContext, MeshOptions, Versions, parse_version
from meshlint.model import MESH_CONTEXT_KINDS, WORKLOAD_KINDS, Resource, resources_of
from meshlint.rule import Rule, RuleContext
from meshlint.suppressions import annotation_suppresses, comment_suppresses


@dataclass
class Summary:
    files: int = 0
    resources: int = 0
    by_severity: dict[str, int] = field(default_factory=lambda: {"error": 0, "warning": 0, "info": 0})
    suppressed: int = 0
    skipped_documents: int = 0
    skipped_files: int = 0
    assumed_meshed: int = 0

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


@dataclass
class Report:
    findings: list[Finding]
    summary: Summary
    rules: list[Rule]
    notes: list[str]  # for stderr: skipped Helm templates, unreadable files found in a walk
    sources: dict[str, list[str]] = field(default_factory=dict)  # lines of the files with findings


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


def load_file(path: str, display: str | None = None) -> LoadedFile:
    data = inputs_mod.read(path)
    text, problem = decode(data)
    loaded = load_text(display or inputs_mod.display_name(path), text)
    if problem is not None:
        loaded.problems.insert(0, problem)
    return loaded


def run(paths: list[str], config: Config, rules: list[Rule], mesh_config: Iterable[str] = ()) -> Report:
    _check_rule_keys(rules, config)
    active = active_rules(rules, config)
    options = {rule.code: rule_options(rule, config) for rule in active}
    collected = inputs_mod.collect(paths or ["."], config.exclude, config.base)
    notes = list(collected.warnings)
    summary = Summary()

    files: list[LoadedFile] = []
    for path in collected.files:
        try:
            files.append(load_file(path))
        except OSError as err:
            notes.append(f"{path}: {err.strerror or err}; skipped")
    summary.files = len(files)

    targets = {os.path.realpath(p) for p in collected.files if p != inputs_mod.STDIN}
    context_files: list[LoadedFile] = []
    for path in list(config.mesh_context) + list(mesh_config):
        if os.path.realpath(path) in targets:
            continue
        display = os.path.relpath(path) if os.path.isabs(path) else path
        try:
            context_files.append(load_file(path, display))  # messages name it as the user would
        except OSError as err:
            raise ConfigError(f"{display}: cannot read mesh context file: {err.strerror or err}") from err

    resources: list[Resource] = []
    for loaded in files:
        if loaded.skipped:
            summary.skipped_files += 1
            notes.append(f"{loaded.path}: skipped: {loaded.skipped}")
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
    context_resources = [r for f in context_files for d in f.documents for r in resources_of(d)]

    mesh = MeshContext(
        context_resources + resources,
        MeshOptions(
            default_injection=config.default_injection,
            injected_namespaces=config.injected_namespaces,
            root_namespace=config.root_namespace,
            versions=Versions(parse_version(config.istio_version), parse_version(config.kubernetes_version)),
        ),
    )
    for resource in resources:
        view = mesh.workload(resource) if resource.is_workload else None
        if view is not None and view.injection.sidecar and view.injection.assumed:
            summary.assumed_meshed += 1

    lines = {f.path: f.lines for f in files}
    findings: list[Finding] = []
    for rule in active:
        context = RuleContext(mesh=mesh, options=options[rule.code])
        severity = _severity_for(rule, config)
        for subject, resource in _subjects(rule, files, resources, mesh):
            for issue in rule.check(subject, context):
                if annotation_suppresses(resource, rule) or comment_suppresses(
                    lines.get(issue.position.path, []), issue.position.line, rule
                ):
                    summary.suppressed += 1
                    continue
                findings.append(_finding(rule, issue, severity, resource))
    findings.sort()
    for finding in findings:
        summary.by_severity[str(finding.severity)] += 1
    sources = {f.path: lines[f.path] for f in findings if f.path in lines}
    return Report(findings, summary, active, notes, sources)


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


def _finding(rule: Rule, issue: Issue, configured: Severity | None, resource: Resource | None) -> Finding:
    severity = configured or issue.severity or rule.severity
    return Finding(
        path=issue.position.path,
        line=issue.position.line,
        column=issue.position.column,
        code=rule.code,
        name=rule.name,
        severity=severity,
        message=issue.message,
        help=issue.help,
        resource=resource.identity if resource is not None else None,
    )

