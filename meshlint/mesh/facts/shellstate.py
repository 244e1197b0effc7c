"""What a shell knows as it runs a script, for meshlint/mesh/facts/shell.py: its options (errexit,
pipefail), variables, functions and traps, the flow a command runs in (after what, guarded by what, from
which trap), and the readings of syntax that decide them (`set -e`, `trap`, a signal's name, a heredoc, a test,
`if ! work; then exit`)."""

import re
from typing import NamedTuple

from meshlint.mesh.facts.bashtree import Syntax
from meshlint.mesh.facts.shellwords import Command, Script, Word, basename, one_line, short

# Builtins that do not fail in practice: they never end a script that runs with errexit.
NEVER_FAIL = frozenset(("set", "trap", "export", "readonly", "local", "declare", "typeset", "unset", "true", ":", "echo", "printf", "shift", "umask", "alias", "sleep", "exit", "return"))
TESTS = frozenset(("[", "[[", "test", "true", "false", ":"))
SIGNALS = {"0": "EXIT", "1": "HUP", "2": "INT", "3": "QUIT", "15": "TERM"}


class Flow(NamedTuple):
    """How the statement being read is reached."""

    guard: str | None = None
    conditional: bool = False
    loop: bool = False
    background: bool = False
    trap: tuple[str, ...] = ()
    tested: bool = False  # its failure does not end the script: an if/while condition, left of && or ||, after !
    retried: bool = False  # a while/until loop's condition
    calls: tuple[str, ...] = ()  # the functions being run, so a recursive one is read once


class Trap(NamedTuple):
    action: Word
    installed: Command
    guard: str | None  # why a failing run ends before the trap is installed


class Shell:
    """One shell process: its options, variables, functions and traps."""

    __slots__ = ("ended", "errexit", "failing", "functions", "pipefail", "replaced", "scripts", "traps", "variables")

    def __init__(
        self,
        errexit: str | None = None,
        pipefail: bool = False,
        variables: dict[str, str | None] | None = None,
        functions: dict[str, Syntax] | None = None,
        scripts: dict[str, Script] | None = None,
    ) -> None:
        self.errexit = errexit  # how errexit was turned on: `set -e`, `bash -ec`, a shebang
        self.pipefail = pipefail
        self.failing: tuple[Command, str] | None = None  # the first step whose failure ends the script, and how
        self.variables = variables if variables is not None else {}  # None values: assigned, not known
        self.functions = functions if functions is not None else {}
        self.scripts = scripts if scripts is not None else {}  # where each function is written
        self.traps: dict[str, Trap] = {}  # by signal
        self.ended: str | None = None  # why nothing after this point runs (`exec prog`, `exit`)
        self.replaced: str | None = None  # the `exec` that replaced the shell, so no trap runs

    def child(self, subshell: bool) -> "Shell":
        """A subshell keeps options, variables and functions but not traps; a new shell (`sh -c`)
        starts with none of them but the variables (exported ones; the manifest rarely says which)."""
        if subshell:
            return Shell(self.errexit, self.pipefail, dict(self.variables), dict(self.functions), dict(self.scripts))
        return Shell(variables=dict(self.variables))


def set_options(command: Command, shell: Shell) -> None:
    """`set -e`, `set -euo pipefail`, `set -o errexit`, `set +e`..."""
    words = [w.text for w in command.words[1:]]
    spelling = f"`{short(command.written)}`"
    i = 0
    while i < len(words):
        text = words[i]
        i += 1
        if text == "--" or not text.startswith(("-", "+")) or len(text) < 2:
            break
        on = text[0] == "-"
        for letter in text[1:]:
            if letter == "e":
                shell.errexit = spelling if on else None
            elif letter == "o" and i < len(words):
                option = words[i]
                i += 1
                if option == "errexit":
                    shell.errexit = spelling if on else None
                elif option == "pipefail":
                    shell.pipefail = on


