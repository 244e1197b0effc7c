"""The words and commands a container runs, before any shell reads them: the argv as Kubernetes expands
it (`$(VAR)`), the wrappers that run the rest of it (`exec`, `env`, `timeout`, `tini`...), and whether it
hands a script to a shell (`sh -c`, `su -c`). meshlint/mesh/facts/shell.py reads such a script the way
the shell runs it.
"""

import re
from bisect import bisect_right
from collections.abc import Callable
from typing import NamedTuple

from meshlint.findings import Position
from meshlint.source.document import Node

SHELLS = frozenset(("sh", "bash", "ash", "dash", "zsh", "ksh", "mksh"))
# Programs that run the rest of their arguments as a command (the value options they take are skipped).
_WRAPPERS = frozenset(
    ("exec", "command", "builtin", "nohup", "time", "setsid", "env", "nice", "ionice", "timeout", "sudo", "gosu", "su-exec", "tini", "dumb-init", "catatonit", "stdbuf")
)
_WRAPPER_VALUE_FLAGS = {
    "exec": {"-a"},
    "env": {"-u", "--unset", "-C", "--chdir", "-S", "--split-string"},
    "nice": {"-n", "--adjustment"},
    "ionice": {"-c", "--class", "-n", "--classdata", "-p"},
    "timeout": {"-s", "--signal", "-k", "--kill-after"},
    "sudo": {"-u", "--user", "-g", "--group", "-C", "-D", "-h", "-p", "-r", "-t", "-U"},
    "tini": {"-p", "-e"},
    "stdbuf": {"-i", "-o", "-e"},
    "linkerd-await": {"-p", "--port", "-t", "--timeout", "-b", "--backoff"},
}
# Wrappers that also tell the proxy to exit when the program ends (read as quit calls first).
QUIT_WRAPPERS = frozenset(("scuttle", "linkerd-await"))
KUBERNETES_VAR = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")
SHORT = 60  # characters of a command a message quotes
# Bounds of `$(VAR)` expansion: real values grow by a few names and ports, and nest a few variables deep.
MAX_EXPANSION_GROWTH = 4096
MAX_EXPANSION_DEPTH = 16
# How deep statements (or the parts of one word) are read inside one another; past it a construct is
# opaque. Real scripts nest a few levels; the bound keeps the reader well within Python's stack.
MAX_NESTING = 64


class Word(NamedTuple):
    """One argument as the program receives it."""

    text: str  # quotes removed, known variables expanded; unknown expansions stay as written
    written: str
    position: Position
    known: bool  # no expansion whose value the manifest does not say
    origin: str  # the field it is written in: command, args, source, lifecycle.preStop...
    place: Callable[[int], Position]  # where character i of `text` stands (near enough after escapes)


class Command(NamedTuple):
    """A simple command the container runs, and how the shell reaches it."""

    words: tuple[Word, ...]  # as written, wrappers included (see `argv`)
    position: Position
    written: str  # the command as written, on one line
    origin: str
    guard: str | None = None  # why it runs only when the work before it succeeded
    conditional: bool = False  # it may not run at all: an if/case branch, a loop body, after `||`
    loop: bool = False
    background: bool = False
    trap: tuple[str, ...] = ()  # the signals of the trap that runs it; () when the script runs it
    dropped: str | None = None  # why it never runs
    exec_form: bool = False  # the container's own argv (no shell)
    stdin: str | None = None  # a here-document or Argo `source` fed to it
    assignments: tuple[tuple[str, str], ...] = ()  # `NAME=value prog`: env for this command only
    retried: bool = False  # a while/until loop's condition: run again until it gives the answer awaited

    @property
    def argv(self) -> list[Word]:
        """The words from the program that does the work on: `exec`, `timeout 30`, `env A=b` and the
        like removed."""
        return unwrap(list(self.words))

    @property
    def work(self) -> list[Word]:
        """The words of the program that does the work: `argv` with `scuttle` and `linkerd-await` removed too."""
        return unwrap(list(self.words), QUIT_WRAPPERS)

    @property
    def program(self) -> str:
        work = self.work
        return basename(work[0].text) if work else ""

    @property
    def in_exit_trap(self) -> bool:
        return "EXIT" in self.trap

    @property
    def runs(self) -> bool:
        """Runs when the container's work ends normally: not dropped, not only on a signal."""
        return self.dropped is None and (not self.trap or self.in_exit_trap)


class Script(NamedTuple):
    """A script, where each of its characters stands in the file, and the field holding it."""

    text: str
    place: Callable[[int], Position]
    origin: str


