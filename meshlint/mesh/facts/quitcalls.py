"""Calls that tell a classic sidecar to exit: Istio's `POST localhost:15020/quitquitquit` (or Envoy
admin's 15000), and Linkerd's `POST localhost:4191/shutdown` (reference §3.1, §3.3).

A Job's pod completes only when every container has exited, and a classic proxy never exits by
itself; so a batch container has to ask it to. Each call is read from the command model with how it
is made and whether it can work: the method (the agent answers anything but POST with 405), host
(localhost only, else 403) and port (15021 is the health port: nothing quits there), the tool (curl,
wget, a `python -c` / `node -e` / `perl -e` one-liner, `pilot-agent request`, the `scuttle` and
`linkerd-await --shutdown` wrappers), whether it runs when the work fails, whether an exit trap runs
it, and whether an `exec` drops it.
"""

import re
from typing import TYPE_CHECKING, NamedTuple

from meshlint import numbers
from meshlint.findings import Position
from meshlint.mesh.facts import addresses
from meshlint.mesh.facts.httpcalls import curl_request, wget_request
from meshlint.mesh.facts.shellwords import Command, Word, basename, unwrap

if TYPE_CHECKING:
    from meshlint.mesh.facts.environment import Environment
    from meshlint.model.pod import Container

# The kinds of calls that tell a proxy to exit.
ISTIO_QUIT = "istio-quit"  # POST localhost:15020/quitquitquit (or Envoy admin's 15000)
LINKERD_SHUTDOWN = "linkerd-shutdown"  # POST localhost:4191/shutdown
ISTIO_QUIT_PORTS = (15020, 15000)
HEALTH_PORT = 15021
LINKERD_ADMIN_PORT = 4191
_PROXY_IMAGES = ("proxyv2", "istio/proxy")
_PRINTERS = frozenset(("echo", "printf", "logger", ":", "cat", "grep"))
_LANGUAGE = re.compile(r"^(?:(python)[0-9.]*|(pypy)3?|(node|nodejs)|(perl)[0-9.]*)$")
_CODE_FLAGS = {"python": ("-c",), "node": ("-e", "--eval", "-p", "--print"), "perl": ("-e", "-E")}
_LITERAL = re.compile(r"""(["'`])([^"'`\n]*(?:quitquitquit|/shutdown)[^"'`\n]*)\1""")


class QuitCall(NamedTuple):
    container: "Container"
    kind: str  # ISTIO_QUIT or LINKERD_SHUTDOWN
    command: str  # the command that makes the call, as written
    position: Position
    tool: str  # curl, wget, python, node, perl, pilot-agent, scuttle, linkerd-await, or the program
    method: str | None  # None when it cannot be told (a program of its own)
    host: str | None  # None when a variable the manifest does not set holds it
    port: int | None
    path: str
    skipped_on_failure: str | None  # why a failed run would not reach it, or None
    trap: tuple[str, ...]  # the signals of the trap that runs it; () when the script runs it
    dropped: str | None  # why it never runs (an `exec` replaced the shell, it follows `exit`)
    problem: str | None  # why it cannot make the proxy exit even when it runs

    @property
    def to_istio(self) -> bool:
        """A call to Istio's /quitquitquit (the other kind is Linkerd's /shutdown)."""
        return self.kind == ISTIO_QUIT

    @property
    def is_post(self) -> bool:
        """POST, or a method that cannot be told (a program of its own gets the benefit of the doubt)."""
        return self.method in (None, "POST")

    @property
    def in_exit_trap(self) -> bool:
        return "EXIT" in self.trap

    @property
    def only_on_signal(self) -> bool:
        """In a trap on INT/TERM/HUP only: it never runs when the script ends by itself."""
        return bool(self.trap) and not self.in_exit_trap

    @property
    def runs_on_failure(self) -> bool:
        return self.skipped_on_failure is None

    @property
    def quits(self) -> bool:
        """Makes the proxy exit when the work succeeds."""
        return self.problem is None and self.is_post and self.dropped is None and not self.only_on_signal

    @property
    def why_not(self) -> str | None:
        """Why it does not quit the proxy, worded to follow "its quit call on line N"."""
        if self.problem is not None:
            return self.problem
        if not self.is_post:
            return "is not a POST (ML202)"
        if self.dropped is not None:
            return f"never runs: {self.dropped}"
        if self.only_on_signal:
            return f"runs only in a trap on {' and '.join(self.trap)}, which a script that ends by itself never fires"
        return None


