"""The report for people: findings grouped by file, each with its source line and a caret under the
column, as compilers print them, then an optional per-rule count and a one-line summary.

Each finding still starts with `path:line:col: severity CODE name: message`, so editors and terminals
that jump to `path:line:col` keep working.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from meshlint.findings import said_key
from meshlint.report import visible

if TYPE_CHECKING:
    from meshlint.engine.results import Report, Summary
    from meshlint.findings import Finding

_COLORS = {"error": "\033[31m", "warning": "\033[33m", "info": "\033[36m"}
_BOLD, _DIM, _RESET = "\033[1m", "\033[2m", "\033[0m"


def summary_line(summary: Summary) -> str:
    counts = summary.by_severity
    total = sum(counts.values())
    parts = [
        f"{summary.files} file{'s' if summary.files != 1 else ''}",
        f"{summary.resources} resource{'s' if summary.resources != 1 else ''}",
        f"{total} finding{'s' if total != 1 else ''} ({counts['error']} error, {counts['warning']} warning, {counts['info']} info)",
        f"{summary.suppressed} suppressed",
        f"{summary.skipped_documents + summary.skipped_files} skipped",
        f"{summary.assumed_meshed} assumed meshed" + (f" ({summary.istio_sign})" if summary.istio_sign else ""),
    ]
    if summary.units:
        parts.append(f"{summary.units} deployment unit{'s' if summary.units != 1 else ''}")
    if summary.rendered:
        roots = summary.rendered["roots"]
        parts.append(f"{summary.rendered['rendered']} of {roots} root kustomization{'s' if roots != 1 else ''} rendered with {summary.rendered['renderer']}")
    if summary.not_checked:
        parts.append(
            f"{summary.not_checked} not checked (nothing shows they are meshed, and no sign of Istio lies on their path or in their "
            "unit; mesh.default-injection: enabled, in the config or a .meshlint.yaml of their tree, checks them)"
        )
    if summary.unheld:
        parts.append(
            f"{summary.unheld} workload{'s' if summary.unheld != 1 else ''} start{'s' if summary.unheld == 1 else ''} without "
            "holdApplicationUntilProxyStarts, and the run holds no mesh-wide configuration to set it in (ML100 require-source: false "
            "reports them)"
        )
    if summary.test_folders:
        parts.append(
            f"{summary.test_folders} testdata folder{'s' if summary.test_folders != 1 else ''} not walked (test inputs; name one to check it)"
        )
    if summary.on_defaults:
        parts.append(
            f"{summary.on_defaults} on Istio's defaults (no mesh-wide settings beside or above the named files; "
            "settings kept elsewhere count when mesh.context names them)"
        )
    if summary.baselined is not None:
        parts.append(f"{summary.baselined} baselined")
    if summary.stale_baseline:
        stale = len(summary.stale_baseline)
        parts.append(f"{stale} stale baseline entr{'y' if stale == 1 else 'ies'}")
    if summary.outside_diff is not None:
        parts.append(f"{summary.outside_diff} outside the diff")
    if summary.fixed is not None:
        parts.append(f"{summary.fixed} fixed")
    return ", ".join(parts)


def fixable_line(summary: Summary, unsafe_fixes: bool) -> str | None:
    """`[*] 2 fixable with --fix (1 more with --unsafe-fixes)`, as ruff says it, or None."""
    if unsafe_fixes:
        count = summary.fixable + summary.unsafe_fixable
        return f"[*] {count} fixable with --fix --unsafe-fixes" if count else None
    if summary.fixable:
        more = f" ({summary.unsafe_fixable} more with --unsafe-fixes)" if summary.unsafe_fixable else ""
        return f"[*] {summary.fixable} fixable with --fix{more}"
    return f"{summary.unsafe_fixable} fixable with --fix --unsafe-fixes" if summary.unsafe_fixable else None


def statistics(findings: Sequence[Finding]) -> list[str]:
    """Findings per rule, most frequent first: `  3  ML101  startup-race  (2 error, 1 warning)`."""
    if not findings:
        return []
    per_rule = Counter((f.code, f.name) for f in findings)
    severities: dict[str, Counter[str]] = {}
    for f in findings:
        severities.setdefault(f.code, Counter())[str(f.severity)] += 1
    width = max(len(str(n)) for n in per_rule.values())
    name_width = max(len(name) for _, name in per_rule)
    lines = ["findings per rule:"]
    for (code, name), count in sorted(per_rule.items(), key=lambda item: (-item[1], item[0])):
        split = ", ".join(f"{n} {s}" for s, n in sorted(severities[code].items(), key=lambda kv: ("error", "warning", "info").index(kv[0])))
        lines.append(f"  {count:>{width}}  {code:<6} {name:<{name_width}}  ({split})")
    return lines


def chunks(report: Report, *, color: bool = False, with_statistics: bool = False, quiet: bool = False) -> Iterator[str]:
    """The report one finding at a time (a big report is written while it is made)."""
    for f in report.findings:  # sorted by path, so each file's findings come together
        severity = str(f.severity)
        mark = " [*]" if report.fix_offered(f) else ""  # --fix would settle it (ruff's mark)
        path, message = visible(f.path, one_line=True), visible(f.message, one_line=True)  # what the manifest wrote
        help_text = visible(f.help, one_line=True)
        if color:
            out = [f"{_BOLD}{path}:{f.line}:{f.column}:{_RESET} {_COLORS[severity]}{severity}{_RESET} {_BOLD}{f.code}{_RESET}{mark} {f.name}: {message}"]
        else:
            out = [f"{path}:{f.line}:{f.column}: {severity} {f.code}{mark} {f.name}: {message}"]
        out.extend(_snippet(f.source and visible(f.source), f.line, f.column, _COLORS[severity] if color else None))
        if f.rendered_from:
            source = visible(f.rendered_from)
            out.append(f"  {_DIM}source:{_RESET} {source}" if color else f"  source: {source}")
        held = report.held_in.get(said_key(f)) if report.held_in else None
        if held:  # found by building overlays: the ones that deploy it so
            built = visible(", ".join(held), one_line=True)
            out.append(f"  {_DIM}deployed by:{_RESET} {built}" if color else f"  deployed by: {built}")
        out.append(f"  {_DIM}help:{_RESET} {help_text}" if color else f"  help: {help_text}")
        out.append("")
        yield "\n".join(out) + "\n"
    if with_statistics and report.findings:  # asked for by name: --quiet leaves out only what was not
        yield "\n".join(statistics(report.findings)) + ("\n" if quiet else "\n\n")
    if quiet:
        return
    skipped = skipped_lines(report.summary)
    if skipped:
        yield "\n".join(visible(line, one_line=True) for line in skipped) + "\n\n"
    fixable = fixable_line(report.summary, report.unsafe_fixes)
    if fixable:  # before the summary, which stays the last line
        yield fixable + "\n"
    yield visible(summary_line(report.summary), one_line=True) + "\n"


# How many skipped inputs the report names; stderr names the rest (and only those, when this report is
# on stdout: the reader would otherwise see each of the first ones twice).
SKIPPED_LISTED = 10


def skipped_lines(summary: Summary, most: int = SKIPPED_LISTED) -> list[str]:
    """The inputs passed over whole, and why: nothing was checked in them."""
    lines = [f"not checked: {item.path}: {item.reason}" for item in summary.skipped_inputs[:most]]
    rest = len(summary.skipped_inputs) - most
    if rest > 0:
        lines.append(f"not checked: {rest} more input{'s' if rest > 1 else ''} (each is named on stderr)")
    return lines


def render(report: Report, *, color: bool = False, with_statistics: bool = False, quiet: bool = False) -> str:
    return "".join(chunks(report, color=color, with_statistics=with_statistics, quiet=quiet))


def _snippet(source: str | None, line: int, column: int, color: str | None) -> list[str]:
    """The source line with a caret under the column; tabs shown as one space so the caret lines up."""
    if source is None:
        return []
    source = source.rstrip("\r\n").replace("\t", " ")
    gutter = " " * len(str(line))
    caret = " " * (column - 1) + "^"
    if color:
        return [f"  {_DIM}{line} |{_RESET} {source}", f"  {_DIM}{gutter} |{_RESET} {color}{caret}{_RESET}"]
    return [f"  {line} | {source}", f"  {gutter} | {caret}"]
