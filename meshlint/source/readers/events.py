"""libyaml's events through PyYAML's C parser, turned into data in one pass.

PyYAML's own composer calls three Python methods and builds a node object for every scalar before
any data exists; here each event becomes data at once, with YAML 1.1 scalars resolved from a table
keyed by the first character (most keys and strings start with a letter no implicit type starts
with). Positions are not computed: each container keeps the marks of its entries, and a `Node` turns
a mark into a `Position` only when asked (`positions.PositionTable`).

It reads exactly what the plain reader reads from ruamel.yaml's composer: the same duplicate-key,
merge-key, recursive-alias and depth rules, over the libyaml each extension carries. Where PyYAML's C
extension is missing, `available()` is False and the plain reader reads instead.
"""

from __future__ import annotations

from typing import Any

from meshlint.source.document import Document
from meshlint.source.positions import PositionTable, RawMap
from meshlint.source.readers.interface import Target, Unread
from meshlint.source.syntax import DUPLICATE_KEY, MAX_DEPTH, RECURSIVE_ALIAS, DocumentTooDeep, SyntaxProblem, rendered_from
from meshlint.source.yaml11 import implicit_first_characters, resolve_plain, scalar_of

NAME = "libyaml"
_parser: Any = None  # PyYAML's CParser class, or False when it cannot be had
_events: Any = None


def available() -> bool:
    """Is libyaml through PyYAML's C extension importable here? (Imported on first use only.)"""
    global _parser, _events
    if _parser is None:
        _spare_the_long_class()
        try:
            from yaml import _yaml, events

            _parser, _events = _yaml.CParser, events
        except ImportError:
            _parser = False
    return _parser is not False


def built() -> bool:
    """Is PyYAML's C extension there to import? Its package is found, not run."""
    import os
    from importlib.machinery import EXTENSION_SUFFIXES, PathFinder

    spec = PathFinder.find_spec("yaml")
    folders = (spec.submodule_search_locations or []) if spec is not None else []
    return any(os.path.exists(os.path.join(folder, "_yaml" + suffix)) for folder in folders for suffix in EXTENSION_SUFFIXES)


