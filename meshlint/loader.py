"""From bytes to Documents: decoding, composing with ruamel.yaml's C composer, and conversion.

Scalars are resolved the way Kubernetes reads YAML (1.1: `0400` is octal, `yes`/`on` are booleans).
Tags are never constructed into objects: an unknown or unsafe tag (`!!python/object`) is read as the
plain value its node holds. Aliases are converted once and shared, so an alias bomb costs what its
text costs; an alias that refers to itself is cut and reported.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple

from meshlint.document import Document, Node, PositionTable
from meshlint.findings import Position

# Beyond this depth a document is not read (ruamel.yaml's C composer crashes on tens of thousands of
# levels; no Kubernetes object comes near a few dozen).
MAX_DEPTH = 200
# Indentation from which block nesting could reach the composer's limit.
_DEEP_INDENT = re.compile(r"^[ ]{5000}", re.M)
_DOC_START = re.compile(r"^---(?=\s|$)", re.M)

_TAG = "tag:yaml.org,2002:"
_TRUE = frozenset(("yes", "true", "on", "y"))


class SyntaxProblem(NamedTuple):
    line: int
    column: int
    message: str


@dataclass(eq=False, repr=False)
class LoadedFile:
    path: str
    documents: list[Document] = field(default_factory=list)
    problems: list[SyntaxProblem] = field(default_factory=list)
    lines: list[str] = field(default_factory=list, repr=False)
    # Set when the whole file was passed over (a Helm template that does not parse).
    skipped: str | None = None


class _DocumentTooDeep(Exception):
    pass


_loader_class = None


def _compose_all(text: str):
    """The C composer's nodes for each document of `text`, read as YAML 1.1.

    One loader per text, with no reference back to itself: ruamel.yaml's own `YAML.compose_all`
    builds a loader class per call whose instance refers to itself, so its C buffers wait for the
    cyclic garbage collector, and a run over a big tree grows by the size of the tree.
    """
    global _loader_class
    if _loader_class is None:
        _loader_class = _make_loader_class()
    loader = _loader_class(text)
    try:
        while loader.check_node():
            yield loader.get_node()
    finally:
        loader.dispose()


def _make_loader_class():
    """ruamel.yaml's C parser with a resolver that has its YAML 1.1 table looked up once.

    The stock `resolve` asks which YAML version the document declares for each scalar it sees, which
    costs more than composing the scalar; meshlint reads every document as YAML 1.1, as Kubernetes does.
    """
    from ruamel.yaml import CParser
    from ruamel.yaml.nodes import ScalarNode
    from ruamel.yaml.resolver import VersionedResolver, implicit_resolvers
    from ruamel.yaml.tag import Tag

    table: dict = {}
    for versions, tag, regexp, first in implicit_resolvers:
        if (1, 1) in versions:
            for char in first if first is not None else [None]:
                table.setdefault(char, []).append((tag, regexp))
    tags: dict = {}

    class Loader11(CParser, VersionedResolver):
        def __init__(self, text: str):
            CParser.__init__(self, text)
            VersionedResolver.__init__(self, version=(1, 1), loader=None)

        def resolve(self, kind, value, implicit):
            if kind is ScalarNode and implicit[0]:
                for tag, regexp in (*table.get(value[:1], ()), *table.get(None, ())):
                    if regexp.match(value):
                        cached = tags.get(tag)
                        if cached is None:
                            cached = tags[tag] = Tag(suffix=tag)
                        return cached
            return VersionedResolver.resolve(self, kind, value, (False, False))

    return Loader11


def decode(data: bytes) -> tuple[str, SyntaxProblem | None]:
    """Decode a file as Kubernetes does (UTF-8, a BOM allowed); bad bytes are replaced and reported."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16"), None
        except UnicodeDecodeError:
            pass
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError as err:
        before = data[: err.start].decode("utf-8-sig", errors="replace")
        line = before.count("\n") + 1
        column = len(before) - (before.rfind("\n") + 1) + 1
        problem = SyntaxProblem(
            line, column, f"file is not valid UTF-8 (byte 0x{data[err.start]:02x}); read with replacement characters"
        )
        return data.decode("utf-8-sig", errors="replace"), problem


