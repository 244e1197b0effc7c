"""What `meshlint check --fix` does when a file cannot or must not be written: a write that fails, a
file another run changed first, a read-only file or folder, hard links, links out of the named
paths, the owner and mode kept, and no temporary file left by an interrupt."""

from __future__ import annotations

import errno
import json
import os
import random
import signal
import stat
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from helpers import ROOT, TESTDATA
from meshlint.cli import main
from meshlint.engine.results import Report, Summary
from meshlint.fix import files
from meshlint.fix.rounds import Outcome

RACE = (TESTDATA / "fix" / "ML100" / "new_annotations.yaml").read_bytes()
RACE_FIXED = (TESTDATA / "fix" / "ML100" / "new_annotations.fixed.yaml").read_bytes()
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


@pytest.mark.parametrize(
    ("call", "err", "why"),
    [
        ("fsync", errno.ENOSPC, "No space left on device"),  # a full disk
        ("replace", errno.EROFS, "Read-only file system"),  # a folder the rename cannot change
    ],
)
def test_a_write_that_fails_keeps_the_findings_and_fails_the_run(project, monkeypatch, call, err, why):
    (project / "race.yaml").write_bytes(RACE)
    before = findings("race.yaml")

    def failing(*args, **kwargs):
        raise OSError(err, os.strerror(err))

    monkeypatch.setattr(os, call, failing)
    result = invoke("check", "race.yaml", "--fix", "--format", "json")
    assert result.exit_code == 1
    assert result.stderr == refused("race.yaml", f"cannot write the fixes: {why}")
    report = json.loads(result.stdout)
    assert report["findings"] == before and before
    assert (report["summary"]["fixed"], report["summary"]["fixable"]) == (0, 0)  # not offered again: it failed
    assert (project / "race.yaml").read_bytes() == RACE
    assert names(project) == ["race.yaml"]


def test_a_failed_write_fails_the_run_even_when_no_finding_would(project, monkeypatch):
    (project / "race.yaml").write_bytes(RACE)
    monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(errno.ENOSPC, "No space left on device")))
    result = invoke("check", "race.yaml", "--fix", "--fail-on", "error")
    assert result.exit_code == 1
    assert "warning ML100 startup-race-mesh-wide:" in result.stdout
    assert result.stdout.endswith("1 file, 1 resource, 1 finding (0 error, 1 warning, 0 info), 0 suppressed, 0 skipped, 0 assumed meshed, 0 fixed\n")


def test_a_read_only_folder_is_not_written(project):
    (project / "apps").mkdir()
    (project / "apps" / "race.yaml").write_bytes(RACE)
    os.chmod(project / "apps", 0o555)
    try:
        result = invoke("check", "apps", "--fix")
    finally:
        os.chmod(project / "apps", 0o755)
    assert result.exit_code == 1
    assert result.stderr == refused("apps/race.yaml", "its folder is read-only")
    assert (project / "apps" / "race.yaml").read_bytes() == RACE
    assert "warning ML100 startup-race-mesh-wide:" in result.stdout


def test_a_file_changed_before_the_write_keeps_the_other_change_and_its_findings(project, monkeypatch):
    from meshlint.fix import command

    (project / "race.yaml").write_bytes(RACE)
    session = command.fix_session

    def meanwhile(*args, **kwargs):
        outcome = session(*args, **kwargs)
        (project / "race.yaml").write_bytes(EDITED)  # another run, between the reading and the writing
        return outcome

    monkeypatch.setattr(command, "fix_session", meanwhile)
    result = invoke("check", "race.yaml", "--fix", "--format", "json")
    assert result.exit_code == 1
    assert result.stderr == refused("race.yaml", "changed on disk while it was being fixed")
    assert (project / "race.yaml").read_bytes() == EDITED
    assert json.loads(result.stdout)["findings"] == findings("race.yaml")  # the findings of the file as it is now


def test_a_file_changed_just_before_the_rename_is_not_overwritten(project, monkeypatch):
    (project / "race.yaml").write_bytes(RACE)
    fsync = os.fsync

    def meanwhile(fd):
        (project / "race.yaml").write_bytes(EDITED)
        fsync(fd)

    monkeypatch.setattr(os, "fsync", meanwhile)
    result = invoke("check", "race.yaml", "--fix")
    assert result.exit_code == 1
    assert result.stderr == refused("race.yaml", "changed on disk while it was being fixed")
    assert (project / "race.yaml").read_bytes() == EDITED
    assert names(project) == ["race.yaml"]


def test_a_read_only_file_is_refused_and_so_are_the_fixes_its_mesh_wide_source_would_settle(project):
    """The IstioOperator's fix settles both workloads' startup race; refused, all three keep theirs."""
    import shutil

    shutil.copytree(ROOT / "examples", project / "examples")
    operator = project / "examples" / "platform" / "istio-operator.yaml"
    original = operator.read_bytes()
    os.chmod(operator, 0o444)
    before = findings("examples")
    result = invoke("check", "examples", "--fix", "--format", "json")
    assert result.exit_code == 1
    assert result.stderr == refused("examples/platform/istio-operator.yaml", "the file is read-only")
    assert json.loads(result.stdout)["findings"] == before
    assert operator.read_bytes() == original and stat.S_IMODE(operator.stat().st_mode) == 0o444


