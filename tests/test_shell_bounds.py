"""The shell reader and Kubernetes' `$(VAR)` expansion have bounds, not recursion or blow-ups: a long
`&&` chain is read step by step in a loop; a construct nested deeper than `MAX_NESTING` is opaque;
an expansion that would grow past its bound, or go too many variables deep, is cut, and the
evidence says so. Each reproducer used to end the run with an internal error, or never end it."""

from __future__ import annotations

import tracemalloc

import pytest
from hostile import QUIT, and_chain, deployment, doubling_env, job, nested_substitutions

from helpers import lint_text
from meshlint.mesh.facts.commands import CommandModel
from meshlint.mesh.facts.shellwords import MAX_EXPANSION_DEPTH, MAX_EXPANSION_GROWTH, MAX_NESTING, kubernetes_expand
from meshlint.model.pod import pod_templates
from meshlint.model.resource import resources_of
from meshlint.source.loader import load_text


def findings(report):
    return [(f.code, str(f.severity), f.line, f.column, f.message) for f in report.findings]


def commands(text: str):
    template = pod_templates(next(resources_of(load_text("job.yaml", text).documents[0])))[0]
    return CommandModel(template.containers[0]).run


def test_a_long_and_chain_reads_as_a_short_one(tmp_path):
    assert findings(lint_text(tmp_path, job(and_chain(5000)), name="long.yaml")) == findings(lint_text(tmp_path, job(and_chain(2)), name="short.yaml"))


def test_each_step_of_a_long_chain_runs_only_after_the_steps_before_it():
    steps = commands(job(and_chain(3000)))
    assert len(steps) == 3001 and steps[0].guard is None and steps[-1].guard is None  # the quit call follows `;`
    assert steps[2].guard == "it runs only after `./step && ./step &&`, so a failing `./step && ./step` skips it"
    assert steps[-2].guard == f"it runs only after `{' && '.join(['./step'] * 9)[:57]}... &&`, so a failing `{' && '.join(['./step'] * 9)[:57]}...` skips it"


def test_a_long_or_exit_chain_still_ends_the_script_on_failure():
    script = "set +e; " + " || ".join(["./try"] * 2000) + " || exit 1; " + QUIT
    steps = commands(job(script))
    assert steps[-1].guard == f"it runs after `{' || '.join(['./try'] * 12)[:57]}...` (line 16), and `{' || '.join(['./try'] * 12)[:57]}... || exit` ends the script when that fails"


def test_deeply_nested_substitutions_read_as_a_few(tmp_path):
    deep = findings(lint_text(tmp_path, job(nested_substitutions(300)), name="deep.yaml"))
    assert deep == findings(lint_text(tmp_path, job(nested_substitutions(3)), name="few.yaml"))


