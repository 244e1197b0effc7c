"""Every fixture under testdata/fix/<CODE>/: `meshlint check --fix` turns NAME.yaml into NAME.fixed.yaml,
byte for byte, and then reports nothing of CODE.

`unsafe_*` fixtures need `--unsafe-fixes` (without it, the finding stays); `nofix_*` fixtures have no
`.fixed.yaml`: nothing may change them, even with `--unsafe-fixes`, and the finding stays. A first line
`# config: {...}` is the fixture's `.meshlint.yaml`.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from helpers import CONFIG_COMMENT, TESTDATA, lint
from meshlint.cli import main

FIX = TESTDATA / "fix"
CASES = sorted(p for p in FIX.glob("*/*.yaml") if not p.name.endswith(".fixed.yaml"))


def expected_of(case: Path) -> Path:
    return case.with_name(case.name.removesuffix(".yaml") + ".fixed.yaml")


def settings_of(data: bytes) -> dict | None:
    match = CONFIG_COMMENT.search(data.decode("utf-8-sig", errors="replace"))
    return json.loads(match.group(1)) if match else None


def fix_copy(folder: Path, name: str, data: bytes, *flags: str, monkeypatch) -> tuple[bytes, object]:
    """Write the fixture into `folder` (with its config) and run `meshlint check NAME --fix` there."""
    folder.mkdir(exist_ok=True)
    settings = settings_of(data)
    if settings:
        (folder / ".meshlint.yaml").write_text(json.dumps(settings), encoding="utf-8")
    (folder / name).write_bytes(data)
    monkeypatch.chdir(folder)
    result = CliRunner().invoke(main, ["check", name, "--fix", *flags])
    assert result.exit_code in (0, 1), result.output + result.stderr
    return (folder / name).read_bytes(), result


def findings_of(folder: Path, name: str, data: bytes):
    (folder / name).write_bytes(data)
    return lint([folder / name], settings_of(data), base=str(folder), beyond=False).findings


def about(findings) -> Counter:
    return Counter((f.resource, f.code) for f in findings)


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fix_gives_the_fixed_file_byte_for_byte(case, tmp_path, monkeypatch):
    code = case.parent.name
    data = case.read_bytes()
    unsafe = case.name.startswith(("unsafe_", "nofix_"))
    before = findings_of(tmp_path, case.name, data)
    assert any(f.code == code for f in before), f"{case.name}: no {code} finding to fix"
    after, result = fix_copy(tmp_path / "run", case.name, data, *(["--unsafe-fixes"] if unsafe else []), monkeypatch=monkeypatch)
    remaining = findings_of(tmp_path, case.name, after)
    if case.name.startswith("nofix_"):
        assert not expected_of(case).exists()
        assert after == data, f"{case.name} was changed:\n{after.decode()}"
        assert any(f.code == code for f in remaining)
        return
    assert after == expected_of(case).read_bytes(), f"{case.name} fixed as:\n{after.decode()}\nnotes: {result.stderr}"
    assert [f for f in remaining if f.code == code] == []
    new = about(remaining) - about(before)
    assert not new, f"new findings after the fix: {new}"
    again, _ = fix_copy(tmp_path / "again", case.name, after, *(["--unsafe-fixes"] if unsafe else []), monkeypatch=monkeypatch)
    assert again == after, "a second --fix changed the file again"


@pytest.mark.parametrize("case", [c for c in CASES if c.name.startswith("unsafe_")], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_unsafe_fixes_wait_for_unsafe_fixes(case, tmp_path, monkeypatch):
    code = case.parent.name
    after, _ = fix_copy(tmp_path / "run", case.name, case.read_bytes(), monkeypatch=monkeypatch)
    assert any(f.code == code for f in findings_of(tmp_path, case.name, after))


def test_every_fixable_rule_has_fix_fixtures():
    from helpers import RULES

    fixable = {r.code for r in RULES if r.fix}
    folders = {p.name for p in FIX.iterdir() if p.is_dir()}
    assert folders == fixable
    for code in fixable:
        names = [c.name for c in CASES if c.parent.name == code]
        assert any(not n.startswith("nofix_") for n in names), f"{code}: no fixture that it fixes"