def set_trap(command: Command, shell: Shell, flow: Flow) -> None:
    """`trap ACTION SIGNAL...` installs ACTION on those signals (replacing what was there);
    `trap - SIGNAL`, `trap '' SIGNAL` and `trap SIGNAL` remove it."""
    args = [w for w in command.words[1:] if w.text != "--"]
    if not args or (args[0].text.startswith("-") and args[0].text != "-"):
        return  # trap -p, trap -l
    action, signals = (None, args) if len(args) == 1 else (args[0], args[1:])
    if flow.guard is not None:
        guard: str | None = flow.guard
    elif shell.failing is not None:
        failing, how = shell.failing
        guard = f"its trap is installed only after `{failing.written}` (line {failing.position.line}), and {how} ends the script there when that fails"
    else:
        guard = None
    installed = None if action is None or action.text in ("", "-") else Trap(action, command, guard)
    for word in signals:
        signal = signal_name(word.text)
        if signal is None:
            continue
        if installed is not None:
            if not flow.conditional or signal not in shell.traps:
                shell.traps[signal] = installed
        elif not flow.conditional:
            shell.traps.pop(signal, None)


def current_guard(shell: Shell, flow: Flow) -> str | None:
    """Why a command here runs only when the work before it succeeded."""
    if flow.guard is not None or flow.trap:
        return flow.guard
    if shell.failing is not None:
        failing, how = shell.failing
        return f"it runs after `{failing.written}` (line {failing.position.line}), and {how} ends the script when that fails"
    return None


def note_failure(command: Command, shell: Shell, flow: Flow) -> None:
    """Under errexit, the first step that can fail is where a failing run stops."""
    fails = basename(command.words[0].text) not in NEVER_FAIL
    if fails and shell.errexit and shell.failing is None and shell.ended is None and not (flow.tested or flow.trap):
        shell.failing = (command._replace(written=short(command.written)), shell.errexit)


def note_negated_exit(node: Syntax, conditions: list[Syntax], script: Script, shell: Shell, flow: Flow) -> None:
    """`if ! work; then ...; exit 1; fi`: a failing `work` ends the script, as errexit would."""
    if len(conditions) != 1 or conditions[0].type != "negated_command" or flow.tested or flow.conditional or flow.trap:
        return
    negated = conditions[0].named_children()
    body = [c for c in node.children if c.named and c.field is None and c.type not in ("comment", "elif_clause", "else_clause")]
    if negated and not is_test(negated[0]) and body and exits(body[-1]) and shell.failing is None and shell.ended is None:
        tested = short(one_line(negated[0].text))
        shell.failing = (Command((), script.place(negated[0].start), tested, script.origin), f"`if ! {tested}; then ... exit`")


def signal_name(text: str) -> str | None:
    name = text.upper().removeprefix("SIG")
    name = SIGNALS.get(name, name)
    return name if re.fullmatch(r"[A-Z][A-Z0-9+-]*|[0-9]+", name) else None


def heredoc(node: Syntax) -> str | None:
    for child in node.children:
        if child.type == "heredoc_redirect":
            body = child.first("heredoc_body")
            return body.text if body is not None else ""
        if child.type == "herestring_redirect":
            named = child.named_children()
            return named[-1].text.strip("'\"") if named else ""
    return None


def exits(node: Syntax) -> bool:
    """Whether a statement ends the script: `exit`, or a `{ ...; }` group whose last command is `exit`."""
    while node.type == "compound_statement":
        statements = [c for c in node.named_children() if c.type != "comment"]
        if not statements:
            return False
        node = statements[-1]
    if node.type == "command":
        name = node.fields("name")
        return bool(name) and name[0].text == "exit"
    return False


def is_test(node: Syntax) -> bool:
    """A condition that tests a value rather than doing work (`[ -f x ]`, `test`, `true`), or a list
    or negation of such conditions only."""
    stack = [node]
    while stack:
        item = stack.pop()
        if item.type in ("list", "negated_command"):
            stack.extend(c for c in item.named_children() if c.type != "comment")
        elif item.type == "command":
            name = item.fields("name")
            if not name or name[0].text not in TESTS:
                return False
        elif item.type != "test_command":
            return False
    return True
