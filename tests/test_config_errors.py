"""A config that cannot run is one line on stderr and exit 2, naming the file, the line where it is known,
the key, and the name most likely meant; a lone string stands for a list of one wherever a list is asked."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from helpers import RACE
from meshlint.cli import main


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "race.yaml").write_text(RACE)
    return tmp_path


def check(*args):
    result = CliRunner().invoke(main, ["check", "race.yaml", "--format", "concise", "--no-cache", *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(
    "text, message",
    [
        ("fail-on: error\nselct: [ML1]\n", ".meshlint.yaml:2: selct: unknown setting; did you mean select?"),
        ("mesh:\n  contxt: [ns.yaml]\n", ".meshlint.yaml:2: mesh.contxt: unknown setting; did you mean context?"),
        ("select:\n  - ML1\n  - startup-rac\n", ".meshlint.yaml:1: select: unknown rule selector 'startup-rac'; did you mean startup-race?"),
        ("extend-ignore: ML1O1\n", ".meshlint.yaml:1: extend-ignore: unknown rule selector 'ML1O1'; did you mean ML101?"),
        ("ignore: [ML9]\n", ".meshlint.yaml:1: ignore: unknown rule selector 'ML9': not a rule code, code prefix or rule name"),
        ("\nseverity:\n  startup-rase: error\n", ".meshlint.yaml:3: severity.startup-rase: unknown rule; did you mean startup-race?"),
        ("rules:\n  ML999: {}\n", ".meshlint.yaml:2: rules.ML999: unknown rule; expected a rule code or name"),
        ("rules:\n  startup-race:\n    require-evidense: true\n", ".meshlint.yaml:3: rules.startup-race.require-evidense: unknown option; did you mean require-evidence?"),
        ("mesh:\n  context:\n    - ns.yaml\n    - gone.yaml\n", ".meshlint.yaml:4: mesh.context: gone.yaml: cannot read mesh context file: No such file or directory"),
        ("baseline: gone.json\n", ".meshlint.yaml:1: baseline: gone.json: cannot read the baseline: No such file or directory"),
        ("exclude: 5\n", ".meshlint.yaml:1: exclude: 5 is not valid; expected a list of strings, or one string"),
    ],
)
def test_a_config_error_names_file_line_and_key(project, text, message):
    (project / "ns.yaml").write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n")
    (project / ".meshlint.yaml").write_text(text)
    assert check() == (2, "", f"meshlint: error: {message}\n")


def test_an_error_in_an_extended_config_names_that_file(project):
    (project / "base").mkdir()
    (project / "base" / "meshlint.yaml").write_text("fail-on: error\nselect: [startup]\n")
    (project / ".meshlint.yaml").write_text("extends: base/meshlint.yaml\n")
    assert check() == (2, "", "meshlint: error: base/meshlint.yaml:2: select: unknown rule selector 'startup'; did you mean startup-race?\n")


def test_an_extending_configs_own_setting_is_the_one_named(project):
    (project / "base.yaml").write_text("fail-on: error\nbaseline: old.json\n")
    (project / ".meshlint.yaml").write_text("extends: base.yaml\n\nbaseline: new.json\n")
    assert check() == (2, "", "meshlint: error: .meshlint.yaml:3: baseline: new.json: cannot read the baseline: No such file or directory\n")


def test_pyproject_errors_name_the_file_and_key_without_a_line(project):
    (project / "pyproject.toml").write_text('[tool.meshlint]\nignore = ["startup-rac"]\n')
    assert check() == (2, "", "meshlint: error: pyproject.toml: ignore: unknown rule selector 'startup-rac'; did you mean startup-race?\n")


@pytest.mark.parametrize(
    "option, message",
    [
        ("--select", "--select: unknown rule selector 'startup-rac'; did you mean startup-race?"),
        ("--extend-ignore", "--extend-ignore: unknown rule selector 'startup-rac'; did you mean startup-race?"),
    ],
)
def test_a_command_line_selector_is_named_by_its_option(project, option, message):
    (project / ".meshlint.yaml").write_text("select: [ML1]\n")
    assert check(option, "ML1,startup-rac") == (2, "", f"meshlint: error: {message}\n")


def test_a_baseline_given_on_the_command_line_is_named_alone(project):
    (project / ".meshlint.yaml").write_text("baseline: other.json\n")
    assert check("--baseline", "gone.json") == (2, "", "meshlint: error: gone.json: cannot read the baseline: No such file or directory\n")


RACE_FINDING = "race.yaml:7:5: warning ML100 [*] startup-race-mesh-wide: Deployment web can start before its istio-proxy sidecar is ready: classic sidecar (Istio/Kubernetes versions unknown), holdApplicationUntilProxyStarts is false (default); it names peers in env: env API_URL=http://api:8080 (line 13); nothing shows a call out at startup that needs the hold on this workload alone: set it mesh-wide\n"


NAMESPACE = "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop, labels: {istio-injection: disabled}}\n"
IN_SHOP = RACE.replace("  name: web\n", "  name: web\n  namespace: shop\n")


@pytest.mark.parametrize(
    "lone, listed, manifest, code",
    [
        ("select: ML3\n", "select: [ML3]\n", RACE, 0),
        ('exclude: "race.yaml"\n', 'exclude: ["race.yaml"]\n', RACE, 0),
        ("mesh: {context: platform/ns.yaml}\n", "mesh: {context: [platform/ns.yaml]}\n", IN_SHOP, 0),  # the Namespace disables injection
        ("mesh: {default-injection: disabled, injected-namespaces: shop}\n", "mesh: {default-injection: disabled, injected-namespaces: [shop]}\n",
         IN_SHOP.replace(", sidecar.istio.io/inject: \"true\"", ""), 1),
    ],
    ids=["select", "exclude", "mesh.context", "mesh.injected-namespaces"],
)
def test_a_lone_string_is_a_list_of_one_for_every_list_setting(project, lone, listed, manifest, code):
    (project / "platform").mkdir()
    (project / "platform" / "ns.yaml").write_text(NAMESPACE)
    (project / "race.yaml").write_text(manifest)
    assert check()[0] == 1 - code  # without the setting, the other way
    results = []
    for text in (lone, listed):
        (project / ".meshlint.yaml").write_text(text)
        results.append(check())
    assert results[0] == results[1]
    assert results[0][0] == code


def test_a_lone_string_selects_as_a_list_does(project):
    (project / ".meshlint.yaml").write_text("select: ML1\n")
    assert check() == (1, RACE_FINDING, "")
