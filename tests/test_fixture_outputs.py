"""Each rule's fixtures give exactly the findings its `testdata/<CODE>/findings.expected` holds: every field
a reader sees (code, name, severity, place, message, help) and the fix (title, safety, edits), compared
whole. The markers (tests/test_fixtures.py) say where a rule fires; this file says what it says there.

After a change meant to alter what rules say, write every file anew and read the diff:

    python tests/test_fixture_outputs.py
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from helpers import EXPECTED, TESTDATA, fixture_run

FOLDERS = sorted(d for d in TESTDATA.iterdir() if d.is_dir() and d.name != "fix")


def fixtures_of(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if not p.name.startswith(".") and p.name != EXPECTED)


def said(folder: Path) -> dict[str, list[dict[str, Any]]]:
    """What every fixture of a rule's folder gives, by fixture name; places relative to the folder."""
    prefix = str(folder) + os.sep
    out: dict[str, list[dict[str, Any]]] = {}
    for fixture in fixtures_of(folder):
        _, _, report = fixture_run(fixture)
        out[fixture.name] = [_whole(f, prefix) for f in report.findings]
    return out


def _whole(found: Any, prefix: str) -> dict[str, Any]:
    def local(text: str) -> str:
        return text.replace(prefix, "")

    fix = found.fix
    return {
        "path": local(found.path), "line": found.line, "column": found.column, "code": found.code, "name": found.name,
        "severity": str(found.severity), "message": local(found.message), "help": local(found.help),
        "fix": None if fix is None else {
            "title": local(fix.title), "applicability": fix.applicability,
            "edits": [f"{e.line}:{e.column}-{e.end_line}:{e.end_column} {json.dumps(e.text, ensure_ascii=False)}" for e in fix.edits],
        },
    }


def _text(data: dict[str, list[dict[str, Any]]]) -> str:
    return json.dumps(data, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda d: d.name)
def test_fixtures_say_what_their_expected_file_holds(folder):
    expected = folder / EXPECTED
    assert expected.is_file(), f"testdata/{folder.name}/{EXPECTED} is missing: run python tests/test_fixture_outputs.py"
    assert _text(said(folder)) == expected.read_text(encoding="utf-8")


def main() -> None:
    """Write every rule folder's findings.expected from what the fixtures give now."""
    for folder in FOLDERS:
        (folder / EXPECTED).write_text(_text(said(folder)), encoding="utf-8")
    print(f"wrote {len(FOLDERS)} files: review them with git diff testdata")


if __name__ == "__main__":
    main()
