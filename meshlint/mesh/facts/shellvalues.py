"""What a word of a script stands for: quotes and escapes resolved, variables expanded from the script's
own assignments, the container's env and Kubernetes' `$(VAR)`, a `${NAME:-default}` from its default.
A word whose parts the manifest does not say is kept as written, and said to be unknown."""

from __future__ import annotations

import re
from collections.abc import Callable

from meshlint.mesh.facts.bashtree import Syntax
from meshlint.mesh.facts.shellwords import KUBERNETES_VAR, MAX_EXPANSION_GROWTH, MAX_NESTING

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ESCAPE = re.compile(r"\\(.)")  # outside quotes a backslash escapes any character
_QUOTED_ESCAPE = re.compile(r'\\([$`"\\\n])')  # inside double quotes, only these


class Values:
    """Expands words against the container's env (`env`: a variable's value, None when not said) and the
    variables a script has set so far (None: assigned, value not known)."""

    def __init__(self, env: Callable[[str], str | None]) -> None:
        self.env = env

    def value(self, node: Syntax, variables: dict[str, str | None], depth: int = 0) -> tuple[str, bool]:
        """The text a word stands for, and whether every part of it is known (not when its parts
        nest deeper than any script means to: `"${A:-"${B:-...}"}"`)."""
        kind = node.type
        if depth >= MAX_NESTING:
            return node.text, False
        if kind in ("word", "number", "special_variable_name", "variable_name", "extglob_pattern"):
            return _unescaped(node.text.replace("\\\n", ""), _ESCAPE), True
        if kind == "raw_string":
            return node.text[1:-1], True
        if kind == "ansi_c_string":
            return _ansi_c(node.text[2:-1]), True
        if kind in ("string", "translated_string", "concatenation"):
            texts, known = [], True
            # `A="$A$A"` line after line doubles a variable: past the bound the word is not known.
            room = len(node.text) + MAX_EXPANSION_GROWTH
            for child in node.children:
                if child.type in ('"', '$"'):
                    continue
                if child.type == "string_content":
                    text, part_known = _unescaped(child.text, _QUOTED_ESCAPE), True
                else:
                    text, part_known = self.value(child, variables, depth + 1)
                room -= len(text)
                if room < 0:
                    return node.text, False
                texts.append(text)
                known = known and part_known
            return "".join(texts), known
        if kind == "simple_expansion":
            return self.variable(node.text[1:], node.text, variables)
        if kind == "expansion":
            return self.expansion(node, variables, depth)
        if kind == "command_substitution" and kubernetes_reference(node):
            found = self.env(node.text[2:-1])
            if found is not None:
                return found, True
        return node.text, False

    def variable(self, name: str, written: str, variables: dict[str, str | None]) -> tuple[str, bool]:
        if name in variables:
            value = variables[name]
            return (value, True) if value is not None else (written, False)
        found = self.env(name) if _NAME.match(name) else None
        return (found, True) if found is not None else (written, False)

    def expansion(self, node: Syntax, variables: dict[str, str | None], depth: int) -> tuple[str, bool]:
        """`${NAME}`, and `${NAME:-default}`, whose default is what the manifest says when NAME is unset."""
        names = [c for c in node.children if c.type == "variable_name"]
        operators = [c.text for c in node.children if c.field == "operator"]
        if len(names) != 1 or any(op not in (":-", "-", ":=", "=") for op in operators):
            return node.text, False
        value, known = self.variable(names[0].text, node.text, variables)
        if known and not (value == "" and operators and operators[0].startswith(":")):
            return value, True
        if not operators:
            return node.text, False
        parts = [self.value(c, variables, depth + 1) for c in node.children if c.named and c is not names[0]]
        return "".join(p[0] for p in parts), all(p[1] for p in parts)


def kubernetes_reference(node: Syntax) -> bool:
    return bool(KUBERNETES_VAR.fullmatch(node.text))


def _unescaped(text: str, escape: re.Pattern[str]) -> str:
    """The text with its backslash escapes resolved (most words have none: no regex runs for them)."""
    return escape.sub(r"\1", text) if "\\" in text else text


def _ansi_c(text: str) -> str:
    escapes = {"n": "\n", "t": "\t", "\\": "\\", "'": "'", '"': '"'}
    return re.sub(r"\\(.)", lambda m: escapes.get(m.group(1), m.group(0)), text)
