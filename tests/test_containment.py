"""An unexpected error while checking one file costs that file only: it is reported as not checked,
on one line that names the file, the error and the rule that met it, and every other file's findings
stand. Such an error is a bug of meshlint's; bad input itself never raises one (test_robustness.py)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from hostile import QUIT, job

from meshlint.cli import main
from meshlint.engine import parallel
from meshlint.mesh.facts import quitcalls

ERROR = "internal error in ML201 on Job j (line 1): RecursionError: maximum recursion depth exceeded (set MESHLINT_DEBUG=1 for details)"


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """Two Jobs: `bad.yaml`, whose quit call a fact fails to read, and `good.yaml`, which never calls it."""
    real = quitcalls.shutdown_calls

    def failing(container, commands, env):
        if any("bad-marker" in c.written for c in commands):
            raise RecursionError("maximum recursion depth exceeded")
        return real(container, commands, env)

    monkeypatch.setattr(quitcalls, "shutdown_calls", failing)
    (tmp_path / "bad.yaml").write_text(job(f"./work bad-marker; {QUIT}"))
    (tmp_path / "good.yaml").write_text(job("./work", [("API_URL", "http://api:8080")]))  # a peer in env: ML100 counts it
    return tmp_path


def report(tree, *options: str):
    result = CliRunner().invoke(main, ["check", str(tree), "--format", "json", "--no-cache", *options])
    return result, json.loads(result.stdout)


def test_one_file_that_fails_to_check_is_one_line_and_the_others_are_reported(tree):
    result, out = report(tree, "--jobs", "1")
    assert result.stderr == f"meshlint: {tree / 'bad.yaml'}: skipped: {ERROR}\n"
    alone, _ = report_of(tree / "good.yaml")
    assert out["findings"] == alone["findings"] and {f["code"] for f in out["findings"]} == {"ML100", "ML201"}
    assert out["summary"]["files"] == 2
    assert result.exit_code == 1  # good.yaml's findings


def report_of(path):
    result = CliRunner().invoke(main, ["check", str(path), "--format", "json", "--no-cache", "--jobs", "1"])
    return json.loads(result.stdout), result


def test_the_file_counts_as_passed_over_so_fail_on_skipped_fails_the_run(tree):
    (tree / "good.yaml").unlink()
    result, out = report(tree, "--jobs", "1")
    assert (result.exit_code, out["findings"]) == (0, [])
    result, _ = report(tree, "--jobs", "1", "--fail-on-skipped")
    assert result.exit_code == 1
    assert result.stderr == f"meshlint: {tree / 'bad.yaml'}: skipped: {ERROR}\n"


def test_workers_contain_it_too(tree, monkeypatch):
    monkeypatch.setattr(parallel, "PARALLEL_FROM", 1)
    monkeypatch.setattr(parallel, "PARALLEL_BYTES", 0)
    one, two = report(tree, "--jobs", "1"), report(tree, "--jobs", "2")
    assert (one[0].exit_code, one[0].stderr, one[1]) == (two[0].exit_code, two[0].stderr, two[1])


def test_debug_prints_the_traceback(tree, monkeypatch):
    monkeypatch.setenv("MESHLINT_DEBUG", "1")
    result, _ = report(tree, "--jobs", "1")
    assert "Traceback (most recent call last)" in result.stderr and "RecursionError" in result.stderr
    assert result.stderr.endswith(f"meshlint: {tree / 'bad.yaml'}: skipped: {ERROR}\n")


def test_a_file_whose_reading_for_the_mesh_context_fails_costs_that_context_only(tmp_path, monkeypatch):
    from meshlint.mesh import context

    real = context.peer_authentication_of

    def failing(resource, place):
        if resource.name == "bad":
            raise RecursionError("maximum recursion depth exceeded")
        return real(resource, place)

    monkeypatch.setattr(context, "peer_authentication_of", failing)
    (tmp_path / "policy.yaml").write_text("apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata: {name: bad, namespace: shop}\nspec: {mtls: {mode: STRICT}}\n")
    (tmp_path / "good.yaml").write_text(job("./work"))
    outputs = []
    for jobs in ("1", "2"):
        monkeypatch.setattr(parallel, "PARALLEL_FROM", 1 if jobs == "2" else parallel.PARALLEL_FROM)
        monkeypatch.setattr(parallel, "PARALLEL_BYTES", 0 if jobs == "2" else parallel.PARALLEL_BYTES)
        result, out = report(tmp_path, "--jobs", jobs)
        outputs.append((result.exit_code, result.stderr, out))
    alone, _ = report_of(tmp_path / "good.yaml")
    assert outputs[0] == outputs[1]
    code, stderr, out = outputs[0]
    assert stderr == (
        f"meshlint: {tmp_path / 'policy.yaml'}: the rest of it is left out of the mesh context: internal error: "
        "RecursionError: maximum recursion depth exceeded (set MESHLINT_DEBUG=1 for details)\n"
    )
    assert (code, out["findings"]) == (1, alone["findings"])
