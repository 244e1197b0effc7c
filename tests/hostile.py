"""Manifests shaped to break a reader: numbers no parser should take, scripts nested or chained past
any real one, `$(VAR)` values that double at each step. Shared by the tests of each bound and by the
property tests that generate such shapes (test_robustness.py)."""

from __future__ import annotations

import json

# Digits `str.isdigit` takes and Go's strconv does not: superscript, Arabic-Indic, full-width.
ODD_DIGITS = ("²", "٣", "８", "１５０２０")
HUGE = "9" * 5000  # past Python's int-conversion limit (4300 digits)


def job(command: str, env: list[tuple[str, str]] = ()) -> str:
    """A meshed Job whose one container runs `command` with `sh -c` (in a block scalar, which holds any text)."""
    entries = "".join(f"\n            - {{name: {name}, value: {json.dumps(value)}}}" for name, value in env)
    return (
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    metadata:\n"
        '      annotations: {sidecar.istio.io/inject: "true"}\n    spec:\n      restartPolicy: Never\n      containers:\n'
        "        - name: job\n          image: job\n          command: [sh, -c]\n"
        + (f"          env:{entries}\n" if env else "")
        + "          args:\n            - |\n" + "".join(f"              {line}\n" for line in command.split("\n"))
    )


def deployment(annotations: dict[str, str], container: str = "") -> str:
    """A Deployment with these pod annotations and, optionally, more of its container (`container`
    is YAML flow-mapping entries, e.g. `readinessProbe: {...}`)."""
    extra = f", {container}" if container else ""
    return (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    metadata:\n"
        f"      annotations: {json.dumps(annotations)}\n    spec:\n      containers:\n"
        f"        - {{name: app, image: app{extra}}}\n"
    )


QUIT = "curl -XPOST localhost:15020/quitquitquit"


def and_chain(steps: int) -> str:
    return " && ".join(["./step"] * steps) + f"; {QUIT}"


def nested_substitutions(levels: int) -> str:
    return "echo " + "$(" * levels + "x" + ")" * levels + f"; {QUIT}"


def doubling_env(levels: int) -> list[tuple[str, str]]:
    """`$(VAR)` references that double the value at each level: 2**levels copies, if expanded whole."""
    env = [("PEER0_URL", "postgres://db.example.com:5432/")]  # a connection string: strong evidence
    env += [(f"PEER{i}_URL", f"$(PEER{i - 1}_URL)$(PEER{i - 1}_URL)") for i in range(1, levels + 1)]
    return env
