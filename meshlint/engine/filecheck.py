"""One file's check: its documents one at a time, each resource with the rules its kind has, then
the file's own checks (its syntax problems) and its suppressions."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from meshlint.engine.governance import Governance
from meshlint.engine.results import FileResult, SkippedInput, Summary
from meshlint.engine.subjects import ResourceSubjects, taken_as
from meshlint.findings import Finding, Issue, Position, Severity
from meshlint.fingerprint import fingerprinted
from meshlint.mesh.scope import Conflict, conflict_key, met
from meshlint.model.kinds import DECLARATION_KINDS, MESH_CONFIG_KINDS, MESH_CONTEXT_KINDS, POLICY_KINDS, WORKLOAD_KINDS
from meshlint.model.prefilter import might_hold_context
from meshlint.model.resource import Resource, resources_of
from meshlint.rule import FILE, RESOURCE, WORKLOAD, Rule
from meshlint.source import inputs
from meshlint.source.document import Document
from meshlint.source.loader import Light, LoadedFile, load_file
from meshlint.suppressions import Suppression, annotation_suppression, comment_suppression, entry_matches, suppressions_in

if TYPE_CHECKING:
    from meshlint.engine.plan import Plan
    from meshlint.engine.streams import Range


class CheckFailed(Exception):
    """A rule's check raised (its cause): which rule, and on which resource."""

    def __init__(self, rule: Rule | None, resource: Resource | None) -> None:
        super().__init__(rule, resource)
        self.rule, self.resource = rule, resource

    def where(self) -> str:
        """` in ML201 on Job j (line 3)`: what to name beside the error."""
        rule = f" in {self.rule.code}" if self.rule is not None else ""
        resource = self.resource
        return rule + (f" on {resource.kind} {resource.name} (line {resource.root.pos.line})" if resource is not None else "")


def contained(check: Callable[[str], FileResult]) -> Callable[[str], FileResult]:
    """`check`, where an unexpected error on one file costs that file only. Such an error is a bug of
    meshlint's that the input meets (bad input itself gives findings or a note, never an error), so
    the file is not checked: it is reported as passed over, on one line that names the file, the
    error and, when a rule raised it, the rule and the resource; every other file's findings stand.
    As with any input passed over, `--fail-on-skipped` makes the run exit 1 for it: exit code 2 is
    kept for a run that cannot be made at all, and a report of every other file is worth more than
    none. MESHLINT_DEBUG=1 prints the traceback too."""
    return partial(_contained, check)


def _contained(check: Callable[[str], FileResult], path: str) -> FileResult:
    try:
        return check(path)
    except Exception as err:
        return not_checked(path, err)


def not_checked(path: str, err: Exception) -> FileResult:
    """The result of a file whose check failed with `err`."""
    result = FileResult(inputs.display_name(path))
    result.summary = Summary(files=1, skipped_files=1, skipped_inputs=[SkippedInput(result.path, internal_error(err))])
    return result


def internal_error(err: Exception) -> str:
    """An unexpected error on one line: what raised it, and where when a rule did (the traceback
    too, on stderr, with MESHLINT_DEBUG=1)."""
    if os.environ.get("MESHLINT_DEBUG") == "1":
        import traceback

        traceback.print_exception(err)
    where = err.where() if isinstance(err, CheckFailed) else ""
    cause = err.__cause__ if isinstance(err, CheckFailed) and err.__cause__ is not None else err
    text = " ".join(str(cause).split())
    text = text if len(text) <= 200 else text[:197] + "..."
    return f"internal error{where}: {type(cause).__name__}{': ' if text else ''}{text} (set MESHLINT_DEBUG=1 for details)"


def check_file(plan: Plan, path: str, data: bytes | None = None) -> FileResult:
    result = FileResult(inputs.display_name(path))
    governed = plan.of(path)
    fragment = bool(plan.fragments) and path != inputs.STDIN and inputs.real(path) in plan.fragments
    light = None if fragment else syntax_only(governed)
    try:
        if path == inputs.STDIN:
            loaded = load_file(path, plan.stdin_name, plan.stdin, light=light, stream=True, lines=plan.stdin_lines)
        else:
            loaded = load_file(path, data=data, light=light, stream=True)
    except OSError as err:  # unreadable, gone, or over the size limit: passed over whole, and counted
        reason = err.strerror or str(err)
        result.summary = Summary(files=1, skipped_files=1, skipped_inputs=[SkippedInput(result.path, reason)])
        return result
    check = FileCheck(plan, path, governed, loaded, fragment)
    for document in loaded.each_document():
        check.document(document)
    return check.result(result)