def basename(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def is_shell(word: str) -> bool:
    return basename(word) in SHELLS


def unwrap(words: list[Word], through: frozenset[str] = frozenset()) -> list[Word]:
    """Drop the wrappers that run the rest of the line as a command (`exec`, `env A=b`, `timeout 30`,
    `tini --`, `gosu user`...), and those named in `through`."""
    while words:
        name = basename(words[0].text)
        if name not in _WRAPPERS and name not in through:
            return words
        values = _WRAPPER_VALUE_FLAGS.get(name, set())
        i = 1
        while i < len(words):
            text = words[i].text
            if text == "--":
                i += 1
                break
            if name == "env" and "=" in text and not text.startswith("-"):
                i += 1
            elif text.startswith("-") and len(text) > 1:
                i += 2 if text in values else 1
            else:
                break
        if name == "timeout" and i < len(words):
            i += 1  # the duration
        elif name in ("gosu", "su-exec") and i < len(words):
            i += 1  # the user
        words = words[i:]
    return words


def shell_invocation(words: list[Word]) -> tuple[int, str | None, bool] | None:
    """For `sh -ec SCRIPT` and friends: the index of the script word, how errexit was turned on (None:
    it is not), and pipefail; None when the words do not run a script given inline (`sh file.sh`)."""
    if not words:
        return None
    start = 1
    if basename(words[0].text) == "busybox" and len(words) > 1 and is_shell(words[1].text):
        start = 2
    elif not is_shell(words[0].text):
        return None
    command_string, errexit, pipefail = False, False, False
    i = start
    while i < len(words):
        text = words[i].text
        if text == "--":
            i += 1
            break
        if not text.startswith(("-", "+")) or len(text) < 2:
            break
        i += 1
        if text.startswith("--"):
            continue
        on = text[0] == "-"
        for letter in text[1:]:
            if letter == "c":
                command_string = True
            elif letter == "e":
                errexit = on
            elif letter == "o" and i < len(words):
                option = words[i].text
                i += 1
                errexit = on if option == "errexit" else errexit
                pipefail = on if option == "pipefail" else pipefail
    if not command_string or i >= len(words):
        return None
    flags = " ".join(w.text for w in words[:i])
    return i, f"`{flags}`" if errexit else None, pipefail


def su_invocation(words: list[Word]) -> tuple[int, str | None, bool] | None:
    """`su [options] -c SCRIPT [user]`, `runuser ... -c SCRIPT`: the script runs in a new shell."""
    if not words or basename(words[0].text) not in ("su", "runuser"):
        return None
    for i, word in enumerate(words[1:-1], start=1):
        if word.text in ("-c", "--command"):
            return i + 1, None, False
    return None


class Expansion(NamedTuple):
    """A value after Kubernetes' `$(VAR)` expansion."""

    text: str
    known: bool  # every reference was replaced
    depth: int = 0  # how many variables deep its references go (0: it has none)
    cut: str | None = None  # why references were left as written although their variables are defined


def kubernetes_expand(text: str, env: Callable[[str], str | None], depth_of: Callable[[str], int] = lambda name: 0) -> Expansion:
    """Kubernetes' own `$(VAR)` expansion of command, args and env values: defined variables are
    replaced, others stay as written (and are then not known). Each variable is expanded where it is
    defined, so a chain of them can double a value at every step (`B=$(A)$(A)`, `C=$(B)$(B)`...): past
    `MAX_EXPANSION_GROWTH` characters more than written, or references `MAX_EXPANSION_DEPTH` variables
    deep (`depth_of` says how deep a variable's own value goes), the rest stay as written, and `cut` says so."""
    pieces: list[str] = []
    known, depth, cut, last = True, 0, None, 0
    room = MAX_EXPANSION_GROWTH
    for match in KUBERNETES_VAR.finditer(text):
        pieces.append(text[last:match.start()])
        last = match.end()
        name = match.group(1)
        found = env(name)
        level = depth_of(name) + 1 if found is not None else 0
        if found is not None and cut is None and level > MAX_EXPANSION_DEPTH:
            cut = f"its $(VAR) expansion was cut: references go more than {MAX_EXPANSION_DEPTH} variables deep"
        elif found is not None and cut is None and len(found) - len(match.group(0)) > room:
            cut = f"its $(VAR) expansion was cut at {MAX_EXPANSION_GROWTH} characters more than written"
        if found is None or cut is not None:
            known = False
            pieces.append(match.group(0))
            continue
        room -= len(found) - len(match.group(0))
        depth = max(depth, level)
        pieces.append(found)
    pieces.append(text[last:])
    return Expansion("".join(pieces), known, depth, cut)


def places(node: Node) -> Callable[[int], Position]:
    """`node.position_at`, with the value's line starts found once: a script places each of its
    commands and words, and counting the lines before each anew would be quadratic in its length."""
    text = node.text or ""
    starts = [0, *(m.end() for m in re.finditer("\n", text))]
    placer, path = node.placer(), node.pos.path

    def place(offset: int) -> Position:
        line = bisect_right(starts, offset) - 1
        file_line, file_column = placer(line, offset - starts[line])
        return Position(path, file_line, file_column)

    return place


def script_of(word: Word) -> Script:
    """A script held in one word: `sh -c "..."`, a trap's action."""
    return Script(word.text, word.place, word.origin)


def one_line(text: str) -> str:
    return " ".join(text.replace("\\\n", " ").split())


def short(text: str, limit: int = SHORT) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
