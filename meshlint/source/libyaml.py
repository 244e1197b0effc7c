"""The fast reader: libyaml's events through PyYAML's C parser, turned into data in one pass.

PyYAML's own composer calls three Python methods and builds a node object for every scalar before
any data exists; here each event becomes data at once, with YAML 1.1 scalars resolved from a table
keyed by the first character (most keys and strings start with a letter no implicit type starts
with). Positions are not computed: each container keeps the marks of its entries, and a `Node`
turns a mark into a `Position` only when asked (`document.PositionTable`).

It reads exactly what `compose.Converter` reads from ruamel.yaml's composer (the same libyaml,
the same duplicate-key, merge-key, recursive-alias and depth rules; tests/test_loader_parity.py
holds the two together). When PyYAML or its C extension is missing, `available()` is False and
the ruamel.yaml path reads everything.
"""

from __future__ import annotations

from typing import Any

from meshlint.source.compose import SyntaxProblem, rendered_from
from meshlint.source.document import Document, Placer, PositionTable, RawMap
from meshlint.source.yaml11 import resolve_plain, scalar_of

_parser: Any = None  # PyYAML's CParser class, or False when it cannot be had
_events: Any = None


def available() -> bool:
    """Is libyaml through PyYAML's C extension importable here? (Imported on first use only.)"""
    global _parser, _events
    if _parser is None:
        try:
            from yaml import _yaml, events

            _parser, _events = _yaml.CParser, events
        except ImportError:
            _parser = False
    return _parser is not False


class ComposeError(Exception):
    """What ruamel.yaml's composer raises for an alias it cannot resolve, with the same fields
    (`problem`, `problem_mark`, `context`, `context_mark`) that `compose.problem_from` reads."""

    def __init__(self, context: str | None, context_mark: Any, problem: str, problem_mark: Any) -> None:
        super().__init__(problem)
        self.context, self.context_mark, self.problem, self.problem_mark = context, context_mark, problem, problem_mark


class TooDeep(Exception):
    """A container beyond the depth limit; the argument is its 1-based line in the file."""


