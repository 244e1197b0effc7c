"""The fast reader: libyaml's events through PyYAML's C parser, turned into data in one pass.

PyYAML's own composer calls three Python methods and builds a node object for every scalar before
any data exists; here each event becomes data at once, with YAML 1.1 scalars resolved from a table
keyed by the first character (most keys and strings start with a letter no implicit type starts
with). Positions are not computed: each container keeps the marks of its entries, and a `Node`
turns a mark into a `Position` only when asked (`document.PositionTable`).

It reads exactly what `compose.Converter` reads from ruamel.yaml's composer (the same duplicate-key,
merge-key, recursive-alias and depth rules, over the libyaml each extension carries;
tests/test_loader_parity.py holds the readers together). Where neither this reader nor the C one
below can be had (PyYAML's C extension missing, and meshlint's not built), `available()` is False and
ruamel.yaml reads everything.

meshlint's own C reader (`_fastread.c`), where it was built, reads a text first: the documents most
files hold (no anchor, alias, merge key, tag, directive, complex or repeated key, syntax error) it
turns into the same data and marks with no Python object per event, and without PyYAML imported,
which a pre-commit run would otherwise pay for. Any other text it leaves to the loop below. It
links the system's libyaml, which may be another release than the one inside PyYAML's wheel; what
releases parse differently (a single pair in a flow sequence, deep nesting) it leaves too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from meshlint.source.compose import SyntaxProblem, rendered_from
from meshlint.source.document import Document
from meshlint.source.positions import Placer, PositionTable, RawMap
from meshlint.source.yaml11 import implicit_first_characters, letter_words, resolve_plain, scalar_of

if TYPE_CHECKING:
    from meshlint.source._fastread import Read

_parser: Any = None  # PyYAML's CParser class, or False when it cannot be had
_events: Any = None
_reader: Any = None  # meshlint's C reader module, or False when it was not built


def available() -> bool:
    """Can libyaml read here, through meshlint's C reader or PyYAML's C extension? (Each is imported
    on first use only; with the C reader, PyYAML only for a text the C reader leaves.)"""
    return _fast() is not None or _pyyaml()


def readers() -> bytes:
    """Which readers read here, and the C reader's libyaml release (a cache made by one set is not
    read back by another: PyYAML's parser and ruamel.yaml word some errors differently). With the C
    reader, PyYAML is not imported to tell which of the two takes what it leaves: its extension's
    file is looked for instead."""
    fast = _fast()
    if fast is None:
        return b"libyaml" if _pyyaml() else b"ruamel"
    return f"fastread {fast.LIBYAML_VERSION}, then {'libyaml' if _pyyaml_built() else 'ruamel'}".encode()


def _pyyaml_built() -> bool:
    """Is PyYAML's C extension there to import? Its package is found, not run."""
    import os
    from importlib.machinery import EXTENSION_SUFFIXES, PathFinder

    spec = PathFinder.find_spec("yaml")
    folders = (spec.submodule_search_locations or []) if spec is not None else []
    return any(os.path.exists(os.path.join(folder, "_yaml" + suffix)) for folder in folders for suffix in EXTENSION_SUFFIXES)


def _fast() -> Any:
    """meshlint's C reader (meshlint/source/_fastread.c), or None where it was not built."""
    global _reader
    if _reader is None:
        try:
            from meshlint.source import _fastread
        except ImportError:
            _reader = False
        else:
            _reader = _fastread
    return _reader or None


def _pyyaml() -> bool:
    """Is libyaml through PyYAML's C extension importable here?"""
    global _parser, _events
    if _parser is None:
        _spare_the_long_class()
        try:
            from yaml import _yaml, events

            _parser, _events = _yaml.CParser, events
        except ImportError:
            _parser = False
    return _parser is not False


# What YAML does not allow in a stream, as PyYAML's and ruamel.yaml's pure readers write it (a class
# of everything else), and the same characters written as the few ranges they are.
NON_PRINTABLE = "[^\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\U00010000-\U0010FFFF]"
NON_PRINTABLE_SHORT = "[\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x84\x86-\x9F\uD800-\uDFFF\uFFFE\uFFFF]"


def _spare_the_long_class() -> None:
    """Importing PyYAML compiles `NON_PRINTABLE` (its pure reader's check, which meshlint never
    runs: libyaml reads). re's compiler walks every BMP code point of the class one at a time, which
    a pre-commit run that imports PyYAML (one where the C reader leaves a text, or is not built) pays.
    `re.compile` looks a pattern's text up in re's cache before compiling it, so the short form, which
    matches the same characters and compiles far sooner, is placed there under the long form's text.
    Where re keeps its cache otherwise, nothing is placed and PyYAML compiles its own, as before."""
    import re

    cache = getattr(re, "_cache", None)
    if isinstance(cache, dict):
        cache.setdefault((str, NON_PRINTABLE, 0), re.compile(NON_PRINTABLE_SHORT))


