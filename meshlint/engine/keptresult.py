"""A file's result as plain JSON, and back (engine/cache.py keeps them between runs).

The cache folder is only as trustworthy as whoever could write it (a CI cache restored from another
branch, a shared machine), so a kept result is data and nothing else: reading it builds findings,
positions, fixes and conflicts from JSON lists, checking the type of every field, and anything of
another shape is not read at all (the file is checked again). Writing is as strict: a result holding a
value this format does not spell exactly (a YAML timestamp in a conflict, say) is not kept, so what
comes back is always what was checked. A warm run reads every file's result, so findings and
summaries are checked a list at a time (the types of its fields against a tuple) rather than field by
field through `shapes`, which the rarer conflicts use.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from meshlint.engine.results import _COUNTS, FileResult, SkippedInput, Summary
from meshlint.engine.shapes import CONFLICT, Unkeepable, fields
from meshlint.findings import Finding, Position, ResourceId, Severity
from meshlint.fix.edits import Edit, Fix
from meshlint.mesh.scope import conflict_key

_SEVERITIES = {int(s): s for s in Severity}
_NONE = type(None)
_FINDING = (str, int, int, str, str, int, str, str)  # the fields before the resource
_MAYBE_STR = (str, _NONE)
# The types of a finding's fields, for each of its optional ones set or not (resource, source,
# rendered_from, fix): one look-up checks them all.
_FINDINGS = frozenset(
    (*_FINDING, resource, source, rendered_from, list, str, str, fix)
    for resource, source, rendered_from, fix in itertools.product((list, _NONE), _MAYBE_STR, _MAYBE_STR, (list, _NONE))
)
_BODY = (str, list, list, list, list, bool)
_POSITION = (str, int, int)
_RESOURCE = (str, str, str)
_EDIT = (str, str, list, str, list)
_EDIT_FIELDS = (int, int, int, int, str)
_PAIR = (int, int)
_SUMMARY = (*(int,) * len(_COUNTS), int, int, dict, list, list)  # the counts, fixable, unsafe_fixable, by_severity, skipped_inputs, signs_seen
_SIGN = (str, int, int, str)
_SKIPPED = (str, str)
# Every field of a Summary: those `_summary` writes, and the run's own, which a file's leaves unset.
_SPELT = {
    *_COUNTS, "by_severity", "skipped_inputs", "fixable", "unsafe_fixable", "baselined", "stale_baseline", "outside_diff", "fixed", "istio_sign",
    "signs_seen", "units", "rendered", "unheld", "test_folders",
}


def encode(result: FileResult) -> bytes | None:
    """The result as one line of ASCII JSON (no line breaks), or None when it cannot be kept exactly."""
    try:
        body = [
            _exact(result.path, str),
            [_finding(f) for f in result.findings],
            _summary(result.summary),
            [_exact(n, str) for n in result.notes],
            [[CONFLICT.out(c), _exact(n, int)] for c, n in result.conflicts.values()],
            _exact(result.unparsed, bool),
        ]
    except Unkeepable:
        return None
    return json.dumps(body, separators=(",", ":"), allow_nan=False).encode()


def decode(data: bytes) -> FileResult | None:
    """What `encode` wrote; None for anything else."""
    try:
        path, findings, summary, notes, conflicts, unparsed = _typed(json.loads(data), _BODY)
        if not all(n.__class__ is str for n in notes):
            raise ValueError("not a kept result")
        result = FileResult(path, [_read_finding(f) for f in fields(findings)], _read_summary(summary), notes, unparsed=unparsed)
        for pair in conflicts:
            conflict, count = _typed(pair, (list, int))
            read = CONFLICT.back(conflict)
            result.conflicts[conflict_key(read)] = (read, count)
    except (ValueError, TypeError, RecursionError):  # JSON's own errors, an unhashable key, deep nesting
        return None
    return result


# --- writing: exact types only ---------------------------------------------------------------------


def _exact(value: Any, kind: type) -> Any:
    if value.__class__ is not kind:
        raise Unkeepable
    return value


def _all(values: Any, kinds: tuple[type, ...]) -> list[Any]:
    """`values` (a tuple) as a list, when each is of exactly its type in `kinds`."""
    if tuple(map(type, values)) != kinds:
        raise Unkeepable
    return list(values)


def _finding(f: Finding) -> list[Any]:
    if f.__class__ is not Finding or f.severity.__class__ is not Severity or f.related.__class__ is not tuple:
        raise Unkeepable
    head = _all((f.path, f.line, f.column, f.code, f.name, int(f.severity), f.message, f.help), _FINDING)
    resource = None if f.resource is None else _all(_exact(f.resource, ResourceId), _RESOURCE)
    related = [_all(_exact(p, Position), _POSITION) for p in f.related]
    if f.source.__class__ not in _MAYBE_STR or f.rendered_from.__class__ not in _MAYBE_STR:
        raise Unkeepable
    tail = _all((f.node_path, f.fingerprint), (str, str))
    return [*head, resource, f.source, f.rendered_from, related, *tail, None if f.fix is None else _fix(f.fix)]


def _fix(fix: Fix) -> list[Any]:
    edits = [_all(_exact(e, Edit), _EDIT_FIELDS) for e in _exact(fix.edits, tuple)]
    isolation = [_all(_exact(pair, tuple), _PAIR) for pair in _exact(fix.isolation, tuple)]
    return _all((fix.title, fix.path, edits, fix.applicability, isolation), _EDIT)


def _summary(summary: Summary) -> list[Any]:
    # The rest of a Summary is the run's, set after its files are merged: a file's own is always unset.
    run_only = (
        summary.baselined, summary.outside_diff, summary.fixed, summary.istio_sign, summary.units, summary.rendered, summary.stale_baseline,
        summary.unheld, summary.test_folders,
    )
    if run_only != (None, None, None, None, None, None, [], 0, 0):
        raise Unkeepable
    if vars(summary).keys() != _SPELT:
        raise Unkeepable  # a field added since: `_read_summary` would leave it out
    counts = vars(summary)
    by_severity = {_exact(k, str): _exact(v, int) for k, v in summary.by_severity.items()}
    skipped = [_all(_exact(s, SkippedInput), _SKIPPED) for s in summary.skipped_inputs]
    signs = [_all(sign, _SIGN) for sign in sorted(summary.signs_seen)]
    return _all((*(counts[name] for name in _COUNTS), summary.fixable, summary.unsafe_fixable, by_severity, skipped, signs), _SUMMARY)


# --- reading: every field checked ------------------------------------------------------------------


def _typed(value: Any, kinds: tuple[type, ...]) -> list[Any]:
    """A JSON list whose items are of exactly the types in `kinds` (a bool is no int here)."""
    if value.__class__ is not list or tuple(map(type, value)) != kinds:
        raise ValueError("not a kept result")
    return list(value)


def _read_finding(value: Any) -> Finding:
    if value.__class__ is not list or tuple(map(type, value)) not in _FINDINGS:
        raise ValueError("not a kept finding")
    path, line, column, code, name, severity, message, help_, resource, source, rendered_from, related, node_path, fingerprint, fix = value
    level = _SEVERITIES.get(severity)
    if level is None:
        raise ValueError("no such severity")
    about = None if resource is None else ResourceId(*_typed(resource, _RESOURCE))
    cited = tuple(Position(*_typed(p, _POSITION)) for p in related) if related else ()
    return Finding(
        path, line, column, code, name, level, message, help_, about, source, rendered_from, cited, node_path, fingerprint,
        None if fix is None else _read_fix(fix),
    )


def _read_fix(value: Any) -> Fix:
    title, path, edits, applicability, isolation = _typed(value, _EDIT)
    read_edits = tuple(Edit(*_typed(e, _EDIT_FIELDS)) for e in edits)
    pairs = tuple(tuple(_typed(pair, _PAIR)) for pair in isolation)
    return Fix(title, path, read_edits, applicability, pairs)


def _read_summary(value: Any) -> Summary:
    *counts, fixable, unsafe_fixable, by_severity, skipped, signs = _typed(value, _SUMMARY)
    if not all(k.__class__ is str and v.__class__ is int for k, v in by_severity.items()):
        raise ValueError("not a kept summary")
    summary = Summary(by_severity=by_severity, fixable=fixable, unsafe_fixable=unsafe_fixable)
    vars(summary).update(zip(_COUNTS, counts, strict=True))
    summary.skipped_inputs.extend(SkippedInput(*_typed(s, _SKIPPED)) for s in skipped)
    summary.signs_seen.update(tuple(_typed(s, _SIGN)) for s in signs)
    return summary