def load_text(path: str, text: str, line_offset: int = 0, lines: list[str] | None = None) -> LoadedFile:
    """Read `text` as the file `path` holds it. A part of a file is read with `line_offset`, the line it
    starts at (0-based), and the whole file's `lines`, so positions are the file's."""
    loaded = LoadedFile(path=path, lines=text.splitlines() if lines is None else lines)
    too_deep = _nesting_beyond_limit(text)
    if too_deep:
        loaded.problems.append(SyntaxProblem(too_deep + line_offset, 1, f"document nests more than {MAX_DEPTH} levels deep; not read"))
        return loaded
    try:
        _compose_into(loaded, text, 0, line_offset)
    except Exception:  # noqa: BLE001 - any parse failure falls back to document-by-document reading
        loaded.documents.clear()
        loaded.problems.clear()
        _compose_by_document(loaded, text, line_offset)
    if loaded.problems and "{{" in text:
        loaded.documents.clear()
        loaded.problems.clear()
        loaded.skipped = "Helm template syntax ({{ ... }}); render it first: helm template ... | meshlint check -"
    return loaded


def document_chunks(text: str) -> list[tuple[int, str]]:
    """The `---`-separated parts of a file as (first line, 0-based; text), without composing them."""
    starts = [0] + [m.start() for m in _DOC_START.finditer(text) if m.start() > 0]
    chunks = []
    line = 0
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(text)
        chunks.append((line, text[start:end]))
        line += text.count("\n", start, end)
    return chunks


def load_chunks(path: str, chunks: list[tuple[int, str]], lines: list[str]) -> list[Document]:
    """Compose only some parts of a file (`lines` are the whole file's); parts that fail are left out
    (reading the whole file reports them)."""
    documents = []
    for line_offset, chunk in chunks:
        loaded = load_text(path, chunk, line_offset, lines)
        if not loaded.problems:
            documents.extend(loaded.documents)
    return documents


def _compose_by_document(loaded: LoadedFile, text: str, line_offset: int = 0) -> None:
    """Read each `---`-separated part on its own, so one broken document does not hide the others."""
    index = 0
    for chunk_line, chunk in document_chunks(text):
        offset = line_offset + chunk_line
        try:
            index = _compose_into(loaded, chunk, index, offset)
        except _DocumentTooDeep as err:
            loaded.problems.append(SyntaxProblem(int(str(err)), 1, f"document nests more than {MAX_DEPTH} levels deep; not read"))
        except Exception as err:  # noqa: BLE001 - ruamel raises several unrelated error types
            problem = _problem_from(err, chunk)
            loaded.problems.append(SyntaxProblem(problem.line + offset, problem.column, problem.message))


def _compose_into(loaded: LoadedFile, text: str, index: int, line_offset: int = 0) -> int:
    """Compose `text`, which starts at 0-based line `line_offset` of the file."""

    def place(line: int, column: int) -> tuple[int, int]:
        return line + 1 + line_offset, column + 1

    for node in _compose_all(text):
        if node is None:
            continue
        converter = _Converter(loaded.path, place)
        data = converter.convert(node)
        line, col = place(node.start_mark.line, node.start_mark.column)
        doc = Document(loaded.path, index, data, line, col, converter.table, loaded.lines)
        loaded.problems.extend(converter.problems)
        loaded.documents.append(doc)
        index += 1
    return index


def _problem_from(err: Exception, text: str) -> SyntaxProblem:
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    problem = getattr(err, "problem", None)
    if mark is not None:
        line, column = mark.line + 1, mark.column + 1
    elif getattr(err, "position", None) is not None:
        before = text[: err.position]
        line = before.count("\n") + 1
        column = len(before) - (before.rfind("\n") + 1) + 1
    else:
        line, column = 1, 1
    message = problem or str(err).splitlines()[0]
    context = getattr(err, "context", None)
    if context and problem:
        message = f"{context}: {problem}"
    if not problem and getattr(err, "reason", None):
        message = f"unacceptable character: {err.reason}"
    return SyntaxProblem(line, column, message)


