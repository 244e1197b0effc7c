"""Edits to the quit call in a container's command: make it a POST, or move it into `trap ... EXIT`.

A call inside a script is edited in the string that holds the script, where it is written (a literal
block, or a one-line string whose quotes are escaped as they need); a call in exec form gets new list
items. Each edit is placed through the string's own position map and checked against the file: the
word it follows must stand there.
"""

from __future__ import annotations

import re

from meshlint.fix import text as src
from meshlint.fix.edits import Edit, insertion
from meshlint.fix.mapping import Change
from meshlint.mesh.facts.quitcalls import QuitCall
from meshlint.mesh.facts.shellwords import is_shell
from meshlint.source.document import Node

# What makes each client POST, and what would keep it a GET whatever is added.
_POST = {"curl": ("-X", "POST"), "wget": ("--post-data=",)}
_FORCED_GET = re.compile(r"(^|\s)(-X\s*GET|--request(=|\s+)GET|-G|--get)(\s|$)")
# Compound commands, which a quit call may sit inside: then it is not the script's to move.
_COMPOUND = re.compile(r"(^|[\s;&|(])(if|then|else|elif|fi|for|while|until|do|done|case|esac|function|\{|\})(\s|;|$)")
_EXIT_TRAP = re.compile(r"(^|[\s;])trap\s+.*\b(EXIT|0)\b", re.M)


def in_script(call: QuitCall) -> tuple[Node, int] | None:
    """The string holding the call's script, and where the call starts in it."""
    for node in call.container.argv:
        text = node.text or ""
        start = text.find(call.command)
        while start >= 0:
            if node.position_at(start) == call.position:
                return node, start
            start = text.find(call.command, start + 1)
    return None


def exec_form(call: QuitCall) -> bool:
    texts = [n.text or "" for n in call.container.argv]
    return not (texts and is_shell(texts[0])) and not any("\n" in t or " " in t.strip() for t in texts if "quitquitquit" in t)


def make_post(call: QuitCall) -> Change | None:
    """Add `-X POST` (curl) or `--post-data=` (wget) right after the client's name."""
    flags = _POST.get(call.tool)
    if flags is None or _FORCED_GET.search(call.command):
        return None
    if exec_form(call):
        return _post_items(call, flags)
    found = in_script(call)
    if found is None:
        return None
    node, start = found
    match = re.search(rf"(?<![\w./-])(?:[\w./-]*/)?{call.tool}(?=[\s'\"]|$)", call.command)
    if match is None:
        return None
    return _insert_in_string(node, start + match.end(), " " + " ".join(flags), call.tool)


def _post_items(call: QuitCall, flags: tuple[str, ...]) -> Change | None:
    """The client's own item of an exec-form command is followed by the flags, as items of its list."""
    container = call.container.node
    for key in ("command", "args"):
        sequence = container.get(key)
        for item in sequence.elements():
            if (item.text or "").rsplit("/", 1)[-1] != call.tool:
                continue
            quote = item.style if item.style in ('"', "'") else None
            words = [src.quoted(f, quote) if quote else f for f in flags]
            touched = frozenset({src.start_of(sequence)})
            if src.is_flow(sequence):
                end = src.scalar_end(item)
                return Change((insertion(*end, "".join(", " + w for w in words)),), touched) if end is not None else None
            line = src.line_text(item, item.pos.line)
            dash = line[: item.pos.column - 1].rstrip()
            if not dash.endswith("-") or dash[:-1].strip():
                return None
            indent = " " * (len(dash) - 1)
            return Change((insertion(item.pos.line, len(line) + 1, "".join(f"\n{indent}- {w}" for w in words)),), touched)
    return None


def trap_on_exit(call: QuitCall) -> Change | None:
    """Take the quit call out of the script's flow and run it from `trap '...' EXIT` at the top, so
    it runs however the script ends. Only for simple scripts: the call after `&&`, or on its own
    line (or after `;`), no compound commands, no EXIT trap already (a second one would replace it)."""
    found = in_script(call)
    if found is None or "'" in call.command or call.in_exit_trap:
        return None
    node, start = found
    script = node.text or ""
    if _COMPOUND.search(script) or _EXIT_TRAP.search(script) or not _top_level(script[:start]) or any(c in call.command for c in "()`"):
        return None
    end = start + len(call.command)
    before = script[:start].rstrip(" \t")
    if before.endswith("&&"):
        cut = len(before[:-2].rstrip(" \t"))
    elif before.endswith((";", "\n")) and before[:-1].strip():
        cut = len(before) - 1
    else:
        return None
    first = 0
    if script.startswith("#!"):
        first = script.find("\n") + 1
        if first == 0:
            return None
    multiline = "\n" in script.rstrip("\n")
    trap = f"trap '{call.command}' EXIT" + ("\n" if multiline else "; ")
    removal = _string_edit(node, cut, end, "")
    if removal is None:
        return None
    if multiline:
        column = node.position_at(first).column
        addition = _insert_in_string(node, first, trap + " " * (column - 1), None)
    else:
        addition = _insert_in_string(node, first, trap, None)
    if addition is None:
        return None
    return Change(addition.edits + removal.edits, addition.touched)


def _top_level(before: str) -> bool:
    """What comes before the call closes every subshell and command substitution it opens."""
    return before.count("(") == before.count(")") and before.count("`") % 2 == 0


def _insert_in_string(node: Node, offset: int, text: str, after_word: str | None) -> Change | None:
    """Insert `text` at `offset` of the string `node`, escaped for its quotes; with `after_word`, the
    file must show that word just before the place."""
    escaped = text if node.style == "|" else src.in_scalar(text, node.style)
    if escaped is None or (node.style not in ("|", '"', "'", None)):
        return None
    place = node.position_at(offset)
    line = src.line_text(node, place.line)
    if after_word is not None and line[place.column - 1 - len(after_word) : place.column - 1] != after_word:
        return None
    if after_word is None and not _maps_exactly(node, offset):
        return None
    return Change((insertion(place.line, place.column, escaped),), frozenset({(node.pos.line, node.pos.column)}))


def _string_edit(node: Node, start: int, end: int, text: str) -> Change | None:
    """Replace characters `start`-`end` of the string `node` (its positions checked)."""
    if not (_maps_exactly(node, start) and _maps_exactly(node, end - 1)):
        return None
    a, b = node.position_at(start), node.position_at(end)
    return Change((Edit(a.line, a.column, b.line, b.column, text),), frozenset({(node.pos.line, node.pos.column)}))


def _maps_exactly(node: Node, offset: int) -> bool:
    """The character at `offset` of the string stands where the position map says (no escape before
    it shifted the columns); a line break maps to the end of its line."""
    value = node.text or ""
    if node.style not in ("|", '"', "'", None):
        return False
    if offset >= len(value):
        return True
    place = node.position_at(offset)
    char = value[offset]
    line = src.line_text(node, place.line)
    if char == "\n":
        return place.column == len(line) + 1
    return line[place.column - 1 : place.column] == char and (node.style != "'" or char != "'")