def parses(text: str) -> bool:
    """Does `text` parse? The parser alone; False where PyYAML's C parser is missing."""
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
    (`problem`, `problem_mark`, `context`, `context_mark`) that `syntax.problem_from` reads."""

    def __init__(self, context: str | None, context_mark: Any, problem: str, problem_mark: Any) -> None:
        super().__init__(problem)
        self.context, self.context_mark, self.problem, self.problem_mark = context, context_mark, problem, problem_mark


def read(text: str, target: Target) -> None:
    """The documents of `text` into `target` (see meshlint/source/readers/)."""
    if not available():
        raise Unread
    stream_end = _events.StreamEndEvent
    parser = _parser(text)
    get = parser.get_event
    try:
        get()  # stream start
        after = target.line_offset
        while get().__class__ is not stream_end:  # a document's start
            after = _DocumentReader(target).read(get, after)
    finally:
        parser.dispose()


class _DocumentReader:
    """One document, from after its start event to its end. Each event's value is handed to its
    parent at once: this loop is where a run spends its reading when the C reader is not built.

    A frame is an open container: [data, entries, start mark, anchor, pending key, merged sources];
    for a sequence the last two stay None. The pending key is None (a key comes next), (key, key
    mark), or a marker: the value of a merge key, or of a complex key (which is read, then left out)."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.problems = target.problems
        self.table = table = PositionTable(target.path, target.lines, target.line_offset, target.place)
        self.where = table.at
        self.anchors: dict[str, tuple[Any, Any, Any, Any]] = {}  # name -> (value, start mark, style, raw)
        self.open_anchors: set[str] = set()
        self.stack: list[list[Any]] = []
        self.root: tuple[Any, Any] | None = None
        self.deep_at: int | None = None
        self.skipping = 0  # > 0 inside the value of a complex key
        self.end_mark: Any = None
        self.first_chars = implicit_first_characters()

    def read(self, get: Any, after: int) -> int:
        """Read up to the document's end; returns the 0-based file line where the next gap starts."""
        events = _events
        handlers = {
            events.ScalarEvent: self.scalar, events.AliasEvent: self.alias,
            events.MappingStartEvent: self.start, events.SequenceStartEvent: self.start,
            events.MappingEndEvent: self.end, events.SequenceEndEvent: self.end,
        }
        while True:
            event = get()
            handle = handlers.get(event.__class__)
            if handle is None:  # the document's end
                break
            handle(event)
        return self.finish(after)

    def scalar(self, event: Any) -> None:
        value = raw = event.value
        tag = event.tag
        merge = False
        if tag is None or tag == "!":
            if event.implicit[0] and raw[:1] in self.first_chars:
                value = resolve_plain(raw)
                merge = raw == "<<"
        else:
            value = scalar_of(tag, raw)
            merge = raw == "<<" and tag.endswith(":merge")
        if value.__class__ is str:
            raw = None
        style = event.style or None
        self.end_mark = event.end_mark
        if event.anchor is not None:
            self.anchor(event, (value, event.start_mark, style, raw))
        self.hand_over(value, event.start_mark, style, raw, merge)

    def start(self, event: Any) -> None:
        if len(self.stack) > MAX_DEPTH and self.deep_at is None and not self.skipping:
            self.deep_at = self.where(event.start_mark)[0]
        mapping = event.__class__ is _events.MappingStartEvent
        frame = [{} if mapping else [], {} if mapping else [], event.start_mark, event.anchor, None, None]
        if event.anchor is not None:
            self.anchor(event, (frame[0], event.start_mark, None, None))
            self.open_anchors.add(event.anchor)
        self.stack.append(frame)

    def end(self, event: Any) -> None:
        frame = self.stack.pop()
        value = frame[0]
        self.end_mark = event.end_mark
        if frame[5] is not None:
            _merge(value, frame[1], frame[5], self.table)
        if not self.skipping:
            table = self.table
            if value.__class__ is dict:
                table.raw_maps[id(value)] = frame[1]
            else:
                table.raw_seqs[id(value)] = frame[1]
            table.raw_starts[id(value)] = frame[2]
        if frame[3] is not None:
            self.open_anchors.discard(frame[3])
        self.hand_over(value, frame[2], None, None, False)

    def alias(self, event: Any) -> None:
        name = event.anchor
        if name not in self.anchors:
            raise ComposeError(None, None, "found undefined alias", event.start_mark)
        value, mark, style, raw = self.anchors[name]
        if name in self.open_anchors:
            value, style, raw = _RECURSIVE, None, None
        self.hand_over(value, mark, style, raw, False)

    def anchor(self, event: Any, entry: tuple[Any, Any, Any, Any]) -> None:
        """An anchor defined twice in a document is an error of libyaml's composer (ruamel.yaml's pure
        one only warns, and has the last word: the loader retries with it)."""
        if event.anchor in self.anchors:
            raise ComposeError("found duplicate anchor; first occurrence", self.anchors[event.anchor][1], "second occurrence", event.start_mark)
        self.anchors[event.anchor] = entry

    def hand_over(self, value: Any, mark: Any, style: Any, raw: Any, merge: bool) -> None:
        """A finished value to its parent: an item, a key, or the value of the pending key."""
        if not self.stack:
            self.root = (value, mark)
            return
        parent = self.stack[-1]
        if value is _RECURSIVE and (parent[4] is None or parent[4] is _MERGE_PENDING):
            value = self.cut(value, mark)  # an item, a key or a merged source (a value is cut at its key below)
        if parent[0].__class__ is list:
            parent[0].append(value)
            parent[1].append((mark, style, raw))
            return
        pending = parent[4]
        if pending is None:
            self.key(parent, value, mark, merge)
            return
        parent[4] = None
        if pending is _MERGE_PENDING:
            if parent[5] is None:
                parent[5] = []
            parent[5].append(value)
        elif pending[0] is _SKIP_PENDING:
            self.skipping -= 1
            del self.problems[pending[1] :]  # ruamel's path never converts the value of a complex key
        else:
            self.entry(parent, pending[0], pending[1], value, mark, style, raw)

    def cut(self, value: Any, mark: Any) -> Any:
        """A recursive alias is read as null, and reported where it stands."""
        if value is _RECURSIVE:
            self.problems.append(SyntaxProblem(*self.where(mark), RECURSIVE_ALIAS, False))
            return None
        return value

    def key(self, parent: list[Any], value: Any, mark: Any, merge: bool) -> None:
        if merge:
            parent[4] = _MERGE_PENDING
        elif value.__class__ is dict or value.__class__ is list:
            parent[4] = (_SKIP_PENDING, len(self.problems))
            self.skipping += 1
        else:
            if value.__class__ is not str:
                value = ("true" if value else "false") if value.__class__ is bool else "null" if value is None else str(value)
            parent[4] = (value, mark)

    def entry(self, parent: list[Any], key: str, key_mark: Any, value: Any, mark: Any, style: Any, raw: Any) -> None:
        data, entries = parent[0], parent[1]
        if value is _RECURSIVE:
            self.problems.append(SyntaxProblem(*self.where(key_mark), RECURSIVE_ALIAS, False))
            data[key] = None
            entries[key] = (key_mark, key_mark, None, None)
            return
        if key in entries:
            # The first value is dropped from the data; it stays alive so that no later container
            # takes its identity (and so its place in the table).
            self.table.kept.append(data[key])
            first = self.where(entries[key][0])[0]
            self.problems.append(SyntaxProblem(*self.where(key_mark), DUPLICATE_KEY.format(key=key, first=first), False))
        data[key] = value
        entries[key] = (key_mark, mark, style, raw)

    def finish(self, after: int) -> int:
        """The document into the target; returns the line where the gap before the next one starts."""
        target, table = self.target, self.table
        table.ordered = not self.anchors  # no anchor, so no alias (a merge key can only merge a mapping written in place)
        if self.deep_at is not None:
            raise DocumentTooDeep(self.deep_at)
        if self.root is not None:
            line, column = self.where(self.root[1])
            source = rendered_from(target.lines, after, line - 1) if target.place is None else None
            data = self.root[0] if self.root[0] is not _RECURSIVE else None
            target.documents.append(Document(target.path, target.index, data, line, column, table, source))
            target.index += 1
        if target.counts is not None:
            target.counts.append(len(self.problems))
        return int(self.end_mark.line) + target.line_offset


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
