"""Where things stand in the source lines: the span of a scalar, the lines of a mapping entry, whether
a mapping is written in flow style and where it closes, the file's indentation step and quoting.

The loader keeps where each node starts; fixes also need where it ends. Every answer here is read
from the source lines and checked against what the loader parsed (a plain scalar must read as its
value); when the text is not what was expected, the answer is None and no fix is offered.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from meshlint.source.document import Node

Place = tuple[int, int]  # 1-based (line, column)


def line_text(node: Node, line: int) -> str:
    lines = node.table.lines
    return lines[line - 1] if 1 <= line <= len(lines) else ""


def indentation(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


def start_of(node: Node) -> Place:
    """Where a node's value starts: for a mapping or sequence, where the loader saw it begin."""
    if isinstance(node.value, (dict, list)):
        start = node.table.starts.get(id(node.value))
        if start is not None:
            return start
    return node.pos.line, node.pos.column


# --- scalars ----------------------------------------------------------------------------------------


def scalar_end(node: Node) -> Place | None:
    """Where a scalar written on one line ends (exclusive): after its closing quote, or after its text
    for a plain scalar, which must read exactly as the value the loader gave."""
    line, column = node.pos.line, node.pos.column
    text = line_text(node, line)
    if node.style in ('"', "'"):
        if text[column - 1 : column] != node.style:
            return None
        end = closing_quote(text, column - 1, node.style)
        return (line, end + 1) if end is not None else None
    if node.style is not None or isinstance(node.value, (dict, list)):
        return None
    written = node.raw if node.raw is not None else node.value if isinstance(node.value, str) else None
    if not written or text[column - 1 : column - 1 + len(written)] != written:
        return None
    if text[column - 1 + len(written) : column + len(written)] not in ("", " ", "\t", ",", "]", "}"):
        return None  # the text goes on: this is not where the scalar stands
    return line, column + len(written)


def closing_quote(text: str, start: int, quote: str) -> int | None:
    """The 0-based index just past the quote that closes the quoted scalar opening at `start`."""
    i = start + 1
    while i < len(text):
        char = text[i]
        if quote == '"' and char == "\\":
            i += 2
            continue
        if char == quote:
            if quote == "'" and text[i + 1 : i + 2] == "'":
                i += 2
                continue
            return i + 1
        i += 1
    return None


def quoted(text: str, quote: str) -> str:
    """`text` as a YAML scalar in this quote style."""
    if quote == "'":
        return "'" + text.replace("'", "''") + "'"
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{escaped}"'


def in_scalar(text: str, style: str | None) -> str | None:
    """`text` as it must be written inside a one-line scalar of `style` (None: plain), or None when a
    plain scalar could not hold it unchanged."""
    if style == "'":
        return text.replace("'", "''")
    if style == '"':
        return text.replace("\\", "\\\\").replace('"', '\\"')
    if style is None and (": " in text or " #" in text or "\n" in text):
        return None
    return text


def preferred_quote(*nodes: Node) -> str:
    """The quote character these mappings' quoted values use most (double when none is quoted)."""
    styles: Counter[str] = Counter()
    for node in nodes:
        if node.is_map:
            for entry in node.table.maps.get(id(node.value), {}).values():
                if entry[4] in ('"', "'"):
                    styles[entry[4]] += 1
    return "'" if styles["'"] > styles['"'] else '"'


# --- flow collections -------------------------------------------------------------------------------


def is_flow(node: Node) -> bool:
    line, column = start_of(node)
    return line_text(node, line)[column - 1 : column] in ("{", "[")


def flow_close(node: Node) -> Place | None:
    """Where the `}` or `]` closing a flow collection stands (quoted scalars and comments skipped; a
    quoted scalar that runs over lines is not followed, and gives None)."""
    line, column = start_of(node)
    depth = 0
    index = column - 1
    while line <= len(node.table.lines):
        text = line_text(node, line)
        while index < len(text):
            char = text[index]
            if char in "\"'" and (index == 0 or text[index - 1] in " \t{[,:"):
                end = closing_quote(text, index, char)
                if end is None:
                    return None
                index = end
                continue
            if char == "#" and (index == 0 or text[index - 1] in " \t"):
                break
            if char in "{[":
                depth += 1
            elif char in "}]":
                depth -= 1
                if depth == 0:
                    return line, index + 1
            index += 1
        line, index = line + 1, 0
    return None


def before_close(node: Node) -> tuple[Place, bool] | None:
    """Where an item is added to a flow collection, and whether it needs a comma before it: just
    after the last thing written before the closing bracket."""
    close = flow_close(node)
    if close is None:
        return None
    line, column = close
    while True:
        text = line_text(node, line)[: column - 1]
        stripped = _without_comment(text).rstrip()
        if stripped:
            last = stripped[-1]
            return (line, len(stripped) + 1), last not in "{[,"
        line -= 1
        if line < 1:
            return None
        column = len(line_text(node, line)) + 1


def _without_comment(text: str) -> str:
    match = re.search(r"(^|\s)#", text)
    return text[: match.start()] if match else text


# --- block mappings ---------------------------------------------------------------------------------


