"""The lines of a document's text that hold one of its top-level keys (`kind:`, `apiVersion:`), found
from the key's literal.

A pattern anchored with `^` under re.M is tried at every character of the text, and a search that
fails (a Deployment is no Namespace) or a `findall` reads all of it: such scans were a twentieth of a
--jobs 1 run in the first pass's pre-checks, and as much again in the check pass's screen. The key's
literal is found by the regex engine's fast scan instead, and only the places at column 0 are kept.
"""

from __future__ import annotations

import re


def key_lines(text: str, key: re.Pattern[str]) -> list[str]:
    """Each line at whose start `key` matches, after one optional quote (`^["']?` + `key` under re.M),
    from its start to its end. `key` starts with the key's name, and no match of it holds the
    start of another (so none at a line's start is passed over)."""
    lines = []
    for match in key.finditer(text):
        start = match.start()
        if start and text[start - 1] in "\"'":
            start -= 1
        if start == 0 or text[start - 1] == "\n":
            end = text.find("\n", start)
            lines.append(text[start:] if end < 0 else text[start:end])
    return lines
