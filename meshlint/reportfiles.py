"""Which reports a run writes and where: each --output paired with its --format, every file checked
writable before the run, files written first and stdout last."""

from __future__ import annotations

import os
import sys
from typing import Any

from meshlint.console import UsageProblem, echo, echo_all, fail, use_color


def skipped_on_stdout(reports: list[tuple[str, str | None]], quiet: bool) -> int:
    """How many of the skipped inputs a text report on stdout names (stderr need not name them again)."""
    if quiet or ("text", None) not in reports:
        return 0
    from meshlint.report.text import SKIPPED_LISTED

    return SKIPPED_LISTED


def write_reports(
    report: Any, reports: list[tuple[str, str | None]], *, color_choice: str, statistics: bool, quiet: bool, docs_url: str | None = None
) -> None:
    """Files first, stdout last: a reader that goes away early (`| head`) costs no report file."""
    from meshlint.report import chunks

    for fmt, path in reports:
        if path is None:
            continue
        try:
            with open(path, "w", encoding="utf-8") as handle:
                handle.writelines(chunks(fmt, report, statistics=statistics, quiet=quiet, docs_url=docs_url))
        except OSError as err:
            fail(f"{path}: cannot write the report: {err.strerror or err}")
    for fmt, path in reports:
        if path is not None:
            continue
        color = fmt == "text" and use_color(color_choice, sys.stdout.isatty())
        echo_all(chunks(fmt, report, color=color, statistics=statistics, quiet=quiet, docs_url=docs_url))
    if statistics and all(fmt != "text" for fmt, _ in reports):
        from meshlint.report.text import statistics as per_rule

        for line in per_rule(report.findings):
            echo(line, err=True)


def pair_reports(flags: list[tuple[str, str]], default_format: str) -> list[tuple[str, str | None]]:
    """Each --output FILE takes the --format before it (the first one, when it comes first; the
    configured format, when there is none); a --format without an --output writes to stdout."""
    reports: list[list[Any]] = []
    early: list[str] = []
    for kind, value in flags:
        if kind == "format":
            reports.append([value, None])
        elif not reports:
            early.append(value)
        elif reports[-1][1] is None:
            reports[-1][1] = value
        else:
            raise UsageProblem(f"--format {reports[-1][0]} has two --output files; give each report its own --format")
    if early:
        if not reports:
            reports.append([default_format, None])
        if len(early) > 1 or reports[0][1] is not None:
            raise UsageProblem("more --output files than --format options; each --output follows its --format")
        reports[0][1] = early[0]
    if not reports:
        reports.append([default_format, None])
    on_stdout = [fmt for fmt, path in reports if path is None]
    if len(on_stdout) > 1:
        raise UsageProblem(f"only one report can go to stdout (--format {' and --format '.join(on_stdout)}); give the others an --output")
    paths = [path for _, path in reports if path is not None]
    if len(set(paths)) < len(paths):
        raise UsageProblem("two reports name the same --output file")
    return [(fmt, path) for fmt, path in reports]


def writable(path: str, what: str) -> None:
    """A clear error before the run, not a traceback after it."""
    directory = os.path.dirname(path) or "."
    if os.path.isdir(path):
        fail(f"{path}: cannot write the {what}: it is a directory")
    if not os.path.isdir(directory):
        fail(f"{path}: cannot write the {what}: no such directory {directory}/")
