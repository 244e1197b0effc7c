"""Edits to mappings as written: add an entry (creating the mappings above it), remove one, move one,
rename a key, replace a scalar. Block mappings get whole lines at their own indentation; flow
mappings (`{app: web}`) get items before their closing brace. The text of the file around the edit,
and the text of a moved entry (its comments and quoting), is kept as written.
"""

from collections.abc import Sequence
from typing import NamedTuple

from meshlint.fix import text as src
from meshlint.fix.edits import SAFE, Edit, Fix, insertion, make_fix
from meshlint.source.document import Node


class Content(NamedTuple):
    """What to put into a mapping: its lines in block style, the first at indentation 0 and the others
    relative to it, and the same in flow style when it fits on one line (None when it does not)."""

    block: tuple[str, ...]
    flow: str | None


def entry(key: str, value: str) -> Content:
    """A new `key: value` entry; `value` is written as given (quoted by the caller when it must be)."""
    head = key if src.plain_key(key) else src.quoted(key, '"')
    return Content((f"{head}: {value}",), f"{head}: {value}")


def nested(keys: Sequence[str], content: Content, step: int) -> Content:
    """`content` under new mappings `keys` (outermost first)."""
    block, flow = list(content.block), content.flow
    for key in reversed(keys):
        block = [f"{key}:"] + [" " * step + line if line else line for line in block]
        flow = f"{key}: {{{flow}}}" if flow is not None else None
    return Content(tuple(block), flow)


class Change(NamedTuple):
    edits: tuple[Edit, ...]
    touched: frozenset[tuple[int, int]]  # where the nodes whose text changes start


def add(mapping: Node, content: Content, missing: Sequence[str] = (), first: bool = False) -> Change | None:
    """Add `content` to `mapping`, under new mappings `missing` (outermost first) when they are not
    there yet: after its last entry in block style (before its first, with `first`), before its
    closing brace in flow style."""
    if not mapping.is_map:
        return None
    touched = frozenset({src.start_of(mapping)})
    if src.is_flow(mapping):
        wanted = nested(missing, content, 0).flow
        place = src.before_close(mapping)
        if wanted is None or place is None:
            return None
        (line, column), comma = place
        before = src.line_text(mapping, line)[column - 2 : column - 1]
        prefix = ", " if comma else "" if before in "{[" else " "
        return Change((insertion(line, column, prefix + wanted),), touched)
    last = src.last_entry(mapping)
    if last is None or last.key_pos is None:
        return None
    end = src.entry_last_line(last)
    if end is None:
        return None
    indent = " " * (last.key_pos.column - 1)
    # The step is read from the file only for the mappings to create; content alone keeps its lines.
    lines = nested(missing, content, src.indent_step(mapping)).block if missing else content.block
    if first:
        head = min((v for _, v in mapping.items() if v.key_pos is not None), key=lambda v: (v.key_pos.line, v.key_pos.column) if v.key_pos else (0, 0))
        if head.key_pos is not None and src.key_starts_line(head):
            text = "".join((indent + line if line else "") + "\n" for line in lines)
            return Change((insertion(head.key_pos.line, 1, text),), touched)
    body = "".join("\n" + (indent + line if line else "") for line in lines)
    return Change((insertion(end, len(src.line_text(mapping, end)) + 1, body),), touched)


def fill(parent: Node, key: str, content: Content) -> Change | None:
    """Give the entry `key: ` that holds nothing (null, perhaps with a comment after it) `content` as its
    mapping, in block style under its key."""
    node = parent.get(key)
    if node.value is not None or node.key_pos is None or src.is_flow(parent) or not _key_written(node, key):
        return None
    line = src.line_text(node, node.key_pos.line)
    rest = line[node.key_pos.column - 1 :].split(":", 1)
    if len(rest) != 2 or (rest[1].strip() and not rest[1].strip().startswith("#")):
        return None  # `key: null` or `key: ~`: written out, and a person's to change
    indent = " " * (node.key_pos.column - 1 + src.indent_step(parent))
    body = "".join("\n" + (indent + text if text else "") for text in content.block)
    return Change((insertion(node.key_pos.line, len(line) + 1, body),), frozenset({src.start_of(parent)}))


def remove(mapping: Node, key: str, parent: Node | None = None, parent_key: str | None = None) -> Change | None:
    """Remove the entry `key`; when it is the mapping's only entry, remove the mapping's own entry from
    `parent` instead (an `annotations:` left empty goes too)."""
    if len(mapping.value) == 1 and parent is not None and parent_key is not None and len(parent.value) > 1:
        return remove(parent, parent_key)
    node = mapping.get(key)
    if not node.exists or node.key_pos is None or not _key_written(node, key):
        return None
    touched = frozenset({src.start_of(mapping)})
    if src.is_flow(mapping):
        span = _flow_item(mapping, node)
        return Change((Edit(*span, ""),), touched) if span is not None else None
    if len(mapping.value) == 1 or not src.key_starts_line(node):
        return None  # an empty block mapping would read as null; the first key of a `- ` item holds its line
    lines = entry_lines(node)
    if lines is None:
        return None
    first, last = lines
    return Change((Edit(first, 1, last + 1, 1, ""),), touched)


