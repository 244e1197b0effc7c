"""`path:line:col: severity CODE name: message`, an indented help line, and a summary line."""

from __future__ import annotations

_COLORS = {"error": "\033[31m", "warning": "\033[33m", "info": "\033[36m"}
_BOLD, _DIM, _RESET = "\033[1m", "\033[2m", "\033[0m"


def summary_line(summary) -> str:
    counts = summary.by_severity
    total = sum(counts.values())
    parts = [
        f"{summary.files} file{'s' if summary.files != 1 else ''}",
        f"{summary.resources} resource{'s' if summary.resources != 1 else ''}",
        f"{total} finding{'s' if total != 1 else ''} ({counts['error']} error, {counts['warning']} warning, {counts['info']} info)",
        f"{summary.suppressed} suppressed",
        f"{summary.skipped_documents + summary.skipped_files} skipped",
        f"{summary.assumed_meshed} assumed meshed",
    ]
    return ", ".join(parts)


def render(report, *, color: bool = False) -> str:
    out = []
    for f in report.findings:
        severity = str(f.severity)
        if color:
            head = f"{_BOLD}{f.path}:{f.line}:{f.column}:{_RESET} {_COLORS[severity]}{severity}{_RESET} {_BOLD}{f.code}{_RESET} {f.name}: {f.message}"
            out.append(head)
            out.append(f"  {_DIM}help:{_RESET} {f.help}")
        else:
            out.append(f"{f.path}:{f.line}:{f.column}: {severity} {f.code} {f.name}: {f.message}")
            out.append(f"  help: {f.help}")
    out.append(summary_line(report.summary))
    return "\n".join(out) + "\n"
