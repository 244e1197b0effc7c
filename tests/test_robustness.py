"""Bad input never loses a run (spec §8): random and mutated YAML, alias bombs, files that go away.

The property tests feed the loader and the whole `check` command with text built from the fixtures
(truncated, spliced, with random bytes, deep nesting, aliases and unsafe tags) and hold meshlint to
what spec §8 promises: no exception escapes, every finding points inside its file, the exit code is
0, 1 or 2, and the same input gives the same output twice.
"""

from __future__ import annotations

import json
import tracemalloc

import pytest
from click.testing import CliRunner
from hostile import ODD_DIGITS, QUIT, deployment, doubling_env, job
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import MESHED, TESTDATA, lint
from meshlint.cli import main
from meshlint.engine import parallel
from meshlint.engine import run as engine_run
from meshlint.source import inputs
from meshlint.source.loader import load_text

FIXTURE_TEXTS = sorted(p.read_text(encoding="utf-8") for p in TESTDATA.rglob("*.yaml"))
NASTY = [
    "\t", ":", "- ", "&a ", "*a", "{", "[", "]", "}", "---\n", "...\n", "<<: *a\n", "? ", "|\n", ">-\n", '"', "'",
    "!!python/object/apply:os.system ['true']", "!!binary ", "%YAML 1.2\n", "\x00", "\ufeff", "\udcff",
    "[" * 300, "a: &x\n  b: *x\n", "0o777", "~", "yes", "\n" * 5, " " * 40,
]


@st.composite
def mutated_yaml(draw) -> bytes:
    text = draw(st.sampled_from(FIXTURE_TEXTS))
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["truncate", "delete", "insert", "duplicate"]))
        if action == "truncate":
            text = text[:at]
        elif action == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 40)):]
        elif action == "insert":
            piece = draw(st.one_of(st.sampled_from(NASTY), st.text(max_size=12)))
            text = text[:at] + piece + text[at:]
        else:
            text = text[:at] + text[max(0, at - 80):at] + text[at:]
    data = text.encode("utf-8", errors="replace")
    if draw(st.booleans()):
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.binary(max_size=16)) + data[at:]
    return data


def check_twice(tmp_path, data: bytes):
    path = tmp_path / "input.yaml"
    path.write_bytes(data)
    runs = [CliRunner().invoke(main, ["check", str(path), "--format", "json", "--jobs", "1"]) for _ in range(2)]
    return path, runs


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=mutated_yaml())
def test_check_survives_mutated_yaml(tmp_path, data):
    path, (first, second) = check_twice(tmp_path, data)
    assert first.exception is None or isinstance(first.exception, SystemExit), first.exception
    assert first.exit_code in (0, 1, 2)
    assert (first.exit_code, first.stdout) == (second.exit_code, second.stdout)
    if first.exit_code == 2:
        assert first.stderr.count("\n") == 1 and str(path) in first.stderr
        return
    report = json.loads(first.stdout)
    line_count = max(1, len(data.decode("utf-8", errors="replace").splitlines()))
    for finding in report["findings"]:
        assert finding["path"] == str(path)
        assert 1 <= finding["line"] <= line_count + 1 and finding["column"] >= 1, finding


# --- shapes that broke readers: odd and huge numbers, long chains, deep nesting, doubling values --------

# Text that is no number to Go's strconv, though Python may take it: other scripts' digits, super-
# and subscripts, thousands of digits, numbers past any range, signs and spaces.
ODD_NUMBERS = st.one_of(
    st.sampled_from(ODD_DIGITS),
    st.text(st.characters(categories=["Nd", "No"]), min_size=1, max_size=6),
    st.integers(4300, 6000).map(lambda n: "9" * n),
    st.integers(0, 2**80).map(str),
    st.sampled_from(["+80", "-1", " 80", "0080", "8_0", "0x50", "80.0", "1e3"]),
)