def shutdown_calls(container: "Container", commands: list[Command], env: "Environment") -> list[QuitCall]:
    """Every call to a proxy's quit or shutdown endpoint among the container's commands."""
    found = []
    for command in commands:
        for kind, tool, method, address, problem, skipped, word in _calls(command, container, env):
            # In an exec-form list the call is the item that names it; in a script, the command.
            position = word.position if command.exec_form and word is not None else command.position
            found.append(
                QuitCall(
                    container, kind, _short(command.written), position, tool, method,
                    address.host if "$" not in address.host else None, address.port, address.path,
                    command.guard or skipped, command.trap, command.dropped, problem or _endpoint_problem(kind, method, address),
                )
            )
    return found


# kind, tool, method, address, problem, why skipped, and the word it was read from (None: the command)
_Found = tuple[str, str, str | None, addresses.Address, str | None, str | None, Word | None]


def _calls(command: Command, container: "Container", env: "Environment") -> list[_Found]:
    argv = unwrap(list(command.words))
    if not argv:
        return []
    program, args = basename(argv[0].text), argv[1:]
    if program == "curl":
        method, urls = curl_request(args)
        return _to_endpoints("curl", method, urls)
    if program == "wget":
        method, urls = wget_request(args)
        return _to_endpoints("wget", method, urls)
    language = _LANGUAGE.match(program)
    if language:
        name = next(g for g in language.groups() if g).replace("pypy", "python").replace("nodejs", "node")
        code = _code(name, args, command.stdin)
        return [(k, name, m, a, None, None, None) for k, m, a in _code_calls(code)] if code else []
    if program == "pilot-agent":
        return _pilot_agent(args, container)
    if program == "scuttle":
        return _scuttle(command, env)
    if program == "linkerd-await":
        return _linkerd_await(args, env)
    if program in _PRINTERS:
        return []
    return _to_endpoints(program, None, args)


def _endpoint_problem(kind: str, method: str | None, address: addresses.Address) -> str | None:
    ports = ISTIO_QUIT_PORTS if kind == ISTIO_QUIT else (LINKERD_ADMIN_PORT,)
    host = address.host
    if host and "$" not in host and not address.loopback:
        return f"goes to {host}, and the proxy takes it only from localhost (it answers 403)"
    if address.port is not None and address.port not in ports:
        health = " (the health port)" if address.port == HEALTH_PORT else ""
        return f"goes to port {address.port}{health}, where nothing quits the proxy (its endpoint is on {ports[0]})"
    return None


def _to_endpoints(tool: str, method: str | None, urls: list[Word]) -> list[_Found]:
    found: list[_Found] = []
    for url in urls:
        address = addresses.parse(url.text)
        if address is None:
            continue
        kind = _kind_of(address)
        if kind is not None:
            found.append((kind, tool, method, address, None, None, url))
    return found


def _kind_of(address: addresses.Address) -> str | None:
    path = address.path.rstrip("/")
    if path.endswith("quitquitquit"):
        return ISTIO_QUIT
    if path == "/shutdown" and address.port in (LINKERD_ADMIN_PORT, None):
        return LINKERD_SHUTDOWN
    return None


