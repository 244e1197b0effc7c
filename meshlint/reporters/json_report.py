"""Machine-readable findings; the shape is documented in the README (version 1)."""

from __future__ import annotations

import json


def render(report, *, color: bool = False) -> str:
    findings = [
        {
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
        }
        for f in report.findings
    ]
    return json.dumps({"version": 1, "findings": findings, "summary": report.summary.as_dict()}, indent=2) + "\n"