# Deep enough to pass the bound; those with braces stay below the depth at which the loader stops
# reading a document (it counts brackets, even inside a string).
@pytest.mark.parametrize(
    ("shape", "deep"),
    [
        (lambda n: "( " * n + QUIT + " )" * n, 1000),
        (lambda n: "echo " + "$(" * n + QUIT + ")" * n, 1000),
        (lambda n: "if ./check; then " * n + QUIT + "; fi" * n, 1000),
        (lambda n: "{ " * n + QUIT + "; }" * n, 150),
        (lambda n: "while ./check; do " * n + QUIT + "; done" * n, 1000),
        (lambda n: "sh -c '" * (n > 0) + QUIT + "'" * (n > 0), 1),
    ],
    ids=["subshell", "substitution", "if", "group", "loop", "nested-shell"],
)
def test_a_construct_nested_past_the_bound_is_opaque(shape, deep):
    assert "curl" in [c.program for c in commands(job(shape(MAX_NESTING // 8)))]
    assert "curl" not in [c.program for c in commands(job(shape(deep)))] or deep == 1


def test_words_nested_past_the_bound_are_not_known():
    nested = "echo " + '"${A:-' * 150 + "x" + '}"' * 150
    (echo,) = commands(job(nested))
    assert [w.known for w in echo.words] == [True, False]
    (echo,) = commands(job("echo " + '"${A:-' * 10 + "x" + '}"' * 10))
    assert [(w.text, w.known) for w in echo.words] == [("echo", True), ("x", True)]


def test_a_shell_variable_that_doubles_stops_being_known():
    script = "A=http://db.example.com:5432/; " + 'A="$A$A"; ' * 60 + 'psql "$A"'
    (*_, psql) = commands(job(script))
    assert (psql.words[1].text, psql.words[1].known) == ("$A", False)


def test_kubernetes_expansion_is_cut_at_its_growth_bound():
    values = {"A": "a" * 3000}
    expanded = kubernetes_expand("x$(A)$(A)$(B)", values.get)
    assert expanded == ("x" + "a" * 3000 + "$(A)$(B)", False, 1, f"its $(VAR) expansion was cut at {MAX_EXPANSION_GROWTH} characters more than written")


def test_kubernetes_expansion_is_cut_past_its_depth_bound():
    depths = {"A": MAX_EXPANSION_DEPTH - 1, "B": MAX_EXPANSION_DEPTH}
    assert kubernetes_expand("$(A)", {"A": "a"}.get, depths.__getitem__) == ("a", True, MAX_EXPANSION_DEPTH, None)
    expanded = kubernetes_expand("$(B)", {"B": "b"}.get, depths.__getitem__)
    assert expanded == ("$(B)", False, 0, f"its $(VAR) expansion was cut: references go more than {MAX_EXPANSION_DEPTH} variables deep")


def ml101(tmp_path, env: list[tuple[str, str]]) -> list[tuple[str, str, int, int, str]]:
    entries = ", ".join(f"{{name: {name}, value: {value!r}}}" for name, value in env)
    return findings(lint_text(tmp_path, deployment({"sidecar.istio.io/inject": "true"}, f"env: [{entries}]")))


CLASSIC = (
    "Deployment d can start before its istio-proxy sidecar is ready (injection assumed: namespace unknown): "
    "classic sidecar (Istio/Kubernetes versions unknown), holdApplicationUntilProxyStarts is false (default); "
)


def test_a_doubling_env_chain_ends_and_its_evidence_says_it_was_cut(tmp_path):
    env = [("V0", "x" * 100)] + [(f"V{i}", f"$(V{i - 1})$(V{i - 1})") for i in range(1, 6)] + [("DB_URL", "$(V5)$(V5)")]
    assert ml101(tmp_path, env) == [
        ("ML101", "error", 6, 5, CLASSIC + f"it calls out at startup: env DB_URL; its $(VAR) expansion was cut at {MAX_EXPANSION_GROWTH} characters more than written (line 10)")
    ]


def test_an_env_chain_too_deep_is_cut_and_its_evidence_says_so(tmp_path):
    env = [("V0", "x")] + [(f"V{i}", f"$(V{i - 1})x") for i in range(1, MAX_EXPANSION_DEPTH + 1)] + [("DB_URL", f"$(V{MAX_EXPANSION_DEPTH})")]
    assert ml101(tmp_path, env) == [
        ("ML101", "error", 6, 5, CLASSIC + f"it calls out at startup: env DB_URL; its $(VAR) expansion was cut: references go more than {MAX_EXPANSION_DEPTH} variables deep (line 10)")
    ]


def peak_memory(text: str, tmp_path) -> int:
    tracemalloc.start()
    try:
        lint_text(tmp_path, text)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.slow
def test_memory_of_a_long_chain_grows_with_its_length_not_its_square(tmp_path):
    """Measured, not timed: four times the steps take about four times the memory (the syntax tree
    cuts each node's text from the script when asked, so nested lists do not hold it over and over)."""
    short, long = peak_memory(job(and_chain(1000)), tmp_path), peak_memory(job(and_chain(4000)), tmp_path)
    assert long < 6 * short


def test_forty_doubling_levels_end_with_the_evidence_below_the_cut(tmp_path):
    """2**40 copies if expanded whole: the run used to never end."""
    values = ["postgres://db.example.com:5432/" * 2 ** i for i in range(5)]
    evidence = [f"env PEER{i}_URL={value[:57]}{'...' if len(value) > 57 else ''} (line {15 + i})" for i, value in enumerate(values)]
    assert findings(lint_text(tmp_path, job("./work", doubling_env(40)))) == [
        ("ML101", "error", 6, 5, "Job j can start before its istio-proxy sidecar is ready (injection assumed: namespace unknown): classic sidecar "
         f"(Istio/Kubernetes versions unknown), holdApplicationUntilProxyStarts is false (default); it calls out at startup: {', '.join(evidence[:4])}, {evidence[4]} and 7 more"),
        ("ML201", "error", 6, 5, "Job j never completes (injection assumed: namespace unknown): its classic istio-proxy sidecar keeps running after container 'job' exits, "
         "because nothing POSTs to localhost:15020/quitquitquit"),
    ]
