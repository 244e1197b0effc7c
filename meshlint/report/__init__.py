"""Reporters: pure functions from a report to text. Each format is one module, imported on demand.

A reporter that can write its report piece by piece defines `chunks`, so a big report is written
while it is made instead of being held whole in memory; the others define only `render`.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from meshlint.engine.results import Report

FORMATS = ("text", "concise", "json", "sarif", "github", "gitlab", "junit")

# C0 and C1 control characters but tab and newline. A manifest can hold them in a double-quoted string
# ("web\e[2J", "\e]0;title\a") and a file name can too; written raw they would clear the reader's
# terminal, set its title, or make an XML report invalid.
_CONTROL = "[\x00-\x08\x0b-\x1f\x7f-\x9f]"


def visible(text: str) -> str:
    """TEXT with each control character written as its escape (`\x1b`), for the formats a person or a
    terminal reads; JSON escapes them itself."""
    return re.sub(_CONTROL, _escaped, text) if re.search(_CONTROL, text) else text


def _escaped(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


def chunks(fmt: str, report: Report, *, color: bool = False, statistics: bool = False, quiet: bool = False) -> Iterator[str]:
    module = importlib.import_module(f"meshlint.report.{fmt}")
    if fmt == "text":
        return cast("Iterator[str]", module.chunks(report, color=color, with_statistics=statistics, quiet=quiet))
    if hasattr(module, "chunks"):
        return cast("Iterator[str]", module.chunks(report))
    return iter([cast(str, module.render(report, color=color))])


def render(fmt: str, report: Report, *, color: bool = False, statistics: bool = False, quiet: bool = False) -> str:
    return "".join(chunks(fmt, report, color=color, statistics=statistics, quiet=quiet))
