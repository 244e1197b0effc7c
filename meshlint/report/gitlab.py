"""GitLab Code Quality (a subset of the Code Climate issue format): merge requests show each finding
on its line. Paths are repository-relative and fingerprints are meshlint.fingerprint's, unique per
finding (GitLab shows only the first issue of a fingerprint)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from meshlint.fingerprint import repo_path
from meshlint.report import annotated_at
from meshlint.report.indented import dumps

if TYPE_CHECKING:
    from meshlint.engine.results import Report
    from meshlint.findings import Finding

# GitLab's scale is info, minor, major, critical, blocker. Errors are hazards that will bite in
# production (major), warnings ones that may (minor); a security rule (ML4xx) ranks one step higher,
# as a security report would. Blocker is left to tools that know a merge must not happen.
_SEVERITY = {"error": "major", "warning": "minor", "info": "info"}
_SECURITY = {"error": "critical", "warning": "major", "info": "info"}


def issue(f: Finding, root: str) -> dict[str, Any]:
    security = f.code.startswith("ML4")
    path, line = annotated_at(f)
    return {
        "type": "issue",
        "check_name": f.code,
        "description": f"{f.code} {f.name}: {f.message}",
        "content": {"body": f"{f.message}\n\nhelp: {f.help}"},
        "categories": ["Security"] if security else ["Bug Risk"],
        "fingerprint": f.fingerprint,
        "severity": (_SECURITY if security else _SEVERITY)[str(f.severity)],
        "location": {"path": repo_path(path, root), "lines": {"begin": line or 1}},
    }


def render(report: Report, *, color: bool = False) -> str:
    return dumps([issue(f, report.root) for f in report.findings], ensure_ascii=False) + "\n"
