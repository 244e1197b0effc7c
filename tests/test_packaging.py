"""`python -m build` makes a wheel that installs and runs, offline: no build isolation (the installed
setuptools builds it), no index (the wheel is installed alone, its dependencies are this environment's)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from helpers import ROOT

pytest.importorskip("build")
pytest.importorskip("setuptools")


def test_wheel_builds_installs_and_runs(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "meshlint", source / "meshlint", ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp_path / "dist"), str(source)],
                   check=True, capture_output=True)
    (wheel,) = (tmp_path / "dist").glob("meshlint-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert {"meshlint/schemas/config.schema.json", "meshlint/schemas/proxyconfig.schema.json", "meshlint/rules/ml101_startup_race.py"} <= set(names)

    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--target", str(site), str(wheel)],
                   check=True, capture_output=True)
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    env = dict(os.environ, PYTHONPATH=str(site))
    where = subprocess.run([sys.executable, "-c", "import meshlint; print(meshlint.__file__)"], cwd=tmp_path, env=env, capture_output=True, text=True, check=True)
    assert where.stdout.startswith(str(site))  # the wheel's meshlint, not this checkout's
    script = site / "bin" / "meshlint"
    ran = subprocess.run([str(script), "check", "examples/", "--format", "concise"], cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert (ran.returncode, len(ran.stdout.splitlines()), ran.stderr) == (1, 7, "")
    rules = subprocess.run([str(script), "rules"], env=env, capture_output=True, text=True, check=True)
    modules = sorted(p.name for p in (ROOT / "meshlint" / "rules").glob("ml[0-9]*.py"))
    assert len(rules.stdout.splitlines()) == len(modules)  # the built-in rules come through the wheel's entry point


def test_readme_installs_only_from_this_repository():
    """No release tag, registry entry or hosted repository that may not exist."""
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "pip install . && meshlint check examples/" in readme
    assert not re.search(r"git\+https?://|pip install meshlint\b|meshlint@v\d|rev: v\d", readme)
    assert "repo: local" in readme and "uses: ./" in readme


def test_a_build_without_a_compiler_installs_and_says_so_in_version(tmp_path):
    """What a machine without a C compiler (or without libyaml's header) gets: setup.py's optional
    extensions fail to build, the install goes on, and `--version` says the C reader is missing and
    how to get it."""
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "setup.py"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "meshlint", source / "meshlint", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    env = dict(os.environ, CC="false", LDSHARED="false")  # every compile and link fails at once
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp_path / "dist"), str(source)],
                   check=True, capture_output=True, env=env)
    (wheel,) = (tmp_path / "dist").glob("meshlint-*.whl")
    assert not [name for name in zipfile.ZipFile(wheel).namelist() if name.endswith((".so", ".pyd"))]
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--target", str(site), str(wheel)],
                   check=True, capture_output=True)
    ran = subprocess.run([str(site / "bin" / "meshlint"), "--version"], env=dict(os.environ, PYTHONPATH=str(site)),
                         capture_output=True, text=True, check=True, cwd=tmp_path)
    lines = ran.stdout.splitlines()
    assert lines[0].startswith("meshlint ")
    assert lines[1].startswith("YAML reader: meshlint's C reader is NOT built, so reading is slower; to build it: install libyaml's header")
    assert lines[-2] == "document node core in C: NOT built (the Python core is used)"
    assert lines[-1].startswith("overlays rendered with: ")