class ComposeError(Exception):
    """What ruamel.yaml's composer raises for an alias it cannot resolve, with the same fields
    (`problem`, `problem_mark`, `context`, `context_mark`) that `compose.problem_from` reads."""

    def __init__(self, context: str | None, context_mark: Any, problem: str, problem_mark: Any) -> None:
        super().__init__(problem)
        self.context, self.context_mark, self.problem, self.problem_mark = context, context_mark, problem, problem_mark


class Unread(Exception):
    """The C reader left a text to Python, and PyYAML's C parser is missing here: the caller reads
    it with ruamel.yaml, as it reads everything where neither is built."""


class TooDeep(Exception):
    """A container beyond the depth limit; the argument is its 1-based line in the file."""


def parse_only(text: str) -> bool:
    """Does `text` parse as YAML? libyaml's parser alone, no Python object per event."""
    fast = _fast()
    if fast is not None:
        return bool(fast.parses(text))
    if not _pyyaml():
        return False
    parser = _parser(text)
    try:
        parser.raw_parse()
        return True
    except Exception:  # PyYAML raises several error types; any means "compose it to learn more"
        return False
    finally:
        parser.dispose()


def read_documents(
    documents: list[Document], problems: list[SyntaxProblem], text: str, path: str, lines: Sequence[str], index: int, line_offset: int,
    max_depth: int, recursive: str, duplicate: str, place: Placer | None = None, counts: list[int] | None = None,
) -> int:
    """Append the documents of `text` (0-based line `line_offset` of its file) numbered from
    `index`; returns the next index. Raises the parser's error, or `TooDeep` (with the 1-based line),
    after appending the documents before it. An embedded string is read with `place`, which maps its
    marks into the host file; `counts` receives the number of problems after each document.

    One loop over the events, with the value each finishes kept in locals (value, mark, style, raw,
    merge) and handed to its parent at once: this loop is where a run spends most of its reading.
    The C reader reads the common case first; a text it leaves (an anchor, a tag, a repeated key, a
    syntax error...) is read here, so that what is reported of it is this loop's alone."""
    fast = _fast()
    if fast is not None:
        read = fast.read(text, implicit_first_characters(), letter_words(), resolve_plain, max_depth)
        if read is not None:
            return _take(read, documents, problems, path, lines, index, line_offset, place, counts)
        if not _pyyaml():
            raise Unread
    events = _events
    Scalar, Alias, MapStart, SeqStart = events.ScalarEvent, events.AliasEvent, events.MappingStartEvent, events.SequenceStartEvent
    MapEnd, SeqEnd, StreamEnd = events.MappingEndEvent, events.SequenceEndEvent, events.StreamEndEvent
    first_chars = implicit_first_characters()
    parser = _parser(text)
    get = parser.get_event
    try:
        get()  # stream start
        after = line_offset
        while True:
            event = get()
            if event.__class__ is StreamEnd:
                return index
            table = PositionTable(path, lines, line_offset, place)
            where = table.at
            raw_maps, raw_seqs, raw_starts = table.raw_maps, table.raw_seqs, table.raw_starts
            anchors: dict[str, tuple[Any, Any, Any, Any]] = {}  # name -> (value, start mark, style, raw)
            open_anchors: set[str] = set()
            # A frame: [data, entries, start mark, anchor, pending key, merged sources]; for a sequence
            # the last two stay None. The pending key is None (a key comes next), (key, key mark), or
            # a marker: the value of a merge key, or of a complex key (which is read, then left out).
            stack: list[list[Any]] = []
            root: tuple[Any, Any] | None = None
            deep_at: int | None = None
            skipping = 0  # > 0 inside the value of a complex key
            while True:
                event = get()
                cls = event.__class__
                merge = False
                if cls is Scalar:
                    value = raw = event.value
                    tag = event.tag
                    if tag is None or tag == "!":
                        if event.implicit[0] and raw[:1] in first_chars:
                            value = resolve_plain(raw)
                            merge = raw == "<<"
                    else:
                        value = scalar_of(tag, raw)
                        merge = raw == "<<" and tag.endswith(":merge")
                    if value.__class__ is str:
                        raw = None
                    mark = event.start_mark
                    style = event.style or None
                    end_mark = event.end_mark
                    if event.anchor is not None:
                        _anchor(anchors, event)
                        anchors[event.anchor] = (value, mark, style, raw)
                elif cls is MapStart or cls is SeqStart:
                    if len(stack) > max_depth and deep_at is None and not skipping:
                        deep_at = where(event.start_mark)[0]
                    frame = [{} if cls is MapStart else [], {} if cls is MapStart else [], event.start_mark, event.anchor, None, None]
                    if event.anchor is not None:
                        _anchor(anchors, event)
                        anchors[event.anchor] = (frame[0], event.start_mark, None, None)
                        open_anchors.add(event.anchor)
                    stack.append(frame)
                    continue
                elif cls is MapEnd or cls is SeqEnd:
                    frame = stack.pop()
                    value = frame[0]
                    mark = frame[2]
                    style = raw = None
                    end_mark = event.end_mark
                    if frame[5] is not None:
                        _merge(value, frame[1], frame[5], table)
                    if not skipping:
                        if cls is MapEnd:
                            raw_maps[id(value)] = frame[1]
                        else:
                            raw_seqs[id(value)] = frame[1]
                        raw_starts[id(value)] = mark
                    if frame[3] is not None:
                        open_anchors.discard(frame[3])
                elif cls is Alias:
                    name = event.anchor
                    if name not in anchors:
                        raise ComposeError(None, None, "found undefined alias", event.start_mark)
                    value, mark, style, raw = anchors[name]
                    if name in open_anchors:
                        value, style, raw = _RECURSIVE, None, None
                else:  # document end
                    break
                # Hand the finished value to its parent.
                if not stack:
                    root = (value, mark)
                    continue
                parent = stack[-1]
                data = parent[0]
                if data.__class__ is list:
                    if value is _RECURSIVE:
                        problems.append(SyntaxProblem(*where(mark), recursive, False))
                        value = None
                    data.append(value)
                    parent[1].append((mark, style, raw))
                    continue
                pending = parent[4]
                if pending is None:  # a key
                    if value is _RECURSIVE:
                        problems.append(SyntaxProblem(*where(mark), recursive, False))
                        value = None
                    if merge:
                        parent[4] = _MERGE_PENDING
                    elif value.__class__ is dict or value.__class__ is list:
                        parent[4] = (_SKIP_PENDING, len(problems))
                        skipping += 1
                    else:
                        if value.__class__ is not str:
                            value = ("true" if value else "false") if value.__class__ is bool else "null" if value is None else str(value)
                        parent[4] = (value, mark)
                    continue
                parent[4] = None
                if pending is _MERGE_PENDING:
                    if parent[5] is None:
                        parent[5] = []
                    if value is _RECURSIVE:
                        problems.append(SyntaxProblem(*where(mark), recursive, False))
                        value = None
                    parent[5].append(value)
                    continue
                key, key_mark = pending
                if key is _SKIP_PENDING:
                    skipping -= 1
                    del problems[key_mark:]  # ruamel's path never converts the value of a complex key
                    continue
                entries = parent[1]
                if value is _RECURSIVE:
                    problems.append(SyntaxProblem(*where(key_mark), recursive, False))
                    data[key] = None
                    entries[key] = (key_mark, key_mark, None, None)
                    continue
                if key in entries:
                    # The first value is dropped from the data; it stays alive so that no later
                    # container takes its identity (and so its place in the table).
                    table.kept.append(data[key])
                    first = where(entries[key][0])[0]
                    problems.append(SyntaxProblem(*where(key_mark), duplicate.format(key=key, first=first), False))
                data[key] = value
                entries[key] = (key_mark, mark, style, raw)
            table.ordered = not anchors  # no anchor, so no alias (a merge key can only merge a mapping written in place)
            if deep_at is not None:
                raise TooDeep(deep_at)
            if root is not None:
                line, column = where(root[1])
                source = rendered_from(lines, after, line - 1) if place is None else None
                documents.append(Document(path, index, root[0] if root[0] is not _RECURSIVE else None, line, column, table, source))
                index += 1
            if counts is not None:
                counts.append(len(problems))
            after = end_mark.line + line_offset
    finally:
        parser.dispose()