def key_starts_line(node: Node) -> bool:
    """The entry's key is the first thing on its line, so the entry is whole lines."""
    if node.key_pos is None:
        return False
    return line_text(node, node.key_pos.line)[: node.key_pos.column - 1].strip() == ""


def entry_last_line(entry: Node) -> int | None:
    """The last line of a block mapping entry (its key at the start of a line): the key's line, the
    lines of its value (more indented, a compact `- ` list at the key's own indentation, a flow
    collection to its closing bracket, a quoted scalar to its closing quote). Trailing blank lines and
    comments less indented than the value are not part of it. None for what a line scan cannot tell
    (a block scalar that keeps its trailing blank lines)."""
    if entry.key_pos is None:
        return None
    key_line, key_column = entry.key_pos.line, entry.key_pos.column
    if entry.style in ("|", ">") and "+" in line_text(entry, entry.pos.line)[entry.pos.column - 1 :].split("#", 1)[0]:
        return None
    last = key_line
    if isinstance(entry.value, (dict, list)) and is_flow(entry):
        close = flow_close(entry)
        return close[0] if close is not None else None
    if entry.style in ('"', "'"):
        quote_end = _quote_end_line(entry)
        if quote_end is None:
            return None
        last = quote_end
    compact = isinstance(entry.value, list)
    for line in range(last + 1, len(entry.table.lines) + 1):
        text = line_text(entry, line)
        indent = indentation(text)
        if indent > key_column - 1 and text.strip():
            last = line  # more indented: the value's (a comment-like line may be a block scalar's text)
        elif compact and indent == key_column - 1 and (text.lstrip().startswith(("- ", "-\t")) or text.strip() == "-"):
            last = line  # an item of a list written at the key's own indentation
        elif text.strip() and not text.lstrip().startswith("#"):
            break  # a sibling, or the end of the mapping; blank lines and less indented comments are passed over
    return last


def _quote_end_line(entry: Node) -> int | None:
    """The line of the quote that closes a quoted scalar, which may run over several lines."""
    quote = entry.style or '"'
    line = entry.pos.line
    if closing_quote(line_text(entry, line), entry.pos.column - 1, quote) is not None:
        return line
    for line in range(entry.pos.line + 1, len(entry.table.lines) + 1):
        # Prefixed by a space: `closing_quote` starts after the opening quote it is given.
        if closing_quote(" " + line_text(entry, line), 0, quote) is not None:
            return line
    return None


def last_entry(mapping: Node) -> Node | None:
    """The entry written last in a mapping (by where its key stands)."""
    entries = [value for _, value in mapping.items() if value.key_pos is not None]
    return max(entries, key=lambda n: (n.key_pos.line, n.key_pos.column) if n.key_pos else (0, 0), default=None)


# Lines read on each side of a fix to learn the file's indentation: a whole file per fix made a stream
# of thousands of documents quadratic (a 10k-document `helm template` stream took minutes), and the
# documents of a rendered stream need not share one style anyway.
INDENT_WINDOW = 400


def indent_step(node: Node) -> int:
    """How far the file indents a nested block mapping around this node (the most common step; of
    steps as common, the first met), 2 when it has none."""
    global _steps
    lines = node.table.lines
    if _steps is None or _steps.lines is not lines:
        _steps = _Steps(lines)
    line = start_of(node)[0]
    steps = _steps.between(max(0, line - 1 - INDENT_WINDOW), min(len(lines), line + INDENT_WINDOW) - 1)
    return steps.most_common(1)[0][0] if steps else 2


class _Steps:
    """The step from each line to the next of one file's lines (0 where the first does not open a
    block mapping that the second nests in), worked out a block of lines at a time and only once:
    every fix of a file reads the same lines around it, and a stream's fixes read 800 lines each."""

    BLOCK = 1024
    __slots__ = ("done", "lines", "steps")

    def __init__(self, lines: Sequence[str]) -> None:
        self.lines = lines
        self.steps = bytearray(max(0, len(lines) - 1))  # steps[i]: from line i to line i + 1 (0-based)
        self.done = bytearray(-(-len(self.steps) // self.BLOCK))

    def between(self, first: int, end: int) -> Counter[int]:
        """How often each step is met from line `first` on, up to the step into line `end`, in the
        order they are first met."""
        if first >= end:
            return Counter()
        for block in range(first // self.BLOCK, (end - 1) // self.BLOCK + 1):
            if not self.done[block]:
                self._work_out(block)
        steps = Counter(self.steps[first:end])
        del steps[0]
        return steps

    def _work_out(self, block: int) -> None:
        start = block * self.BLOCK
        lines = self.lines[start : min(start + self.BLOCK, len(self.steps)) + 1]
        for n, (previous, current) in enumerate(itertools.pairwise(lines), start):
            head = previous.split(" #", 1)[0].rstrip()
            if head.endswith(":") and current.strip() and not current.lstrip().startswith(("#", "- ")):
                step = indentation(current) - indentation(previous)
                if 0 < step <= 8:
                    self.steps[n] = step
        self.done[block] = 1


_steps: _Steps | None = None  # the last file's: its fixes come one after the other


def plain_key(key: str) -> bool:
    """A key that can be written unquoted (annotation and label keys are)."""
    return bool(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._/-]*", key))


def written(value: Any) -> str:
    """A boolean or number as YAML writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
