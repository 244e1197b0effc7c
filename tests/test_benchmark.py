"""The benchmark's own arithmetic and set-up (benchmarks/): what it measures and how it compares.
Nothing here times anything or asserts a speed."""

from __future__ import annotations

import os
import subprocess
import sys

from helpers import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
from measure import Comparison, Measured, load_line, measure
from run import CORPUS_VARIABLE, CacheMode, cache_modes, cold_start_folder, corpus_missing, find_corpus

MIB = 1 << 20
MESHLINT = os.path.join(os.path.dirname(sys.executable), "meshlint")


def test_the_headline_is_the_cpu_ratio_with_wall_and_memory_beside_it():
    a = [Measured(seconds=4.0, cpu=3.0, peak=90.0, code=1), Measured(seconds=9.0, cpu=3.3, peak=92.0, code=1), Measured(seconds=3.0, cpu=3.6, peak=94.0, code=1)]
    b = [Measured(seconds=1.0, cpu=1.0, peak=50.0, code=0), Measured(seconds=2.0, cpu=1.0, peak=46.0, code=0), Measured(seconds=1.5, cpu=1.0, peak=47.0, code=0)]
    comparison = Comparison.of(a, b, single_core=b)
    assert comparison == Comparison(cpu=3.3, wall=4.0, memory=2.0, load=1.5)
    assert comparison.headline(3) == "A/B: CPU 3.30 (median of 3 pairs), wall 4.00, peak memory 2.00"


def test_single_core_runs_that_waited_for_a_core_say_the_machine_was_loaded():
    waited = [Measured(seconds=1.3, cpu=1.0, peak=40.0, code=0)] * 3
    ran = [Measured(seconds=1.1, cpu=1.0, peak=40.0, code=0)] * 3
    assert Comparison.of(waited, ran, single_core=waited).load == 1.3
    assert Comparison.of(waited, ran, single_core=ran).load == 1.1
    assert Comparison.of(waited, ran, single_core=[]).load is None  # no side uses one core: no reading
    assert load_line(1.3) == (
        "loaded: single-core runs took 1.30x their CPU time in wall time (above 1.2); the wall ratios are the machine's, the CPU ones meshlint's"
    )
    assert load_line(1.2) == "not loaded: single-core runs took 1.20x their CPU time in wall time (1.2 or below)"


def test_peak_memory_is_the_measured_process_own_not_the_harness():
    """The harness here holds a large ballast; a child that fills 64 MiB reads as about 64 MiB and an
    interpreter, never the harness's size."""
    ballast = b"\x01" * (256 * MIB)
    child = measure([sys.executable, "-c", "import sys; data = b'x' * (64 << 20); sys.exit(3)"])
    assert len(ballast) == 256 * MIB
    assert child.code == 3
    assert 64 < child.peak < 64 + 48


def cache_seen_before_each_run(mode: CacheMode, folder: str, runs: int = 2) -> list[list[str]]:
    """What a cold start's cache folder holds as each of its runs begins."""
    seen: list[list[str]] = []
    cache = mode.options[mode.options.index("--cache-dir") + 1]

    def before() -> None:
        if mode.before is not None:
            mode.before()
        seen.append(sorted(os.listdir(cache)) if os.path.isdir(cache) else [])

    for _ in range(runs):
        measured = measure([MESHLINT, "check", "checkout.yaml", *mode.options], cwd=folder, before=before)
        assert measured.code in (0, 1)
    return seen


def test_a_cold_start_meets_an_empty_cache_every_run_and_a_warm_one_the_cache_filled_once(tmp_path):
    """The cold start with a mesh.context keeps what that file gives in the cache (a first run fills it)."""
    folder = cold_start_folder(str(tmp_path), with_context=True)
    modes = {mode.label: mode for mode in cache_modes(folder)}
    assert list(modes) == ["no cache", "an empty cache each run", "a cache filled once"]
    assert modes["no cache"] == CacheMode("no cache", ["--no-cache"])
    assert cache_seen_before_each_run(modes["an empty cache each run"], folder) == [[], []]
    first, second = cache_seen_before_each_run(modes["a cache filled once"], folder)
    assert (first, bool(second)) == ([], True)


def test_the_corpus_is_found_beside_the_checkout(tmp_path):
    (tmp_path / "shared" / "corpus").mkdir(parents=True)
    (tmp_path / "meshlint").mkdir()
    corpus = str(tmp_path / "shared" / "corpus")
    assert find_corpus(None, {}, str(tmp_path / "meshlint")) == (corpus, [corpus])


def test_the_corpus_is_found_beside_the_main_checkout_of_a_worktree(tmp_path):
    (tmp_path / "shared" / "corpus").mkdir(parents=True)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q", str(tmp_path / "main")], check=True)
    subprocess.run([*git, "-C", str(tmp_path / "main"), "commit", "-q", "--allow-empty", "-m", "start"], check=True)
    subprocess.run([*git, "-C", str(tmp_path / "main"), "worktree", "add", "-q", str(tmp_path / "wt" / "bench")], check=True)
    beside_worktree, beside_main = str(tmp_path / "wt" / "shared" / "corpus"), str(tmp_path / "shared" / "corpus")
    assert find_corpus(None, {}, str(tmp_path / "wt" / "bench")) == (beside_main, [beside_worktree, beside_main])


def test_a_missing_corpus_is_said_in_a_line_naming_where_it_was_looked_for(tmp_path, capsys):
    (tmp_path / "meshlint").mkdir()
    looked = str(tmp_path / "shared" / "corpus")
    assert find_corpus(None, {}, str(tmp_path / "meshlint")) == (None, [looked])
    assert corpus_missing([looked]) == f"corpus: not measured: no folder at {looked} (name one with --corpus DIR or MESHLINT_CORPUS=DIR)"
    named = str(tmp_path / "elsewhere")
    assert find_corpus(None, {CORPUS_VARIABLE: named}, str(tmp_path / "meshlint")) == (None, [named])
    assert find_corpus(named, {CORPUS_VARIABLE: looked}, str(tmp_path / "meshlint")) == (None, [named])


def test_a_named_corpus_that_is_not_there_stops_the_benchmark_before_it_starts(tmp_path):
    missing = str(tmp_path / "nowhere")
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run.py"), "--corpus", missing], capture_output=True, text=True, check=False)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.splitlines()[-1] == (
        f"run.py: error: corpus: not measured: no folder at {missing} (name one with --corpus DIR or MESHLINT_CORPUS=DIR)"
    )


def test_the_benchmark_modules_import_without_doing_anything():
    modules = sorted(path.stem for path in (ROOT / "benchmarks").glob("*.py"))
    script = f"import sys; before = list(sys.path); import {', '.join(modules)}; assert sys.path == before, sys.path"
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT / "benchmarks", capture_output=True, text=True, check=False)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
