"""Markdown prose re-wrapped to a width: `meshlint explain` fits the reader's terminal, whatever width the
rule's docstring was written at.

Paragraphs and list items are joined and wrapped again; fenced code blocks, tables, headings and
indented code are kept line for line, since a YAML example or a table broken across lines means
something else or nothing. An inline code span is never split, and a word longer than the width
(a URL) stays whole on a line of its own.
"""

from __future__ import annotations

import re
import textwrap

_LIST_ITEM = re.compile(r"^(\s*)([-*+]|[0-9]+[.)])\s+")
_CODE_SPAN = re.compile(r"`[^`]*`")
_KEPT_SPACE = "\x00"  # stands for a space inside a code span while the text is wrapped


def reflow(text: str, width: int) -> str:
    """TEXT (markdown) with its prose wrapped at WIDTH columns; everything else as it was."""
    out: list[str] = []
    block: list[str] = []  # the prose lines of the paragraph or list item being read
    fenced = False

    def flush() -> None:
        if block:
            out.extend(_wrapped(block, width))
            block.clear()

    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            flush()
            fenced = not fenced
            out.append(line)
        elif fenced or _verbatim(line, bool(block)):
            flush()
            out.append(line)
        elif _LIST_ITEM.match(line):
            flush()
            block.append(line)
        else:
            block.append(line)
    flush()
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def _verbatim(line: str, in_block: bool) -> bool:
    """A line kept as it is: blank, a heading, a table row, or indented code (not a list item's
    continuation, which follows a prose line)."""
    stripped = line.strip()
    if not stripped or stripped.startswith(("#", "|")):
        return True
    return line.startswith("    ") and not in_block


def _wrapped(block: list[str], width: int) -> list[str]:
    head = block[0]
    match = _LIST_ITEM.match(head)
    first_indent = match.group() if match else head[: len(head) - len(head.lstrip())]
    joined = " ".join([head[len(first_indent) :].strip(), *(line.strip() for line in block[1:])])
    joined = _CODE_SPAN.sub(lambda span: span.group().replace(" ", _KEPT_SPACE), joined)
    lines = textwrap.wrap(
        joined, width, initial_indent=first_indent, subsequent_indent=" " * len(first_indent),
        break_long_words=False, break_on_hyphens=False,
    )
    return [line.replace(_KEPT_SPACE, " ") for line in lines]