class FileCheck:
    """One file's check, document by document: each document's resources are checked as it is read
    and let go (a stream of thousands of documents holds one), keeping only what the file's result
    needs: findings, counts, conflicts, and the annotation suppressions its resources hold."""

    def __init__(self, plan: Plan, path: str, governed: Governance, loaded: LoadedFile, fragment: bool) -> None:
        self.plan, self.governed, self.loaded, self.fragment = plan, governed, loaded, fragment
        # A file checked only because a mesh-wide source it depends on changed: what that source can alter.
        self.dispatch = dispatch(governed, path in plan.widened)
        self.count_defaults = plan.unseen and path in plan.alone and not plan.context_named and not governed.config.mesh_context
        self.summary = Summary()
        self.conflicts: dict[tuple[Any, ...], tuple[Conflict, int]] = {}
        self.findings: list[Finding] = []
        self.used: set[tuple[Position, str | None]] = set()  # (suppression, entry) pairs that silenced a finding
        self.annotations: list[Suppression] = []
        self.documents = 0

    def document(self, document: Document) -> None:
        self.documents += 1
        if self.fragment:
            return
        summary = self.summary
        found = list(resources_of(document))
        if not found:
            summary.skipped_documents += 1
        for resource in found:
            if resource.kind in WORKLOAD_KINDS or resource.kind in MESH_CONTEXT_KINDS or resource.kind in POLICY_KINDS:
                self.resource(ResourceSubjects(resource, self.plan.mesh, self.governed.options))
            else:
                summary.skipped_documents += 1

    def resource(self, item: ResourceSubjects) -> None:
        summary, governed, lines = self.summary, self.governed, self.loaded.lines
        summary.resources += 1
        for view in item.views:
            summary.assumed_meshed += 1 if view.istio_sidecar and view.classification.assumed else 0
            if view.istio_sidecar and view.classification.by_sign:
                summary.assumed_by_sign += 1
                sign = view.classification.sign
                if sign is not None:
                    origin = sign.origin
                    summary.signs_seen.add((origin.path, origin.line, origin.column, sign.value) if origin else ("", 0, 0, f"{sign.value}, {sign.where}"))
            summary.not_checked += 1 if view.classification.unchecked else 0
            if self.count_defaults:
                summary.on_defaults += 1 if view.istio_sidecar and not view.settings.sourced else 0
            for conflict in view.conflicts:
                key = conflict_key(conflict)
                self.conflicts[key] = met(self.conflicts.get(key), conflict, 1)
        # For any one rule, its findings come in the order a loop over rules, then resources, gives
        # (the file's own come first, in `result`): ties sort stably by rule.
        # The loop over checks is written out here, not a call to `_check`: most checks find nothing,
        # and a resource makes some fifteen of them.
        about, contexts, ways = item.resource, governed.contexts, item.ways
        rule: Rule | None = None
        try:
            for rule, way in self.dispatch.plan(item.shape):
                context = contexts[rule.code]
                for subject, pods in ways[way]:
                    for issue in rule.check(subject, context):
                        self._found(rule, issue, about, pods, lines, governed)
        except Exception as err:
            raise CheckFailed(rule, about) from err
        self.annotations.extend(suppressions_in(self.loaded.path, [], [(about, [view.template for view in item.views])]))

    def _check(self, rule: Rule, subject: Any, about: Resource | None, pods: list[Any], lines: Sequence[str], governed: Governance) -> None:
        for issue in rule.check(subject, governed.contexts[rule.code]):
            self._found(rule, issue, about, pods, lines, governed)

    def _found(self, rule: Rule, issue: Issue, about: Resource | None, pods: list[Any], lines: Sequence[str], governed: Governance) -> None:
        """A check's issue: a finding, unless a suppression silences it."""
        suppression = annotation_suppression(about, pods, rule) or comment_suppression(lines, issue.position, rule)
        if suppression is not None:
            self.summary.suppressed += 1
            self.used.add((suppression.position, suppression.entry_for(rule)))
            return
        source = source_line(lines, issue.position.line)
        self.findings.append(finding(rule, issue, governed.severities[rule.code], about, source, self.loaded.newline, self.plan.marks, self.plan.fixes))

    def merge(self, part: Range) -> None:
        """A later range of the same stream, checked elsewhere."""
        self.findings.extend(part.findings)
        self.summary.add(part.summary)
        for key, (conflict, count) in part.conflicts.items():
            self.conflicts[key] = met(self.conflicts.get(key), conflict, count)
        self.used |= part.used
        self.annotations.extend(part.annotations)
        self.documents += part.documents

    def result(self, result: FileResult) -> FileResult:
        """Once every document is checked: the file's own checks (its syntax problems), and the result."""
        loaded, summary = self.loaded, self.summary
        if loaded.skipped:  # passed over whole: nothing read from it counts
            self.summary, self.conflicts, self.findings, self.annotations = Summary(), {}, [], []
            self.used.clear()
            summary = self.summary
            summary.skipped_files += 1
            summary.skipped_inputs.append(SkippedInput(loaded.path, loaded.skipped))
        summary.files = 1
        read_as_resources = sum(1 for kind, _ in loaded.light if kind in MESH_CONTEXT_KINDS or kind in POLICY_KINDS)
        summary.resources += read_as_resources
        summary.skipped_documents += len(loaded.light) - read_as_resources
        if self.fragment and not loaded.skipped:
            summary.skipped_documents += self.documents  # a patch is part of an object, not one
        file_findings = self.findings
        self.findings = []
        for rule in self.dispatch.file_rules:
            try:
                self._check(rule, loaded, None, [], loaded.lines, self.governed)
            except Exception as err:
                raise CheckFailed(rule, None) from err
        file_findings, self.findings = self.findings, file_findings
        result.summary = summary
        result.unparsed = bool(loaded.problems)
        result.conflicts = self.conflicts
        result.findings = fingerprinted(file_findings + self.findings, self.plan.root, self.plan.marks)
        result.notes.extend(self._suppression_notes())
        return result

    def _suppression_notes(self) -> Iterator[str]:
        """Entries that name no rule (a typo silences nothing), and, when asked, entries that silenced
        nothing in this run. Notes, not findings: a typo only lets a finding through, which the run shows."""
        plan, loaded = self.plan, self.loaded
        for suppression in [*suppressions_in(loaded.path, loaded.lines, []), *self.annotations]:
            where = f"{suppression.position.path}:{suppression.position.line}"
            for entry in sorted(suppression.entries):
                if entry.upper() not in plan.known:
                    yield f"{where}: unknown rule {entry!r} in {suppression.kind}; `meshlint rules` lists codes and names"
                elif plan.report_unused and (suppression.position, entry) not in self.used and any(entry_matches(r, entry) for r in self.governed.rules):
                    yield f"{where}: unused suppression: {entry!r} in {suppression.kind} silenced no finding"