def test_a_file_with_hard_links_is_refused_and_its_links_kept(project):
    (project / "race.yaml").write_bytes(RACE)
    os.link(project / "race.yaml", project / "copy.yaml")
    result = invoke("check", "race.yaml", "--fix")
    assert result.exit_code == 1
    assert result.stderr == refused("race.yaml", "the file has 2 hard links, which a rewrite would split")
    assert (project / "race.yaml").read_bytes() == RACE
    assert os.path.samefile(project / "race.yaml", project / "copy.yaml")
    quiet = invoke("check", "race.yaml", "--fix", "--quiet")  # an error, not a note: shown all the same
    assert (quiet.exit_code, quiet.stderr) == (1, result.stderr)


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
    assert "warning ML100 startup-race-mesh-wide:" in result.stdout and "[*]" not in result.stdout
    assert invoke("check", named, "--diff").stdout == ""


def test_fix_writes_through_a_symbolic_link_to_a_folder_it_was_named(project):
    (project / "outside").mkdir()
    (project / "outside" / "race.yaml").write_bytes(RACE)
    os.symlink("outside", project / "named")
    assert invoke("check", "named", "--fix").exit_code == 0
    assert (project / "outside" / "race.yaml").read_bytes() == RACE_FIXED


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root can give a file to another owner")
def test_a_fixed_file_keeps_its_owner_and_its_exact_mode(project):
    (project / "race.yaml").write_bytes(RACE)
    os.chown(project / "race.yaml", 4321, 4322)
    os.chmod(project / "race.yaml", 0o2640)  # set-group-ID: a change of owner after the mode would clear it
    assert invoke("check", "race.yaml", "--fix").exit_code == 0
    written = (project / "race.yaml").stat()
    assert (written.st_uid, written.st_gid, stat.S_IMODE(written.st_mode)) == (4321, 4322, 0o2640)
    assert (project / "race.yaml").read_bytes() == RACE_FIXED


def outcome_of(path):
    """A session's outcome that changes `path` from RACE to RACE_FIXED."""
    report = Report([], Summary(), [], [], trees=frozenset([os.path.realpath(path.parent)]))
    return Outcome(report, report, original={str(path): RACE}, fixed={str(path): RACE_FIXED})


def test_ctrl_c_while_a_file_is_written_arrives_once_it_is_in_place(tmp_path, monkeypatch):
    (tmp_path / "race.yaml").write_bytes(RACE)
    fsync = os.fsync
    # A process started in the background inherits SIGINT ignored, and Python then leaves it so: Ctrl-C
    # is Python's own here, as at a terminal.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)

    def interrupted(fd):
        signal.raise_signal(signal.SIGINT)
        fsync(fd)

    monkeypatch.setattr(os, "fsync", interrupted)
    try:
        with pytest.raises(KeyboardInterrupt):
            files.write(outcome_of(tmp_path / "race.yaml"))
    finally:
        signal.signal(signal.SIGINT, previous)
    assert (tmp_path / "race.yaml").read_bytes() == RACE_FIXED
    assert names(tmp_path) == ["race.yaml"]


def test_an_interrupt_during_the_removal_of_the_temporary_file_still_removes_it(tmp_path, monkeypatch):
    """Where signals cannot be held (another thread takes them, or the system has none to hold)."""
    (tmp_path / "race.yaml").write_bytes(RACE)
    unlink, interrupts = os.unlink, []

    def interrupted(fd):
        raise KeyboardInterrupt

    def unlink_once_interrupted(path, *args, **kwargs):
        if not interrupts:
            interrupts.append(path)
            raise KeyboardInterrupt
        unlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "fsync", interrupted)
    monkeypatch.setattr(os, "unlink", unlink_once_interrupted)
    with pytest.raises(KeyboardInterrupt):
        files.write(outcome_of(tmp_path / "race.yaml"))
    assert interrupts
    assert (tmp_path / "race.yaml").read_bytes() == RACE
    assert names(tmp_path) == ["race.yaml"]


def numbered(data, n):
    return data.replace(b"namespace: shop", f"namespace: shop{n}".encode())


def _first_write_began(tree, first, mtime):
    return any(name.endswith(".meshlint") for name in os.listdir(tree)) or first.stat().st_mtime_ns != mtime


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_no_signal_leaves_a_temporary_file_or_half_a_file(tmp_path, signum):
    """A real `check --fix` over many fixable files, stopped at random moments, most of them while it
    writes: every file is whole (as it was or fixed), and no temporary file is left."""
    chance = random.Random(signum)
    tree = tmp_path / "tree"
    for attempt in range(24):
        if tree.exists():
            for leftover in tree.iterdir():
                leftover.unlink()
        else:
            tree.mkdir()
        for n in range(100):
            (tree / f"w{n:03}.yaml").write_bytes(numbered(RACE, n))
        first = tree / "w000.yaml"
        mtime = first.stat().st_mtime_ns
        child = subprocess.Popen([sys.executable, "-m", "meshlint", "check", "--fix", "--no-cache", str(tree)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if attempt % 4:  # in the writing, at a random point of it
            while child.poll() is None and not _first_write_began(tree, first, mtime):
                time.sleep(0.0005)
            time.sleep(chance.uniform(0, 0.03))
        else:  # anywhere in the run
            time.sleep(chance.uniform(0, 1.5))
        child.send_signal(signum)
        child.wait(timeout=120)
        kept = {p.name: p.read_bytes() for p in tree.iterdir()}
        assert [name for name in kept if not name.startswith("w")] == [], f"attempt {attempt}"
        for n in range(100):
            data = kept[f"w{n:03}.yaml"]
            assert data in (numbered(RACE, n), numbered(RACE_FIXED, n)), f"attempt {attempt}: w{n:03}.yaml"
