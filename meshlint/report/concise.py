"""One line a finding, `path:line:col: severity CODE name: message`, and nothing else: for grep, editors'
quickfix lists and `wc -l`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from meshlint.report import visible

if TYPE_CHECKING:
    from meshlint.engine.results import Report


def chunks(report: Report) -> Iterator[str]:
    for f in report.findings:
        mark = " [*]" if report.fix_offered(f) else ""
        yield visible(f"{f.path}:{f.line}:{f.column}: {f.severity} {f.code}{mark} {f.name}: {f.message}", one_line=True) + "\n"


def render(report: Report, *, color: bool = False) -> str:
    return "".join(chunks(report))
