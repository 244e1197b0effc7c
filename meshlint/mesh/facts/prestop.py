"""How long a container's preStop hook sleeps before the container gets SIGTERM (reference §4.2).

The grace-period countdown starts before preStop runs, so a preStop sleep spends the pod's grace
period, and with a classic sidecar it runs while istio-proxy is already draining. Read from the
Kubernetes `preStop.sleep.seconds` action (1.29+) and from the hook's command in the command model:
exec `sleep N` (or `/bin/sleep N`), or a script whose sleeps run one after another and add up
(`sh -c "sleep 5 && nginx -s quit"`). A sleep that may not run (an `if` branch, a loop body, in the
background) does not count; one whose length the manifest does not say (`sleep $DELAY` with DELAY
set nowhere) makes the total unknown, and then it is not a fact.
"""

import math
import re
from typing import NamedTuple

from meshlint import numbers
from meshlint.findings import Position
from meshlint.mesh.facts.shellwords import Command
from meshlint.model.pod import Container

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


def prestop_sleep(container: Container, commands: list[Command]) -> PreStopSleep | None:
    """The container's preStop sleep, if it has one whose length is written in the manifest;
    `commands` are the hook's command as the command model reads it."""
    seconds = container.node.path("lifecycle", "preStop", "sleep", "seconds")
    if seconds.exists:
        value = seconds.value
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= numbers.INT64_MAX:
            return PreStopSleep(container, float(value), seconds.pos, f"sleep: {{seconds: {value}}}", action=True)
        return None
    total, first, forms = 0.0, None, []
    for command in commands:
        if command.program != "sleep" or not command.runs or command.trap or command.conditional or command.background:
            continue
        argv = command.work
        length = _sleep_seconds([w.text for w in argv[1:]]) if all(w.known for w in argv[1:]) else None
        if length is None:
            return None  # `sleep $DELAY`: the length is not in the manifest
        total += length
        if command.exec_form:
            first = first or (argv[1].position if len(argv) > 1 else argv[0].position)
            forms.append(" ".join(w.text for w in command.words))
        else:
            first = first or command.position
            forms.append(" ".join(w.text for w in argv))
    if first is None:
        return None
    return PreStopSleep(container, total, first, "; ".join(forms))


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

