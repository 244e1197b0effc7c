"""Which files a run reads: .gitignore in walks, `exclude` on walked and named paths, Helm charts,
Kustomize patch fragments."""

from __future__ import annotations

import os
import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meshlint.source import inputs
from meshlint.source.inputs import helm_chart_of
from meshlint.source.kustomize import patch_fragments
from meshlint.source.walk import collect


def tree(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def walked(root, *paths, exclude=(), base=None):
    found = collect([str(root / p) for p in paths] or [str(root)], exclude, str(base or root)).files
    return sorted(os.path.relpath(f, root) for f in found)


def test_walk_respects_gitignore_files_from_the_repository_top_down(tmp_path):
    tree(tmp_path, {
        ".git/HEAD": "ref: refs/heads/main\n",
        ".gitignore": "build/\n*.generated.yaml\n",
        "app.yaml": "",
        "build/out.yaml": "",
        "x.generated.yaml": "",
        "charts/.gitignore": "!keep.generated.yaml\nrendered/\n",
        "charts/keep.generated.yaml": "",
        "charts/rendered/a.yaml": "",
        "charts/values.yaml": "",
    })
    assert walked(tmp_path) == ["app.yaml", "charts/keep.generated.yaml", "charts/values.yaml"]
    # Walking a sub-folder still honours the .gitignore files above it, up to the repository's top.
    assert walked(tmp_path / "charts") == ["keep.generated.yaml", "values.yaml"]


def test_walks_pass_over_meshlints_own_config_files(tmp_path):
    # A nested .meshlint.yaml is configuration, not an input: it is neither checked nor counted as skipped.
    tree(tmp_path, {".meshlint.yaml": "fail-on: error\n", "apps/.meshlint.yml": "mesh: {default-injection: disabled}\n", "apps/web.yaml": "", ".ci.yaml": ""})
    assert walked(tmp_path) == [".ci.yaml", "apps/web.yaml"]


def test_gitignore_outside_a_repository_governs_only_its_own_folder(tmp_path):
    tree(tmp_path, {".gitignore": "*.yaml\n", "sub/a.yaml": "", "b.yaml": ""})
    assert walked(tmp_path / "sub") == ["a.yaml"]
    assert walked(tmp_path) == []


def test_exclude_applies_to_named_files_too(tmp_path):
    tree(tmp_path, {"charts/x/templates/a.yaml": "", "apps/b.yaml": ""})
    exclude = ("charts/**",)
    assert walked(tmp_path, exclude=exclude) == ["apps/b.yaml"]
    assert walked(tmp_path, "charts/x/templates/a.yaml", "apps/b.yaml", exclude=exclude) == ["apps/b.yaml"]


def test_exclude_patterns_are_gitwildmatch(tmp_path):
    tree(tmp_path, {"a/kustomization.yaml": "", "a/b/kustomization.yaml": "", "a/app.yaml": "", "skip.yaml": ""})
    assert walked(tmp_path, exclude=("kustomization.yaml", "/skip.yaml")) == ["a/app.yaml"]


def test_helm_chart_templates_are_known_by_their_chart(tmp_path, monkeypatch):
    tree(tmp_path, {"c/Chart.yaml": "name: c\n", "c/templates/d.yaml": "", "c/templates/sub/e.yaml": "", "c/values.yaml": "", "templates/f.yaml": ""})
    monkeypatch.chdir(tmp_path)
    assert [helm_chart_of(p) for p in ("c/templates/d.yaml", "c/templates/sub/e.yaml", "c/values.yaml", "templates/f.yaml")] == ["c", "c", None, None]
    assert helm_chart_of(str(tmp_path / "c/templates/d.yaml")) == str(tmp_path / "c")


def test_helm_chart_answers_are_kept_a_folder_each_within_a_run(tmp_path, monkeypatch):
    tree(tmp_path, {"x/c/Chart.yaml": "name: c\n", "x/c/templates/d.yaml": "", "x/c/templates/e.yaml": "", "y/c/templates/d.yaml": ""})
    monkeypatch.chdir(tmp_path / "x")
    with inputs.at_work():
        assert [helm_chart_of(p) for p in ("c/templates/d.yaml", "c/templates/e.yaml", "./c/templates/e.yaml")] == ["c", "c", "c"]
        assert helm_chart_of(str(tmp_path / "x/c/templates/e.yaml")) == str(tmp_path / "x/c")  # spelled absolute: answered absolute
    monkeypatch.chdir(tmp_path / "y")  # the same folder's spelling, in a tree without the chart
    with inputs.at_work():
        assert helm_chart_of("c/templates/d.yaml") is None


def test_kustomize_patch_fragments_from_every_patch_field(tmp_path, monkeypatch):
    tree(tmp_path, {
        "overlay/kustomization.yaml": (
            "resources: [../base]\n"
            "patchesStrategicMerge:\n  - replicas.yaml\n  - |-\n    apiVersion: apps/v1\n    kind: Deployment\n"
            "patches:\n  - path: ../patches/probe.yaml\n    target: {kind: Deployment}\n  - patch: '[]'\n"
            "patchesJson6902:\n  - path: json.yaml\n    target: {kind: Deployment, name: web}\n"
        ),
        "overlay/replicas.yaml": "", "overlay/json.yaml": "", "patches/probe.yaml": "", "base/app.yaml": "",
    })
    monkeypatch.chdir(tmp_path)
    expected = {os.path.realpath(p) for p in ("overlay/replicas.yaml", "overlay/json.yaml", "patches/probe.yaml")}
    assert patch_fragments(["overlay/kustomization.yaml", "base/app.yaml"]) == expected
    # A named file alone (pre-commit) finds the kustomization beside it.
    assert patch_fragments(["overlay/replicas.yaml"]) == expected


def test_read_gives_every_byte_of_files_of_any_size(tmp_path):
    # Read from the descriptor in chunks: empty, exactly one chunk, and one byte past several chunks
    # (a CRLF and a byte that is not UTF-8 among them: the bytes, not a decoded text).
    for size in (0, inputs._READ_SIZE, 3 * inputs._READ_SIZE + 1):
        path = tmp_path / f"f{size}.yaml"
        data = (b"a: 1\r\n\xff" * (size // 7 + 1))[:size]
        path.write_bytes(data)
        assert inputs.read(str(path)) == data


def test_read_raises_what_the_check_words_for_a_folder_or_a_missing_file(tmp_path):
    with pytest.raises(IsADirectoryError) as folder:
        inputs.read(str(tmp_path))
    assert folder.value.strerror == "Is a directory"
    with pytest.raises(FileNotFoundError) as missing:
        inputs.read(str(tmp_path / "gone.yaml"))
    assert missing.value.strerror == "No such file or directory"


@pytest.mark.parametrize(
    "path", ["a.yaml", "./a.yaml", "x/../a.yaml", "x//y/./a.yaml", "..", ".", "", "/", "//x/y", "/x/../y", "a/", "./", "./.", ".//a", "/a/b.yaml", "a/.b/c"]
)
def test_absolute_is_abspath_in_a_run_and_out_of_one(tmp_path, monkeypatch, path):
    monkeypatch.chdir(tmp_path)
    assert inputs.absolute(path) == os.path.abspath(path)
    with inputs.at_work():
        assert inputs.absolute(path) == os.path.abspath(path)
        assert inputs.cwd() == os.getcwd()


def test_the_working_directory_is_asked_again_once_a_run_is_over(tmp_path, monkeypatch):
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    monkeypatch.chdir(tmp_path / "one")
    with inputs.at_work():
        assert inputs.absolute("a.yaml") == str(tmp_path / "one" / "a.yaml")
    os.chdir(tmp_path / "two")
    assert inputs.absolute("a.yaml") == str(tmp_path / "two" / "a.yaml")
    with inputs.at_work():
        assert inputs.cwd() == str(tmp_path / "two")


def test_a_path_with_something_to_fold_is_made_absolute_once_per_run_and_anew_in_the_next(tmp_path, monkeypatch):
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    monkeypatch.chdir(tmp_path / "one")
    made = []
    monkeypatch.setattr(os.path, "normpath", lambda path, real=os.path.normpath: made.append(path) or real(path))
    with inputs.at_work():
        assert [inputs.absolute("x/../a.yaml") for _ in range(5)] == [str(tmp_path / "one" / "a.yaml")] * 5
        assert inputs.absolute("b/.hidden.yaml") == str(tmp_path / "one" / "b" / ".hidden.yaml")
    assert made == [str(tmp_path / "one" / "x" / ".." / "a.yaml"), str(tmp_path / "one" / "b" / ".hidden.yaml")]
    os.chdir(tmp_path / "two")
    with inputs.at_work():  # the same path, another working directory: not the last run's answer
        assert inputs.absolute("x/../a.yaml") == str(tmp_path / "two" / "a.yaml")


def test_a_path_with_nothing_to_fold_is_joined_as_it_is_and_kept_in_no_table(tmp_path, monkeypatch):
    """What a walk gives (`a/b.yaml`, `./a/b.yaml`, `/abs/a.yaml`) needs no normpath: a table of every
    file's answer stayed to the end of the run."""
    monkeypatch.chdir(tmp_path)
    made = []
    monkeypatch.setattr(os.path, "normpath", lambda path, real=os.path.normpath: made.append(path) or real(path))
    with inputs.at_work():
        assert inputs.absolute("a/b.yaml") == str(tmp_path / "a" / "b.yaml")
        assert inputs.absolute("././a/b.yaml") == str(tmp_path / "a" / "b.yaml")
        assert inputs.absolute(str(tmp_path / "c.yaml")) == str(tmp_path / "c.yaml")
        assert inputs._ABSOLUTE == {}
        # The resources of one file ask one after another and keep the answer: one string for all.
        assert inputs.absolute("a/b.yaml") is inputs.absolute("a/b.yaml")
    assert made == []
    (tmp_path / "two").mkdir()
    os.chdir(tmp_path / "two")
    with inputs.at_work():  # the last answer was the last run's
        assert inputs.absolute("a/b.yaml") == str(tmp_path / "two" / "a" / "b.yaml")


PIECES = ["a", "b.yaml", ".", "..", "", ".hidden", "..x", "x.", "-"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=6), st.booleans(), st.booleans())
def test_absolute_is_abspath_for_any_spelling_in_a_run(pieces, rooted, from_root):
    """Against abspath, for paths of every part normpath folds, from a folder and from `/`."""
    path = ("/" if rooted else "") + "/".join(pieces)
    where = "/" if from_root else os.path.dirname(os.path.abspath(__file__))
    before = os.getcwd()
    os.chdir(where)
    try:
        expected = os.path.abspath(path)
        with inputs.at_work():
            assert inputs.absolute(path) == expected
            assert inputs.absolute(path) == expected  # and again, from the table where it went there
        assert inputs.absolute(path) == expected
    finally:
        os.chdir(before)


def test_a_run_asks_the_system_for_its_working_directory_as_often_whatever_its_size(tmp_path, monkeypatch):
    """Every file's place, chart and config is made absolute, against the run's working directory:
    twice the files, no more questions."""
    from helpers import config_from
    from meshlint.engine.run import run
    from meshlint.registry import load_rules

    def asked_for(count):
        top = tmp_path / str(count)
        for n in range(count):
            tree(top, {f"apps/team{n % 4}/app{n}.yaml": f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app{n}\n  namespace: shop\nspec:\n  template:\n    metadata:\n      labels:\n        app: app{n}\n    spec:\n      containers:\n      - name: app\n        image: app\n        env: [{{name: API_URL, value: \"http://api:8080\"}}]\n"})
        tree(top, {"apps/namespace.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  labels:\n    istio-injection: enabled\n"})
        monkeypatch.chdir(top)
        asked = []
        with monkeypatch.context() as patched:
            patched.setattr(os, "getcwd", lambda real=os.getcwd: asked.append(1) or real())
            report = run(["apps"], config_from({"rules": {"ML100": {"require-source": False}}}), load_rules(), jobs=1)
        assert len(report.files) == count + 1
        # Meshed workloads, placed and fingerprinted: one mesh-wide startup race names each (said at the
        # first, as no mesh-wide configuration is in the run).
        assert [(f.code, len(f.related)) for f in report.findings] == [("ML100", count - 1)]
        return len(asked)

    assert asked_for(40) == asked_for(80)


def test_each_file_is_governed_by_its_nearest_config_however_its_path_is_spelled(tmp_path, monkeypatch):
    """`ConfigSet.for_file` keeps its answer by the path up to the file's name as written: spellings
    of one folder agree, and a run from another working directory asks again."""
    from meshlint.config import Config
    from meshlint.configset import ConfigSet

    for folder in ("one/sub", "two/sub", "one/plain"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "one" / ".meshlint.yaml").write_text("ignore: [ML101]\n")
    (tmp_path / "one" / "sub" / ".meshlint.yaml").write_text("ignore: [ML102]\n")
    monkeypatch.chdir(tmp_path)
    configs = ConfigSet(Config())

    def governing(path):  # each config by what it ignores; none for the top one
        config = configs.for_file(path)
        return None if config is configs.top else config.ignore[0]

    with inputs.at_work():
        spellings = ["one/sub/a.yaml", "./one/sub/a.yaml", "one//sub/a.yaml", "one/x/../sub/a.yaml", str(tmp_path / "one/sub/a.yaml")]
        assert {governing(path) for path in spellings} == {"ML102"}
        assert [governing(p) for p in ("one/plain/a.yaml", "one/a.yaml", "two/sub/a.yaml", "a.yaml")] == ["ML101", "ML101", None, None]
    os.chdir(tmp_path / "one")
    with inputs.at_work():  # the same spellings, from another folder: other files, other configs
        assert [governing(p) for p in ("sub/a.yaml", "a.yaml", "plain/a.yaml")] == ["ML102", "ML101", "ML101"]
    os.chdir(tmp_path / "two")
    with inputs.at_work():
        assert [governing(p) for p in ("sub/a.yaml", "a.yaml", "../one/sub/a.yaml")] == [None, None, "ML102"]


# --- what git ignores besides .gitignore: info/exclude and core.excludesFile -------------------------


@pytest.fixture
def git_home(tmp_path, monkeypatch):
    """A home and XDG config folder of the test's own, and no system config: git's files as a test sets them."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "xdg"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    return home


def test_info_exclude_and_the_default_excludes_file_are_honoured_in_a_repository(tmp_path, git_home):
    repo = tmp_path / "repo"
    tree(repo, {".git/HEAD": "ref: refs/heads/main\n", ".git/info/exclude": "local/\n/sub/d.yaml\n", "local/a.yaml": "", "b.yaml": "", "c.yaml": "", "sub/d.yaml": ""})
    tree(git_home, {"xdg/git/ignore": "c.yaml\n"})  # git's default excludes file under $XDG_CONFIG_HOME
    assert walked(repo) == ["b.yaml"]
    assert walked(repo / "sub") == []  # patterns are relative to the repository's top, as in git


def test_core_excludes_file_from_the_last_config_that_sets_it(tmp_path, git_home):
    repo = tmp_path / "repo"
    tree(repo, {".git/HEAD": "", "a.yaml": "", "b.yaml": "", "c.yaml": "", "d.yaml": ""})
    tree(git_home, {
        "xdg/git/ignore": "a.yaml\n",  # the default: not read once a config names another file
        "xdg/git/config": "[core]\n\texcludesFile = ~/from-xdg\n",
        ".gitconfig": '[user]\n\tname = x\n[Core] # a comment\n\tEXCLUDESFILE = "~/global ignore" ; why\n',
        "from-xdg": "b.yaml\n",
        "global ignore": "c.yaml\n",
    })
    assert walked(repo) == ["a.yaml", "b.yaml", "d.yaml"]  # ~/.gitconfig over the XDG config
    (repo / ".git/config").write_text('[core "other"]\n\texcludesfile = nothing\n[core]\n\tbare = false\n\texcludesfile = .git/mine\n')
    (repo / ".git/mine").write_text("d.yaml\n")
    assert walked(repo) == ["a.yaml", "b.yaml", "c.yaml"]  # the repository's config over both, relative to its top


def test_gitignore_wins_over_info_exclude_which_wins_over_the_excludes_file(tmp_path, git_home):
    repo = tmp_path / "repo"
    tree(repo, {
        ".git/HEAD": "",
        ".git/info/exclude": "*.yaml\n!kept-by-exclude.yaml\n",
        ".gitignore": "!kept-by-gitignore.yaml\n",
        "kept-by-exclude.yaml": "", "kept-by-gitignore.yaml": "", "dropped.yaml": "", "named.yaml": "",
    })
    tree(git_home, {"xdg/git/ignore": "!dropped.yaml\nkept-by-exclude.yaml\n"})
    assert walked(repo) == ["kept-by-exclude.yaml", "kept-by-gitignore.yaml"]
    assert walked(repo, "named.yaml") == ["named.yaml"]  # a named file is checked whatever git ignores


def test_a_linked_worktree_reads_the_main_repositorys_exclude_file(tmp_path, git_home):
    tree(tmp_path, {
        "main/.git/info/exclude": "x.yaml\n",
        "main/.git/worktrees/wt/commondir": "../..\n",
        "wt/.git": f"gitdir: {tmp_path / 'main/.git/worktrees/wt'}\n",
        "wt/x.yaml": "", "wt/y.yaml": "",
    })
    assert walked(tmp_path / "wt") == ["y.yaml"]


def test_outside_a_repository_neither_exclude_file_applies(tmp_path, git_home):
    tree(git_home, {"xdg/git/ignore": "a.yaml\n"})
    tree(tmp_path / "plain", {"a.yaml": ""})
    assert walked(tmp_path / "plain") == ["a.yaml"]


@pytest.mark.parametrize(("text", "value"), [
    ("[core]\n\texcludesFile = a b \n", "a b"),
    ('[core] excludesfile = "a\\"b" # c\n', 'a"b'),
    ("[core]\nexcludesfile=one\n[core]\nexcludesfile=two\n", "two"),
    ("[alias]\nexcludesfile = no\n", None),
    ("[core.x]\nexcludesfile = no\n", None),
])
def test_the_excludes_file_key_is_read_as_git_reads_it(text, value):
    from meshlint.source.gitexcludes import core_excludes_file

    assert core_excludes_file(text) == value


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_walk_leaves_out_what_git_itself_ignores(tmp_path, git_home):
    import subprocess

    repo = tmp_path / "repo"
    tree(repo, {
        "a.yaml": "", "b.yaml": "", "c.yaml": "", "d/e.yaml": "", "d/f.yaml": "", "g/h.yaml": "", "keep.yaml": "",
        ".gitignore": "!c.yaml\n", "d/.gitignore": "f.yaml\n",
    })
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    tree(repo, {".git/info/exclude": "b.yaml\nc.yaml\n/g/\n"})
    tree(git_home, {".gitconfig": "[core]\n\texcludesFile = ~/ignored\n", "ignored": "a.yaml\nkeep.yaml\n!keep.yaml\n"})
    listed = subprocess.run(["git", "-C", str(repo), "ls-files", "--others", "--exclude-standard"], capture_output=True, text=True, check=True)
    by_git = sorted(p for p in listed.stdout.splitlines() if p.endswith(".yaml"))
    assert by_git == ["c.yaml", "d/e.yaml", "keep.yaml"]
    assert walked(repo) == by_git


def test_a_walk_passes_testdata_folders_over_and_a_named_one_is_checked(tmp_path, monkeypatch):
    """linkerd/linkerd2 b24cd40 keeps `linkerd inject`'s inputs and golden outputs in cli/cmd/testdata: 13 of
    its 16 findings were there (a file broken on purpose, goldens that must stay as they are, and Istio
    advice through an Istio fixture beside them). Test data is never deployed."""
    from click.testing import CliRunner

    from meshlint.cli import main

    broken = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: 1\n"
    tree(tmp_path, {
        "deploy/app.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\n",
        "cli/cmd/testdata/inject.bad.input.yml": broken,
        "cli/cmd/testdata/nested/testdata/also.yaml": broken,
    })
    monkeypatch.chdir(tmp_path)

    def check(*paths: str) -> tuple[int, list[str]]:
        result = CliRunner().invoke(main, ["check", "--no-cache", "--format", "concise", "--statistics", *paths])
        return result.exit_code, [line for line in result.output.splitlines() if line.startswith(("cli/", "deploy/"))]

    assert check(".") == (0, [])
    said = CliRunner().invoke(main, ["check", "--no-cache", "."]).output.splitlines()[-1]
    assert said == (
        "1 file, 1 resource, 0 findings (0 error, 0 warning, 0 info), 0 suppressed, 0 skipped, 0 assumed meshed, "
        "1 testdata folder not walked (test inputs; name one to check it)"
    )
    code, lines = check("cli/cmd/testdata")  # named: walked, but not a testdata folder below it
    assert code == 1 and [line.split(" ")[0] for line in lines] == ["cli/cmd/testdata/inject.bad.input.yml:5:1:"]
    code, lines = check("cli/cmd/testdata/inject.bad.input.yml")
    assert code == 1 and len(lines) == 1