def parse_only(text: str) -> bool:
    """Does `text` parse as YAML? libyaml's parser alone, no Python object per event."""
    if not available():
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
    documents: list[Document], problems: list[SyntaxProblem], text: str, path: str, lines: list[str], index: int, line_offset: int,
    max_depth: int, recursive: str, duplicate: str, place: Placer | None = None, counts: list[int] | None = None,
) -> int:
    """Append the documents of `text` (0-based line `line_offset` of its file) numbered from
    `index`; returns the next index. Raises the parser's error, or `TooDeep` (with the 1-based line),
    after appending the documents before it. An embedded string is read with `place`, which maps its
    marks into the host file; `counts` receives the number of problems after each document."""
    events = _events
    Scalar, Alias, MapStart, SeqStart = events.ScalarEvent, events.AliasEvent, events.MappingStartEvent, events.SequenceStartEvent
    MapEnd, SeqEnd, DocStart, StreamEnd = events.MappingEndEvent, events.SequenceEndEvent, events.DocumentStartEvent, events.StreamEndEvent
    parser = _parser(text)
    get = parser.get_event
    try:
        get()  # stream start
        after = line_offset
        while True:
            event = get()
            if event.__class__ is StreamEnd:
                return index
            assert event.__class__ is DocStart
            table = PositionTable(path, lines, line_offset, place)
            where = table.at
            anchors: dict[str, tuple[Any, Any, Any, Any]] = {}  # name -> (value, start mark, style, raw)
            open_anchors: set[str] = set()
            # A frame: [data, entries, start mark, anchor, pending key or None, merged sources] for a
            # mapping, [data, entries, start mark, anchor] for a sequence.
            stack: list[list[Any]] = []
            found: list[Any] = []
            deep_at: int | None = None
            skipping = 0  # > 0 inside the value of a complex key, which is read but left out
            while True:
                event = get()
                cls = event.__class__
                # The value just finished: (value, start mark, style, raw).
                if cls is Scalar:
                    text_value = event.value
                    tag = event.tag
                    if tag is None or tag == "!":
                        plain = event.implicit[0]
                        value = resolve_plain(text_value) if plain else text_value
                        merge = plain and text_value == "<<"
                    else:
                        value = scalar_of(tag, text_value)
                        merge = text_value == "<<" and tag.endswith(":merge")
                    done = (value, event.start_mark, event.style or None, text_value if value.__class__ is not str else None, merge)
                    if event.anchor is not None:
                        _anchor(anchors, event)
                        anchors[event.anchor] = done[:4]
                elif cls is MapStart or cls is SeqStart:
                    if len(stack) > max_depth and deep_at is None and not skipping:
                        deep_at = where(event.start_mark)[0]
                    if cls is MapStart:
                        frame = [{}, {}, event.start_mark, event.anchor, None, None]
                    else:
                        frame = [[], [], event.start_mark, event.anchor]
                    if event.anchor is not None:
                        _anchor(anchors, event)
                        anchors[event.anchor] = (frame[0], event.start_mark, None, None)
                        open_anchors.add(event.anchor)
                    stack.append(frame)
                    continue
                elif cls is MapEnd:
                    frame = stack.pop()
                    data, entries = frame[0], frame[1]
                    if frame[5] is not None:
                        _merge(data, entries, frame[5], table)
                    if not skipping:
                        table.raw_maps[id(data)] = entries
                        table.raw_starts[id(data)] = frame[2]
                    if frame[3] is not None:
                        open_anchors.discard(frame[3])
                    done = (data, frame[2], None, None, False)
                    end_mark = event.end_mark
                elif cls is SeqEnd:
                    frame = stack.pop()
                    data = frame[0]
                    if not skipping:
                        table.raw_seqs[id(data)] = frame[1]
                        table.raw_starts[id(data)] = frame[2]
                    if frame[3] is not None:
                        open_anchors.discard(frame[3])
                    done = (data, frame[2], None, None, False)
                    end_mark = event.end_mark
                elif cls is Alias:
                    name = event.anchor
                    if name not in anchors:
                        raise ComposeError(None, None, "found undefined alias", event.start_mark)
                    target = anchors[name]
                    if name in open_anchors:
                        done = (_RECURSIVE, target[1], None, None, False)
                    else:
                        done = (*target, False)
                else:  # document end
                    break
                if cls is Scalar:
                    end_mark = event.end_mark
                # Hand the finished value to its parent.
                if not stack:
                    found.append(done)
                    continue
                parent = stack[-1]
                if len(parent) == 4:  # a sequence
                    value = done[0]
                    if value is _RECURSIVE:
                        mark = done[1]
                        problems.append(SyntaxProblem(*where(mark), recursive, False))
                        value = None
                    parent[0].append(value)
                    parent[1].append((done[1], done[2], done[3]))
                    continue
                pending = parent[4]
                if pending is None:  # a key
                    key = done[0]
                    if key is _RECURSIVE:
                        mark = done[1]
                        problems.append(SyntaxProblem(*where(mark), recursive, False))
                        key = None
                    if done[4]:
                        parent[4] = _MERGE_PENDING
                    elif key.__class__ is dict or key.__class__ is list:
                        parent[4] = (_SKIP_PENDING, len(problems))
                        skipping += 1
                    else:
                        if key.__class__ is not str:
                            key = ("true" if key else "false") if key.__class__ is bool else "null" if key is None else str(key)
                        parent[4] = (key, done[1])
                    continue
                parent[4] = None
                if pending is _MERGE_PENDING:
                    if parent[5] is None:
                        parent[5] = []
                    parent[5].append(None if done[0] is _RECURSIVE else done[0])
                    if done[0] is _RECURSIVE:
                        mark = done[1]
                        problems.append(SyntaxProblem(*where(mark), recursive, False))
                    continue
                if pending[0] is _SKIP_PENDING:
                    skipping -= 1
                    del problems[pending[1] :]  # ruamel's path never converts the value of a complex key
                    continue
                key, key_mark = pending
                data, entries = parent[0], parent[1]
                if done[0] is _RECURSIVE:
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
                data[key] = done[0]
                entries[key] = (key_mark, done[1], done[2], done[3])
            if deep_at is not None:
                raise TooDeep(deep_at)
            for value, mark, _, _, _ in found:
                line, column = where(mark)
                source = rendered_from(lines, after, line - 1) if place is None else None
                documents.append(Document(path, index, value if value is not _RECURSIVE else None, line, column, table, source))
                index += 1
            if counts is not None:
                counts.append(len(problems))
            after = end_mark.line + line_offset
    finally:
        parser.dispose()


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