def lift(mapping: Node, key: str) -> Content | None:
    """The entry `key` as it is written, with the comment lines just above it, ready to be added
    elsewhere (its lines relative to its own indentation)."""
    node = mapping.get(key)
    if not node.exists or node.key_pos is None or not _key_written(node, key):
        return None
    if src.is_flow(mapping) or not src.key_starts_line(node):
        span = _key_value_span(node)
        if span is None:
            return None
        line, column, _, end = span
        text = src.line_text(node, line)[column - 1 : end - 1]
        return Content((text,), text)
    lines = entry_lines(node)
    if lines is None:
        return None
    first, last = lines
    shift = node.key_pos.column - 1
    block = []
    for line in range(first, last + 1):
        text = src.line_text(node, line)
        if text.strip() and src.indentation(text) < shift:
            return None
        block.append(text[shift:] if text.strip() else "")
    flow = None
    if first == last == node.key_pos.line:
        span = _key_value_span(node)
        if span is not None:
            flow = src.line_text(node, first)[shift : span[3] - 1]
    return Content(tuple(block), flow)


def wrap(mapping: Node, key: str, new_key: str) -> Change | None:
    """Put the entry `key` under a new mapping `new_key` where it stands (`key: v` becomes
    `new_key:` with `key: v` indented under it), in a block mapping."""
    node = mapping.get(key)
    if not node.exists or node.key_pos is None or new_key in mapping.value or src.is_flow(mapping):
        return None
    if not src.key_starts_line(node) or not _key_written(node, key):
        return None
    last = src.entry_last_line(node)
    if last is None:
        return None
    step = " " * src.indent_step(mapping)
    first = node.key_pos.line
    lines = [src.line_text(node, line) for line in range(first, last + 1)]
    body = "\n".join(step + text if text.strip() else text for text in lines)
    edit = Edit(first, 1, last, len(lines[-1]) + 1, " " * (node.key_pos.column - 1) + f"{new_key}:\n" + body)
    return Change((edit,), frozenset({src.start_of(mapping)}))


def rename(mapping: Node, key: str, new: str) -> Change | None:
    """Write the key `key` as `new`, in the key's own quoting."""
    node = mapping.get(key)
    if not node.exists or node.key_pos is None or new in mapping.value:
        return None
    line, column = node.key_pos.line, node.key_pos.column
    text = src.line_text(node, line)
    quote = text[column - 1 : column]
    if quote in ('"', "'"):
        if text[column : column + len(key) + 1] != key + quote:
            return None
        return Change((Edit(line, column + 1, line, column + 1 + len(key), new),), frozenset({src.start_of(mapping)}))
    if not _key_written(node, key) or text[column - 1 : column] in ('"', "'") or not src.plain_key(new):
        return None
    return Change((Edit(line, column, line, column + len(key), new),), frozenset({src.start_of(mapping)}))


def replace_scalar(node: Node, text: str) -> Change | None:
    """Write a one-line scalar anew (its quotes included in `text`)."""
    end = src.scalar_end(node)
    if end is None:
        return None
    return Change((Edit(node.pos.line, node.pos.column, *end, text),), frozenset({(node.pos.line, node.pos.column)}))


def as_fix(title: str, node: Node, change: Change | None, applicability: str = SAFE) -> Fix | None:
    """The fix of a change made in `node`'s file."""
    if change is None:
        return None
    return make_fix(title, node.table.path, change.edits, applicability, change.touched)


def merged(*changes: Change | None) -> Change | None:
    """All of these changes as one, or None when one of them could not be made."""
    if any(c is None for c in changes):
        return None
    present = [c for c in changes if c is not None]
    return Change(tuple(e for c in present for e in c.edits), frozenset().union(*(c.touched for c in present)))


# --- where an entry is written ----------------------------------------------------------------------


def _key_written(node: Node, key: str) -> bool:
    """The key stands where the loader says, spelt as parsed (possibly quoted)."""
    assert node.key_pos is not None
    text = src.line_text(node, node.key_pos.line)[node.key_pos.column - 1 :]
    for written in (key, f'"{key}"', f"'{key}'"):
        if text.startswith(written) and text[len(written) :].lstrip(" \t").startswith(":"):
            return True
    return False


def entry_lines(node: Node) -> tuple[int, int] | None:
    """An entry's lines, with the comment lines at its indentation just above it."""
    assert node.key_pos is not None
    last = src.entry_last_line(node)
    if last is None:
        return None
    first = node.key_pos.line
    indent = node.key_pos.column - 1
    while first > 1:
        above = src.line_text(node, first - 1)
        if above.lstrip().startswith("#") and src.indentation(above) == indent:
            first -= 1
        else:
            break
    return first, last


def _key_value_span(node: Node) -> tuple[int, int, int, int] | None:
    """Line, start column, end line and end column of `key: value` when both are on one line."""
    assert node.key_pos is not None
    line, column = node.key_pos.line, node.key_pos.column
    if isinstance(node.value, (dict, list)):
        if not src.is_flow(node):
            return None
        close = src.flow_close(node)
        end = (close[0], close[1] + 1) if close is not None else None
    else:
        end = src.scalar_end(node)
    if end is None or end[0] != line:
        return None
    return line, column, end[0], end[1]


def _flow_item(mapping: Node, node: Node) -> tuple[int, int, int, int] | None:
    """The text to cut to take one item out of a flow mapping: the item and the comma before it (the
    one after it, for the first item)."""
    span = _key_value_span(node)
    if span is None:
        return None
    line, column, end_line, end_column = span
    text = src.line_text(node, line)
    before = text[: column - 1].rstrip()
    if before.endswith(","):
        return line, len(before), end_line, end_column
    after = src.line_text(node, end_line)[end_column - 1 :]
    stripped = after.lstrip()
    if not stripped.startswith(","):
        return None  # the only item: an empty `{}` is the caller's to decide
    rest = stripped[1:]
    return line, column, end_line, end_column + (len(after) - len(stripped)) + 1 + (len(rest) - len(rest.lstrip()))
