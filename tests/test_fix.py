"""`meshlint check --fix` and `--diff` as users run them: what is written and what never is, the diff
that `patch` applies, the reports that carry fixes, and the rounds that keep only fixes that help."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys

import pytest
from click.testing import CliRunner

from helpers import ROOT, TESTDATA
from meshlint.cli import main

FIXTURES = TESTDATA / "fix"
SARIF_SCHEMA = ROOT / "tests" / "schemas" / "sarif-schema-2.1.0.json"
RACE = (FIXTURES / "ML100" / "new_annotations.yaml").read_bytes()
RACE_FIXED = (FIXTURES / "ML100" / "new_annotations.fixed.yaml").read_bytes()


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NO_COLOR", raising=False)
    return tmp_path


def invoke(*args, input=None):
    return CliRunner().invoke(main, list(args), input=input)


def copy_examples(to):
    shutil.copytree(ROOT / "examples", to / "examples")
    return sorted((to / "examples").rglob("*.yaml"))


def apply_patch(diff: bytes, cwd) -> None:
    """Apply a unified diff as users do: with patch, or with git where patch is not installed."""
    command = ["patch", "-p1", "--quiet"] if shutil.which("patch") else ["git", "apply", "-p1", "--unsafe-paths"]
    subprocess.run(command, input=diff, cwd=cwd, check=True)


def snapshot(paths):
    return {str(p): (p.read_bytes(), p.stat().st_mtime_ns) for p in paths}


def test_fix_on_the_examples_leaves_only_findings_without_a_safe_fix(project):
    copy_examples(project)
    result = invoke("check", "examples", "--fix", "--format", "json")
    report = json.loads(result.stdout)
    assert result.exit_code == 1
    assert sorted((f["code"], f["path"]) for f in report["findings"]) == [
        ("ML102", "examples/apps/orders-api.yaml"),
        ("ML201", "examples/jobs/nightly-report.yaml"),
        ("ML301", "examples/apps/checkout.yaml"),
        ("ML402", "examples/apps/orders-api.yaml"),
    ]
    assert all(f["fix"] is None or f["fix"]["applicability"] == "unsafe" for f in report["findings"])
    # One move in the IstioOperator settles the startup race of both workloads, so they need no annotation.
    assert report["summary"]["fixed"] == 3
    assert result.stderr == "meshlint: fixed 3 findings in 1 file\n"
    assert (project / "examples" / "apps" / "orders-api.yaml").read_bytes() == (ROOT / "examples" / "apps" / "orders-api.yaml").read_bytes()
    operator = (project / "examples" / "platform" / "istio-operator.yaml").read_text()
    assert "    defaultConfig:\n      terminationDrainDuration: 30s\n      holdApplicationUntilProxyStarts: true\n" in operator


def test_text_report_after_fix_counts_what_was_fixed(project):
    copy_examples(project)
    text = invoke("check", "examples", "--fix").stdout
    assert text.endswith("5 files, 7 resources, 4 findings (2 error, 2 warning, 0 info), 0 suppressed, 0 skipped, 0 assumed meshed, 3 fixed\n")
    assert "[*]" not in text
    unsafe = invoke("check", "examples", "--unsafe-fixes").stdout
    assert "error ML301 [*] drain-exceeds-grace:" in unsafe
    assert "\n[*] 1 fixable with --fix --unsafe-fixes\n" in unsafe


def test_diff_writes_nothing_and_patch_applies_it(project, tmp_path_factory):
    files = copy_examples(project)
    before = snapshot(files)
    result = invoke("check", "examples", "--diff", "--unsafe-fixes")
    assert result.exit_code == 1
    assert snapshot(files) == before
    assert result.stdout.startswith("--- a/examples/apps/checkout.yaml\n+++ b/examples/apps/checkout.yaml\n@@ ")
    # The same change as --fix, applied by patch to another copy.
    other = tmp_path_factory.mktemp("patched")
    copy_examples(other)
    apply_patch(result.stdout_bytes, other)
    assert invoke("check", "examples", "--fix", "--unsafe-fixes").exit_code == 1
    for path in (project / "examples").rglob("*.yaml"):
        assert (other / path.relative_to(project)).read_bytes() == path.read_bytes(), path
    assert invoke("check", "examples", "--diff").exit_code == 0  # nothing left that --fix would do


def test_diff_keeps_crlf_and_bom_and_a_missing_final_line_break(project):
    data = b"\xef\xbb\xbf" + RACE.rstrip(b"\n").replace(b"\n", b"\r\n")
    (project / "race.yaml").write_bytes(data)
    result = invoke("check", "race.yaml", "--diff")
    assert result.exit_code == 1 and (project / "race.yaml").read_bytes() == data
    apply_patch(result.stdout_bytes, project)  # as written, CRs too
    assert (project / "race.yaml").read_bytes() == b"\xef\xbb\xbf" + RACE_FIXED.rstrip(b"\n").replace(b"\n", b"\r\n")


def test_diff_takes_no_report_options(project):
    (project / "race.yaml").write_bytes(RACE)
    result = invoke("check", "race.yaml", "--diff", "--format", "json")
    assert result.exit_code == 2 and "--diff prints the diff on stdout" in result.output


def test_stdin_is_never_written(project):
    (project / "race.yaml").write_bytes(RACE)
    result = invoke("check", "-", "--fix", "--stdin-filename", "race.yaml", input=RACE.decode())
    assert (project / "race.yaml").read_bytes() == RACE
    assert result.exit_code == 1
    assert "meshlint: 1 fixable finding is in stdin, files not given or files with a syntax error, which --fix never writes\n" in result.stderr
    assert "race.yaml:10:5: warning ML100 startup-race-mesh-wide:" in result.stdout  # not marked: --fix would not make it


def test_a_fix_that_fix_cannot_make_stays_in_json_but_is_not_counted_as_fixable(project):
    result = invoke("check", "-", "--format", "json", "--stdin-filename", "race.yaml", input=RACE.decode())
    report = json.loads(result.stdout)
    assert [(f["code"], f["fix"]["applicability"]) for f in report["findings"]] == [("ML100", "safe")]  # for other tools
    assert (report["summary"]["fixable"], report["summary"]["unsafe_fixable"]) == (0, 0)  # --fix never writes stdin


def test_a_file_with_a_syntax_error_is_never_written(project):
    broken = RACE + b"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x\n"
    (project / "broken.yaml").write_bytes(broken)
    result = invoke("check", "broken.yaml", "--fix")
    assert (project / "broken.yaml").read_bytes() == broken
    assert "error ML001 yaml-syntax-error:" in result.stdout and "warning ML100 startup-race-mesh-wide:" in result.stdout
    assert "fixable with --fix" not in result.stdout  # neither marked nor counted until the file parses
    assert result.stderr == "meshlint: 1 fixable finding is in stdin, files not given or files with a syntax error, which --fix never writes\n"


def test_a_file_with_a_syntax_error_offers_no_fix_even_when_ml001_is_not_selected(project):
    broken = RACE + b"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x\n"
    (project / "broken.yaml").write_bytes(broken)
    result = invoke("check", "broken.yaml", "--select", "ML100")
    assert "warning ML100 startup-race-mesh-wide:" in result.stdout and "ML001" not in result.stdout
    assert "[*]" not in result.stdout and "fixable with --fix" not in result.stdout


def test_files_read_for_context_are_never_written(project):
    """A named IstioOperator brings in the workload files it governs (§W2.6): checked, never fixed."""
    (project / ".git").mkdir()
    (project / ".meshlint.yaml").write_text("rules:\n  ML100: {group: false}\n")  # the workload's own finding and fix
    (project / "istio.yaml").write_text(
        "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nmetadata: {name: cp}\n"
        "spec:\n  meshConfig:\n    defaultConfig:\n      terminationDrainDuration: 10s\n"
    )
    (project / "apps").mkdir()
    (project / "apps" / "web.yaml").write_bytes(RACE)
    result = invoke("check", "istio.yaml", "--fix")
    assert "istio.yaml changed: also checking 1 file" in result.stderr
    assert "ML100 startup-race-mesh-wide" in result.stdout and "[*]" not in result.stdout  # reported; fixable once the file is named
    assert (project / "apps" / "web.yaml").read_bytes() == RACE
    assert "1 fixable finding is in stdin, files not given or files with a syntax error" in result.stderr


def test_writes_keep_the_mode_and_symbolic_links(project):
    (project / "real.yaml").write_bytes(RACE)
    os.chmod(project / "real.yaml", 0o640)
    os.symlink("real.yaml", project / "link.yaml")
    assert invoke("check", "link.yaml", "--fix").exit_code == 0
    assert (project / "link.yaml").is_symlink()
    assert (project / "real.yaml").read_bytes() == RACE_FIXED
    assert stat.S_IMODE(os.stat(project / "real.yaml").st_mode) == 0o640
    assert sorted(p.name for p in project.iterdir()) == ["link.yaml", "real.yaml"]  # no temporary file left


def test_fix_exits_0_when_nothing_is_left(project):
    (project / "race.yaml").write_bytes(RACE)
    result = invoke("check", "race.yaml", "--fix")
    assert result.exit_code == 0, result.output
    assert (project / "race.yaml").read_bytes() == RACE_FIXED
    assert result.stdout.endswith("1 file, 1 resource, 0 findings (0 error, 0 warning, 0 info), 0 suppressed, 0 skipped, 0 assumed meshed, 1 fixed\n")
    again = invoke("check", "race.yaml", "--fix")
    assert again.exit_code == 0 and (project / "race.yaml").read_bytes() == RACE_FIXED and again.stderr == ""


def test_a_fix_that_would_bring_a_new_finding_is_not_applied(project):
    case = FIXTURES / "ML002" / "nofix_drain_beyond_grace.yaml"
    shutil.copy(case, project / "web.yaml")
    result = invoke("check", "web.yaml", "--fix")
    assert (project / "web.yaml").read_bytes() == case.read_bytes()
    assert result.stderr == (
        "meshlint: web.yaml:14:11: ML002 fix not applied (rename terminationDrainDuraton to terminationDrainDuration): "
        "it would bring ML301 drain-exceeds-grace at web.yaml:14\n"
    )
    assert "warning ML002 invalid-proxy-config:" in result.stdout  # no longer marked [*]


def test_fix_with_a_baseline_fixes_only_what_is_reported(project):
    (project / ".git").mkdir()
    (project / ".meshlint.yaml").write_text("rules:\n  ML100: {group: false}\n")  # a finding, and its fix, for each workload
    (project / "old.yaml").write_bytes(RACE)
    assert invoke("check", "old.yaml", "--write-baseline", "baseline.json").exit_code == 0
    (project / "new.yaml").write_bytes(RACE.replace(b"name: orders", b"name: returns"))
    result = invoke("check", "old.yaml", "new.yaml", "--baseline", "baseline.json", "--fix")
    assert (project / "old.yaml").read_bytes() == RACE
    assert (project / "new.yaml").read_bytes() == RACE_FIXED.replace(b"name: orders", b"name: returns")
    assert result.exit_code == 0


def test_json_and_sarif_carry_the_fix(project):
    import jsonschema

    from meshlint.fix.edits import Edit, Text

    (project / "race.yaml").write_bytes(RACE)
    finding = json.loads(invoke("check", "race.yaml", "--format", "json").stdout)["findings"][0]
    edits = [Edit(e["line"], e["column"], e["end_line"], e["end_column"], e["content"]) for e in finding["fix"]["edits"]]
    assert Text(RACE).apply(edits) == RACE_FIXED
    log = json.loads(invoke("check", "race.yaml", "--format", "sarif").stdout)
    jsonschema.validate(log, json.loads(SARIF_SCHEMA.read_text()))
    fix = log["runs"][0]["results"][0]["fixes"][0]
    assert fix["description"]["text"] == finding["fix"]["message"]
    change = fix["artifactChanges"][0]
    assert change["artifactLocation"] == {"uri": "race.yaml", "uriBaseId": "%SRCROOT%"}
    assert change["replacements"] == [
        {"deletedRegion": {"startLine": e.line, "startColumn": e.column, "endLine": e.end_line, "endColumn": e.end_column},
         "insertedContent": {"text": e.text}}
        for e in edits
    ]


def test_fixes_use_the_line_breaks_of_their_file(project):
    (project / "race.yaml").write_bytes(RACE.replace(b"\n", b"\r\n"))
    finding = json.loads(invoke("check", "race.yaml", "--format", "json").stdout)["findings"][0]
    assert finding["fix"]["edits"][0]["content"].startswith("\r\n      annotations:\r\n")


def test_fix_in_worker_processes_sees_the_round_before(project):
    """A tree big enough for worker processes: every worker reads the fixes of the rounds before."""
    from meshlint.engine import parallel

    (project / ".meshlint.yaml").write_text("rules:\n  ML100: {group: false}\n")  # a finding, and its fix, for each workload
    for n in range(parallel.PARALLEL_FROM + 4):
        (project / f"app{n}.yaml").write_bytes(RACE.replace(b"name: orders", f"name: app{n}".encode()))
    result = invoke("check", ".", "--fix", "--jobs", "2")
    assert result.exit_code == 0, result.output
    assert f"fixed {parallel.PARALLEL_FROM + 4} findings in {parallel.PARALLEL_FROM + 4} files" in result.stderr


def test_a_clean_run_loads_no_fix_code(project):
    (project / "svc.yaml").write_text("apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80}]}\n")
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "meshlint", "check", "svc.yaml"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "meshlint.fix" not in done.stderr


def test_a_fix_indents_as_the_file_does_around_it_not_as_a_stream_does_far_away(tmp_path):
    # A rendered stream may hold charts of different styles; reading only the lines around the fix also
    # keeps a stream of thousands of fixes linear.
    from meshlint.fix.text import INDENT_WINDOW, indent_step
    from meshlint.source.loader import load_text

    four = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n    name: wide\ndata:\n    a: b\n"
    two = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: narrow\n"
    text = "---\n".join([four] * (INDENT_WINDOW // 5) + [two] * (INDENT_WINDOW // 3))
    documents = load_text(str(tmp_path / "stream.yaml"), text).documents
    assert indent_step(documents[0].root.get("metadata")) == 4
    assert indent_step(documents[-1].root.get("metadata")) == 2


@pytest.mark.parametrize(("window", "block"), [(1, 5), (2, 1024), (3, 5), (7, 4), (400, 1024), (400, 64)])
def test_the_indentation_step_is_what_reading_the_lines_around_each_fix_gives(tmp_path, monkeypatch, window, block):
    # The steps are worked out once a file, a block at a time; each fix must still get what reading
    # its own window of lines gives, ties (first met wins) and the window's edges included.
    import itertools
    import random
    from collections import Counter

    from meshlint.fix import text as fixtext
    from meshlint.source.loader import load_text

    def read_around(node):
        line = fixtext.start_of(node)[0]
        window = node.table.lines[max(0, line - 1 - fixtext.INDENT_WINDOW) : line + fixtext.INDENT_WINDOW]
        steps = Counter()
        for previous, current in itertools.pairwise(window):
            head = previous.split(" #", 1)[0].rstrip()
            if head.endswith(":") and current.strip() and not current.lstrip().startswith(("#", "- ")):
                step = fixtext.indentation(current) - fixtext.indentation(previous)
                if 0 < step <= 8:
                    steps[step] += 1
        return steps.most_common(1)[0][0] if steps else 2

    monkeypatch.setattr(fixtext, "INDENT_WINDOW", window)  # small windows: each edge decides
    monkeypatch.setattr(fixtext._Steps, "BLOCK", block)  # small blocks: windows across their edges
    chance = random.Random(19)
    for round_ in range(6):
        documents = []
        for n in range(chance.randrange(1, 400)):
            step = " " * chance.choice((2, 2, 3, 4, 8, 9))
            nested = f"{step}labels: # a comment\n{step}{step}app: a\n" if chance.random() < 0.5 else ""
            documents.append(f"kind: ConfigMap\nmetadata:\n{step}name: c{n}\n{nested}data:\n{step}- a\n")
        loaded = load_text(str(tmp_path / f"stream{round_}.yaml"), "---\n".join(documents))
        for document in loaded.documents:
            for node in (document.root.get("metadata"), document.root.path("metadata", "labels")):
                if node.value is not None:
                    assert fixtext.indent_step(node) == read_around(node)


@pytest.mark.skipif(os.name == "nt", reason="no such file name on Windows")
def test_a_diff_header_quotes_a_file_name_holding_a_control_character_as_git_does(project):
    name = "w\x1b[2J.yaml"
    (project / name).write_bytes(RACE)
    result = invoke("check", name, "--diff", "--no-cache")
    assert result.exit_code == 1 and "\x1b" not in result.stdout
    assert result.stdout.startswith('--- "a/w\\033[2J.yaml"\n+++ "b/w\\033[2J.yaml"\n@@ ')
    if shutil.which("git"):  # git reads the quoted name back, and applies the same change
        subprocess.run(["git", "apply", "-p1", "--unsafe-paths"], input=result.stdout_bytes, cwd=project, check=True)
        assert (project / name).read_bytes() == RACE_FIXED
