"""Cached results: the same report as without, and never a result the run's inputs no longer justify."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from meshlint.cli import main
from meshlint.engine import cache, cachefiles, cachekeys, execution, firstpass


@pytest.fixture(autouse=True)
def cache_small_runs(monkeypatch):
    """These trees are tiny; a real run this small skips the cache (see the last tests)."""
    monkeypatch.setattr(cache, "CACHE_FROM", 0)


NAMESPACE = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  labels:\n    istio-injection: {injection}\n"
WORKER = """apiVersion: apps/v1
kind: Deployment
metadata: {name: worker, namespace: shop}
spec:
  template:
    metadata: {labels: {app: worker}}
    spec:
      containers:
        - name: worker
          image: worker:1
          env: [{name: DB, value: "postgres://db.shop.svc.cluster.local:5432/x"}]
"""


def tree(tmp_path: Path, injection: str = "enabled") -> Path:
    (tmp_path / "tree").mkdir(exist_ok=True)
    (tmp_path / "tree" / "namespace.yaml").write_text(NAMESPACE.format(injection=injection))
    (tmp_path / "tree" / "worker.yaml").write_text(WORKER)
    return tmp_path / "tree"


class Counting:
    """How many files a run really checked (the rest came from the cache)."""

    def __init__(self, monkeypatch):
        self.checked: list[str] = []
        original = execution.check_file

        def counted(plan, path, data=None):
            self.checked.append(os.path.basename(path))
            return original(plan, path, data)

        monkeypatch.setattr(execution, "check_file", counted)


def check(path: Path, cache: Path, *more: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["check", str(path), "--format", "json", "--cache-dir", str(cache), *more])
    return result.exit_code, result.stdout


def test_warm_run_reads_results_and_reports_the_same_bytes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    counting = Counting(monkeypatch)
    cold = check(tree(tmp_path), tmp_path / "cache")
    assert sorted(counting.checked) == ["namespace.yaml", "worker.yaml"]
    assert list((tmp_path / "cache").glob("results-*.lines"))
    counting.checked.clear()
    warm = check(tree(tmp_path), tmp_path / "cache")
    assert counting.checked == []
    assert warm == cold and '"ML101"' in cold[1]


def test_a_changed_file_is_checked_again(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    counting = Counting(monkeypatch)
    check(tree(tmp_path), tmp_path / "cache")
    counting.checked.clear()
    (tmp_path / "tree" / "worker.yaml").write_text(WORKER.replace("worker:1", "worker:2"))
    check(tmp_path / "tree", tmp_path / "cache")
    assert counting.checked == ["worker.yaml"]


def test_a_changed_mesh_context_file_invalidates_unchanged_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _, enabled = check(tree(tmp_path, "enabled"), tmp_path / "cache")
    assert '"ML101"' in enabled
    counting = Counting(monkeypatch)
    _, disabled = check(tree(tmp_path, "disabled"), tmp_path / "cache")  # worker.yaml is unchanged
    assert "worker.yaml" in counting.checked
    assert '"ML101"' not in disabled
    _, uncached = check(tmp_path / "tree", tmp_path / "other-cache")
    assert disabled == uncached


def test_a_changed_config_invalidates(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    check(tree(tmp_path), tmp_path / "cache")
    (tmp_path / ".meshlint.yaml").write_text("ignore: [ML101]\n")
    counting = Counting(monkeypatch)
    _, ignored = check(tmp_path / "tree", tmp_path / "cache")
    assert sorted(counting.checked) == ["namespace.yaml", "worker.yaml"]
    assert '"ML101"' not in ignored


def test_command_line_options_are_part_of_the_key(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _, all_rules = check(tree(tmp_path), tmp_path / "cache")
    _, selected = check(tmp_path / "tree", tmp_path / "cache", "--select", "ML3")
    assert '"ML101"' in all_rules and '"ML101"' not in selected


def test_a_mesh_config_file_is_part_of_the_key(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    tree(tmp_path)
    (tmp_path / "tree" / "namespace.yaml").unlink()
    context = tmp_path / "context.yaml"
    context.write_text(NAMESPACE.format(injection="enabled"))
    _, enabled = check(tmp_path / "tree", tmp_path / "cache", "--mesh-config", str(context))
    context.write_text(NAMESPACE.format(injection="disabled"))
    _, disabled = check(tmp_path / "tree", tmp_path / "cache", "--mesh-config", str(context))
    assert '"ML101"' in enabled and '"ML101"' not in disabled


def test_no_cache_reads_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    result = CliRunner().invoke(main, ["check", str(tree(tmp_path)), "--no-cache"])
    assert result.exit_code == 1
    assert not (tmp_path / "xdg").exists()


def test_default_folder_is_the_user_cache_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    CliRunner().invoke(main, ["check", str(tree(tmp_path))])
    assert list((tmp_path / "xdg" / "meshlint").glob("results-*.lines"))


def test_a_broken_cache_is_an_empty_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cold = check(tree(tmp_path), tmp_path / "cache")
    buckets = [*(tmp_path / "cache").glob("results-*.lines"), *(tmp_path / "cache").glob("context-*.json")]
    assert len(buckets) == 2
    for bucket in buckets:
        bucket.write_bytes(bucket.read_bytes().split(b"\n")[0] + b"\nnot JSON")
    assert check(tmp_path / "tree", tmp_path / "cache") == cold


def test_an_unwritable_cache_folder_costs_nothing_but_speed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "file").write_text("")
    code, out = check(tree(tmp_path), tmp_path / "file" / "cache")  # a folder inside a file
    assert code == 1 and '"ML101"' in out


def test_a_run_too_small_to_gain_skips_the_cache(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cache, "CACHE_FROM", 256 * 1024)
    code, out = check(tree(tmp_path), tmp_path / "cache")
    assert code == 1 and '"ML101"' in out
    assert not (tmp_path / "cache").exists()
    monkeypatch.setattr(cache, "CACHE_FROM", 100)  # the tree is bigger than this
    check(tmp_path / "tree", tmp_path / "cache")
    assert list((tmp_path / "cache").glob("results-*.lines"))


class ComposingContext:
    """How many inputs the first pass composed context from (none when it came from the cache)."""

    def __init__(self, monkeypatch):
        self.read: list[str] = []
        original = firstpass.context_resources

        def counted(mesh, path, text, lines=None):
            self.read.append(os.path.basename(path))
            return original(mesh, path, text, lines)

        monkeypatch.setattr(firstpass, "context_resources", counted)


def test_a_warm_run_over_a_folder_takes_its_first_pass_back(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    composing = ComposingContext(monkeypatch)
    cold = check(tree(tmp_path), tmp_path / "cache")
    assert sorted(composing.read) == ["namespace.yaml", "worker.yaml"]
    assert len(list((tmp_path / "cache").glob("context-*.json"))) == 1
    composing.read.clear()
    assert check(tmp_path / "tree", tmp_path / "cache") == cold
    assert composing.read == []


def test_a_kept_first_pass_checks_files_as_a_fresh_one_does(tmp_path, monkeypatch):
    # Results gone, first pass kept: every file is checked against the mesh context taken back.
    monkeypatch.chdir(tmp_path)
    cold = check(tree(tmp_path), tmp_path / "cache")
    for bucket in (tmp_path / "cache").glob("results-*.lines"):
        bucket.unlink()
    composing, counting = ComposingContext(monkeypatch), Counting(monkeypatch)
    assert check(tmp_path / "tree", tmp_path / "cache") == cold
    assert composing.read == [] and sorted(counting.checked) == ["namespace.yaml", "worker.yaml"]


def test_a_kept_first_pass_keeps_the_pods_that_opt_out_of_injection(tmp_path, monkeypatch):
    # ML402 is silent on a port whose Service leads to an opted-out pod only if the kept context says so.
    import shutil

    shutil.copytree(Path(__file__).parent.parent / "testdata" / "ML402" / "silent_destination_outside_mesh", tmp_path / "tree")
    monkeypatch.chdir(tmp_path)
    cold = check(tmp_path / "tree", tmp_path / "cache")
    assert cold[0] == 0 and '"findings": []' in cold[1]
    assert list((tmp_path / "cache").glob("context-*.json"))
    for bucket in (tmp_path / "cache").glob("results-*.lines"):
        bucket.unlink()
    composing = ComposingContext(monkeypatch)
    assert check(tmp_path / "tree", tmp_path / "cache") == cold
    assert composing.read == []


def test_a_changed_input_reads_the_first_pass_again(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    check(tree(tmp_path), tmp_path / "cache")
    composing = ComposingContext(monkeypatch)
    (tmp_path / "tree" / "worker.yaml").write_text(WORKER.replace("worker:1", "worker:2"))
    check(tmp_path / "tree", tmp_path / "cache")
    assert sorted(composing.read) == ["namespace.yaml", "worker.yaml"]


def test_named_files_keep_no_first_pass(tmp_path, monkeypatch):
    # A run over named files reads beyond them as its mesh context decides: nothing to key it by before.
    monkeypatch.chdir(tmp_path)
    tree(tmp_path)
    check(tmp_path / "tree" / "worker.yaml", tmp_path / "cache")
    assert list((tmp_path / "cache").glob("results-*.lines"))
    assert not list((tmp_path / "cache").glob("context-*.json"))


def test_a_warm_run_forks_no_workers(tmp_path, monkeypatch):
    from meshlint.engine import parallel

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(parallel, "PARALLEL_FROM", 1)
    monkeypatch.setattr(parallel, "PARALLEL_BYTES", 1)
    pools: list[list[str]] = []

    def in_this_process(check, files, jobs):
        pools.append([os.path.basename(f) for f in files])
        return map(check, files)

    monkeypatch.setattr(parallel, "check_files", in_this_process)
    cold = check(tree(tmp_path), tmp_path / "cache", "--jobs", "2")
    assert pools == [["namespace.yaml", "worker.yaml"]]  # the first miss pays for the pool, which takes every file from it on
    pools.clear()
    assert check(tmp_path / "tree", tmp_path / "cache", "--jobs", "2") == cold
    assert pools == []
    (tmp_path / "tree" / "worker.yaml").write_text(WORKER.replace("worker:1", "worker:2"))
    check(tmp_path / "tree", tmp_path / "cache", "--jobs", "2")
    assert pools == [["worker.yaml"]]  # only what the cache lacks goes to the workers


class ReadingContextFiles:
    """How many mesh.context files a run read (none when their reading came from the cache)."""

    def __init__(self, monkeypatch):
        self.read: list[str] = []
        original = firstpass.ContextPass._context_file

        def counted(context, path, folder):
            self.read.append(os.path.basename(path))
            return original(context, path, folder)

        monkeypatch.setattr(firstpass.ContextPass, "_context_file", counted)


def context_tree(tmp_path: Path, injection: str) -> Path:
    # A platform team's mesh.context: many Namespaces; the workload's decides its injection.
    others = "".join(f"---\n{NAMESPACE.format(injection='enabled').replace('name: shop', f'name: team-{n}')}" for n in range(400))
    (tmp_path / "platform.yaml").write_text(NAMESPACE.format(injection=injection) + others)
    (tmp_path / ".meshlint.yaml").write_text("mesh:\n  context: [platform.yaml]\n")
    (tmp_path / "worker.yaml").write_text(WORKER)
    return tmp_path / "worker.yaml"


def test_a_pre_commit_run_keeps_the_reading_of_its_big_mesh_context(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cache, "CACHE_FROM", 256 * 1024)  # a named file this small keeps no results
    reading = ReadingContextFiles(monkeypatch)
    worker = context_tree(tmp_path, "enabled")
    assert (tmp_path / "platform.yaml").stat().st_size >= cachekeys.CONTEXT_FROM
    cold = check(worker, tmp_path / "cache")
    assert reading.read == ["platform.yaml"] and '"ML101"' in cold[1]
    assert len(list((tmp_path / "cache").glob("contextfiles-*.json"))) == 1
    assert not list((tmp_path / "cache").glob("results-*.lines"))
    reading.read.clear()
    assert check(worker, tmp_path / "cache") == cold
    assert reading.read == []
    context_tree(tmp_path, "disabled")  # the context changed: read again, and it decides
    _, disabled = check(worker, tmp_path / "cache")
    assert reading.read == ["platform.yaml"] and '"ML101"' not in disabled


def test_a_small_mesh_context_is_read_each_time(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    tree(tmp_path)
    (tmp_path / "platform.yaml").write_text(NAMESPACE.format(injection="enabled"))
    (tmp_path / ".meshlint.yaml").write_text("mesh:\n  context: [platform.yaml]\n")
    check(tmp_path / "tree" / "worker.yaml", tmp_path / "cache")
    assert not list((tmp_path / "cache").glob("contextfiles-*.json"))


def test_kept_context_files_key_results_by_their_content(tmp_path, monkeypatch):
    # A run with results to keep, after one that kept only the context files' reading: the results'
    # key still covers what those files hold.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cache, "CACHE_FROM", 256 * 1024)
    worker = context_tree(tmp_path, "enabled")
    check(worker, tmp_path / "cache")
    monkeypatch.setattr(cache, "CACHE_FROM", 0)
    _, enabled = check(worker, tmp_path / "cache")
    context_tree(tmp_path, "disabled")
    monkeypatch.setattr(cache, "CACHE_FROM", 256 * 1024)
    check(worker, tmp_path / "cache")
    monkeypatch.setattr(cache, "CACHE_FROM", 0)
    _, disabled = check(worker, tmp_path / "cache")
    assert '"ML101"' in enabled and '"ML101"' not in disabled


def test_a_chart_yaml_added_beside_the_templates_invalidates_them(tmp_path, monkeypatch):
    # Whether a file is a Helm template is decided by a Chart.yaml that is not an input of the run.
    from meshlint.source import inputs

    monkeypatch.chdir(tmp_path)
    templates = tmp_path / "chart" / "templates"
    templates.mkdir(parents=True)
    (templates / "namespace.yaml").write_text(NAMESPACE.format(injection="enabled"))
    (templates / "worker.yaml").write_text(WORKER)
    _, before = check(templates, tmp_path / "cache")
    assert '"ML101"' in before
    (tmp_path / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: shop\nversion: 1.0.0\n")
    inputs._chart_above.cache_clear()  # a new process would not know the folder either
    _, after = check(templates, tmp_path / "cache")
    inputs._chart_above.cache_clear()
    assert after == check(templates, tmp_path / "other-cache")[1]
    assert '"ML101"' not in after


def test_a_file_that_changes_during_a_run_keeps_nothing_under_its_old_bytes(tmp_path, monkeypatch):
    # The first pass's key hashed the file, then the file changed before it was read: that first
    # pass is not kept, and the result is keyed by the bytes it was checked from.
    from meshlint.source import inputs

    monkeypatch.chdir(tmp_path)
    tree(tmp_path)
    real_read = inputs.read
    reads = {"n": 0}

    def changing(path):
        data = real_read(path)
        if path.endswith("worker.yaml"):
            reads["n"] += 1
            if reads["n"] > 1:  # after the key's read
                return data.replace(b"worker:1", b"worker:2")
        return data

    monkeypatch.setattr(inputs, "read", changing)
    check(tmp_path / "tree", tmp_path / "cache")
    assert reads["n"] > 1 and not list((tmp_path / "cache").glob("context-*.json"))
    monkeypatch.setattr(inputs, "read", real_read)
    counting = Counting(monkeypatch)
    check(tmp_path / "tree", tmp_path / "cache")  # the file as it is on disk: never checked as such
    assert counting.checked == ["worker.yaml"]


def sealed(kept: Path, body: bytes) -> None:
    """Replace what `kept` holds with `body`, headed and sealed as the cache itself writes it."""
    header = kept.read_bytes().split(b"\n")[0]
    key = header.split(b" ")[1]
    kept.write_bytes(header + b"\n" + cachefiles.seal(key, body) + b" " + body)


def test_a_kept_first_pass_of_another_shape_is_none(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cold = check(tree(tmp_path), tmp_path / "cache")
    for kept in (tmp_path / "cache").glob("context-*.json"):
        sealed(kept, b'[{"mesh": null}, {}]')
    for bucket in (tmp_path / "cache").glob("results-*.lines"):
        bucket.unlink()
    assert check(tmp_path / "tree", tmp_path / "cache") == cold


HOLD_OFF = """apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata: {name: control-plane, namespace: istio-system}
spec:
  meshConfig:
    accessLogFile: /dev/stdout
    defaultConfig:
      holdApplicationUntilProxyStarts: false
