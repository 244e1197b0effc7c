"""What `meshlint check --fix` does when a file cannot or must not be written: a write that fails, a
file another run changed first, a read-only file or folder, hard links, links out of the named
paths, the owner and mode kept, and no temporary file left by an interrupt."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from helpers import TESTDATA
from meshlint.cli import main

RACE = (TESTDATA / "fix" / "ML101" / "new_annotations.yaml").read_bytes()
RACE_FIXED = (TESTDATA / "fix" / "ML101" / "new_annotations.fixed.yaml").read_bytes()
EDITED = RACE.replace(b"namespace: shop", b"namespace: shop-2")


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NO_COLOR", raising=False)
    return tmp_path


def invoke(*args):
    return CliRunner().invoke(main, list(args))


def findings(*args):
    """The findings of a JSON run, whole."""
    return json.loads(invoke("check", *args, "--format", "json").stdout)["findings"]


def names(folder):
    return sorted(p.name for p in folder.iterdir())


def refused(path, why):
    return f"meshlint: error: {path}: {why}; not written, its findings stay\n"


@pytest.mark.parametrize("named", ["tree", "tree/link.yaml"])
def test_fix_never_writes_through_a_symbolic_link_out_of_the_named_paths(project, named):
    (project / "outside").mkdir()
    (project / "outside" / "race.yaml").write_bytes(RACE)
    (project / "tree").mkdir()
    os.symlink("../outside/race.yaml", project / "tree" / "link.yaml")
    os.symlink("../outside", project / "tree" / "shared")  # a folder on the way
    result = invoke("check", named, "--fix")
    assert result.exit_code == 1
    assert (project / "outside" / "race.yaml").read_bytes() == RACE
    assert result.stderr == "meshlint: tree/link.yaml: a symbolic link out of the named paths; --fix does not write through it\n"
    assert "warning ML101 startup-race:" in result.stdout and "[*]" not in result.stdout
    assert invoke("check", named, "--diff").stdout == ""


def test_fix_writes_through_a_symbolic_link_to_a_folder_it_was_named(project):
    (project / "outside").mkdir()
    (project / "outside" / "race.yaml").write_bytes(RACE)
    os.symlink("outside", project / "named")
    assert invoke("check", "named", "--fix").exit_code == 0
    assert (project / "outside" / "race.yaml").read_bytes() == RACE_FIXED
