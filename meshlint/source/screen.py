"""Documents read for their syntax alone: what no rule and no part of the mesh context reads.

A Secret, a CRD or an application's ConfigMap only has to be valid YAML without a duplicate key; its
data is never looked at. Such a document is parsed by libyaml with no Python object per event
(`readers.parses`), and its keys are screened for duplicates from the text. The screen may only
err towards composing: any construct it cannot follow (flow mappings, anchors, quoted or non-string
keys, multi-line quoted scalars, an open flow sequence, tabs, deep indentation) sends the document to
the composer, which then reports what it finds exactly as before.
"""

from __future__ import annotations

import re

from meshlint.source.toplevel import key_lines
from meshlint.source.yaml11 import resolve_plain

# A block mapping document that names its kind and apiVersion plainly at column 0, on one line each
# (a following indented line would continue the scalar).
_NOT_CONTINUED = r"[ \t]*(?:#.*)?(?:\r?\n|\Z)(?!(?:[ \t]*\r?\n)*[ \t]+[^\s#])"
_KIND = re.compile(r"^kind:[ \t]*([A-Za-z0-9][A-Za-z0-9._-]*)" + _NOT_CONTINUED, re.M)
_API_VERSION = re.compile(r"^apiVersion:[ \t]*([A-Za-z0-9][A-Za-z0-9./_-]*)" + _NOT_CONTINUED, re.M)
# Any top-level kind or apiVersion key, quoted or spaced (`"kind" :`), counted with `key_lines`.
_TOP_KIND = re.compile(r"kind[\"']?[ \t]*:")
_TOP_API = re.compile(r"apiVersion[\"']?[ \t]*:")

# The screen's patterns are searched in the text with a line break put before it (`lined`), and a line
# start is that break, a literal: the regex engine then skips to each break, where a pattern under
# re.M's `^` is tried at every character (most of the screen's time, on a tree of big CRDs).
_LEAD = r"\n[ ]*(?:-[ ]+)*"  # a line's start, its indentation, then the dashes of sequence items
# What the screen cannot follow, each pattern searched only when a character it needs is in the text
# (one alternation of them all costs more than composing a small document).
_UNFOLLOWABLE: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = tuple(
    (triggers, re.compile(pattern, re.M))
    for triggers, pattern in (
        (("\t",), r"\n[ ]*\t"),  # a tab in the indentation
        (("&",), r"&(?<=[\s\[{,]&)\S"),  # an anchor, after a space, a line break or a flow indicator
        (("*",), r"\*(?<=[\s\[{,]\*)\S"),  # an alias
        (("{",), r"[\n:\-\[,][ \t]*\{"),  # a flow mapping
        (("?",), _LEAD + r"\?(?:\s|$)"),  # an explicit key
        (('"', "'"), _LEAD + r"[\"'][^\n]*[\"'][ \t]*:(?:\s|$)"),  # a quoted key
        # A double-quoted scalar that goes on to the next line, at a line's start or after `: `, `- `...
        (('"',), r"[\n:\-\[,](?:(?<=\n)|[ \t])[ \t]*\"(?:[^\"\\\n]|\\.)*\\?$"),
        (("'",), r"[\n:\-\[,](?:(?<=\n)|[ \t])[ \t]*'(?:[^'\n]|'')*$"),  # a single-quoted one
        (("[",), r"\[[^\]\n]*$"),  # a flow sequence that goes on to the next line
        (("...",), r"\n\.\.\.(?:\s|$)"),  # a document end marker: more than one document
        (("\n---",), r"\n(?<=[\s\S]\n)---(?:\s|$)"),  # a second document start (not the break put before)
        (("---",), r"\n---[ \t]*[^\s#]"),  # content on the document start line
        ((" " * 150,), r"\n {150}"),  # indentation deep enough to approach the nesting limit
        (
            (":",),  # an empty key, or one that may not be a string (`on`, `1`, `~`, `<<`): two spellings could be one key
            _LEAD
            + r"(?:(?:[yYnN]|yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|~|null|Null|NULL|<<|(?:[+.0-9]|-(?=\S))[^:\n]*)[ \t]*)?:(?:\s|$)",
        ),
    )
)
# A key of a block mapping: the indentation and sequence dashes before it, and the key.
# (A `#` after a space starts a comment, so it is never part of a key.)
_BODY = r"(?:[^\n#]|(?<![ \t])#)*?"
_KEY = re.compile(r"\n([ ]*(?:-[ ]+)*)([^\s#'\"?:&*!|>%@`\[\]{},\-]" + _BODY + r"|-[^\s]" + _BODY + r")[ \t]*:(?:[ \t]|\r?$)", re.M)


def plain_kind(text: str) -> tuple[str, str] | None:
    """(kind, apiVersion) of a document that states both plainly, once, at column 0; else None."""
    kind = _KIND.search(text)
    api = _API_VERSION.search(text)
    if kind is None or api is None or len(key_lines(text, _TOP_KIND)) != 1 or len(key_lines(text, _TOP_API)) != 1:
        return None
    kind_value, api_value = resolve_plain(kind.group(1)), resolve_plain(api.group(1))
    if not isinstance(kind_value, str) or not isinstance(api_value, str):
        return None
    return kind_value, api_value


def surely_valid(text: str) -> bool:
    """True only when `text` parses, holds one document at most, and has no duplicate key."""
    if text.count("[") + text.count("{") >= 100:
        return False
    lined = "\n" + text
    for triggers, pattern in _UNFOLLOWABLE:
        if any(trigger in text for trigger in triggers) and pattern.search(lined):
            return False
    from meshlint.source import readers

    return readers.parses(text) and not _may_repeat_a_key(lined)


def _may_repeat_a_key(lined: str) -> bool:
    """Could two keys of one block mapping be equal? Keys are followed by their column; a mapping
    ends at a key left of it, or at a sequence dash left of or at its column. Lines that are not keys
    (scalars, items, comments) end nothing, which can only make this answer yes more often."""
    scopes: list[tuple[int, set[str]]] = []  # open mappings, innermost last: (column, keys)
    for match in _KEY.finditer(lined):
        prefix, key = match.group(1), match.group(2)
        column = len(prefix)
        dash = prefix.rfind("-")
        limit = dash if dash >= 0 else column  # a dash at `dash` starts a new item: mappings right of it end
        while scopes and (scopes[-1][0] > limit if dash >= 0 else scopes[-1][0] > column):
            scopes.pop()
        if dash < 0 and scopes and scopes[-1][0] == column:
            keys = scopes[-1][1]
            if key in keys:
                return True
            keys.add(key)
        else:
            scopes.append((column, {key}))
    return False