"""


@pytest.mark.parametrize("named", [True, False], ids=["named file", "folder"])
def test_a_kept_mesh_context_file_is_reported_where_a_fresh_reading_reports_it(tmp_path, monkeypatch, named):
    # What it sets comes back from the cache and is cited where it is written (here the hold, line 8),
    # for a run over named files and over a folder. (That a kept table still places its nodes is
    # test_loader's test of a copied document: these citations are positions made before keeping.)
    monkeypatch.chdir(tmp_path)
    padding = "".join(f"# {n:05} {'.' * 70}\n" for n in range(300))  # big enough to be kept (CONTEXT_FROM)
    (tmp_path / "platform.yaml").write_text(HOLD_OFF + padding)
    (tmp_path / ".meshlint.yaml").write_text("mesh:\n  context: [platform.yaml]\n")
    worker = tree(tmp_path) / "worker.yaml"
    target = worker if named else worker.parent
    fresh = CliRunner().invoke(main, ["check", str(target), "--format", "json", "--no-cache"]).stdout
    assert "holdApplicationUntilProxyStarts is false (platform.yaml:8)" in fresh
    assert check(target, tmp_path / "cache")[1] == fresh
    kept = list((tmp_path / "cache").glob("contextfiles-*.json" if named else "context-*.json"))
    assert len(kept) == 1
    assert check(target, tmp_path / "cache")[1] == fresh  # from what was kept


def test_a_mesh_context_file_that_does_not_parse_is_never_kept(tmp_path, monkeypatch):
    # The report needs its documents with every mark, which a kept first pass does not hold: the
    # file is read again until it is fixed.
    monkeypatch.chdir(tmp_path)
    padding = "".join(f"# {n:05} {'.' * 70}\n" for n in range(300))
    (tmp_path / "platform.yaml").write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: [shop\n" + padding)
    (tmp_path / ".meshlint.yaml").write_text("mesh:\n  context: [platform.yaml]\n")
    worker = tree(tmp_path) / "worker.yaml"
    for target in (worker, worker.parent):
        first = check(target, tmp_path / "cache")
        assert '"code": "ML001"' in first[1] and check(target, tmp_path / "cache") == first
    assert not list((tmp_path / "cache").glob("context*-*.json"))


def test_the_code_key_covers_every_module_below_the_package_and_their_edits(tmp_path):
    """An edited checkout never reads stale results: each .py and .json file and each built
    extension (the C reader), nested ones too, is in the key by path, size and time; byte-compiled
    files and other files are not."""
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    (tmp_path / "__pycache__").mkdir()
    for name in ("a.py", "sub/b.json", "sub/deeper/c.py", "sub/_r.cpython-311-x86_64-linux-gnu.so", "__pycache__/d.py", "notes.txt", "sub/e.pyc"):
        (tmp_path / name).write_text("x = 1\n")
    found: list[str] = []
    cachekeys.modules_below(str(tmp_path), found)
    expected = ("a.py", "sub/_r.cpython-311-x86_64-linux-gnu.so", "sub/b.json", "sub/deeper/c.py")
    assert sorted(p.split("\0")[0] for p in found) == [str(tmp_path / n) for n in expected]
    deeper = tmp_path / "sub" / "deeper" / "c.py"
    os.utime(deeper, ns=(1, 1))
    before: list[str] = []
    cachekeys.modules_below(str(tmp_path), before)
    deeper.write_text("x = 22\n")
    os.utime(deeper, ns=(1, 1))  # same time, other size
    after: list[str] = []
    cachekeys.modules_below(str(tmp_path), after)
    assert sorted(before) != sorted(after)
    assert [e for e in sorted(before) if "c.py" not in e] == [e for e in sorted(after) if "c.py" not in e]


def test_the_code_key_is_the_same_for_the_same_rules_and_another_for_others():
    from meshlint.registry import load_rules

    rules = load_rules()
    assert cachekeys.code_fingerprint(rules) == cachekeys.code_fingerprint(list(rules))
    assert cachekeys.code_fingerprint(rules[:-1]) != cachekeys.code_fingerprint(rules)


SURROGATE_NAMED = """apiVersion: apps/v1
kind: Deployment
metadata: {name: "web\\ud800", namespace: shop}
spec:
  template:
    metadata: {annotations: {sidecar.istio.io/inject: "true"}}
    spec:
      containers: [{name: web, image: web:1}]
