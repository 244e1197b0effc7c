"""How long a container's preStop hook sleeps before the container gets SIGTERM (reference §4.2).

The grace-period countdown starts before preStop runs, so a preStop sleep spends the pod's grace
period, and with a classic sidecar it runs while istio-proxy is already draining. Read from the
three forms seen in manifests: exec `sleep N` (or `/bin/sleep N`), a shell script that sleeps
(`sh -c "sleep N && nginx -s quit"`), and the Kubernetes `preStop.sleep.seconds` action (1.29+).
A sleep whose length cannot be known statically (`sleep $DELAY`) is not a fact and is left out.
"""

from __future__ import annotations

import math
import re
from typing import NamedTuple

from meshlint.findings import Position
from meshlint.mesh.facts.shell import is_shell, segment_position, segments, words
from meshlint.model.pod import Container
from meshlint.source.document import Node

# GNU and busybox sleep: a number with an optional s/m/h/d suffix; several arguments add up.
_SLEEP_ARG = re.compile(r"^([0-9]+(?:\.[0-9]*)?|\.[0-9]+)([smhd]?)$")
_SUFFIX = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


class PreStopSleep(NamedTuple):
    container: Container
    seconds: float  # math.inf for `sleep infinity`
    position: Position  # the seconds value, or the `sleep` command inside a script
    form: str  # as written: `sleep 10`, `sleep: {seconds: 10}`
    action: bool = False  # the Kubernetes `preStop.sleep` action (validated by the API server), not a command

    @property
    def text(self) -> str:
        return "forever" if math.isinf(self.seconds) else f"{self.seconds:g}s"

    def __str__(self) -> str:
        return f"{self.container.label} preStop `{self.form}` waits {self.text}"


def prestop_sleep(container: Container) -> PreStopSleep | None:
    """The container's preStop sleep, if it has one whose length is written in the manifest."""
    prestop = container.node.path("lifecycle", "preStop")
    seconds = prestop.path("sleep", "seconds")
    if seconds.exists:
        value = seconds.value
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return PreStopSleep(container, float(value), seconds.pos, f"sleep: {{seconds: {value}}}", action=True)
        return None
    argv = list(prestop.path("exec", "command").elements())
    written = [node.text for node in argv]
    texts = [t for t in written if t is not None]
    if not argv or len(texts) != len(written):
        return None
    if is_shell(texts[0]):
        script_at = next((i + 1 for i, t in enumerate(texts[:-1]) if t.startswith("-") and "c" in t), None)
        if script_at is None:
            return None
        return _script_sleep(container, argv[script_at], texts[script_at])
    if _is_sleep(texts[0]):
        total = _sleep_seconds(texts[1:])
        if total is not None:
            return PreStopSleep(container, total, argv[1].pos if len(argv) > 1 else argv[0].pos, " ".join(texts))
    return None


def _script_sleep(container: Container, host: Node, script: str) -> PreStopSleep | None:
    """Sleeps in a script run one after another, so they add up; the first one says where."""
    total, first, forms = 0.0, None, []
    for start, end, _separator in segments(script):
        command = words(script[start:end])
        if not command or not _is_sleep(command[0]):
            continue
        seconds = _sleep_seconds(command[1:])
        if seconds is None:
            return None  # `sleep $DELAY`: the length is not in the manifest
        total += seconds
        forms.append(" ".join(command))
        first = first or segment_position(host, script, start)
    if first is None:
        return None
    return PreStopSleep(container, total, first, "; ".join(forms) if len(forms) > 1 else forms[0])


def _is_sleep(word: str) -> bool:
    return word.rsplit("/", 1)[-1] == "sleep"


def _sleep_seconds(args: list[str]) -> float | None:
    if not args:
        return None
    total = 0.0
    for arg in args:
        if arg in ("infinity", "inf"):
            return math.inf
        match = _SLEEP_ARG.match(arg)
        if not match:
            return None
        total += float(match.group(1)) * _SUFFIX[match.group(2)]
    return total
