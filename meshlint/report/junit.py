"""JUnit XML for CI dashboards: one test case per resource and rule that fired."""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING
from xml.sax.saxutils import escape, quoteattr

if TYPE_CHECKING:
    from meshlint.engine.results import Report
    from meshlint.findings import Finding


def render(report: Report, *, color: bool = False) -> str:
    cases: OrderedDict[tuple[str, str, str, str], list[Finding]] = OrderedDict()
    for f in report.findings:
        subject = str(f.resource) if f.resource else f.path
        cases.setdefault((f.path, subject, f.code, f.name), []).append(f)
    failures = sum(1 for group in cases.values() if any(str(f.severity) != "info" for f in group))
    out = ['<?xml version="1.0" encoding="UTF-8"?>']
    out.append(f'<testsuites name="meshlint" tests="{len(cases)}" failures="{failures}">')
    out.append(f'  <testsuite name="meshlint" tests="{len(cases)}" failures="{failures}" errors="0">')
    for (path, subject, code, name), group in cases.items():
        out.append(f"    <testcase classname={quoteattr(path)} name={quoteattr(f'{subject} {code} {name}')} file={quoteattr(path)} line=\"{group[0].line}\">")
        body = "\n".join(f"{f.path}:{f.line}:{f.column}: {f.severity} {f.code}: {f.message}\nhelp: {f.help}" for f in group)
        tag = "failure" if any(str(f.severity) != "info" for f in group) else "system-out"
        if tag == "failure":
            out.append(f"      <failure message={quoteattr(group[0].message)} type={quoteattr(str(group[0].severity))}>{escape(body)}</failure>")
        else:
            out.append(f"      <system-out>{escape(body)}</system-out>")
        out.append("    </testcase>")
    out.append("  </testsuite>")
    out.append("</testsuites>")
    return "\n".join(out) + "\n"
