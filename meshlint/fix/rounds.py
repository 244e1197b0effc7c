"""A `--fix` session: lint, apply the fixes that do not get in each other's way, lint again, until
nothing is left to fix. Nothing is written here: the session's files live in memory (the inputs'
overlay), so `--diff` and `--fix` see the same result and a fix is judged before it reaches a disk.

Each round is checked by the next run. A round keeps a fix only if the fixed findings are gone and
no finding appeared that was not there before (a typo renamed into a drain that the grace period
cannot hold, a moved annotation that turns on a setting that another rule objects to); a round that
fails is split in halves until the fix to blame is found and left out, with a note saying why.
Mesh-wide sources are fixed first, alone in their rounds: a hold moved into the IstioOperator's
`defaultConfig` settles every workload's startup race, so those need no annotation of their own.
"""

from __future__ import annotations

import bisect
import os
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from meshlint.engine.results import Report
from meshlint.findings import Finding, ResourceId
from meshlint.fix import verify
from meshlint.fix.edits import Edit, Fix, Text
from meshlint.model.kinds import MESH_CONTEXT_KINDS
from meshlint.source import inputs

MAX_ROUNDS = 20  # each round settles, per node, one fix: a Deployment with 20 misplaced annotations needs 20
Key = tuple[str, "ResourceId | None", str]  # (file, resource, rule): what a finding is about


class Outcome:
    first: Report  # the findings before any fix
    report: Report  # the findings that remain, as the last run found them
    original: dict[str, bytes]  # path as findings name it -> bytes read
    fixed: dict[str, bytes]  # path -> bytes with every kept fix applied
    applied: list[Finding]  # the findings whose fix was kept
    notes: list[str]  # fixes left out, and why
    withheld: set[tuple[str, str]]  # (fingerprint, fix title) of the fixes left out
    rounds: list[dict[str, tuple[bytes, tuple[Edit, ...]]]]  # per round: path -> (before, edits)

    def __init__(
        self,
        first: Report,
        report: Report,
        original: dict[str, bytes] | None = None,
        fixed: dict[str, bytes] | None = None,
        applied: list[Finding] | None = None,
        notes: list[str] | None = None,
        rounds: list[dict[str, tuple[bytes, tuple[Edit, ...]]]] | None = None,
    ) -> None:
        self.first = first
        self.report = report
        self.original = {} if original is None else original
        self.fixed = {} if fixed is None else fixed
        self.applied = [] if applied is None else applied
        self.notes = [] if notes is None else notes
        self.rounds = [] if rounds is None else rounds
        self.withheld = set()

    @property
    def changed(self) -> list[str]:
        return sorted(p for p, data in self.fixed.items() if data != self.original.get(p))

    @property
    def gone(self) -> int:
        """Findings of the first run that the last run no longer has (by file, resource and rule)."""
        before, after = _counts(self.first.findings), _counts(self.report.findings)
        return sum(max(0, n - after.get(key, 0)) for key, n in before.items())


def fix_session(lint: Callable[[], Report], unsafe: bool = False, eligible: Callable[[Report], set[str]] | None = None) -> Outcome:
    """Fix what `lint` reports (it runs the whole check; each call reads the overlay). `eligible`
    gives the fingerprints the user sees (a baseline or --diff-base leaves some out): only those
    are fixed. The overlay is cleared on return."""
    inputs.OVERLAY.clear()
    try:
        return _Session(lint, unsafe, eligible).run()
    finally:
        inputs.OVERLAY.clear()


def withhold(report: Report, refused: set[tuple[str, str]]) -> None:
    """A fix left out is no longer offered: the report after --fix marks only what --fix would do."""
    report.findings = [f._replace(fix=None) if f.fix is not None and (f.fingerprint, f.fix.title) in refused else f for f in report.findings]
    report.summary.count(report.findings, report.fix_reachable)