def _take(
    read: Read, documents: list[Document], problems: list[SyntaxProblem], path: str, lines: Sequence[str], index: int, line_offset: int,
    place: Placer | None, counts: list[int] | None,
) -> int:
    """The C reader's documents as `read_documents` appends its own: the same tables, roots and
    rendered-from comments (no problems: a text with any is left to the Python loop)."""
    after = line_offset
    for root, root_mark, end_line, raw_maps, raw_seqs, raw_starts in read:
        table = PositionTable(path, lines, line_offset, place)
        table.raw_maps, table.raw_seqs, table.raw_starts = raw_maps, raw_seqs, raw_starts
        table.ordered = True  # the C reader takes no anchor, so no alias, and no merge key
        line, column = table.at(root_mark)
        source = rendered_from(lines, after, line - 1) if place is None else None
        documents.append(Document(path, index, root, line, column, table, source))
        index += 1
        if counts is not None:
            counts.append(len(problems))
        after = end_line + line_offset
    return index


def _anchor(anchors: dict[str, Any], event: Any) -> None:
    """An anchor defined twice in a document is an error of libyaml's composer (ruamel.yaml's pure
    one only warns, and has the last word: `loader` retries with it)."""
    if event.anchor in anchors:
        raise ComposeError("found duplicate anchor; first occurrence", anchors[event.anchor][1], "second occurrence", event.start_mark)


def _merge(data: dict[Any, Any], entries: RawMap, sources: list[Any], table: PositionTable) -> None:
    """`<<: *base` (or a list of them): keys the mapping does not set itself, in the sources' order."""
    for source in sources:
        for part in source if isinstance(source, list) else [source]:
            if not isinstance(part, dict):
                continue
            part_entries = table.raw_maps.get(id(part), {})
            for key, value in part.items():
                if key not in data:
                    data[key] = value
                    if key in part_entries:
                        entries[key] = part_entries[key]


class _Marker:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


_RECURSIVE = _Marker("recursive alias")
_MERGE_PENDING = _Marker("merge key")
_SKIP_PENDING = _Marker("complex key")
