"""Where each value of a parsed document stands: a side table keyed by the identity of each container,
holding the parser's marks, turned into 1-based file positions only when asked (most never are)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any, Protocol

from meshlint.findings import Position

# Entry of a mapping: (key line, key column, value line, value column, value style, raw text).
# Raw text is kept only for scalars that did not resolve to a string (`true`, `5432`, `0400`), because
# Kubernetes wants those as strings in annotations and labels, and messages quote what was written.
MapEntry = tuple[int, int, int, int, "str | None", "str | None"]
# Entry of a sequence: (line, column, style, raw text).
SeqEntry = tuple[int, int, "str | None", "str | None"]
# Maps a 0-based (line, column) inside a string value to the 1-based (line, column) of the file.
Placer = Callable[[int, int], tuple[int, int]]


class Mark(Protocol):
    """Where the parser saw something: 0-based, in the text it parsed (libyaml's and ruamel's marks)."""

    @property
    def line(self) -> int: ...

    @property
    def column(self) -> int: ...


# What the reader keeps: the parser's marks, turned into file positions only when asked for.
RawEntry = tuple[Mark, Mark, "str | None", "str | None"]  # key mark, value mark, value style, raw text
RawMap = dict[Any, RawEntry]
RawSeq = list[tuple[Mark, "str | None", "str | None"]]  # item mark, style, raw text


class PositionTable:
    """Where the values of one document (or one embedded string) stand in their file, whose `lines`
    it keeps so that a place inside a block scalar can be found.

    The reader stores the parser's marks per container (`raw_maps`, `raw_seqs`, `raw_starts`, keyed by
    the container's identity); `maps`, `seqs` and `starts` give them as 1-based file positions
    (`MapEntry`, `SeqEntry`), each container converted the first time it is asked for. Most containers
    never are: a position is only needed where a finding lands or a fix is written."""

    __slots__ = ("_converted", "_offset", "_place", "kept", "lines", "ordered", "path", "raw_maps", "raw_seqs", "raw_starts", "roots")

    def __init__(self, path: str, lines: Sequence[str] | None = None, line_offset: int = 0, place: Placer | None = None) -> None:
        self.path = path
        self.lines = lines if lines is not None else []
        self.raw_maps: dict[int, RawMap] = {}
        self.raw_seqs: dict[int, RawSeq] = {}
        self.raw_starts: dict[int, Mark] = {}
        self._offset = line_offset + 1
        self._place = place
        self.kept: list[Any] = []  # containers the data no longer holds (a duplicate key's first value)
        self.roots: list[Any] = []  # the data of its documents, so that a copy of the table finds its containers
        # Set by a reader that saw no anchor, so no alias: then every entry below a container starts
        # after the container does (an alias's value stands where its anchor is, before). A merge key
        # may still have merged a mapping written in place, whose entries stand where it is written.
        self.ordered = False
        # Converted entries, by view and container; the views are made on demand and not kept, so a
        # table holds no reference back to itself and goes as soon as its document does.
        self._converted: tuple[dict[int, Any], dict[int, Any], dict[int, Any]] = ({}, {}, {})

    def __getstate__(self) -> tuple[Any, ...]:
        # A table crosses processes and runs with the mesh context (a worker's first pass, the cache),
        # and a copy must place its nodes as the original does. Its marks are keyed by the
        # identities of the containers, which no copy shares, so they travel beside the containers
        # themselves; pickle keeps one object one object within a dump, so the copy's data and its
        # table name the same containers again.
        by_id = {id(c): c for c in self._containers()}
        return (self.path, self.lines, self._offset, self._place, self.ordered, self.kept, self.roots,
                [(by_id[k], v) for k, v in self.raw_maps.items() if k in by_id],
                [(by_id[k], v) for k, v in self.raw_seqs.items() if k in by_id],
                [(by_id[k], v) for k, v in self.raw_starts.items() if k in by_id])

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.path, self.lines, self._offset, self._place, self.ordered, self.kept, self.roots, maps, seqs, starts = state
        self.raw_maps = {id(c): v for c, v in maps}
        self.raw_seqs = {id(c): v for c, v in seqs}
        self.raw_starts = {id(c): v for c, v in starts}
        self._converted = ({}, {}, {})

    def _containers(self) -> list[Any]:
        """Every container the table has marks for: the documents' data (`roots`) and what `kept` holds."""
        found, stack = [], [*self.roots, *self.kept]
        seen: set[int] = set()
        while stack:
            value = stack.pop()
            if (value.__class__ is dict or value.__class__ is list) and id(value) not in seen:
                seen.add(id(value))
                found.append(value)
                stack.extend(value.values() if value.__class__ is dict else value)
        return found

    @property
    def maps(self) -> Mapping[int, dict[Any, MapEntry]]:
        return _Maps(self, self._converted[0])

    @property
    def seqs(self) -> Mapping[int, list[SeqEntry]]:
        return _Seqs(self, self._converted[1])

    @property
    def starts(self) -> Mapping[int, tuple[int, int]]:
        return _Starts(self, self._converted[2])

    def at(self, mark: Mark) -> tuple[int, int]:
        """A mark as the 1-based (line, column) of the file."""
        if self._place is None:
            return mark.line + self._offset, mark.column + 1
        return self._place(mark.line, mark.column)

    def position(self, mark: Mark) -> Position:
        line, column = self.at(mark)
        return Position(self.path, line, column)


@lru_cache(maxsize=64)
def empty_table(path: str, line_offset: int, place: Placer | None) -> PositionTable:
    return PositionTable(path, [], line_offset, place)


class _Converted(Mapping[int, Any]):
    """A lazily converted view of one of the table's raw dictionaries."""

    def __init__(self, table: PositionTable, done: dict[int, Any]) -> None:
        self.table = table
        self.done = done

    def _raw(self) -> dict[int, Any]:
        raise NotImplementedError

    def _convert(self, raw: Any) -> Any:
        raise NotImplementedError

    def __getitem__(self, key: int) -> Any:
        done = self.done.get(key)
        if done is None:
            done = self.done[key] = self._convert(self._raw()[key])
        return done

    def __iter__(self) -> Iterator[int]:
        return iter(self._raw())

    def __len__(self) -> int:
        return len(self._raw())

    def __contains__(self, key: object) -> bool:
        return key in self._raw()


class _Maps(_Converted):
    def _raw(self) -> dict[int, Any]:
        return self.table.raw_maps

    def _convert(self, raw: RawMap) -> dict[Any, MapEntry]:
        at = self.table.at
        return {key: (*at(entry[0]), *at(entry[1]), entry[2], entry[3]) for key, entry in raw.items()}


class _Seqs(_Converted):
    def _raw(self) -> dict[int, Any]:
        return self.table.raw_seqs

    def _convert(self, raw: RawSeq) -> list[SeqEntry]:
        at = self.table.at
        return [(*at(item[0]), item[1], item[2]) for item in raw]


class _Starts(_Converted):
    def _raw(self) -> dict[int, Any]:
        return self.table.raw_starts

    def _convert(self, raw: Mark) -> tuple[int, int]:
        return self.table.at(raw)
