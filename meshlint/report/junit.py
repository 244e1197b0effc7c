"""JUnit XML for CI dashboards (Jenkins, GitLab): each checked file is a class. A file with findings
has one test case per resource and rule that fired, a failure when one of its findings is at or above
`--fail-on` and a passing case with the findings as output otherwise; a clean file is one passing
case, so a clean run is not an empty suite; a skipped file is a skipped case. Only the attributes of
the Jenkins JUnit schema are written (tests/schemas/junit-10.xsd). Files are named relative to the
repository root, as in the other CI reports, whichever folder the run started in."""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import TYPE_CHECKING
from xml.sax.saxutils import escape as _escape
from xml.sax.saxutils import quoteattr as _quoteattr

from meshlint.fingerprint import repo_path
from meshlint.report import annotated_at, visible

if TYPE_CHECKING:
    from meshlint.engine.results import Report
    from meshlint.findings import Finding


# What saxutils changes in text (`&<>`) and, in an attribute, besides (quotes, line breaks, tabs):
# text without any is written as it is, which most paths, names and messages are. A JUnit report has
# a case per file, and saxutils' chain of replacements was much of writing a big tree's report.
_TEXT_SPECIAL = re.compile(r"[&<>]")
_ATTRIBUTE_SPECIAL = re.compile("[&<>\"\n\r\t]")


def escape(text: str) -> str:
    text = visible(text)  # XML 1.0 has no place for most control characters, escaped or not
    return _escape(text) if _TEXT_SPECIAL.search(text) else text


def quoteattr(text: str) -> str:
    text = visible(text)
    return _quoteattr(text) if _ATTRIBUTE_SPECIAL.search(text) else f'"{text}"'


def render(report: Report, *, color: bool = False) -> str:
    root = report.root
    groups: dict[str, OrderedDict[tuple[str, str, str], list[Finding]]] = {}
    for f in report.findings:
        path = repo_path(annotated_at(f)[0], root)
        subject = str(f.resource) if f.resource else path
        groups.setdefault(path, OrderedDict()).setdefault((subject, f.code, f.name), []).append(f)
    skipped = {repo_path(s.path, root): s.reason for s in report.summary.skipped_inputs}
    # A stream whose findings went to the templates they came from is no file with "no findings".
    moved = {repo_path(f.path, root) for f in report.findings if annotated_at(f)[0] != f.path}
    files = {repo_path(p, root) for p in report.files} - moved
    cases, failures = [], 0
    for path in sorted(files | set(groups)):  # in path order, as findings are
        classname = quoteattr(path)
        if path in skipped:
            cases.append(f'    <testcase classname={classname} name="skipped">\n      <skipped message={quoteattr(skipped[path])}/>\n    </testcase>')
        elif path not in groups:
            cases.append(f'    <testcase classname={classname} name="no findings"/>')
        for (subject, code, name), group in groups.get(path, {}).items():
            body = escape("\n".join(f"{repo_path(f.path, root)}:{f.line}:{f.column}: {f.severity} {f.code}: {f.message}\nhelp: {f.help}" for f in group))
            failing = report.fail_on is not None and any(f.severity >= report.fail_on for f in group)
            failures += failing
            if failing:
                first = group[0]
                inner = f"<failure message={quoteattr(first.message)} type={quoteattr(str(first.severity))}>{body}</failure>"
            else:
                inner = f"<system-out>{body}</system-out>"
            cases.append(f"    <testcase classname={classname} name={quoteattr(f'{subject} {code} {name}')}>\n      {inner}\n    </testcase>")
    counts = f'tests="{len(cases)}" failures="{failures}" errors="0"'
    out = ['<?xml version="1.0" encoding="UTF-8"?>', f'<testsuites name="meshlint" {counts}>']
    out.append(f'  <testsuite name="meshlint" {counts} skipped="{len(skipped)}">')
    out.extend(_properties(report))
    out.extend(cases)
    out += ["  </testsuite>", "</testsuites>"]
    return "\n".join(out) + "\n"


def _properties(report: Report) -> list[str]:
    summary = report.summary
    values = []
    if summary.baselined is not None:
        values.append(("baselined", str(summary.baselined)))
        values += [("stale-baseline", " ".join(e.get(k, "") for k in ("code", "path", "resource", "at"))) for e in summary.stale_baseline]
    if summary.outside_diff is not None:
        values.append(("outside-diff", str(summary.outside_diff)))
    if not values:
        return []
    return ["    <properties>", *(f"      <property name={quoteattr(k)} value={quoteattr(v)}/>" for k, v in values), "    </properties>"]
