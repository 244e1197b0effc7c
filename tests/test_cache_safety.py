"""The cache folder is only as trustworthy as whoever could write it: whatever lies there (a flipped
bit, a cut file, an entry planted or copied from elsewhere) gives the report a run without a cache
gives, runs nothing, and crashes nothing; a folder another user owns or may write is not used."""

from __future__ import annotations

import datetime
import os
import pickle
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from meshlint.cli import main
from meshlint.engine import cache, cachefiles, keptresult
from meshlint.engine.results import FileResult, SkippedInput, Summary
from meshlint.findings import Finding, Position, ResourceId, Severity
from meshlint.fix.edits import Edit, Fix
from meshlint.mesh.scope import Claim, Conflict, Place, conflict_key
from meshlint.mesh.setting import Setting

# A meshed namespace, and a workload with a Service: findings, and first-pass facts of each kind kept.
NAMESPACE = "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop, labels: {istio-injection: enabled}}\n"
WORKLOAD = """apiVersion: apps/v1
kind: Deployment
metadata: {name: worker, namespace: shop}
spec: {template: {metadata: {labels: {app: worker}}, spec: {containers: [{name: worker, image: "worker:1", env: [{name: API_URL, value: "http://api:8080"}]}]}}}
---
apiVersion: v1
kind: Service
metadata: {name: worker, namespace: shop}
spec: {selector: {app: worker}, ports: [{port: 80, targetPort: http}]}
"""


@pytest.fixture(autouse=True)
def cache_small_runs(monkeypatch):
    monkeypatch.setattr(cache, "CACHE_FROM", 0)


def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    root.mkdir(exist_ok=True)
    (root / "namespace.yaml").write_text(NAMESPACE)
    (root / "worker.yaml").write_text(WORKLOAD)
    return root


def run(path: Path, folder: Path | None) -> tuple[int, str, str]:
    where = ["--cache-dir", str(folder)] if folder is not None else ["--no-cache"]
    result = CliRunner().invoke(main, ["check", str(path), "--format", "json", *where])
    return result.exit_code, result.stdout, result.stderr


def warm_cache(tmp_path: Path) -> tuple[tuple[int, str, str], Path, Path]:
    """A tree, the report of a run without a cache, and the results and first pass a run kept."""
    root = tree(tmp_path)
    fresh = run(root, None)
    assert run(root, tmp_path / "cache") == fresh
    (results,) = (tmp_path / "cache").glob("results-*")
    (context,) = (tmp_path / "cache").glob("context-*")
    return fresh, results, context


def planted_pickle(marker: Path) -> bytes:
    """A pickle that creates `marker` when it is loaded."""

    class Payload:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    return pickle.dumps({"results": Payload()})


def test_a_planted_pickle_is_a_miss_and_runs_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    fresh, results, context = warm_cache(tmp_path)
    marker = tmp_path / "ran"
    payload = planted_pickle(marker)
    for kept in (results, context):
        header = kept.read_bytes().split(b"\n")[0]
        for planted in (payload, header + b"\n" + payload, b"meshlint-cache-2\n" + payload):
            kept.write_bytes(planted)
            # The names earlier versions read, too: nothing reads a pickle any more.
            kept.with_suffix(".pickle").write_bytes(b"meshlint-cache-2\n" + payload)
            assert run(tmp_path / "tree", tmp_path / "cache") == fresh
            assert not marker.exists()


def seal(key: bytes, body: bytes) -> bytes:
    return cachefiles.seal(key, body)


def entries(results: Path) -> tuple[bytes, dict[bytes, bytes]]:
    """The bucket's header and its lines by file key."""
    header, *lines = results.read_bytes().split(b"\n")
    return header, {line.split(b" ", 1)[0]: line for line in lines if line}


