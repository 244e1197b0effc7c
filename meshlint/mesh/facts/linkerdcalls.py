"""What a container's commands do with its Linkerd proxy (reference §3.3, §11.3): wait for it with
`linkerd-await`, and release it when the work is done with `linkerd-await --shutdown` (`-S`) or a
`POST localhost:4191/shutdown`.

Read from the container's command model (`commands`): exec-form lists and scripts as a shell runs
them, each call placed where it is written. `linkerd-await` with `LINKERD_AWAIT_DISABLED` or
`LINKERD_DISABLED` set to anything non-empty in the container's env runs the program straight away:
no wait and no /shutdown (linkerd/linkerd-await `src/main.rs`).
"""

from typing import TYPE_CHECKING, NamedTuple

from meshlint.findings import Position
from meshlint.mesh.facts.shellwords import basename
from meshlint.mesh.linkerd import AWAIT_DISABLING_ENV
from meshlint.mesh.setting import Setting
from meshlint.model.pod import Container

if TYPE_CHECKING:
    from meshlint.mesh.facts.commands import CommandModel

AWAIT_PROGRAM = "linkerd-await"


class LinkerdCall(NamedTuple):
    container: Container
    command: str  # the simple command, as written
    position: Position
    tool: str  # linkerd-await, curl, wget, or the program
    waits: bool  # linkerd-await: the program starts once the proxy is ready
    shutdown: bool  # tells the proxy to shut down when the work ends
    is_post: bool  # the endpoint answers anything but POST with 405
    disabled_by: Setting[str] | None  # the env variable that makes linkerd-await skip both

    @property
    def releases_proxy(self) -> bool:
        """Makes the proxy exit once the work ends (whatever the program's exit code, for linkerd-await)."""
        return self.shutdown and self.is_post and self.disabled_by is None


def linkerd_calls(model: "CommandModel") -> list[LinkerdCall]:
    """The container's `linkerd-await` wrappers (with or without --shutdown) and its other calls to
    the proxy's /shutdown, read from its command model."""
    container = model.container
    if not model.mentions(AWAIT_PROGRAM, "/shutdown"):
        return []
    found = []
    for command in model.run:
        argv = command.argv  # exec, env, timeout... removed; linkerd-await kept
        if command.dropped is not None or not argv or basename(argv[0].text) != AWAIT_PROGRAM:
            continue
        shutdown = False
        for word in argv[1:]:
            if word.text == "--" or not word.text.startswith("-"):
                break  # the program and its own arguments follow
            shutdown = shutdown or word.text in ("--shutdown", "-S")
        position = argv[0].position if command.exec_form else command.position
        found.append(LinkerdCall(container, command.written.strip(), position, AWAIT_PROGRAM, True, shutdown, True, _disabled_by(container)))
    for call in model.linkerd_shutdown_calls:
        if call.tool != AWAIT_PROGRAM:
            found.append(LinkerdCall(container, call.command, call.position, call.tool, False, True, call.is_post, None))
    return sorted(found, key=lambda c: (c.position.line, c.position.column))


def _disabled_by(container: Container) -> Setting[str] | None:
    """LINKERD_AWAIT_DISABLED or LINKERD_DISABLED set to a non-empty value in the container's env."""
    for item in container.node.get("env").elements():
        name = item.get("name").text
        value = item.get("value")
        if name in AWAIT_DISABLING_ENV and (value.text or "") != "":
            return Setting(value.text or "", value.pos, f"{name}={value.text}", local=True)
    return None