def _nesting_beyond_limit(text: str) -> int:
    """Line of a nesting deep enough to crash the composer, or 0. Cheap unless brackets abound."""
    match = _DEEP_INDENT.search(text)
    if match:
        return text.count("\n", 0, match.start()) + 1
    if text.count("[") + text.count("{") < MAX_DEPTH:
        return 0
    depth = 0
    for match in re.finditer(r"[\[\]{}]", text):
        depth += 1 if match.group() in "[{" else -1
        if depth > 4 * MAX_DEPTH:
            return text.count("\n", 0, match.start()) + 1
        depth = max(depth, 0)
    return 0


class _Converter:
    """Turns a composed node tree into plain data, filling the position table as it goes."""

    def __init__(self, path: str, place: Callable[[int, int], tuple[int, int]]):
        self.table = PositionTable(path)
        self.place = place
        self.problems: list[SyntaxProblem] = []
        self._done: dict[int, Any] = {}
        self._active: set[int] = set()

    def convert(self, node, depth: int = 0) -> Any:
        kind = node.id
        if kind == "scalar":
            return _scalar(node)
        key = id(node)
        if key in self._done:
            return self._done[key]
        if key in self._active:
            line, col = self.place(node.start_mark.line, node.start_mark.column)
            self.problems.append(SyntaxProblem(line, col, "recursive alias: a node contains itself; the inner reference is read as null"))
            return None
        if depth > MAX_DEPTH:
            line, _ = self.place(node.start_mark.line, node.start_mark.column)
            raise _DocumentTooDeep(str(line))
        self._active.add(key)
        try:
            value = self._mapping(node, depth) if kind == "mapping" else self._sequence(node, depth)
        finally:
            self._active.discard(key)
        self._done[key] = value
        return value

    def _sequence(self, node, depth: int) -> list:
        result: list = []
        entries = []
        place = self.place
        for item in node.value:
            line, col = place(item.start_mark.line, item.start_mark.column)
            value = self.convert(item, depth + 1)
            entries.append((line, col, _style(item), _raw(item, value)))
            result.append(value)
        self.table.seqs[id(result)] = entries
        self.table.starts[id(result)] = place(node.start_mark.line, node.start_mark.column)
        return result

    def _mapping(self, node, depth: int) -> dict:
        result: dict = {}
        entries: dict = {}
        place = self.place
        merged: list[dict] = []
        for key_node, value_node in node.value:
            if key_node.id == "scalar" and key_node.value == "<<" and _tag(key_node).endswith(":merge"):
                merged.append(self.convert(value_node, depth + 1))
                continue
            key = self.convert(key_node, depth + 1)
            if isinstance(key, (dict, list)):
                continue  # complex keys never occur in Kubernetes objects
            if not isinstance(key, str):
                # As sigs.k8s.io/yaml turns YAML into JSON: `on:` or `y:` becomes the key "true".
                key = ("true" if key else "false") if isinstance(key, bool) else "null" if key is None else str(key)
            kline, kcol = place(key_node.start_mark.line, key_node.start_mark.column)
            if id(value_node) in self._active:
                self.problems.append(SyntaxProblem(kline, kcol, "recursive alias: a node contains itself; the inner reference is read as null"))
                result[key] = None
                entries[key] = (kline, kcol, kline, kcol, None, None)
                continue
            if key in entries:
                first = entries[key][0]
                self.problems.append(SyntaxProblem(kline, kcol, f"duplicate key {key!r} (first at line {first}); kubectl rejects the object"))
            value = self.convert(value_node, depth + 1)
            vline, vcol = place(value_node.start_mark.line, value_node.start_mark.column)
            result[key] = value
            entries[key] = (kline, kcol, vline, vcol, _style(value_node), _raw(value_node, value))
        for source in merged:
            for part in source if isinstance(source, list) else [source]:
                if not isinstance(part, dict):
                    continue
                part_entries = self.table.maps.get(id(part), {})
                for key, value in part.items():
                    if key not in result:
                        result[key] = value
                        if key in part_entries:
                            entries[key] = part_entries[key]
        self.table.maps[id(result)] = entries
        self.table.starts[id(result)] = place(node.start_mark.line, node.start_mark.column)
        return result


def _style(node) -> str | None:
    return getattr(node, "style", None) or None