class _Session:
    def __init__(self, lint: Callable[[], Report], unsafe: bool, eligible: Callable[[Report], set[str]] | None) -> None:
        self.lint = lint
        self.unsafe = unsafe
        self.eligible = eligible
        self.refused: set[tuple[str, str]] = set()  # (fingerprint, fix title) left out for good
        self.outcome: Outcome | None = None

    def run(self) -> Outcome:
        report = self.lint()
        outcome = self.outcome = Outcome(report, report)
        mesh_first = True
        for round_number in range(MAX_ROUNDS + 1):
            candidates = self._candidates(outcome.report)
            if candidates and round_number == MAX_ROUNDS:
                outcome.notes.append(f"stopped after {MAX_ROUNDS} rounds of fixes with {len(candidates)} left; run --fix again for them")
                break
            mesh_wide = [f for f in candidates if f.resource is not None and f.resource.kind in MESH_CONTEXT_KINDS] if mesh_first else []
            if not candidates:
                break
            refused, before = len(self.refused), dict(outcome.fixed)
            self._round(_compatible(mesh_wide or candidates))
            if outcome.fixed == before and len(self.refused) == refused:
                if not mesh_wide:
                    break  # the next round would try the same again
                mesh_first = False
        outcome.withheld = self.refused
        withhold(outcome.report, self.refused)
        return outcome

    def _candidates(self, report: Report) -> list[Finding]:
        assert self.outcome is not None
        seen = self.eligible(report) if self.eligible is not None else None
        return [
            f for f in report.findings
            if f.fix is not None and f.fixable(self.unsafe) and report.fix_reachable(f)
            and (seen is None or f.fingerprint in seen) and (f.fingerprint, f.fix.title) not in self.refused
        ]

    def _round(self, chosen: list[Finding]) -> None:
        """Keep as many of `chosen` as the next run allows (all of them, usually, in one run)."""
        assert self.outcome is not None
        base = self.outcome.report
        texts = {path: self._current(path) for path in {f.path for f in chosen}}
        alone = [f for f in chosen if self._alone_ok(f, texts[f.path])]
        kept: list[Finding] = []

        def attempt(trial: list[Finding]) -> bool:
            fixes = kept + trial
            result = self._apply(fixes, texts)
            if result is None:
                return False
            inputs.OVERLAY.update({os.path.realpath(p): data for p, data in result.items()})
            report = self.lint()
            problem = _regression(base, report, fixes)
            if problem is not None:
                self._restore()
                if len(trial) == 1:
                    self._refuse(trial[0], problem)
                return False
            kept.extend(trial)
            assert self.outcome is not None
            self.outcome.report = report
            self.outcome.fixed.update(result)
            return True

        def grow(trial: list[Finding]) -> None:
            if not trial or attempt(trial) or len(trial) == 1:
                return
            half = len(trial) // 2
            grow(trial[:half])
            grow(trial[half:])

        grow(alone)
        if kept:
            self.outcome.applied.extend(kept)
            self.outcome.rounds.append({p: (texts[p], tuple(e for f in kept if f.path == p for e in _fix(f).edits)) for p in {f.path for f in kept}})

    def _current(self, path: str) -> bytes:
        """The file as the session has it: fixed so far, else as read (remembered as the original)."""
        assert self.outcome is not None
        if path in self.outcome.fixed:
            return self.outcome.fixed[path]
        data = inputs.read(path)
        self.outcome.original.setdefault(path, data)
        return data

    def _alone_ok(self, finding: Finding, data: bytes) -> bool:
        """The fix, applied alone, keeps the file parsing to the same data outside its nodes."""
        fix = _fix(finding)
        problem = _unfixable(data)
        if problem is None:
            try:
                problem = verify.problem_of_edits(finding.path, data, fix.edits, fix.isolation)
            except (ValueError, UnicodeDecodeError) as err:
                problem = f"its edits do not apply ({err})"
        if problem is not None:
            self._refuse(finding, problem)
        return problem is None

    def _apply(self, fixes: Sequence[Finding], texts: dict[str, bytes]) -> dict[str, bytes] | None:
        """Every file with these fixes applied to its text at the start of the round; None when a
        combination breaks a file (each fix alone did not)."""
        result = {}
        for path in sorted({f.path for f in fixes}):
            group = [_fix(f) for f in fixes if f.path == path]
            after = Text.of(texts[path]).apply([e for fix in group for e in fix.edits])
            if verify.problem_after(path, texts[path], after, frozenset().union(*(fix.isolation for fix in group))) is not None:
                return None
            result[path] = after
        return result

    def _restore(self) -> None:
        assert self.outcome is not None
        inputs.OVERLAY.clear()
        inputs.OVERLAY.update({os.path.realpath(p): data for p, data in self.outcome.fixed.items()})

    def _refuse(self, finding: Finding, why: str) -> None:
        assert self.outcome is not None
        fix = _fix(finding)
        self.refused.add((finding.fingerprint, fix.title))
        self.outcome.notes.append(f"{finding.path}:{finding.line}:{finding.column}: {finding.code} fix not applied ({fix.title}): {why}")