def _number_places(number: str) -> list[str]:
    """Manifests with `number` where a port, a count or seconds go."""
    quoted = json.dumps(number)
    meshed = {"sidecar.istio.io/inject": "true"}
    return [
        job(f"./work; curl -XPOST http://localhost:{number}/quitquitquit"),
        job(f"./work; pilot-agent request --debug-port={number} POST quitquitquit; nc db {number}"),
        job(f"linkerd-await --shutdown --port {number} -- ./work", env=[("DB_PORT", number)]),
        deployment(meshed, f"readinessProbe: {{httpGet: {{port: {quoted}}}}}, livenessProbe: {{tcpSocket: {{port: {quoted}}}}}"),
        deployment({**meshed, "traffic.sidecar.istio.io/excludeInboundPorts": number, "traffic.sidecar.istio.io/includeOutboundPorts": f"80,{number}",
                    "proxy.istio.io/config": f"terminationDrainDuration: {number}s"}),
        deployment({"linkerd.io/inject": "enabled", "config.linkerd.io/skip-inbound-ports": f"{number}-{number}", "config.linkerd.io/proxy-admin-port": number,
                    "config.alpha.linkerd.io/proxy-wait-before-exit-seconds": number}, f"livenessProbe: {{tcpSocket: {{port: {quoted}}}}}"),
        "apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata: {name: p}\nspec:\n  portLevelMtls:\n"
        f"    ? {quoted}\n    : {{mode: DISABLE}}\n",
    ] + ([deployment(meshed, f"lifecycle: {{preStop: {{sleep: {{seconds: {number}}}}}}}").replace("spec:\n      containers", f"spec:\n      terminationGracePeriodSeconds: {number}\n      containers")]
         if number.isascii() and number.isdigit() else [])


@st.composite
def hostile_manifest(draw) -> str:
    shape = draw(st.sampled_from(["number", "chain", "nesting", "doubling"]))
    if shape == "number":
        return draw(st.sampled_from(_number_places(draw(ODD_NUMBERS))))
    if shape == "chain":
        operators = draw(st.lists(st.sampled_from([" && ", " || ", " | ", "; "]), min_size=1, max_size=3))
        steps = draw(st.integers(300, 3000))
        return job("".join(f"./s{operators[i % len(operators)]}" for i in range(steps)) + QUIT)
    if shape == "nesting":
        opener, closer = draw(st.sampled_from([("$(", ")"), ("( ", " )"), ("if ./c; then ", "; fi"), ("sh -c \"", "\""), ('"${A:-', '}"')]))
        levels = draw(st.integers(100, 180 if "{" in opener else 600))
        return job("echo " + opener * levels + QUIT + closer * levels)
    return job("./work; " + QUIT, env=doubling_env(draw(st.integers(20, 60))))


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large])
@given(text=hostile_manifest())
def test_check_reads_hostile_shapes_as_findings(tmp_path, text):
    """Each shape used to end the run (an internal error) or never end it; now each is findings."""
    _, (first, second) = check_twice(tmp_path, text.encode("utf-8"))
    assert first.exception is None or isinstance(first.exception, SystemExit), first.exception
    assert first.exit_code in (0, 1), first.stderr
    assert "internal error" not in first.stderr
    assert (first.exit_code, first.stdout) == (second.exit_code, second.stdout)


@settings(max_examples=150, deadline=None)
@given(data=st.one_of(mutated_yaml(), st.binary(max_size=300)))
def test_loader_never_raises_and_positions_stay_in_the_file(data):
    text = data.decode("utf-8", errors="replace")
    loaded = load_text("x.yaml", text)
    lines = max(1, len(text.splitlines()))
    for problem in loaded.problems:
        assert 1 <= problem.line <= lines + 1 and problem.column >= 1
    for document in loaded.documents:
        assert 1 <= document.line <= lines + 1


