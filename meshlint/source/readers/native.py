"""meshlint's C reader (meshlint/source/csrc/fastread/), where it was built.

It reads the documents most files hold (no anchor, alias, merge key, tag, directive, complex or
repeated key, syntax error) into the same data and marks the other readers give, with no Python
object per event and without PyYAML imported, which a pre-commit run would otherwise pay for. Any
other text it leaves (`Unread`), so that what is reported of it is the next reader's alone. It links
the system's libyaml, which may be another release than the one inside PyYAML's wheel; what releases
parse differently (a single pair in a flow sequence, deep nesting) it leaves too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from meshlint.source.document import Document
from meshlint.source.positions import PositionTable
from meshlint.source.readers.interface import Target, Unread
from meshlint.source.syntax import MAX_DEPTH, rendered_from
from meshlint.source.yaml11 import implicit_first_characters, letter_words, resolve_plain

if TYPE_CHECKING:
    from meshlint.source._fastread import Read

NAME = "fastread"
_module: Any = None  # the extension module, or False where it was not built


def module() -> Any:
    """The extension module, or None where it was not built."""
    global _module
    if _module is None:
        try:
            from meshlint.source import _fastread
        except ImportError:
            _module = False
        else:
            _module = _fastread
    return _module or None


def available() -> bool:
    return module() is not None


def libyaml_version() -> str:
    return str(module().LIBYAML_VERSION)


def parses(text: str) -> bool:
    """Does `text` parse? libyaml's parser alone."""
    return bool(module().parses(text))


def read(text: str, target: Target) -> None:
    """The documents of `text` into `target`, or `Unread` for a text this reader leaves."""
    reader = module()
    if reader is None:
        raise Unread
    read: Read | None = reader.read(text, implicit_first_characters(), letter_words(), resolve_plain, MAX_DEPTH)
    if read is None:
        raise Unread
    path, lines, line_offset, place, counts = target.path, target.lines, target.line_offset, target.place, target.counts
    after = line_offset
    for root, root_mark, end_line, raw_maps, raw_seqs, raw_starts in read:
        table = PositionTable(path, lines, line_offset, place)
        table.raw_maps, table.raw_seqs, table.raw_starts = raw_maps, raw_seqs, raw_starts
        table.ordered = True  # the C reader takes no anchor, so no alias, and no merge key
        line, column = table.at(root_mark)
        source = rendered_from(lines, after, line - 1) if place is None else None
        target.documents.append(Document(path, target.index, root, line, column, table, source))
        target.index += 1
        if counts is not None:
            counts.append(len(target.problems))
        after = end_line + line_offset
