"""The ways meshlint reads YAML into Documents, behind one interface.

Each reader is a module with the same three names (`interface.Reader`):

- `available()`: can it read here (its extension built, its library importable)?
- `read(text, target)`: append the documents of `text` and their problems to `target`, numbering them
  from `target.index`, which it advances. It raises the parser's error after appending the
  documents before it, `DocumentTooDeep` for a document nested beyond the limit, or `Unread`, before
  appending anything, for a text it leaves to the next reader.
- `NAME`: what it is called in the cache key (a cache written by one reader is not read by another:
  PyYAML's parser and ruamel.yaml word some errors differently).

`plain` (ruamel.yaml) is the reference: it reads every text, and the readers before it read exactly
what it reads (tests/test_loader_parity.py holds them together). They are tried fastest first:

1. `native`: meshlint's C reader (meshlint/source/csrc/), the documents most files hold;
2. `events`: libyaml's events through PyYAML's C parser, one loop in Python;
3. `plain`: ruamel.yaml's composer, whose nodes are turned into the same data.

Each tells whether it can read here only when a text reaches it, so a run that never meets a text the
C reader leaves never imports PyYAML.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

from meshlint.source.readers.interface import Reader, Target, Unread

if TYPE_CHECKING:
    from meshlint.source.document import Document
    from meshlint.source.positions import Placer
    from meshlint.source.syntax import SyntaxProblem


def read(
    documents: list[Document], problems: list[SyntaxProblem], text: str, path: str, lines: Sequence[str], index: int = 0, line_offset: int = 0,
    pure: bool = False, place: Placer | None = None, counts: list[int] | None = None,
) -> int:
    """Append every document of `text`, which starts at 0-based line `line_offset` of the file whose
    `lines` are given, numbering them from `index`; returns the next index. Raises what the parser
    raises on bad YAML, after appending the documents before the error."""
    target = Target(documents, problems, path, lines, index, line_offset, place, counts, pure)
    for name in PURE if pure else CHAIN:
        try:
            reader(name).read(text, target)
        except Unread:
            continue
        return target.index
    raise AssertionError("the plain reader reads every text")


# The readers to try, in order; the last, the plain reader, reads every text. A faster one that cannot
# read here says `Unread` when a text reaches it.
CHAIN = ("native", "events", "plain")
PURE = ("plain",)
_loaded: dict[str, Reader] = {}


def reader(name: str) -> Reader:
    """A reader's module, imported when a text first reaches it: a run the C reader reads alone loads
    neither of the others (nor PyYAML)."""
    module = _loaded.get(name)
    if module is None:
        from importlib import import_module

        module = _loaded[name] = cast("Reader", import_module(f"meshlint.source.readers.{name}"))
    return module


def parses(text: str) -> bool:
    """Does `text` parse as YAML? libyaml's parser alone, no Python object per event; False where
    neither C reader can be had (the caller then reads the text in full)."""
    from meshlint.source.readers import events, native

    if native.available():
        return native.parses(text)
    return events.parses(text)


def libyaml_reads() -> bool:
    """Does libyaml read here, through meshlint's C reader or PyYAML's C extension?"""
    from meshlint.source.readers import events, native

    return native.available() or events.available()


def names() -> bytes:
    """Which readers read here, for the cache key. The C reader's libyaml release is named; PyYAML
    is not imported to tell whether it comes next: its extension's file is looked for instead."""
    from meshlint.source.readers import events, native

    if native.available():
        return f"{native.NAME} {native.libyaml_version()}, then {events.NAME if events.built() else 'ruamel'}".encode()
    return b"libyaml" if events.available() else b"ruamel"
