"""Just enough shell to read container commands: split a script into simple commands and words.

Commands in manifests are either exec form (`["sleep", "10"]`) or a script handed to a shell
(`["sh", "-c", "sleep 10 && nginx -s quit"]`). Rules need to find one simple command inside such a
script and point at the line it is on; this is not a shell parser and does not try to be one.
"""

from __future__ import annotations

import shlex

from meshlint.findings import Position
from meshlint.source.document import Node

SHELLS = frozenset(("sh", "bash", "ash", "dash", "zsh", "ksh", "busybox"))


def is_shell(word: str) -> bool:
    return word.rsplit("/", 1)[-1] in SHELLS


def segments(script: str) -> list[tuple[int, int, str]]:
    """Simple commands of a shell script: (start, end, separator before it), quotes respected."""
    found = []
    start, previous, i = 0, "", 0
    quote = None
    while i < len(script):
        ch = script[i]
        if quote:
            if ch == quote:
                quote = None
            elif ch == "\\" and quote == '"':
                i += 1
        elif ch in "'\"":
            quote = ch
        elif ch == "\\" and script[i + 1:i + 2] == "\n":
            i += 1
        elif script.startswith(("&&", "||"), i) or ch in ";\n|&":
            sep = script[i:i + 2] if script.startswith(("&&", "||"), i) else ch
            found.append((start, i, previous))
            previous = sep
            i += len(sep)
            start = i
            continue
        i += 1
    found.append((start, len(script), previous))
    return found


def words(text: str) -> list[str]:
    try:
        return shlex.split(text, comments=True)
    except ValueError:
        return text.split()


def segment_position(host: Node, script: str, start: int) -> Position:
    """Where the simple command beginning at or after `start` in the script of `host` sits in the file."""
    return host.position_at(start + len(script[start:]) - len(script[start:].lstrip()))
