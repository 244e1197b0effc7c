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
    from meshlint.findings import Finding

FORMATS = ("text", "concise", "json", "sarif", "github", "gitlab", "junit")
# The formats that print a finding's fingerprint (which its node path goes into): a run that writes
# none of them, keeps no results and has no baseline or --fix makes neither (engine/plan.py `marks`).
READS_MARKS = frozenset({"json", "sarif", "gitlab"})
# The formats that show a finding's fix, mark it fixable or count the fixable ones.
READS_FIXES = frozenset({"text", "concise", "json", "sarif"})

# C0 and C1 control characters but tab and newline, lone surrogates, the two non-characters XML
# refuses, and the bidirectional controls and line separators. A manifest can hold them in a
# double-quoted string ("web\e[2J", "\e]0;title\a", "\ud800", "\u202e") and a file name can too;
# written raw they would clear the reader's terminal, set its title, stop the write with an encoding
# error, make an XML report invalid, or show a line in another order than it is written.
_BEYOND_C0 = "\x7f-\x9f\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff"
_CONTROL = f"[\x00-\x08\x0b-\x1f{_BEYOND_C0}]"
_CONTROL_OR_BREAK = f"[\x00-\x08\x0a-\x1f{_BEYOND_C0}]"  # the same, and a line break
# Each compiled the first time it is needed (most of a millisecond each; a clean run needs one), and
# kept: `re.search` and `re.sub` look a pattern up in re's cache on every call, which was most of the
# cost of a report's four checks per finding.
_COMPILED: dict[bool, re.Pattern[str]] = {}


def visible(text: str, *, one_line: bool = False) -> str:
    r"""TEXT with each such character written as its escape (`\x1b`, `\ud800`), for the formats a
    person or a terminal reads; JSON escapes them itself. `one_line`: a line break too, where the
    text is one field of a one-line record (a name with "\n" must not forge a finding line)."""
    if text.isascii() and text.isprintable():  # the usual text: no control character, no line break
        return text
    pattern = _COMPILED.get(one_line)
    if pattern is None:
        pattern = _COMPILED[one_line] = re.compile(_CONTROL_OR_BREAK if one_line else _CONTROL)
    return pattern.sub(_escaped, text) if pattern.search(text) else text


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def chunks(
    fmt: str, report: Report, *, color: bool = False, statistics: bool = False, quiet: bool = False, docs_url: str | None = None
) -> Iterator[str]:
    """The report in FMT; `docs_url` is where the rules page is published (SARIF links it), if anywhere."""
    module = importlib.import_module(f"meshlint.report.{fmt}")
    if fmt == "text":
        return cast("Iterator[str]", module.chunks(report, color=color, with_statistics=statistics, quiet=quiet))
    if fmt == "sarif":
        return cast("Iterator[str]", module.chunks(report, docs_url=docs_url))
    if hasattr(module, "chunks"):
        return cast("Iterator[str]", module.chunks(report))
    return iter([cast(str, module.render(report, color=color))])


def render(
    fmt: str, report: Report, *, color: bool = False, statistics: bool = False, quiet: bool = False, docs_url: str | None = None
) -> str:
    return "".join(chunks(fmt, report, color=color, statistics=statistics, quiet=quiet, docs_url=docs_url))


def annotated_at(f: Finding) -> tuple[str, int | None]:
    """Where a format that annotates files (SARIF, GitHub, GitLab, JUnit) puts a finding: its file and
    line, except that a finding on a rendered stream read from stdin (`helm template ... | meshlint
    check -`) goes to the file its `# Source:` comment or origin annotation names, with no line: the
    template's lines are not the stream's."""
    if f.rendered_from and f.path.startswith("<"):
        return f.rendered_from, None
    return f.path, f.line
