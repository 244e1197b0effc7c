"""GitHub Actions workflow commands: one annotation per finding. GitHub places an annotation by its path
in the repository, so `file=` is relative to the repository root (as SARIF and GitLab name files),
whichever folder the run started in."""

from __future__ import annotations

from typing import TYPE_CHECKING

from meshlint.fingerprint import repo_path
from meshlint.report import annotated_at, visible

if TYPE_CHECKING:
    from meshlint.engine.results import Report

_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def _escape_data(text: str) -> str:
    return visible(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render(report: Report, *, color: bool = False) -> str:
    lines = []
    for f in report.findings:
        path, line = annotated_at(f)
        place = f",line={line},col={f.column}" if line is not None else ""
        props = f"file={_escape_property(repo_path(path, report.root))}{place},title={_escape_property(f'{f.code} {f.name}')}"
        lines.append(f"::{_LEVEL[str(f.severity)]} {props}::{_escape_data(f.message + chr(10) + 'help: ' + f.help)}")
    return "".join(line + "\n" for line in lines)