def _code(language: str, args: list[Word], stdin: str | None) -> str | None:
    """The program text of a one-liner (`python -c CODE`, `node -e CODE`, `perl -e CODE`), or of a
    script fed on stdin (`python3 - <<EOF`, Argo's `source`)."""
    flags = _CODE_FLAGS[language]
    for i, word in enumerate(args):
        if word.text in flags and i + 1 < len(args):
            return args[i + 1].text
        if not word.text.startswith("-") or word.text == "-":
            return stdin if word.text == "-" else None
    return stdin


def _code_calls(code: str) -> list[tuple[str, str | None, addresses.Address]]:
    """The quit and shutdown URLs a one-liner requests, and with which method: `requests.post(url)`,
    `urlopen(Request(url, method="POST"))`, `fetch(url, {method: "POST"})`, `http.client`'s
    `request("POST", "/quitquitquit")` on a connection to localhost:15020, LWP's `->post(url)`."""
    found = []
    for match in _LITERAL.finditer(code):
        text = match.group(2)
        address = addresses.parse(text) if not text.startswith("/") else None
        if address is None and text.startswith("/"):
            host, port = _connection(code)
            address = addresses.Address(text, None, host, port, text)
        if address is None:
            continue
        kind = _kind_of(address)
        if kind is not None:
            found.append((kind, _method(code, match.start(), match.end()), address))
    return found


def _method(code: str, start: int, end: int) -> str | None:
    before, after = code[max(0, start - 100):start], code[end:end + 160].split("\n", 1)[0]
    named = re.search(r"(?:\.|->)(post|get|head|put|delete|patch)\s*\(\s*(?:url\s*=\s*)?$", before, re.I)
    if named:
        return named.group(1).upper()
    written = re.search(r"""['"](POST|GET|HEAD|PUT|DELETE)['"]\s*,\s*$|\b(POST|GET|HEAD|PUT|DELETE)\s*(?:=>|\()\s*$""", before)
    if written:
        return written.group(1) or written.group(2)
    option = re.search(r"""method\s*[=:]\s*['"](\w+)['"]""", after) or re.search(r"""method\s*[=:]\s*['"](\w+)['"]""", code)
    if option:
        return option.group(1).upper()
    if re.search(r"\b(urlopen|Request|fetch|urlretrieve|get|getstore|getprint)\s*\(\s*(?:url\s*=\s*)?$", before):
        return "POST" if re.search(r"\bdata\s*=", after) else "GET"
    return None


def _connection(code: str) -> tuple[str, int | None]:
    """Host and port of an `http.client.HTTPConnection(...)` or a Node `http.request({...})`."""
    python = re.search(r"""HTTP[S]?Connection\(\s*['"]([^'":]+)(?::([0-9]+))?['"]\s*(?:,\s*(?:port\s*=\s*)?([0-9]+))?""", code)
    if python:
        port = python.group(2) or python.group(3)
        return python.group(1), numbers.whole(port) if port else None
    host = re.search(r"""\bhost(?:name)?\s*[:=]\s*['"]([^'"]+)['"]""", code)
    port = re.search(r"""\bport\s*[:=]\s*['"]?([0-9]+)""", code)
    return (host.group(1) if host else "localhost"), (numbers.whole(port.group(1)) if port else None)


def _pilot_agent(args: list[Word], container: "Container") -> list[_Found]:
    """`pilot-agent request [--debug-port N] POST quitquitquit`: to Envoy admin (15000) by default.
    The binary is in the istio-proxy image only, so an app container cannot run it."""
    texts = [w.text for w in args]
    if not texts or texts[0] != "request":
        return []
    port, rest = 15000, []
    i = 1
    while i < len(texts):
        text = texts[i]
        i += 1
        if text.startswith("--debug-port"):
            value = text.partition("=")[2] or (texts[i] if i < len(texts) else "")
            i += 0 if "=" in text else 1
            port = _number_or(value, port)
        elif not text.startswith("-"):
            rest.append(text)
    if len(rest) < 2:
        return []
    path = "/" + rest[1].lstrip("/")
    address = addresses.Address(f"localhost:{port}{path}", None, "localhost", port, path)
    kind = _kind_of(address)
    if kind is None:
        return []
    image = container.image
    problem = None if any(p in image for p in _PROXY_IMAGES) else "runs pilot-agent, which exists only in the istio-proxy image, not in this container"
    return [(kind, "pilot-agent", rest[0].upper(), address, problem, None, None)]


