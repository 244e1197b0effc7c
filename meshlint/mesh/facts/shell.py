"""Container commands as a shell runs them: every simple command, and how the shell reaches it.

A container runs either an exec-form command (`["sleep", "10"]`: one simple command) or a script
handed to a shell (`["sh", "-c", "set -e; ./work; curl ..."]`, a block scalar, `command` + `args`).
Scripts are parsed with tree-sitter-bash (`bashtree`) and read the way the shell would run them:
comments are not commands and quoted strings are data; `&&`, `||`, `;`, pipelines, `if`, `case`,
loops, functions, subshells and `$(...)` have their shell meaning. Each `Command` says whether it runs
only when the work before it succeeded (after `&&`, inside `if work; then`, after a step that can fail
while errexit is on, after `work || exit`), whether it runs from a trap and on which signals, and
whether it never runs at all (after `exec prog`, which replaces the shell, or `exit`). Variables are
expanded where the manifest says their value: assignments earlier in the script, the container's
env, Kubernetes' own `$(VAR)` expansion of command and args.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from meshlint.mesh.facts.bashtree import Syntax, parse
from meshlint.mesh.facts.shellstate import (
    Flow,
    Shell,
    Trap,
    current_guard,
    exits,
    heredoc,
    is_test,
    note_failure,
    note_negated_exit,
    set_options,
    set_trap,
)
from meshlint.mesh.facts.shellvalues import Values, kubernetes_reference
from meshlint.mesh.facts.shellwords import (
    MAX_NESTING,
    SHORT,
    Command,
    Script,
    Word,
    is_shell,
    kubernetes_expand,
    one_line,
    places,
    script_of,
    shell_invocation,
    short,
    su_invocation,
    unwrap,
)
from meshlint.source.document import Node

_BARE_VARIABLE = re.compile(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\$[@*]|\$\{[@*]\}")  # `sh -c "$CMD"`: a script the manifest does not hold


def read_argv(argv: list[tuple[Node, str]], env: Callable[[str], str | None], source: Node | None = None) -> list[Command]:
    """The commands a container argv runs, each (node, field it is in: `command`, `args`...).
    `source` is an Argo script template's `source`: the file its command runs."""
    words = []
    for node, origin in argv:
        if node.text is None:
            return []  # not a list of strings: Kubernetes rejects it
        text, known, _, _ = kubernetes_expand(node.text, env)
        words.append(Word(text, node.text, node.pos, known, origin, places(node)))
    reader = _Reader(env)
    unwrapped = unwrap(words)
    invocation = shell_invocation(unwrapped)
    if invocation is None and len(words) >= 2 and words[0].text == "-c":
        unwrapped, invocation = words, (1, None, False)  # args alone: the image's entrypoint is the shell
    if invocation is not None:
        at, errexit, pipefail = invocation
        reader.program(script_of(unwrapped[at]), Shell(errexit=errexit, pipefail=pipefail), Flow())
    elif source is not None and source.text is not None and unwrapped and is_shell(unwrapped[0].text):
        reader.program(Script(source.text, places(source), "source"), Shell(), Flow())
    elif words:
        stdin = source.text if source is not None else None
        command = Command(tuple(words), words[0].position, " ".join(w.written for w in words), words[0].origin, exec_form=True, stdin=stdin)
        reader.run(command, Shell(), Flow())
    return reader.commands


# --- reading a script ----------------------------------------------------------------------------


