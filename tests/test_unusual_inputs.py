"""Inputs that must not end or stall a run: symbolic link loops, FIFOs, devices, files and streams
over the size limit. Each is passed over with one line naming it, and the other files' findings stay."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from meshlint.cli import main
from meshlint.source import inputs

NAMESPACE = "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n"
HAZARD = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    metadata:
      annotations: {sidecar.istio.io/inject: "true"}
    spec:
      restartPolicy: Never
      containers:
      - {name: app, image: app, env: [{name: API_URL, value: "http://api:8080"}]}
"""
SUMMARY_ONE_CLEAN = "1 file, 1 resource, 0 findings (0 error, 0 warning, 0 info), 0 suppressed, 0 skipped, 0 assumed meshed\n"


def clean_but_skipped(*skipped: str) -> str:
    """The text report of a run whose one manifest is clean and which passed over `skipped` ("path: why")."""
    listed = "".join(f"not checked: {line}\n" for line in skipped)
    files = len(skipped) + 1
    return f"{listed}\n{files} files, 1 resource, 0 findings (0 error, 0 warning, 0 info), 0 suppressed, {len(skipped)} skipped, 0 assumed meshed\n"
# A run that must not wait: a FIFO read would block until a writer came.
TIMEOUT = 60

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and symbolic links as POSIX has them")


def meshlint(*args: str, stdin: bytes | None = None, cwd: str | os.PathLike[str] | None = None) -> subprocess.CompletedProcess[str]:
    """The command itself, in a process of its own: a hang is a failed test, not a stalled suite."""
    command = [sys.executable, "-m", "meshlint", "check", "--no-cache", *args]
    run = subprocess.run(command, check=False, input=stdin, capture_output=True, timeout=TIMEOUT, cwd=cwd, stdin=None if stdin is not None else subprocess.DEVNULL)
    return subprocess.CompletedProcess(run.args, run.returncode, run.stdout.decode(), run.stderr.decode())


def loops(folder) -> None:
    os.symlink("loop2.yaml", folder / "loop1.yaml")
    os.symlink("loop1.yaml", folder / "loop2.yaml")
    os.symlink("self", folder / "self")