def _fix(finding: Finding) -> Fix:
    assert finding.fix is not None
    return finding.fix


def _unfixable(data: bytes) -> str | None:
    """Files that are never written: not UTF-8 (UTF-16 included), or with lines that end in a lone CR."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "the file is UTF-16"
    try:
        text = Text.of(data)  # (asked for each fix of a round: its Text, and what it knows, are kept)
    except UnicodeDecodeError:
        return "the file is not UTF-8"
    if text.lone_cr:
        return "the file has lines that end in a lone carriage return"
    return None


def _compatible(findings: Iterable[Finding]) -> list[Finding]:
    """The fixes of one round: in report order, each that overlaps none taken before it (as
    `Fix.overlaps` says, asked of the taken fixes of its file through an index: asked of each in
    turn, a file of thousands of fixes cost millions of asks)."""
    taken: list[Finding] = []
    files: dict[str, _Taken] = {}
    for finding in findings:
        fix = _fix(finding)
        of_file = files.setdefault(fix.path, _Taken())
        if not of_file.overlaps(fix):
            of_file.add(fix)
            taken.append(finding)
    return taken


class _Taken:
    """The fixes of one file taken into a round: the nodes they rewrite, and their edits in order.
    Taken edits never overlap, so sorted by start they are sorted by end too."""

    def __init__(self) -> None:
        self.places: set[tuple[int, int]] = set()
        self.starts: list[tuple[int, int]] = []
        self.ends: list[tuple[int, int]] = []

    def overlaps(self, fix: Fix) -> bool:
        if not self.places.isdisjoint(fix.isolation):
            return True
        for edit in fix.edits:
            n = bisect.bisect_left(self.starts, edit.start)
            if n < len(self.starts) and self.starts[n] == edit.start:
                return True  # insertions at one place: their order would be a guess
            n = bisect.bisect_right(self.ends, edit.start)  # the first taken edit that ends after this one starts
            if n < len(self.starts) and self.starts[n] < edit.end:
                return True
        return False

    def add(self, fix: Fix) -> None:
        self.places.update(fix.isolation)
        for edit in fix.edits:
            n = bisect.bisect_left(self.starts, edit.start)
            self.starts.insert(n, edit.start)
            self.ends.insert(n, edit.end)


def _counts(findings: Iterable[Finding]) -> Counter[Key]:
    return Counter((f.path, f.resource, f.code) for f in findings)


def _regression(before: Report, after: Report, fixed: Sequence[Finding]) -> str | None:
    """Why the run after these fixes is worse than the run before: a fixed finding still there, or a
    finding that was not there before (counted by file, resource and rule, so a finding that only
    moved is not new)."""
    old, new = _counts(before.findings), _counts(after.findings)
    for finding in fixed:
        old[(finding.path, finding.resource, finding.code)] -= 1
    for key, count in sorted(new.items(), key=lambda item: (item[0][0], item[0][2])):
        if count > old.get(key, 0):
            example = next(f for f in after.findings if (f.path, f.resource, f.code) == key)
            if any((f.path, f.resource, f.code) == key for f in fixed):
                return f"{example.code} is still reported at {example.path}:{example.line}"
            return f"it would bring {example.code} {example.name} at {example.path}:{example.line}"
    return None
