"""pre-commit end to end: a real git repository, the real pre-commit package, this checkout's hook.

pre-commit passes only the staged files; the mesh-wide context named in `.meshlint.yaml` must still be
read, so a Deployment that is clean only because of the mesh's settings passes, and one that the
mesh's settings make hazardous fails with meshlint's message. The hook definition comes from this
checkout's `.pre-commit-hooks.yaml`, run as a local `language: system` hook against the meshlint this
test environment installed, so the test needs no network.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT

pytest.importorskip("pre_commit")
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

OPERATOR = """apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata:
  name: control-plane
  namespace: istio-system
spec:
  meshConfig:
    defaultConfig:
      holdApplicationUntilProxyStarts: true
      terminationDrainDuration: 45s
"""
DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  template:
    metadata:
      labels: {{app: {name}}}
    spec:{grace}
      containers:
        - name: {name}
          image: {name}:1
"""


def git(repo: Path, *args: str, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=False)


@pytest.fixture
def repo(tmp_path):
    from ruamel.yaml import YAML

    hooks = YAML(typ="safe").load((ROOT / ".pre-commit-hooks.yaml").read_text())
    hook = next(h for h in hooks if h["id"] == "meshlint")
    local = dict(hook, language="system")  # the meshlint installed beside this test, not a new venv
    config = {"repos": [{"repo": "local", "hooks": [local]}]}

    repo = tmp_path / "repo"
    repo.mkdir()
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env["PRE_COMMIT_HOME"] = str(tmp_path / "pre-commit-cache")
    env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")
    env.pop("NO_COLOR", None)
    assert git(repo, "init", "-q", env=env).returncode == 0
    yaml = YAML()
    with open(repo / ".pre-commit-config.yaml", "w") as handle:
        yaml.dump(config, handle)
    (repo / ".meshlint.yaml").write_text("mesh:\n  context: [platform/istio-operator.yaml]\n")
    (repo / "platform").mkdir()
    (repo / "platform" / "istio-operator.yaml").write_text(OPERATOR)
    (repo / "apps").mkdir()
    installed = subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=repo, env=env, capture_output=True, text=True, check=False)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    git(repo, "add", ".", env=env)
    first = git(repo, "commit", "-q", "-m", "mesh", env=env)
    assert first.returncode == 0, first.stdout + first.stderr
    return repo, env


def test_clean_commit_passes_because_the_mesh_context_is_read(repo):
    repo, env = repo
    # Without the context's hold this Deployment is a startup race (ML101); with it, it is clean.
    (repo / "apps" / "web.yaml").write_text(DEPLOYMENT.format(name="web", grace="\n      terminationGracePeriodSeconds: 60"))
    git(repo, "add", "apps/web.yaml", env=env)
    result = git(repo, "commit", "-m", "web", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "meshlint" in result.stdout + result.stderr and "Passed" in result.stdout + result.stderr


def test_commit_with_a_hazard_fails_with_meshlints_message(repo):
    repo, env = repo
    (repo / "apps" / "api.yaml").write_text(DEPLOYMENT.format(name="api", grace=""))
    git(repo, "add", "apps/api.yaml", env=env)
    result = git(repo, "commit", "-m", "api", env=env)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "Failed" in output
    assert (
        "apps/api.yaml:7:5: error ML301 drain-exceeds-grace: terminationDrainDuration 45s "
        "(platform/istio-operator.yaml:10) > terminationGracePeriodSeconds 30 (default)"
    ) in output
    assert "ML101" not in output  # the context's hold was read
    assert git(repo, "log", "--oneline", env=env).stdout.count("\n") == 1  # the commit did not happen


def test_a_commit_that_only_raises_the_mesh_wide_drain_is_refused(repo):
    """pre-commit passes only the IstioOperator; the workloads it governs are checked with it (§W2.6)."""
    repo, env = repo
    (repo / "apps" / "web.yaml").write_text(DEPLOYMENT.format(name="web", grace="\n      terminationGracePeriodSeconds: 60"))
    git(repo, "add", "apps/web.yaml", env=env)
    assert git(repo, "commit", "-q", "-m", "web", env=env).returncode == 0

    operator = repo / "platform" / "istio-operator.yaml"
    operator.write_text(OPERATOR.replace("terminationDrainDuration: 45s", "terminationDrainDuration: 90s"))
    git(repo, "add", "platform/istio-operator.yaml", env=env)
    result = git(repo, "commit", "-m", "drain 90s", env=env)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "meshlint: platform/istio-operator.yaml changed: also checking 1 file" in output
    assert (
        "apps/web.yaml:10:38: error ML301 drain-exceeds-grace: terminationDrainDuration 90s "
        "(platform/istio-operator.yaml:10) > terminationGracePeriodSeconds 60 (apps/web.yaml:10)"
    ) in output
    assert git(repo, "log", "--oneline", env=env).stdout.count("\n") == 2  # the drain commit did not happen


def test_the_hook_leaves_out_testdata_folders_as_a_walk_does():
    import re

    from ruamel.yaml import YAML

    hook = next(h for h in YAML(typ="safe").load((ROOT / ".pre-commit-hooks.yaml").read_text()) if h["id"] == "meshlint")
    excluded = re.compile(hook["exclude"])
    assert [bool(excluded.search(p)) for p in ("testdata/a.yaml", "cli/cmd/testdata/b.yml", "apps/mytestdata/c.yaml", "apps/testdata.yaml")] == [
        True, True, False, False,
    ]