"""


def test_names_that_are_not_utf8_are_keyed_like_any_other(tmp_path, monkeypatch):
    # A lone surrogate written as an escape in a name (a sign of Istio, so part of the first pass's
    # facts), and a file whose name is not UTF-8: each made the cache's key raise, an internal error.
    monkeypatch.chdir(tmp_path)
    folder = tree(tmp_path)
    (folder / "web.yaml").write_text(SURROGATE_NAMED)
    with open(os.path.join(os.fsencode(folder), b"odd\xff.yaml"), "w") as odd:
        odd.write("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: odd, namespace: shop}\n")
    cold = check(folder, tmp_path / "cache")
    warm = check(folder, tmp_path / "cache")
    assert cold[0] == 1 and '"ML101"' in cold[1] and '"resources": 4' in cold[1]
    assert warm == cold and list((tmp_path / "cache").glob("results-*.lines"))


def test_a_run_without_a_cache_loads_no_cache_code(tmp_path):
    import subprocess
    import sys

    (tmp_path / "worker.yaml").write_text(WORKER)
    show = (
        "import sys; from meshlint.cli import main\n"
        "try: main(['check', 'worker.yaml', '--no-cache'])\n"
        "except SystemExit: pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('meshlint.engine.cache')))"
    )
    out = subprocess.run([sys.executable, "-c", show], cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[-1] == "[]"