class _Reader:
    """Walks scripts in the order the shell runs them and collects their commands."""

    def __init__(self, env: Callable[[str], str | None]) -> None:
        self.env = env
        self.values = Values(env)
        self.commands: list[Command] = []
        self.depth = 0  # statements being read inside one another

    # --- programs and statements ---

    def program(self, script: Script, shell: Shell, flow: Flow) -> None:
        """Run a whole script in `shell`, then the traps still installed when it ends."""
        first_line = script.text.lstrip().split("\n", 1)[0].strip()
        if shell.errexit is None and re.match(r"#!\S+(\s+\S+)?\s+-[a-z]*e[a-z]*$", first_line):
            shell.errexit = f"a `{first_line}` shebang"
        self.statements(parse(script.text), script, shell, flow)
        self.run_traps(shell, flow)

    def statements(self, node: Syntax, script: Script, shell: Shell, flow: Flow, skip: tuple[str, ...] = ()) -> None:
        children = node.children
        for i, child in enumerate(children):
            if not child.named or child.type in ("comment", *skip) or child.field is not None:
                continue
            background = i + 1 < len(children) and children[i + 1].type == "&"
            self.statement(child, script, shell, flow._replace(background=True, tested=True) if background else flow)

    def statement(self, node: Syntax, script: Script, shell: Shell, flow: Flow, stdin: str | None = None) -> None:
        """One statement, unless it is nested deeper than any script means to (`$($($(...)))`,
        `sh -c` in `sh -c`...): such a construct is opaque, and what it runs is not read."""
        if self.depth >= MAX_NESTING:
            return
        self.depth += 1
        try:
            self._statement(node, script, shell, flow, stdin)
        finally:
            self.depth -= 1

    def _statement(self, node: Syntax, script: Script, shell: Shell, flow: Flow, stdin: str | None) -> None:
        if node.type == "command":  # the only statement a heredoc feeds: the one it redirects
            self.command(node, script, shell, flow, stdin)
            return
        read = _STATEMENTS.get(node.type)
        if read is not None:
            read(self, node, script, shell, flow)

    # --- compound statements, one method for each kind (`_STATEMENTS`) ---

    def redirected_statement(self, node: Syntax, script: Script, shell: Shell, flow: Flow) -> None:
        stdin = heredoc(node)
        for child in node.fields("body"):
            self.statement(child, script, shell, flow, stdin)

    def list(self, node: Syntax, script: Script, shell: Shell, flow: Flow) -> None:
        """`left && right`, `left || right`. tree-sitter nests longer lists to the left (`a && b || c`
        is `(a && b) || c`); the chain is read step by step from its first, as that nesting means, in
        a loop: a script may chain thousands of steps."""
        chain: list[tuple[str, Syntax]] = []  # (operator, right), the outermost first
        first, parts = node, [c for c in node.children if c.type != "comment"]
        while len(parts) >= 3:
            chain.append((parts[1].type, parts[2]))
            first = parts[0]
            parts = [c for c in first.children if c.type != "comment"] if first.type == "list" else []
        if not chain:
            for part in parts:
                if part.named:
                    self.statement(part, script, shell, flow)
            return
        chain.reverse()
        self.statement(first, script, shell, flow._replace(tested=True))
        # What the steps so far are: all tests (`[ -f x ] && ...`), and their text on one line, kept
        # no longer than a message shows of it.
        tests, brief, end = is_test(first), one_line(first.text), first.end
        for i, (operator, right) in enumerate(chain):
            level = flow if i == len(chain) - 1 else flow._replace(tested=True)  # each inner list is a left side
            text = short(brief)
            if operator == "&&" and tests:
                self.statement(right, script, shell, level._replace(conditional=True))
            elif operator == "&&":
                self.statement(right, script, shell, level._replace(guard=level.guard or f"it runs only after `{text} &&`, so a failing `{text}` skips it"))
            else:
                self.statement(right, script, shell, level._replace(conditional=True))
                if exits(right) and not (level.tested or level.conditional or level.trap) and shell.failing is None and shell.ended is None:
                    # `work || exit 1`: a failing `work` ends the script, as errexit would.
                    shell.failing = (Command((), script.place(first.start), text, script.origin), f"`{text} || exit`")
            tests = tests and is_test(right)
            if len(brief) <= SHORT:
                brief = one_line(brief + node.script[end:right.end])
            end = right.end

    def pipeline(self, node: Syntax, script: Script, shell: Shell, flow: Flow) -> None:
        """Each part of `a | b` runs in a subshell; only the last part's failure is the pipeline's,
        unless pipefail is on."""
        parts = [c for c in node.named_children() if c.type != "comment"]
        for i, part in enumerate(parts):
            sub = shell.child(subshell=True)
            self.statement(part, script, sub, flow if i == len(parts) - 1 or shell.pipefail else flow._replace(tested=True))
            shell.failing = shell.failing or sub.failing

    def negated_command(self, node: Syntax, script: Script, shell: Shell, flow: Flow) -> None:
        """`! work`: a failing `work` is an outcome the script tests, not one that ends it."""
        for child in node.named_children():
            self.statement(child, script, shell, flow._replace(tested=True))

    def subshell(self, node: Syntax, script: Script, shell: Shell, flow: Flow) -> None:
        """`( ... )`: its variables and traps stay inside it and its traps run when it ends, but a
        failing step in it still ends the script under errexit."""
        sub = shell.child(subshell=True)
        sub.ended = shell.ended
        self.statements(node, script, sub, flow)
        self.run_traps(sub, flow)
        shell.failing = shell.failing or sub.failing

    def if_statement(self, node: Syntax, script: Script, shell: Shell, flow: Flow) -> None:
        conditions = [c for c in node.fields("condition") if c.named and c.type != "comment"]
        for condition in conditions:
            self.statement(condition, script, shell, flow._replace(tested=True))
        text = short("; ".join(one_line(c.text) for c in conditions))
        work = not all(is_test(c) for c in conditions)
        guard = flow.guard or (f"it runs inside `if {text}; then`, so a failing `{text}` skips it" if work else None)
        self.statements(node, script, shell, flow._replace(guard=guard, conditional=True), skip=("elif_clause", "else_clause"))
        note_negated_exit(node, conditions, script, shell, flow)
        for clause in node.children:
            if clause.type == "elif_clause":
                self.elif_clause(clause, script, shell, flow)
            elif clause.type == "else_clause":
                self.statements(clause, script, shell, flow._replace(conditional=True))

    def elif_clause(self, clause: Syntax, script: Script, shell: Shell, flow: Flow) -> None:
        """tree-sitter puts an `elif`'s conditions and body side by side; `then` parts them."""
        then = next((i for i, c in enumerate(clause.children) if c.type == "then"), len(clause.children))
        for condition in clause.children[:then]:
            if condition.named and condition.type != "comment":
                self.statement(condition, script, shell, flow._replace(tested=True, conditional=True))
        for child in clause.children[then:]:
            if child.named and child.type != "comment":
                self.statement(child, script, shell, flow._replace(conditional=True))

    def while_statement(self, node: Syntax, script: Script, shell: Shell, flow: Flow) -> None:
        """The condition runs again before every round; the body may run any number of times."""
        for condition in node.fields("condition"):
            if condition.named:
                self.statement(condition, script, shell, flow._replace(tested=True, retried=True))
        for body in node.fields("body"):
            self.statements(body, script, shell, flow._replace(conditional=True, loop=True, retried=False))

    def for_statement(self, node: Syntax, script: Script, shell: Shell, flow: Flow) -> None:
        """`for`, `select` and `for ((...))`: the values are expanded once, before the loop; the body may
        run any number of times, none included."""
        for value in node.fields("value"):
            self.substitutions(value, script, shell, flow)
        for body in node.fields("body"):
            self.statements(body, script, shell, flow._replace(conditional=True, loop=True))

    def case_statement(self, node: Syntax, script: Script, shell: Shell, flow: Flow) -> None:
        for item in node.children:
            if item.type == "case_item":
                self.statements(item, script, shell, flow._replace(conditional=True))

    def function_definition(self, node: Syntax, script: Script, shell: Shell, flow: Flow) -> None:
        """A function's body is read where it is called, not where it is defined; a definition that
        comes after the shell has ended never runs."""
        names, bodies = node.fields("name"), node.fields("body")
        if names and bodies and shell.ended is None:
            shell.functions[names[0].text] = bodies[0]
            shell.scripts[names[0].text] = script

    def assignment(self, node: Syntax, script: Script, shell: Shell, flow: Flow) -> None:
        self.substitutions(node, script, shell, flow._replace(tested=True))
        if shell.ended is not None:
            return
        if node.type == "unset_command":
            for child in node.named_children():
                shell.variables.pop(child.text, None)
            return
        assignments = [node] if node.type == "variable_assignment" else [c for c in node.children if c.type == "variable_assignment"]
        for item in assignments:
            name, value = item.fields("name"), item.fields("value")
            if name:
                text, known = self.values.value(value[0], shell.variables) if value else ("", True)
                shell.variables[name[0].text] = text if known else None

    def test_command(self, node: Syntax, script: Script, shell: Shell, flow: Flow) -> None:
        """`[[ ... ]]` runs only the substitutions in it, and a false test does not end the script."""
        self.substitutions(node, script, shell, flow._replace(tested=True))

    # --- simple commands ---

    def command(self, node: Syntax, script: Script, shell: Shell, flow: Flow, stdin: str | None) -> None:
        self.substitutions(node, script, shell, flow._replace(tested=True))
        assignments: list[tuple[str, str]] = []
        parts: list[Syntax] = []
        for child in node.children:
            if child.type == "variable_assignment":
                name, value = child.fields("name"), child.fields("value")
                if name:
                    assignments.append((name[0].text, self.values.value(value[0], shell.variables)[0] if value else ""))
            elif child.field == "name":
                parts.extend(child.named_children()[:1] or [child])
            elif child.field == "argument":
                parts.append(child)
        if not parts:
            return
        words = tuple(self.word(part, script, shell) for part in parts)
        command = Command(words, script.place(node.start), one_line(node.text), script.origin, stdin=stdin, assignments=tuple(assignments))
        self.run(command, shell, flow)

    def run(self, command: Command, shell: Shell, flow: Flow) -> None:
        """What running one simple command does: call a function, change the shell (`set`, `trap`,
        `exec`, `exit`), start a nested shell (`sh -c`, `su -c`), or run a program."""
        name = command.words[0].text
        live = shell.ended is None
        if live and name in shell.functions and name not in flow.calls and len(flow.calls) < 8:
            self.statements(shell.functions[name], shell.scripts[name], shell, flow._replace(calls=(*flow.calls, name)))
            note_failure(command, shell, flow)
            return
        if live and name == "set":
            set_options(command, shell)
        elif live and name == "trap":
            set_trap(command, shell, flow)
            return
        argv = unwrap(list(command.words))
        invocation = shell_invocation(argv) or su_invocation(argv)
        if invocation is not None and not _BARE_VARIABLE.fullmatch(argv[invocation[0]].text.strip()):
            at, errexit, pipefail = invocation
            before = len(self.commands)
            nested = shell.child(subshell=False)
            nested.errexit, nested.pipefail = errexit, pipefail
            self.program(script_of(argv[at]), nested, flow._replace(guard=current_guard(shell, flow)))
            if not live:
                self._patch(before, dropped=shell.ended)
            note_failure(command, shell, flow)
        else:
            self.emit(command, shell, flow)
        if not live or flow.conditional or flow.trap:
            return
        if name == "exec" and len(command.words) > 1:
            shell.ended = shell.replaced = f"`{short(command.written)}` on line {command.position.line} replaces the shell"
        elif name == "exit" and not flow.tested:
            shell.ended = f"it comes after `exit` on line {command.position.line}"

    def emit(self, command: Command, shell: Shell, flow: Flow) -> None:
        self.commands.append(
            command._replace(
                guard=current_guard(shell, flow),
                conditional=flow.conditional,
                loop=flow.loop,
                retried=flow.retried,
                background=flow.background,
                trap=flow.trap,
                dropped=shell.ended,
            )
        )
        note_failure(command, shell, flow)

    def _patch(self, start: int, **changes: Any) -> None:
        for i in range(start, len(self.commands)):
            self.commands[i] = self.commands[i]._replace(**changes)

    # --- traps ---

    def run_traps(self, shell: Shell, flow: Flow) -> None:
        """The traps installed when the shell ends run, each with the signals it still holds; none
        runs when `exec` replaced the shell."""
        by_trap: dict[int, tuple[Trap, list[str]]] = {}
        for signal, trap in shell.traps.items():
            by_trap.setdefault(id(trap), (trap, []))[1].append(signal)
        shell.traps.clear()
        for trap, signals in by_trap.values():
            before = len(self.commands)
            handler = Shell(None, False, dict(shell.variables), dict(shell.functions), dict(shell.scripts))
            self.program(script_of(trap.action), handler, flow._replace(trap=tuple(signals), guard=trap.guard, tested=True))
            dropped = f"it is in a trap, and {shell.replaced}, so the trap never runs" if shell.replaced else None
            self._patch(before, guard=trap.guard, trap=tuple(signals), dropped=dropped)

    # --- words ---

    def substitutions(self, node: Syntax, script: Script, shell: Shell, flow: Flow) -> None:
        """`$(...)` and `<(...)` in a statement's words run before the statement itself."""
        stack = list(reversed(node.children))
        while stack:
            child = stack.pop()
            if child.type in ("command_substitution", "process_substitution"):
                if not (kubernetes_reference(child) and self.env(child.text[2:-1]) is not None):
                    self.statements(child, script, shell, flow)
            elif child.type not in ("heredoc_body", "comment", "compound_statement", "do_group", "subshell"):
                stack.extend(reversed(child.children))

    def word(self, node: Syntax, script: Script, shell: Shell) -> Word:
        text, known = self.values.value(node, shell.variables)
        quote = 1 if node.type in ("string", "raw_string") else 2 if node.type in ("ansi_c_string", "translated_string") else 0
        start, last = node.start + quote, max(node.end - quote - 1, node.start)
        return Word(text, node.text, script.place(node.start), known, script.origin, lambda i: script.place(min(start + i, last)))


# How the reader reads each kind of statement but a simple command (which `_Reader._statement` reads
# itself); the kinds not named here run nothing.
_STATEMENTS: dict[str, Callable[[_Reader, Syntax, Script, Shell, Flow], None]] = {
    **dict.fromkeys(("compound_statement", "do_group", "program", "ERROR"), _Reader.statements),
    **dict.fromkeys(("for_statement", "c_style_for_statement", "select_statement"), _Reader.for_statement),
    **dict.fromkeys(("variable_assignment", "variable_assignments", "declaration_command", "unset_command"), _Reader.assignment),
    "redirected_statement": _Reader.redirected_statement,
    "list": _Reader.list,
    "pipeline": _Reader.pipeline,
    "negated_command": _Reader.negated_command,
    "subshell": _Reader.subshell,
    "if_statement": _Reader.if_statement,
    "while_statement": _Reader.while_statement,
    "case_statement": _Reader.case_statement,
    "function_definition": _Reader.function_definition,
    "test_command": _Reader.test_command,
}