def _raw(node, value) -> str | None:
    if node.id == "scalar" and not isinstance(value, str):
        return node.value
    return None


def _tag(node) -> str:
    """The node's tag as text; resolved tags (no handle) skip ruamel.yaml's slower conversion."""
    ctag = node.ctag
    if ctag is None:
        return ""
    return ctag.suffix if ctag.handle is None else str(ctag)


def _scalar(node) -> Any:
    tag: str = _tag(node)
    text: str = node.value
    if not tag.startswith(_TAG):
        return text
    kind = tag[len(_TAG):]
    if kind == "str":
        return text
    if kind == "null":
        return None
    if kind == "bool":
        return text.lower() in _TRUE
    if kind == "int":
        return _int11(text)
    if kind == "float":
        return _float11(text)
    return text  # timestamps, binary and anything else stay as written


def _int11(text: str) -> Any:
    body = text.replace("_", "")
    sign = -1 if body.startswith("-") else 1
    body = body.lstrip("+-")
    try:
        if body.startswith(("0b", "0B")):
            return sign * int(body[2:], 2)
        if body.startswith(("0x", "0X")):
            return sign * int(body[2:], 16)
        if body.startswith(("0o", "0O")):
            return sign * int(body[2:], 8)
        if ":" in body:
            total = 0
            for part in body.split(":"):
                total = total * 60 + int(part)
            return sign * total
        if len(body) > 1 and body.startswith("0"):
            return sign * int(body, 8)
        return sign * int(body)
    except ValueError:
        return text


def _float11(text: str) -> Any:
    body = text.replace("_", "").lower()
    if body in (".nan",):
        return math.nan
    if body.lstrip("+-") == ".inf":
        return -math.inf if body.startswith("-") else math.inf
    try:
        if ":" in body:
            sign = -1.0 if body.startswith("-") else 1.0
            total = 0.0
            for part in body.lstrip("+-").split(":"):
                total = total * 60 + float(part)
            return sign * total
        return float(body)
    except ValueError:
        return text


# --- YAML held inside a string (proxy.istio.io/config, the istio ConfigMap's data.mesh) -------------


class Embedded(NamedTuple):
    """The result of parsing YAML or JSON held in a string value."""

    root: Node | None
    problem: SyntaxProblem | None  # position already mapped into the host file


def parse_embedded(host: Node, lines: list[str]) -> Embedded:
    """Parse the string `host` as YAML (JSON is YAML) and map positions back into the host file."""
    text = host.text or ""
    place = embedded_place(host, lines)
    try:
        nodes = [n for n in _compose_all(text) if n is not None]
    except Exception as err:  # noqa: BLE001
        inner = _problem_from(err, text)
        line, col = place(inner.line - 1, inner.column - 1)
        return Embedded(None, SyntaxProblem(line, col, inner.message))
    if not nodes:
        return Embedded(None, None)
    converter = _Converter(host.pos.path, place)
    try:
        data = converter.convert(nodes[0])
    except _DocumentTooDeep:
        return Embedded(None, SyntaxProblem(host.pos.line, host.pos.column, "nested too deeply"))
    if converter.problems:
        return Embedded(None, converter.problems[0])
    line, col = place(nodes[0].start_mark.line, nodes[0].start_mark.column)
    return Embedded(Node(data, converter.table, Position(host.pos.path, line, col), host.key_pos), None)


def embedded_place(host: Node, lines: list[str]) -> Callable[[int, int], tuple[int, int]]:
    line0, col0 = host.pos.line, host.pos.column
    if host.style == "|":
        # A literal block keeps one source line per value line, indented by the block's indentation.
        indent = 0
        for source in lines[line0:]:
            if source.strip():
                indent = len(source) - len(source.lstrip(" "))
                break
        return lambda line, col: (line0 + 1 + line, indent + col + 1)
    if host.style in ('"', "'", None) and "\n" not in (host.text or ""):
        # One source line: columns map after the opening quote; "past the end" stays on that line.
        shift = 1 if host.style else 0
        return lambda line, col: (line0, col0 + shift + col) if line == 0 else (line0, col0)
    return lambda line, col: (line0, col0)  # folded or multi-line flow: lines do not map one to one