def test_a_symbolic_link_loop_beside_a_named_file_is_passed_over(tmp_path, monkeypatch):
    """pre-commit names one file; its folder is read for context, and the loops in it are no files."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "a.yaml").write_text(NAMESPACE)
    loops(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "--no-cache", "a.yaml"])
    assert (result.exit_code, result.stderr, result.stdout) == (0, "", SUMMARY_ONE_CLEAN)


def test_a_symbolic_link_loop_in_a_walk_is_passed_over_and_counted(tmp_path, monkeypatch):
    (tmp_path / "a.yaml").write_text(NAMESPACE)
    loops(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "--no-cache", "."])
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == clean_but_skipped("loop1.yaml: symbolic link loop", "loop2.yaml: symbolic link loop")


def test_a_passed_over_file_fails_the_gate_under_fail_on_skipped(tmp_path, monkeypatch):
    (tmp_path / "a.yaml").write_text(NAMESPACE)
    loops(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "--no-cache", "--fail-on-skipped", "--format", "concise", "."])
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == "meshlint: loop1.yaml: skipped: symbolic link loop\nmeshlint: loop2.yaml: skipped: symbolic link loop\n"


def test_a_named_symbolic_link_loop_is_an_error_naming_it(tmp_path, monkeypatch):
    loops(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "--no-cache", "loop1.yaml"])
    assert (result.exit_code, result.stderr) == (2, "meshlint: error: loop1.yaml: symbolic link loop\n")


def test_a_fifo_in_a_walk_is_passed_over_and_counted(tmp_path):
    (tmp_path / "a.yaml").write_text(NAMESPACE)
    os.mkfifo(tmp_path / "pipe.yaml")
    result = meshlint(".", cwd=tmp_path)
    assert (result.returncode, result.stderr, result.stdout) == (0, "", clean_but_skipped("pipe.yaml: a FIFO"))


@pytest.mark.parametrize(("make", "kind"), [(os.mkfifo, "a FIFO"), (None, "a device")])
def test_a_named_special_file_is_an_error_naming_it(tmp_path, make, kind):
    path = str(tmp_path / "pipe.yaml") if make else os.devnull
    if make:
        make(path)
    result = meshlint(path)
    assert result.returncode == 2
    assert result.stderr == f"meshlint: error: {path}: {kind}, not a regular file; pipe a stream to `meshlint check -`\n"


def test_read_refuses_a_fifo_rather_than_waiting_for_a_writer(tmp_path):
    os.mkfifo(tmp_path / "pipe.yaml")
    with pytest.raises(OSError, match="a FIFO, not a regular file"):
        inputs.read(str(tmp_path / "pipe.yaml"))


def test_a_file_over_the_size_limit_is_reported_and_the_others_checked(tmp_path):
    (tmp_path / "a.yaml").write_text(HAZARD)
    (tmp_path / "big.yaml").write_text(HAZARD + "# " + "x" * 2048 + "\n")
    result = meshlint("--max-file-size", "2K", "--format", "concise", ".", cwd=tmp_path)
    assert result.stderr == "meshlint: big.yaml: skipped: larger than the max-file-size limit of 2K\n"
    assert result.stdout == (
        "a.yaml:6:5: warning ML100 [*] startup-race-mesh-wide: Deployment web can start before its istio-proxy sidecar is ready (injection assumed: "
        "namespace unknown): classic sidecar (Istio/Kubernetes versions unknown), holdApplicationUntilProxyStarts is false (default)"
        "; it names peers in env: env API_URL=http://api:8080 (line 11); nothing shows a call out at startup that needs the hold on this workload alone: set it mesh-wide\n"
    )
    assert result.returncode == 1


def test_the_size_limit_comes_from_the_config_and_the_option_wins(tmp_path):
    (tmp_path / ".meshlint.yaml").write_text("max-file-size: 1k\n")
    (tmp_path / "a.yaml").write_text(NAMESPACE + "# " + "x" * 1100 + "\n")
    assert meshlint("a.yaml", cwd=tmp_path).stdout == "not checked: a.yaml: larger than the max-file-size limit of 1K\n\n" + SUMMARY_ONE_CLEAN.replace(
        "1 resource", "0 resources").replace("0 skipped", "1 skipped")
    assert meshlint("--max-file-size", "2048", "a.yaml", cwd=tmp_path).stdout == SUMMARY_ONE_CLEAN


@pytest.mark.parametrize(("value", "message"), [
    ("--max-file-size=0", "Invalid value for --max-file-size: '0' is not a size such as 50M (bytes, or a whole number of K, M or G)"),
    ("--max-file-size=1T", "Invalid value for --max-file-size: '1T' is not a size such as 50M (bytes, or a whole number of K, M or G)"),
])
def test_a_size_that_is_none_is_a_usage_error(tmp_path, value, message):
    result = meshlint(value, ".", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == f"Error: {message}"


def test_a_size_in_the_config_that_is_none_stops_the_run(tmp_path):
    (tmp_path / ".meshlint.yaml").write_text("max-file-size: lots\n")
    result = meshlint(".", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == (
        "meshlint: error: .meshlint.yaml:1: max-file-size: 'lots' is not valid; expected a size such as 50M: bytes, or a whole number of K, M or G "
        "(powers of 1024)\n"
    )


def test_stdin_over_the_limit_is_read_no_further_and_the_named_files_are_checked(tmp_path):
    (tmp_path / "a.yaml").write_text(NAMESPACE)
    result = meshlint("--max-file-size", "1M", "-", "a.yaml", stdin=b"\0" * (3 << 20), cwd=tmp_path)
    assert (result.returncode, result.stderr, result.stdout) == (0, "", clean_but_skipped("<stdin>: larger than the max-file-size limit of 1M"))


def test_stdin_from_an_endless_device_ends(tmp_path):
    with open("/dev/zero", "rb") as zero:
        run = subprocess.run([sys.executable, "-m", "meshlint", "check", "--no-cache", "--max-file-size", "1M", "--format", "concise", "-"],
                             check=False, stdin=zero, capture_output=True, timeout=TIMEOUT, cwd=tmp_path)
    assert (run.returncode, run.stderr, run.stdout) == (0, b"meshlint: <stdin>: skipped: larger than the max-file-size limit of 1M\n", b"")


def test_read_takes_no_more_than_the_limit_and_one_byte(tmp_path, monkeypatch):
    path = tmp_path / "grows.yaml"
    path.write_bytes(b"a" * 100)
    asked = []
    real_read = os.read

    def read(fd, size):
        asked.append(size)
        return real_read(fd, size)

    monkeypatch.setattr(inputs, "_LIMIT", [150])
    monkeypatch.setattr(os, "read", read)
    assert inputs.read(str(path)) == b"a" * 100
    monkeypatch.setattr(inputs, "_LIMIT", [99])
    with pytest.raises(inputs.TooLarge):
        inputs.read(str(path))  # refused on its size, before any byte is read
    assert asked == [151, 51]


@pytest.mark.parametrize(("text", "size"), [("50M", 50 << 20), ("512k", 512 << 10), ("1GB", 1 << 30), ("100", 100), (7, 7), ("0", None), ("M", None), ("-1", None)])
def test_sizes_are_bytes_or_whole_units_of_1024(text, size):
    assert inputs.parse_size(text) == size


def reproducer_job(name: str, script: str, env: str = "") -> str:
    return (
        f"apiVersion: batch/v1\nkind: Job\nmetadata: {{name: {name}}}\nspec:\n  template:\n    metadata:\n"
        f"      annotations: {{sidecar.istio.io/inject: \"true\"}}\n    spec:\n      restartPolicy: Never\n      containers:\n"
        f"      - name: app\n        image: app\n{env}        command: [sh, -c, {script!r}]\n"
    )


def test_a_tree_of_every_reproducer_keeps_the_good_manifest_and_names_each_bad_file(tmp_path):
    """Issue 39's reproducers side by side: numbers past Python's int-conversion limit, a superscript
    digit, long `&&` chains and deep `$(` nesting, `$(VAR)` that doubles per level, a symbolic link
    loop, a FIFO, a file over the size limit. The good manifest's findings come out whole, each file
    that cannot be read is named on one line, and the run ends (the subprocess timeout)."""
    huge = "9" * 5000
    # Each workload's findings whole, on its own, ML100 included where the reproducer names no peer.
    (tmp_path / ".meshlint.yaml").write_text("rules:\n  ML100: {group: false, require-peers: false}\n")
    (tmp_path / "huge-port.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: huge}\nspec:\n  template:\n    metadata:\n"
        f"      annotations: {{sidecar.istio.io/inject: \"true\", traffic.sidecar.istio.io/excludeInboundPorts: \"{huge}\", "
        f"status.sidecar.istio.io/port: \"{huge}\"}}\n    spec:\n      containers:\n      - name: app\n        image: app\n"
        f"        readinessProbe: {{httpGet: {{path: /, port: {huge}}}}}\n"
    )
    (tmp_path / "odd-digit.yaml").write_text(reproducer_job("odd", "run; curl -X POST http://localhost:\u00b2/quitquitquit"))
    (tmp_path / "chain.yaml").write_text(reproducer_job("chain", " && ".join(["true"] * 340) + "; curl -X POST localhost:15020/quitquitquit"))
    (tmp_path / "nested.yaml").write_text(reproducer_job("nested", "$(" * 300 + "true" + ")" * 300))
    doubling = "        env:\n" + "".join(
        f"        - {{name: A{i}, value: \"{'x' if i == 0 else f'$(A{i - 1})$(A{i - 1})'}\"}}\n" for i in range(41)
    )
    (tmp_path / "doubling.yaml").write_text(reproducer_job("doubling", "run $(A40)", doubling))
    (tmp_path / "big.yaml").write_text("# padding\n" * 120_000 + NAMESPACE)
    os.symlink("loop2.yaml", tmp_path / "loop1.yaml")
    os.symlink("loop1.yaml", tmp_path / "loop2.yaml")
    os.mkfifo(tmp_path / "pipe.yaml")
    (tmp_path / "good.yaml").write_text(reproducer_job("good", "run-tests"))

    result = meshlint("--max-file-size", "1M", "--format", "concise", "--fail-on-skipped", ".", cwd=tmp_path)
    good = [line for line in result.stdout.splitlines() if line.startswith("good.yaml:")]
    assert good == [
        "good.yaml:6:5: warning ML100 [*] startup-race-mesh-wide: Job good can start before its istio-proxy sidecar is ready (injection assumed: "
        "namespace unknown): classic sidecar (Istio/Kubernetes versions unknown), holdApplicationUntilProxyStarts is false (default)",
        "good.yaml:6:5: error ML201 job-never-completes: Job good never completes (injection assumed: namespace unknown): its classic "
        "istio-proxy sidecar keeps running after container 'app' exits, because nothing POSTs to localhost:15020/quitquitquit",
    ]
    assert result.stderr == (
        "meshlint: loop1.yaml: skipped: symbolic link loop\n"
        "meshlint: loop2.yaml: skipped: symbolic link loop\n"
        "meshlint: pipe.yaml: skipped: a FIFO\n"
        "meshlint: big.yaml: skipped: larger than the max-file-size limit of 1M\n"
    )
    checked = {line.split(":", 1)[0] for line in result.stdout.splitlines()}
    assert checked == {"chain.yaml", "doubling.yaml", "good.yaml", "huge-port.yaml", "nested.yaml", "odd-digit.yaml"}
    assert result.returncode == 1


def test_a_skip_list_of_many_whole_ranges_is_read_range_by_range(tmp_path):
    """A Linkerd skip list that repeats `1-65535` is read as ranges, never expanded port by port: ML102
    asks whether Vault's port is skipped, ML510 what lies beyond the defaults (the subprocess timeout
    is the bound)."""
    ranges = ",".join(["1-65535"] * 40_000)
    (tmp_path / "skips.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: skips}\nspec:\n  template:\n    metadata:\n      annotations:\n"
        "        linkerd.io/inject: enabled\n        vault.hashicorp.com/agent-inject: \"true\"\n"
        f"        config.linkerd.io/skip-outbound-ports: \"{ranges}\"\n    spec:\n      containers: [{{name: app, image: app}}]\n"
    )
    result = meshlint("--format", "concise", "skips.yaml", cwd=tmp_path)
    assert [line.split(" ", 3)[:3] for line in result.stdout.splitlines() if line.startswith("skips.yaml:")] == [
        ["skips.yaml:10:48:", "warning", "ML510"],
    ]
    assert result.stderr == ""
