"""`meshlint --version` names the release, the Python and the readers this install reads YAML with."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from meshlint import __version__, about
from meshlint.source.readers import native


def test_version_names_the_release_the_python_and_each_reader():
    ran = subprocess.run([sys.executable, "-m", "meshlint", "--version"], capture_output=True, text=True, check=True)
    lines = ran.stdout.splitlines()
    assert lines[0] == f"meshlint {__version__} (Python {platform.python_version()})"
    assert lines[1].startswith("YAML reader: meshlint's C reader")
    assert lines[2].startswith("  then: PyYAML's C parser")
    assert lines[3].startswith("  then: ruamel.yaml ")
    assert lines[4].startswith("document node core in C: ")
    assert lines[5].startswith("overlays rendered with: ")
    assert ran.stderr == ""


def test_version_says_what_renders_overlays(monkeypatch, tmp_path):
    from meshlint.source import render

    found = render.find_renderer()
    assert found is not None and about.version_text().splitlines()[5] == f"overlays rendered with: {found.name} ({found.command[0]})"
    monkeypatch.setattr(render, "find_renderer", lambda path=None: None)
    assert about.version_text().splitlines()[5] == (
        "overlays rendered with: nothing (neither kustomize nor kubectl is on PATH): kustomizations are checked as written"
    )


def test_without_the_c_reader_the_version_says_how_to_get_it(monkeypatch):
    monkeypatch.setattr(native, "_module", False)  # the module's own record of a build without it
    line = about.version_text().splitlines()[1]
    assert line == "YAML reader: meshlint's C reader is NOT built, so reading is slower; " + about.HOW_TO_BUILD_THE_READER


@pytest.mark.skipif(not native.available(), reason="the C reader was not built here")
def test_with_the_c_reader_the_version_names_its_libyaml():
    line = about.version_text().splitlines()[1]
    assert line == f"YAML reader: meshlint's C reader, built (libyaml {native.libyaml_version()})"
