"""The command model: what one container's commands do, read once and shared by every rule.

The container's run command (`command` + `args`, or an Argo script's `source`), its postStart and
preStop hooks are read as a shell runs them (`shell`), with the variables of its environment
(`environment`: `env`, `envFrom`, `configMapKeyRef`). From them come the facts the rules read:
the calls it makes before serving (startup evidence: ML101, ML102, ML402's workaround hint), the calls
that tell a proxy to exit (ML201-ML204, and the Linkerd rules), the preStop sleep (ML302, ML303).
Each is computed when first asked for, and its reader is imported then: a pre-commit run on a
manifest whose containers need none of them loads neither the readers nor the shell parser.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from meshlint.memo import cached_property
from meshlint.model.pod import Container

if TYPE_CHECKING:
    from meshlint.mesh.envsources import EnvSources
    from meshlint.mesh.facts.environment import Environment
    from meshlint.mesh.facts.evidence import Evidence
    from meshlint.mesh.facts.prestop import PreStopSleep
    from meshlint.mesh.facts.quitcalls import QuitCall
    from meshlint.mesh.facts.shellwords import Command

# Text without which a container makes no call to a proxy's quit or shutdown endpoint.
QUIT_MARKERS = ("quitquitquit", "shutdown", "scuttle", "linkerd-await")


class CommandModel:
    """One container's commands and the facts read from them."""

    def __init__(self, container: Container, sources: EnvSources | None = None, namespace: str = "", path: str = "") -> None:
        self.container = container
        self._sources, self._namespace, self._path = sources, namespace, path

    @cached_property
    def environment(self) -> Environment:
        from meshlint.mesh.facts.environment import Environment

        return Environment(self.container, self._sources, self._namespace, self._path)

    @cached_property
    def run(self) -> list[Command]:
        """The commands of the container's own process: `command` + `args` (and an Argo `source`)."""
        from meshlint.mesh.facts.shell import read_argv

        node = self.container.node
        argv = [(n, key) for key in ("command", "args") for n in node.get(key).elements()]
        source = node.get("source")
        return read_argv(argv, self.environment.value, source if isinstance(source.value, str) else None)

    @cached_property
    def post_start(self) -> list[Command]:
        return self._hook("postStart")

    @cached_property
    def pre_stop(self) -> list[Command]:
        return self._hook("preStop")

    def _hook(self, name: str) -> list[Command]:
        command = self.container.node.path("lifecycle", name, "exec", "command")
        if not command.is_list:
            return []
        from meshlint.mesh.facts.shell import read_argv

        return read_argv([(n, f"lifecycle.{name}") for n in command.elements()], self.environment.value)

    # --- facts ---

    @cached_property
    def shutdown_calls(self) -> list[QuitCall]:
        """Calls to Istio's /quitquitquit or Linkerd's /shutdown (with scuttle and linkerd-await)."""
        if not self.mentions(*QUIT_MARKERS):
            return []
        from meshlint.mesh.facts import quitcalls

        return quitcalls.shutdown_calls(self.container, self.run, self.environment)

    @property
    def quit_calls(self) -> list[QuitCall]:
        """The calls to Istio's /quitquitquit (whether they can work or not)."""
        return [c for c in self.shutdown_calls if c.to_istio]

    @property
    def linkerd_shutdown_calls(self) -> list[QuitCall]:
        """The calls to Linkerd's /shutdown: a POST to localhost:4191, `linkerd-await --shutdown`."""
        return [c for c in self.shutdown_calls if not c.to_istio]

    @cached_property
    def startup_calls(self) -> list[Evidence]:
        """What the container calls before it serves: env peers, client commands, dialled addresses."""
        from meshlint.mesh.facts import evidence

        return self._with_env(evidence.command_evidence(self.run + self.post_start, startup=False))

    @cached_property
    def race_calls(self) -> list[Evidence]:
        """The startup calls that can meet a proxy not yet ready: not those of a loop that retries until
        one answers, nor any after it or after a long `sleep` (wave-3 spec V2.2)."""
        from meshlint.mesh.facts import evidence

        # A postStart hook runs beside the main command: a wait in one does not hold the other.
        return self._with_env(evidence.command_evidence(self.run) + evidence.command_evidence(self.post_start))

    def _with_env(self, called: list[Evidence]) -> list[Evidence]:
        from meshlint.mesh.facts import evidence

        found = evidence.env_evidence(self.environment) + evidence.image_evidence(self.container)
        for piece in called:
            if piece.what not in {e.what for e in found}:
                found.append(piece)
        return found

    @cached_property
    def outbound_ports(self) -> list[tuple[int, Evidence]]:
        from meshlint.mesh.facts import evidence

        return evidence.env_ports(self.container, self.environment, self.run + self.post_start)

    @cached_property
    def prestop_sleep(self) -> PreStopSleep | None:
        if not self.container.node.path("lifecycle", "preStop").exists:
            return None
        from meshlint.mesh.facts.prestop import prestop_sleep

        return prestop_sleep(self.container, self.pre_stop)

    def mentions(self, *markers: str) -> bool:
        """Does any of the texts a command is read from contain one of `markers`? (Cheap: a reader
        that needs one of them is not loaded, nor the script parsed, when none is there.)"""
        return any(marker in text for text in self._texts() for marker in markers)

    def _texts(self) -> list[str]:
        """The container's argv, literal env values and Argo source: where a quit call is written."""
        node = self.container.node
        texts = [n.text or "" for key in ("command", "args") for n in node.get(key).elements()]
        texts.extend(item.get("value").text or "" for item in node.get("env").elements())
        source = node.get("source")
        return [*texts, source.text] if isinstance(source.value, str) and source.text else texts