def _scuttle(command: Command, env: "Environment") -> list[_Found]:
    """scuttle POSTs to `$ISTIO_QUIT_API/quitquitquit` when its program exits (Istio 1.3+); with only
    `ENVOY_ADMIN_API` it asks Envoy to quit, and only after a clean exit (monzo/envoy-preflight README)."""
    variables = dict(command.assignments)

    def value(name: str) -> str | None:
        return variables.get(name, env.value(name))

    def is_set(name: str) -> bool:
        return name in variables or name in env.names()

    never = (value("NEVER_KILL_ISTIO") or "").lower() == "true"
    skipped = "scuttle skips the quit when the program fails (NEVER_KILL_ISTIO_ON_FAILURE is true)" if (value("NEVER_KILL_ISTIO_ON_FAILURE") or "").lower() == "true" else None
    problem = "NEVER_KILL_ISTIO is true, so scuttle never asks the proxy to quit" if never else None
    for name, clean_exit_only in (("ISTIO_QUIT_API", False), ("ENVOY_ADMIN_API", True)):
        if not is_set(name):
            continue
        base = value(name)
        address = addresses.parse(base.rstrip("/") + "/quitquitquit") if base is not None else None
        if address is None:
            address = addresses.Address("$" + name, None, "$" + name, None, "/quitquitquit")
        if clean_exit_only and not address.loopback:
            continue  # scuttle stops a remote Envoy admin never
        if clean_exit_only:
            skipped = skipped or "scuttle asks Envoy to quit only when the program exits cleanly (ENVOY_ADMIN_API without ISTIO_QUIT_API)"
        return [(ISTIO_QUIT, "scuttle", "POST", address, problem, skipped, None)]
    unset = addresses.Address("scuttle", None, "localhost", None, "/quitquitquit")
    return [(ISTIO_QUIT, "scuttle", "POST", unset, "runs scuttle without ISTIO_QUIT_API, so it never calls /quitquitquit", None, None)]


def _linkerd_await(args: list[Word], env: "Environment") -> list[_Found]:
    """`linkerd-await --shutdown -- prog` POSTs to localhost:4191/shutdown after prog exits, whatever
    its exit code; with LINKERD_AWAIT_DISABLED (or LINKERD_DISABLED) set it only execs prog (§11.3.3)."""
    shutdown, port = False, LINKERD_ADMIN_PORT
    i = 0
    while i < len(args) and args[i].text != "--":
        text = args[i].text
        i += 1
        if text in ("--shutdown", "-S"):
            shutdown = True
        elif text in ("--port", "-p") and i < len(args):
            port = _number_or(args[i].text, port)
            i += 1
        elif text.startswith("--port="):
            value = text.partition("=")[2]
            port = _number_or(value, port)
        elif not text.startswith("-"):
            break
    if not shutdown:
        return []
    disabled = next((name for name in ("LINKERD_AWAIT_DISABLED", "LINKERD_DISABLED") if env.value(name)), None)
    problem = f"{disabled} is set, so linkerd-await runs the program without sending /shutdown" if disabled else None
    address = addresses.Address(f"localhost:{port}/shutdown", None, "localhost", port, "/shutdown")
    return [(LINKERD_SHUTDOWN, "linkerd-await", "POST", address, problem, None, None)]


def _number_or(text: str, default: int) -> int:
    """A port as written (a wrong one is reported as such), or `default` when the text is no number."""
    number = numbers.whole(text)
    return default if number is None else number


def _short(text: str) -> str:
    return text if len(text) <= 100 else text[:97] + "..."
