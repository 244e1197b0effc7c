"""What a container's commands do with its Linkerd proxy (reference §3.3, §11.3): wait for it with
`linkerd-await`, and release it when the work is done with `linkerd-await --shutdown` (`-S`) or a
`POST localhost:4191/shutdown`.

Read with the same shell pieces as Istio's quit calls (`shell`, `quitcalls`): exec-form lists and
`sh -c` scripts, each call placed where it is written. `linkerd-await` with `LINKERD_AWAIT_DISABLED` or
`LINKERD_DISABLED` set to anything non-empty in the container's env runs the program straight away:
no wait and no /shutdown (linkerd/linkerd-await `src/main.rs`).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from meshlint.findings import Position
from meshlint.mesh.facts.quitcalls import _is_post, _tool
from meshlint.mesh.facts.shell import is_shell, segment_position, segments, words
from meshlint.mesh.linkerd import ADMIN_PORT, AWAIT_DISABLING_ENV
from meshlint.mesh.setting import Setting
from meshlint.model.pod import Container

AWAIT_PROGRAM = "linkerd-await"
_SHUTDOWN_URL = re.compile(rf"(?:https?://)?(?:localhost|127\.0\.0\.1|\[::1\]):{ADMIN_PORT}/shutdown\b")
_MARKERS = (AWAIT_PROGRAM, "/shutdown")


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


def linkerd_calls(container: Container) -> list[LinkerdCall]:
    """The container's `linkerd-await` wrappers and calls to its proxy's /shutdown."""
    argv = container.argv
    texts = [n.text or "" for n in argv]
    if not any(marker in text for text in texts for marker in _MARKERS):
        return []
    if not (texts and is_shell(texts[0])) and not any("\n" in t for t in texts):
        call = _call(container, texts, " ".join(texts), argv[0].pos)
        return [call] if call is not None else []
    found = []
    for node, text in zip(argv, texts, strict=False):
        if not any(marker in text for marker in _MARKERS):
            continue
        for start, end, _ in segments(text):
            segment = text[start:end]
            call = _call(container, words(segment), segment, segment_position(node, text, start))
            if call is not None:
                found.append(call)
    return found


def _call(container: Container, argv: list[str], command: str, position: Position) -> LinkerdCall | None:
    tool, args = _tool(argv)
    if tool == AWAIT_PROGRAM:
        shutdown = False
        for arg in args:
            if arg == "--" or not arg.startswith("-"):
                break  # the program and its own arguments follow
            shutdown = shutdown or arg in ("--shutdown", "-S")
        return LinkerdCall(container, command.strip(), position, tool, True, shutdown, True, _disabled_by(container))
    if _SHUTDOWN_URL.search(command):
        return LinkerdCall(container, command.strip(), position, tool, False, True, _is_post(tool, args, argv), None)
    return None


def _disabled_by(container: Container) -> Setting[str] | None:
    """LINKERD_AWAIT_DISABLED or LINKERD_DISABLED set to a non-empty value in the container's env."""
    for item in container.node.get("env").elements():
        name = item.get("name").text
        value = item.get("value")
        if name in AWAIT_DISABLING_ENV and (value.text or "") != "":
            return Setting(value.text or "", value.pos, f"{name}={value.text}", local=True)
    return None