def bomb(levels: int, width: int) -> str:
    """A Deployment whose args and env would hold `width ** levels` strings if aliases were copied."""
    anchors = ["  a0: &a0 [" + ", ".join(['"lol"'] * width) + "]"]
    for i in range(1, levels + 1):
        anchors.append(f"  a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: bomb}\nx-anchors:\n" + "\n".join(anchors) + "\n"
        "spec:\n  template:\n    metadata: {labels: {app: bomb}}\n    spec:\n      containers:\n"
        f"        - {{name: app, image: app, args: *a{levels}, env: *a{levels}}}\n"
    )


def test_alias_bomb_through_the_whole_check_is_bounded_by_its_text(tmp_path):
    """The bound: an alias is converted once and shared, so time and memory grow with the text, not
    with the expansion. Nine levels of nine would be 387 million strings; the run stays within a few
    MiB of allocations, measured, not timed."""
    (tmp_path / "bomb.yaml").write_text(bomb(levels=9, width=9))
    tracemalloc.start()
    try:
        # Its env is the bomb, no peer: ML100 counts the workload anyway.
        report = lint([tmp_path / "bomb.yaml"], {**MESHED, "rules": {"ML100": {"require-peers": False}}}, base=str(tmp_path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024 * 1024
    assert [f.code for f in report.findings] == ["ML100"]


def test_unreadable_file_in_a_walk_is_passed_over_and_the_rest_is_linted(tmp_path, monkeypatch):
    (tmp_path / "a.yaml").write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n")
    (tmp_path / "b.yaml").write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: b}\n")
    real_read = inputs.read

    def read(path):
        if path.endswith("a.yaml"):
            raise PermissionError(13, "Permission denied")  # what chmod 000 gives a non-root user
        return real_read(path)

    monkeypatch.setattr(inputs, "read", read)
    result = CliRunner().invoke(main, ["check", str(tmp_path)])
    assert result.exit_code == 0
    assert result.stderr == ""
    assert result.stdout == (
        f"not checked: {tmp_path / 'a.yaml'}: Permission denied\n\n"
        "2 files, 1 resource, 0 findings (0 error, 0 warning, 0 info), 0 suppressed, 1 skipped, 0 assumed meshed\n"
    )


def test_file_that_vanishes_mid_run_is_passed_over_and_counted(tmp_path, monkeypatch):
    (tmp_path / "gone.yaml").write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: gone}\n")
    (tmp_path / "kept.yaml").write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: kept}\n")
    real = engine_run.find_units

    def delete_then_read(files, *args):
        (tmp_path / "gone.yaml").unlink()  # after the walk found it, before it is read
        return real(files, *args)

    monkeypatch.setattr(engine_run, "find_units", delete_then_read)
    result = CliRunner().invoke(main, ["check", str(tmp_path)])
    assert result.exit_code == 0
    assert result.stderr == ""
    assert result.stdout == (
        f"not checked: {tmp_path / 'gone.yaml'}: No such file or directory\n\n"
        "2 files, 1 resource, 0 findings (0 error, 0 warning, 0 info), 0 suppressed, 1 skipped, 0 assumed meshed\n"
    )


@pytest.mark.parametrize("jobs", ["2", "3"])
def test_output_is_the_same_for_any_number_of_jobs(tmp_path, jobs, monkeypatch):
    """Not a speed test: enough files to share among processes, and the bytes must not change."""
    import sys

    monkeypatch.setattr(parallel, "PARALLEL_BYTES", 0)  # fork for this small tree too

    sys.path.insert(0, str(TESTDATA.parent / "benchmarks"))
    from generate import generate

    generate(str(tmp_path / "tree"), 400)
    outputs = []
    for n in ("1", jobs):
        out = tmp_path / f"out{n}.json"
        result = CliRunner().invoke(main, ["check", str(tmp_path / "tree"), "--format", "json", "--jobs", n, "-o", str(out)])
        assert result.exit_code == 1
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]
    assert json.loads(outputs[0])["summary"]["files"] > parallel.PARALLEL_FROM


