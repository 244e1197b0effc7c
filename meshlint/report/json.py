"""Machine-readable findings; the shape is documented in the README (version 1).

Written one finding at a time, laid out exactly as `json.dumps(report, indent=2)` would lay it out.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from meshlint.report.indented import dumps

if TYPE_CHECKING:
    from meshlint.engine.results import Report
    from meshlint.findings import Finding
    from meshlint.fix.edits import Fix


def finding_dict(f: Finding, units: list[str] | None = None) -> dict[str, Any]:
    """`units`: the deployment units the finding's file is in (the key is left out when none)."""
    return {
        "code": f.code,
        "name": f.name,
        "severity": str(f.severity),
        "path": f.path,
        "line": f.line,
        "column": f.column,
        "message": f.message,
        "help": f.help,
        "resource": (
            {"kind": f.resource.kind, "name": f.resource.name, "namespace": f.resource.namespace} if f.resource else None
        ),
        "related": [{"path": p.path, "line": p.line, "column": p.column} for p in f.related],
        "fingerprint": f.fingerprint,
        **({"source": f.rendered_from} if f.rendered_from else {}),
        **({"units": units} if units else {}),
        "fix": fix_dict(f.fix) if f.fix is not None else None,
    }


def fix_dict(fix: Fix) -> dict[str, Any]:
    """A fix as ruff's JSON gives one: what it does, safe or unsafe, its edits (1-based, end exclusive)."""
    return {
        "message": fix.title,
        "applicability": fix.applicability,
        "edits": [
            {"path": fix.path, "line": e.line, "column": e.column, "end_line": e.end_line, "end_column": e.end_column, "content": e.text}
            for e in fix.edits
        ],
    }


def chunks(report: Report) -> Iterator[str]:
    if not report.findings:
        yield '{\n  "version": 1,\n  "findings": [],\n'
    else:
        yield '{\n  "version": 1,\n  "findings": [\n'
        last = len(report.findings) - 1
        for n, f in enumerate(report.findings):
            yield "    " + dumps(finding_dict(f, report.units_of(f)), level=2) + (",\n" if n < last else "\n")
        yield "  ],\n"
    summary = dumps(report.summary.as_dict(), level=1)
    yield f'  "summary": {summary}\n}}\n'


def render(report: Report, *, color: bool = False) -> str:
    return "".join(chunks(report))