def test_an_entry_of_another_file_or_bucket_is_a_miss(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    fresh, results, _ = warm_cache(tmp_path)
    header, lines = entries(results)
    (_, worker), (namespace_key, _) = sorted(lines.items(), key=lambda kv: b"worker" not in kv[1])
    assert b"worker.yaml" in worker
    # The worker's result, as written, under the namespace file's key: its digest names the worker's key.
    swapped = namespace_key + b" " + worker.split(b" ", 1)[1]
    results.write_bytes(b"\n".join([header, worker, swapped, b""]))
    assert run(tmp_path / "tree", tmp_path / "cache") == fresh
    # Well-formed lines of a bucket of another run key: each digest covers the run key it was written under.
    run_key = header.split(b" ")[1]
    other = b"0" * len(run_key)
    forged = [name + b" " + seal(other + b"\0" + name, line.split(b" ", 2)[2]) + b" " + line.split(b" ", 2)[2] for name, line in lines.items()]
    results.write_bytes(b"\n".join([header, *forged, b""]))
    assert run(tmp_path / "tree", tmp_path / "cache") == fresh


@pytest.mark.parametrize(
    "body",
    [
        b"[]",
        b'{"path": "tree/worker.yaml"}',
        b'["tree/worker.yaml", [["tree/worker.yaml", 1, 1, "ML101", "x", 9, "m", "h", null, null, null, [], "", "", null]], '
        b"[0,0,0,0,0,0,0,0,0,0,0,{},[]], [], [], false]",
        b'["tree/worker.yaml", [], [0,0,0,0,0,0,0,0,0,0,0,{},[]], [], [[["f", [[[{"d": [[[], 1]]}, null, "", false, ""], ["a", "b"]]], null], 1]], false]',
        b'["tree/worker.yaml", [], [true,0,0,0,0,0,0,0,0,0,0,{},[]], [], [], false]',
        b"[" * 100_000 + b"]" * 100_000,
        b'"\xff"',
    ],
)
def test_a_planted_entry_of_the_wrong_shape_is_a_miss(tmp_path, monkeypatch, body):
    """Sealed as the cache seals it (the digest is no secret): the reader checks every field."""
    monkeypatch.chdir(tmp_path)
    fresh, results, _ = warm_cache(tmp_path)
    header, lines = entries(results)
    run_key = header.split(b" ")[1]
    planted = [name + b" " + seal(run_key + b"\0" + name, body) + b" " + body for name in lines]
    results.write_bytes(b"\n".join([header, *planted, b""]))
    assert run(tmp_path / "tree", tmp_path / "cache") == fresh


def test_a_planted_first_pass_of_the_wrong_shape_is_a_miss(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    fresh, results, context = warm_cache(tmp_path)
    header = context.read_bytes().split(b"\n")[0]
    key = header.split(b" ")[1]
    results.unlink()
    for body in (b"[{}, {}]", b'[{"claims": [[["", "x"], [1]]]}, {}]', context.read_bytes().split(b" ", 2)[2].replace(b'"facts":"', b'"facts":1,"x":"')):
        context.write_bytes(header + b"\n" + seal(key, body) + b" " + body)
        assert run(tmp_path / "tree", tmp_path / "cache") == fresh


def flipped(data: bytes, index: int, bit: int) -> bytes:
    return data[:index] + bytes([data[index] ^ (1 << bit)]) + data[index + 1 :]


def flips_give_the_fresh_report(tmp_path: Path, every: int) -> None:
    """Each `every`th byte of the kept results and first pass with one bit flipped (a bit of each
    position in turn): the report is the fresh one."""
    fresh, results, context = warm_cache(tmp_path)
    kept = {path: path.read_bytes() for path in (results, context)}
    for path, data in kept.items():
        for index in range(0, len(data), every):
            path.write_bytes(flipped(data, index, index % 8))
            assert run(tmp_path / "tree", tmp_path / "cache") == fresh, (path.name, index)
            for each, original in kept.items():  # the run may have rewritten either
                each.write_bytes(original)


def test_flipped_bits_in_the_cache_give_the_fresh_report(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    flips_give_the_fresh_report(tmp_path, every=97)


@pytest.mark.slow
def test_every_flipped_byte_in_the_cache_gives_the_fresh_report(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    flips_give_the_fresh_report(tmp_path, every=1)


def refused(folder: Path, tmp_path: Path) -> None:
    """A run with `folder` as its cache: the fresh report, one line saying why, nothing kept there."""
    root = tree(tmp_path)
    code, out, _ = run(root, None)
    before = sorted(os.listdir(folder))
    assert run(root, folder) == (code, out, f"meshlint: {cachefiles.refusal(str(folder))}\n")
    assert sorted(os.listdir(folder)) == before


def test_a_folder_others_may_write_is_refused_with_a_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o777)
    assert cachefiles.refusal(str(folder)) == f"{folder}: cache folder is writable by other users (mode 0777); running without the cache"
    refused(folder, tmp_path)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a folder to another user takes root")
def test_a_folder_of_another_user_is_refused_with_a_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "theirs"
    folder.mkdir(mode=0o700)
    os.chown(folder, 65534, 65534)
    assert cachefiles.refusal(str(folder)) == f"{folder}: cache folder belongs to another user (uid 65534); running without the cache"
    refused(folder, tmp_path)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file to another user takes root")
def test_a_kept_file_of_another_user_is_refused_with_a_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _, results, _ = warm_cache(tmp_path)
    os.chown(results, 65534, 65534)
    assert cachefiles.refusal(str(results.parent)) == f"{results.parent}: cache folder holds {results.name}, which belongs to another user; running without the cache"
    reads = []
    original = keptresult.decode
    monkeypatch.setattr(keptresult, "decode", lambda body: reads.append(body) or original(body))
    refused(results.parent, tmp_path)
    assert reads == []


def test_the_folder_is_made_for_this_user_alone(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    previous = os.umask(0o022)
    try:
        run(tree(tmp_path), tmp_path / "new" / "cache")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "new" / "cache").stat().st_mode) == 0o700
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in (tmp_path / "new" / "cache").iterdir())


def test_the_default_folder_is_the_platform_cache_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    result = CliRunner().invoke(main, ["check", str(tree(tmp_path)), "--format", "json"])
    assert result.exit_code == 1 and result.stderr == ""
    folder = tmp_path / "xdg" / "meshlint"
    assert cachefiles.default_directory() == str(folder)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert sorted(p.name.split("-")[0] for p in folder.iterdir()) == ["context", "results"]


def kept_result(value: object) -> FileResult:
    """A result with a finding of every optional part, and a conflict over `value`."""
    fix = Fix("add it", "a.yaml", (Edit(1, 1, 1, 1, "x: 1\n"),), "unsafe", ((3, 4),))
    finding = Finding(
        "a.yaml", 3, 5, "ML101", "startup-race", Severity.ERROR, "message", "help", ResourceId("Deployment", "web", "shop"), "  line",
        "chart/t.yaml", (Position("b.yaml", 1, 2),), "spec.template", "abc", fix,
    )
    summary = Summary(files=1, resources=2, suppressed=1, skipped_inputs=[SkippedInput("c.yaml", "a Helm template")])
    claims = tuple(Claim(Setting(v, Position(f"{n}.yaml", 1, 1), "note", False, "canary"), Place(f"/t/{n}.yaml", "/t")) for n, v in (("x", value), ("y", 1)))
    conflict = Conflict("proxy.holdApplicationUntilProxyStarts", claims, None)
    return FileResult("a.yaml", [finding], summary, ["a note"], {conflict_key(conflict): (conflict, 2)}, unparsed=True)


def test_a_kept_result_comes_back_as_it_was():
    value = {"on": True, 1: [1.5, None, ("a", "b")], "nested": {"k": "v"}}
    result = kept_result(value)
    back = keptresult.decode(keptresult.encode(result))
    assert (back.path, back.findings, vars(back.summary), back.notes, back.conflicts, back.unparsed) == (
        result.path, result.findings, vars(result.summary), result.notes, result.conflicts, result.unparsed,
    )
    (conflict, _), = back.conflicts.values()
    assert type(conflict.claims[0].setting.value[1][2]) is tuple


@pytest.mark.parametrize("value", [datetime.date(2024, 1, 1), float("nan"), {1, 2}])
def test_a_result_json_cannot_give_back_exactly_is_not_kept(value):
    assert keptresult.encode(kept_result(value)) is None