def test_a_first_pass_shared_among_workers_reads_what_one_process_reads(tmp_path, monkeypatch):
    """Every rule's fixtures as one tree: Namespaces, mesh config, revisions, Services, Sidecars,
    signs of Istio and conflicts spread over many files. Workers read ranges of them into contexts
    of their own, merged in file order; the report, and the cache key, must be one process's."""
    from meshlint.engine import cache

    monkeypatch.setattr(parallel, "PARALLEL_FROM", 1)
    monkeypatch.setattr(parallel, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(cache, "CACHE_FROM", 0)
    ranges: list[int] = []
    real = parallel.each_in_workers  # the first pass's ranges, each merged as it comes

    def counted(task, items, jobs, meanwhile=None):
        if getattr(task, "__name__", "") == "_read_range":
            ranges.append(len(items))
        return real(task, items, jobs, meanwhile)

    monkeypatch.setattr(parallel, "each_in_workers", counted)
    outputs = []
    for jobs in ("1", "2"):
        result = CliRunner().invoke(main, ["check", str(TESTDATA), "--format", "json", "--jobs", jobs, "--cache-dir", str(tmp_path / jobs)])
        assert result.exit_code == 1
        outputs.append(result.stdout)
    assert ranges and ranges[0] > 1  # the second run read its first pass in workers
    assert outputs[0] == outputs[1]
    # The first pass's facts (the results' cache key) do not depend on how the files were shared out.
    buckets = [sorted(p.name for p in (tmp_path / jobs).glob("results-*.lines")) for jobs in ("1", "2")]
    assert buckets[0] == buckets[1] and len(buckets[0]) == 1


def test_a_document_read_only_as_a_sign_of_istio_adds_nothing_but_the_sign(tmp_path, monkeypatch):
    """A ConfigMap the env-source screen lets through is part of the context wherever it is; one it
    does not is read, if at all, only for a sign of Istio, and adds nothing else: which documents a
    worker reads for a sign (it knows fewer earlier signs) must not change the report."""
    monkeypatch.setattr(parallel, "PARALLEL_FROM", 1)
    monkeypatch.setattr(parallel, "PARALLEL_BYTES", 0)
    workload = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app, namespace: apps}\nspec:\n  template:\n"
        "    metadata: {annotations: {sidecar.istio.io/inject: 'true'}}\n    spec:\n"
        "      containers: [{name: app, image: app, envFrom: [{configMapRef: {name: app-env}}]}]\n"
    )
    (tmp_path / "a0.yaml").write_text(workload)
    (tmp_path / ".meshlint.yaml").write_text("rules:\n  ML100: {group: false}\n")  # each workload's evidence in its own finding
    for n in range(1, 5):
        (tmp_path / f"a{n}.yaml").write_text(f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p{n}}}\nspec: {{containers: [{{name: c, image: c}}]}}\n")
    config_map = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-env\n  namespace: apps\n  annotations: {{note: read once istio-proxy is up}}\ndata: {{{data}}}\n"
    outputs = {}
    for data in ("PAYMENTS_HOST: payments", "PAYMENTS: payments"):  # flow style: screened in, then out
        (tmp_path / "a5.yaml").write_text(config_map.format(data=data))
        for jobs in ("1", "2"):
            result = CliRunner().invoke(main, ["check", str(tmp_path), "--format", "json", "--jobs", jobs, "--no-cache"])
            outputs[data, jobs] = result.stdout
    assert outputs["PAYMENTS_HOST: payments", "1"] == outputs["PAYMENTS_HOST: payments", "2"]
    assert "env PAYMENTS_HOST=payments from ConfigMap app-env" in outputs["PAYMENTS_HOST: payments", "1"]
    assert outputs["PAYMENTS: payments", "1"] == outputs["PAYMENTS: payments", "2"]
    assert "calls out at startup" not in outputs["PAYMENTS: payments", "1"]


def test_a_working_directory_that_was_deleted_is_one_line(tmp_path, monkeypatch):
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    result = CliRunner().invoke(main, ["check", str(TESTDATA / "ML101")])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == "meshlint: error: the working directory no longer exists (it was deleted or moved): run meshlint from one that does\n"