class Dispatch:
    """The rules of one config, bucketed once a run: those that take files, and for each shape of
    resource (its kind, whether it has workload views and a mesh source) those that take it and how,
    in the config's order: otherwise every rule would be asked about every resource."""

    def __init__(self, rules: list[Rule]) -> None:
        self.rules = rules
        self.file_rules = [r for r in rules if FILE in r.scopes]
        self._by_shape: dict[tuple[str, bool, bool], list[tuple[Rule, int]]] = {}

    def plan(self, shape: tuple[str, bool, bool]) -> list[tuple[Rule, int]]:
        """Each rule that takes a resource of this shape, with the way it takes it (`taken_as`)."""
        found = self._by_shape.get(shape)
        if found is None:
            found = self._by_shape[shape] = [(r, way) for r in self.rules if (way := taken_as(r, *shape)) is not None]
        return found


def dispatch(governed: Governance, widened: bool) -> Dispatch:
    """A file checked only because a mesh-wide source it depends on changed (§W2.6) gets what that
    source can alter: the workload rules."""
    made = governed.made.get(("dispatch", widened))
    if made is None:
        rules = [r for r in governed.rules if WORKLOAD in r.scopes] if widened else governed.rules
        made = governed.made[("dispatch", widened)] = Dispatch(rules)
    return cast(Dispatch, made)


def syntax_only(governed: Governance) -> Light | None:
    """Which documents the rules of `governed` never read beyond their syntax: kinds no rule takes as
    a resource, that are no workload, no List and no mesh configuration (a ConfigMap named istio*).
    None when a file-scope rule other than ML001 reads whole files (a plugin may read any document)."""
    if "light" in governed.made:
        return cast("Light | None", governed.made["light"])
    light: Light | None = None
    if all(r.code == "ML001" and r.check.__module__.startswith("meshlint.rules.") for r in governed.rules if FILE in r.scopes):
        read_any = any(RESOURCE in r.scopes and r.kinds is None for r in governed.rules)
        read = frozenset(k for r in governed.rules if RESOURCE in r.scopes and r.kinds is not None for k in r.kinds)

        def syntax_only(kind: str, api_version: str, text: str) -> bool:
            if read_any or kind in read or kind in WORKLOAD_KINDS or kind.endswith("List") or kind in DECLARATION_KINDS:
                return False
            if kind in MESH_CONFIG_KINDS:
                return kind == "ConfigMap" and not might_hold_context(text)  # not named istio*
            return True

        light = syntax_only
    governed.made["light"] = light
    return light


def source_line(lines: Sequence[str], line: int) -> str | None:
    return lines[line - 1] if 1 <= line <= len(lines) else None


def finding(
    rule: Rule, issue: Issue, configured: Severity | None, resource: Resource | None, source: str | None, newline: str = "\n",
    marks: bool = True, fixes: bool = True,
) -> Finding:
    """A check's issue as a finding of its rule. Its node path is worked out only with `marks`
    (`Plan.marks`: some output reads it, through the fingerprint), its fix made only with `fixes`."""
    severity = configured or issue.severity or rule.severity
    position = issue.position
    made = issue.fix.made() if issue.fix is not None and fixes else None
    # A fix edits the file the finding is in, and writes line breaks as that file does.
    fix = made.with_newline(newline) if made is not None and made.path == position.path else None
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
        rendered_from=resource.rendered_from if resource is not None else None,
        related=tuple(p for p in dict.fromkeys(issue.related) if p != position),
        node_path=sys.intern(resource.root.path_to(position)) if resource is not None and marks else "",  # they repeat too
        fix=fix,
    )
