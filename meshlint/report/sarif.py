"""SARIF 2.1.0 for code scanning.

Paths are relative to `%SRCROOT%`, the repository root (meshlint.fingerprint), which
`originalUriBaseIds` names; fingerprints come from meshlint.fingerprint, so alerts survive lines
added above them and any spelling of the paths. Each rule carries its documentation (`help`, the
text and the markdown of its section of the rules page) and tags, and links that section only where
the page is published (`docs-url`, `--docs-url`): a link to a page that does not exist helps nobody; ML4xx rules are security rules with a `security-severity`. A finding's cited origins (a
mesh-wide drain, a Service) are its related locations; skipped inputs are tool notifications.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from meshlint import __version__
from meshlint.fingerprint import repo_path
from meshlint.report import annotated_at
from meshlint.report.indented import dumps
from meshlint.ruledocs import explain, family, help_markdown, url

if TYPE_CHECKING:
    from collections.abc import Iterator

    from meshlint.engine.results import Report
    from meshlint.findings import Finding, Position
    from meshlint.fix.edits import Fix
    from meshlint.rule import Rule

_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
SRCROOT = "%SRCROOT%"
# What `quote` leaves as it is (letters, digits, `_.-~`, and `/`): most paths, and for them the match
# costs far less than quote.
_PLAIN_URI = re.compile(r"[A-Za-z0-9_.~/-]*")
FINGERPRINT = "meshlintFinding/v2"  # v1 hashed the message; v2 is meshlint.fingerprint (SCHEME meshlint/v2)

# GitHub ranks security alerts by `security-severity` (CVSS-like, 0-10: 9+ critical, 7+ high, 4+ medium,
# else low). Interception off (ML403) removes mTLS and AuthorizationPolicy from all of a pod's traffic:
# high. An inbound bypass (ML401) lets any client reach the excluded ports in plaintext, past
# AuthorizationPolicy: high, a little lower because only some ports. An outbound bypass (ML402) leaks
# identity and plaintext to some destinations, which a STRICT peer refuses: medium. A malformed
# interception annotation (ML404) makes the injector refuse the pod, so nothing runs exposed: low.
SECURITY_SEVERITY = {"ML401": "7.5", "ML402": "5.5", "ML403": "8.0", "ML404": "3.0"}


def rule_descriptor(rule: Rule, docs_url: str | None = None) -> dict[str, Any]:
    """The rule as SARIF describes one; `docs_url`: where the rules page is published, if anywhere."""
    group = family(rule)
    security = rule.code in SECURITY_SEVERITY or group == "security"
    tags = ["kubernetes", "istio", "security" if security else "reliability"] + ([group] if group and group != "security" else [])
    properties: dict[str, Any] = {"tags": tags}
    if security:
        properties["security-severity"] = SECURITY_SEVERITY.get(rule.code, "5.0")
    descriptor: dict[str, Any] = {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.section("Why is this bad?") or rule.summary},
        "help": {"text": explain(rule), "markdown": help_markdown(rule)},
    }
    if docs_url:
        descriptor["helpUri"] = url(rule, docs_url)
    descriptor["defaultConfiguration"] = {"level": _LEVEL[str(rule.severity)]}
    descriptor["properties"] = properties
    return descriptor


def render(report: Report, *, color: bool = False, docs_url: str | None = None) -> str:
    return "".join(chunks(report, docs_url=docs_url))


# Where the results go in the log laid out without them: they are laid out one at a time, so a big
# report is never held whole, as data or as text.
_RESULTS = "\x00results\x00"


def chunks(report: Report, *, docs_url: str | None = None) -> Iterator[str]:
    """The log, laid out as json.dumps(log, indent=2) would lay it out, one result at a time."""
    root = report.root
    index = {rule.code: i for i, rule in enumerate(report.rules)}
    driver: dict[str, Any] = {"name": "meshlint", "version": __version__}
    if docs_url:
        driver["informationUri"] = docs_url
    driver["rules"] = [rule_descriptor(rule, docs_url) for rule in report.rules]
    notifications: list[dict[str, Any]] = [
        {"level": "warning", "message": {"text": f"skipped: {s.reason}"}, "locations": [{"physicalLocation": {"artifactLocation": _artifact(s.path, root)}}]}
        for s in report.summary.skipped_inputs
    ] + [{"level": "note", "message": {"text": note}} for note in report.notes]
    run: dict[str, Any] = {
        "tool": {"driver": driver},
        "originalUriBaseIds": {SRCROOT: {"uri": _directory_uri(root)}},
        "invocations": [{"executionSuccessful": True, "toolExecutionNotifications": notifications}],
        "results": _RESULTS,
        "columnKind": "unicodeCodePoints",
    }
    summary = report.summary
    if summary.baselined is not None or summary.outside_diff is not None:
        run["properties"] = {
            "baselined": summary.baselined or 0,
            "staleBaseline": summary.stale_baseline,
            "outsideDiff": summary.outside_diff or 0,
        }
    log = {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0", "runs": [run]}
    # The key and the placeholder: a quote inside a string is escaped, so only the key itself matches.
    head, tail = dumps(log).split('"results": ' + dumps(_RESULTS), 1)
    level = (len(head) - len(head.rstrip(" "))) // 2  # the key's indent, in steps: the list's level
    if not report.findings:
        yield head + '"results": []' + tail + "\n"
        return
    inner = "\n" + "  " * (level + 1)
    yield head + '"results": [' + inner
    for n, f in enumerate(report.findings):
        yield ("," + inner if n else "") + dumps(_result(f, report, index), level=level + 1)
    yield "\n" + "  " * level + "]" + tail + "\n"


def _result(f: Finding, report: Report, index: dict[str, int]) -> dict[str, Any]:
    root = report.root
    result: dict[str, Any] = {
        "ruleId": f.code,
        "level": _LEVEL[str(f.severity)],
        "message": {"text": f"{f.message}\nhelp: {f.help}"},
        "locations": [{"physicalLocation": _located(f, root)}],
        "partialFingerprints": {FINGERPRINT: f.fingerprint},
    }
    if f.code in index:
        result["ruleIndex"] = index[f.code]
    related = [
        {"id": n, "physicalLocation": _physical(p, root), "message": {"text": "cited in the message"}}
        for n, p in enumerate(f.related, start=1)
    ]
    if f.rendered_from and annotated_at(f)[1] is not None:  # a named stream file: the file it says the object came from
        related.append(
            {"id": len(related) + 1, "physicalLocation": {"artifactLocation": {"uri": f.rendered_from}}, "message": {"text": "rendered from"}}
        )
    elif f.rendered_from:  # at the template: the line of the stream it was found on
        related.append({"id": len(related) + 1, "physicalLocation": _physical(f.position, root), "message": {"text": "in the rendered stream"}})
    if related:
        result["relatedLocations"] = related
    if report.summary.baselined is not None:
        result["baselineState"] = "new"  # the baselined ones are left out
    if f.fix is not None:
        result["fixes"] = [_fix(f.fix, root)]
    units = report.units_of(f)
    if units:
        result["properties"] = {"units": units}  # the deployment units the file is applied in
    return result


def _fix(fix: Fix, root: str) -> dict[str, Any]:
    """A fix as SARIF writes one: its replacements in one artifact, regions 1-based with the end column
    exclusive (an insertion deletes an empty region)."""
    replacements = [
        {
            "deletedRegion": {"startLine": e.line, "startColumn": e.column, "endLine": e.end_line, "endColumn": e.end_column},
            "insertedContent": {"text": e.text},
        }
        for e in fix.edits
    ]
    unsafe = "" if fix.safe else " (unsafe: applied only with --unsafe-fixes)"
    return {
        "description": {"text": fix.title + unsafe},
        "artifactChanges": [{"artifactLocation": _artifact(fix.path, root), "replacements": replacements}],
        "properties": {"applicability": fix.applicability},
    }


def _artifact(path: str, root: str) -> dict[str, str]:
    """Relative to %SRCROOT% when the file is inside the repository, else an absolute file URI."""
    relative = repo_path(path, root)
    if relative.startswith("../") or relative == "..":
        return {"uri": Path(os.path.abspath(path)).as_uri()}
    return {"uri": relative if _PLAIN_URI.fullmatch(relative) else quote(relative, safe="/"), "uriBaseId": SRCROOT}


def _located(f: Finding, root: str) -> dict[str, Any]:
    path, line = annotated_at(f)
    return _physical(f.position, root) if line is not None else {"artifactLocation": _artifact(path, root)}


def _physical(position: Position, root: str) -> dict[str, Any]:
    return {"artifactLocation": _artifact(position.path, root), "region": {"startLine": position.line, "startColumn": position.column}}


def _directory_uri(path: str) -> str:
    uri = Path(path).as_uri()
    return uri if uri.endswith("/") else uri + "/"
