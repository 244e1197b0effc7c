"""Reporters: pure functions from a report to text. Each format is one module, imported on demand.

A reporter that can write its report piece by piece defines `chunks`, so a big report is written
while it is made instead of being held whole in memory; the others define only `render`.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from meshlint.engine.results import Report

FORMATS = ("text", "concise", "json", "sarif", "github", "gitlab", "junit")


def chunks(fmt: str, report: Report, *, color: bool = False, statistics: bool = False, quiet: bool = False) -> Iterator[str]:
    module = importlib.import_module(f"meshlint.report.{fmt}")
    if fmt == "text":
        return cast("Iterator[str]", module.chunks(report, color=color, with_statistics=statistics, quiet=quiet))
    if hasattr(module, "chunks"):
        return cast("Iterator[str]", module.chunks(report))
    return iter([cast(str, module.render(report, color=color))])


def render(fmt: str, report: Report, *, color: bool = False, statistics: bool = False, quiet: bool = False) -> str:
    return "".join(chunks(fmt, report, color=color, statistics=statistics, quiet=quiet))
