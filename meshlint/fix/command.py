"""`check --fix` and `check --diff` for the command line: run the session, then write the files or
print the diff, and say on stderr what was done and what was left alone."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any

from meshlint.engine.results import Report
from meshlint.fix import files, rounds
from meshlint.fix.rounds import Outcome, fix_session


def shown_by(entries: Any, changed: Any) -> Callable[[Report], set[str]] | None:
    """The fingerprints a baseline (`entries`) and --diff-base (`changed`) leave in a report: --fix
    fixes only what the user is shown."""
    if entries is None and changed is None:
        return None

    def shown(report: Report) -> set[str]:
        from meshlint.engine import baseline, changes

        probe = copy.copy(report)
        probe.findings, probe.summary = list(report.findings), copy.copy(report.summary)
        if entries is not None:
            baseline.apply(probe, entries)
        if changed is not None:
            changes.apply(probe, changed)
        return {f.fingerprint for f in probe.findings}

    return shown


def fix(lint: Callable[[], Report], unsafe: bool, shown: Callable[[Report], set[str]] | None) -> tuple[Report, list[str], list[str]]:
    """Fix and write: the report of what remains (its summary counting the fixed), notes, and an
    error line for each file left unwritten."""
    outcome = fix_session(lint, unsafe=unsafe, eligible=shown)
    notes = _notes(outcome, unsafe)
    unwritten = files.write(outcome)
    if unwritten:
        _as_on_disk(outcome, lint, frozenset(unwritten))
    outcome.report.summary.fixed = outcome.gone
    written = len(outcome.changed) - len(unwritten)
    if written:
        notes.append(f"fixed {_count(outcome.gone, 'finding')} in {_count(written, 'file')}")
    return outcome.report, notes, list(unwritten.values())


def _as_on_disk(outcome: Outcome, lint: Callable[[], Report], unwritten: frozenset[str]) -> None:
    """The report after writes that failed: a run over the files as they are now, so a file left
    unwritten keeps its findings, and so do the files whose findings its fixes (of a mesh-wide
    source) would have settled. Its fixes are not offered again: this --fix could not make them."""
    report = lint()
    report.writable -= unwritten
    rounds.withhold(report, outcome.withheld)
    outcome.report = report


def diff(lint: Callable[[], Report], unsafe: bool, shown: Callable[[Report], set[str]] | None, out: Callable[[Iterable[str]], None]) -> tuple[bool, list[str]]:
    """Fix in memory and hand the diff to `out`: whether there is anything to fix, and notes."""
    outcome = fix_session(lint, unsafe=unsafe, eligible=shown)
    out(files.diff(outcome))
    notes = [*_notes(outcome, unsafe), f"would fix {_count(outcome.gone, 'finding')} in {_count(len(outcome.changed), 'file')}"]
    return bool(outcome.changed), notes


def _notes(outcome: Outcome, unsafe: bool) -> list[str]:
    """Fixes left out, and fixable findings in files --fix never writes."""
    first = outcome.first
    never = [f for f in first.findings if f.fixable(unsafe) and not first.fix_reachable(f)]
    notes = list(outcome.notes)
    linked_out = sorted({f.path for f in never if f.path in first.linked_out})
    notes.extend(f"{path}: a symbolic link out of the named paths; --fix does not write through it" for path in linked_out)
    never = [f for f in never if f.path not in first.linked_out]
    if never:
        are = "s are" if len(never) != 1 else " is"
        notes.append(f"{len(never)} fixable finding{are} in stdin, files not given or files with a syntax error, which --fix never writes")
    return notes


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'s' if n != 1 else ''}"
