"""From a file's bytes to its Documents: decoding, composing, and recovery after a syntax error.

A broken document does not hide the others: when a stream does not parse, each `---`-separated part is
read on its own. A file with Helm template syntax that does not parse is passed over with a note.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice

from meshlint.source import inputs, readers
from meshlint.source.document import Document
from meshlint.source.syntax import MAX_DEPTH, DocumentTooDeep, SyntaxProblem, problem_from

# Indentation from which block nesting could reach the composer's limit.
_DEEP_INDENT = " " * 5000  # at a line's start: nesting the composer cannot follow (see _nesting_beyond_limit)
# A document's `---`, found by its literal and kept where a line starts: `^---` under re.M is tried at
# every character of the text, which was most of splitting a small file into its documents.
_DOC_MARK = re.compile(r"---(?=\s|$)", re.M)
_MANIFEST_KEY = re.compile(r"^[ \t-]*[\"']?(apiVersion|kind)[\"']?[ \t]*:", re.M)
HELM_SKIP = "Helm template syntax ({{ ... }}); render it first: helm template ... | meshlint check -"
CHART_TEMPLATE = "a template of the Helm chart in {chart}; render it first: helm template {chart} | meshlint check -"
CHART_FILE = "a file of the Helm chart in {chart}, which its templates read; render it first: helm template {chart} | meshlint check -"
NOT_A_MANIFEST = "not a manifest (no document has apiVersion or kind) and it does not parse as YAML"


class LoadedFile:
    """A file as the loader gives it: its documents, its syntax problems, its lines."""

    path: str
    documents: list[Document]
    problems: list[SyntaxProblem]
    lines: Sequence[str]
    # Set when the whole file was passed over (a Helm template that does not parse).
    skipped: str | None
    newline: str  # how its first line ends: fixes write new lines the same way
    # (kind, apiVersion) of the documents read for their syntax alone (`light` below): valid, free of
    # duplicate keys, and of a kind nothing in the run reads.
    light: list[tuple[str, str]]
    # A streamed file's documents are read as `each_document` asks for them (see `load_file`).
    pending: Callable[[], Iterator[Document]] | None

    def __init__(
        self,
        path: str,
        documents: list[Document] | None = None,
        problems: list[SyntaxProblem] | None = None,
        lines: Sequence[str] | None = None,
        skipped: str | None = None,
        newline: str = "\n",
        light: list[tuple[str, str]] | None = None,
        pending: Callable[[], Iterator[Document]] | None = None,
    ) -> None:
        self.path = path
        self.documents = [] if documents is None else documents
        self.problems = [] if problems is None else problems
        self.lines = [] if lines is None else lines
        self.skipped = skipped
        self.newline = newline
        self.light = [] if light is None else light
        self.pending = pending

    def each_document(self) -> Iterator[Document]:
        """The documents one at a time. A streamed file's are read here, part by part, and let go as
        the caller does; its problems, parts read for syntax alone and whether it is passed over
        (`skipped`) are known once the last has been given."""
        if self.pending is None:
            yield from self.documents
            return
        pending, self.pending = self.pending, None
        yield from pending()


# Which documents may be read for their syntax alone: given a document's plainly written kind and
# apiVersion, does nothing in the run read it?
Light = Callable[[str, str, str], bool]


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


def load_file(
    path: str, display: str | None = None, data: bytes | None = None, *, input_file: bool = True, light: Light | None = None,
    stream: bool = False, lines: Sequence[str] | None = None,
) -> LoadedFile:
    """Read and load one file (raises OSError when it cannot be read). An input that does not parse is
    passed over when it is a Helm template or not a manifest at all; a mesh context file never is.
    With `light`, documents nothing reads are checked for syntax only (`LoadedFile.light`). With
    `stream`, a big file's documents are read as `LoadedFile.each_document` asks for them, so that
    memory holds one at a time (a `helm template` stream on stdin). `lines`: the file's lines, when
    they were already made (the first pass made stdin's)."""
    chart = inputs.helm_chart_of(path) if input_file else None
    if chart is not None:
        part = CHART_FILE if inputs.helm_chart_files(path) else CHART_TEMPLATE
        return LoadedFile(display or inputs.display_name(path), skipped=part.format(chart=chart))
    if data is None:
        data = inputs.read(path)
    text, problem = decode(data)
    if stream and light is not None and streams(text):
        return _streamed(display or inputs.display_name(path), text, problem, light, input_file, lines)
    loaded = load_text(display or inputs.display_name(path), text, lines=lines, light=light)
    if input_file:
        pass_over(loaded, text)
    if problem is not None:
        loaded.problems.insert(0, problem)
    return loaded


def _streamed(path: str, text: str, problem: SyntaxProblem | None, light: Light, input_file: bool, lines: Sequence[str] | None) -> LoadedFile:
    """A big file whose documents are read as they are asked for, exactly as `load_file` reads them."""
    loaded = LoadedFile(path=path, lines=text.splitlines() if lines is None else lines, newline=newline_of(text))

    def documents() -> Iterator[Document]:
        manifest_like = False
        for document in each_part(loaded, each_chunk(text), 0, light):
            manifest_like = manifest_like or looks_like_a_manifest(document)
            yield document
        finish_stream(loaded, text, problem, input_file, manifest_like)

    loaded.pending = documents
    return loaded


def newline_of(text: str) -> str:
    """How the text's first line ends: fixes write new lines the same way."""
    first_break = text.find("\n")
    return "\r\n" if first_break > 0 and text[first_break - 1] == "\r" else "\n"


def looks_like_a_manifest(document: Document) -> bool:
    data = document.data
    return isinstance(data, dict) and ("apiVersion" in data or "kind" in data)


def finish_stream(loaded: LoadedFile, text: str, problem: SyntaxProblem | None, input_file: bool, manifest_like: bool) -> None:
    """What `load_file` does once a file's documents are read: pass it over if it is a template or no
    manifest, and put a decoding problem first."""
    if input_file:
        pass_over(loaded, text, manifest_like)
    if problem is not None:
        loaded.problems.insert(0, problem)


def streams(text: str) -> bool:
    """Is this text read part by part when streamed (`load_file(stream=True)`)?"""
    return len(text) >= PARTS_FROM and not _nesting_beyond_limit(text) and _parts_read_alike(text)


def load_text(path: str, text: str, line_offset: int = 0, lines: Sequence[str] | None = None, light: Light | None = None) -> LoadedFile:
    """Read `text` as the file `path` holds it. A part of a file is read with `line_offset`, the line it
    starts at (0-based), and the whole file's `lines`, so positions are the file's.

    With `light`, the file is read part by part (`---`-separated): which is what reading it whole
    gives when it parses, and what reading it whole falls back to when it does not, so the result is
    the same either way; parts of kinds nothing reads may then skip the composer."""
    loaded = LoadedFile(path=path, lines=text.splitlines() if lines is None else lines, newline=newline_of(text))
    too_deep = _nesting_beyond_limit(text)
    if too_deep:
        loaded.problems.append(SyntaxProblem(too_deep + line_offset, 1, f"document nests more than {MAX_DEPTH} levels deep; not read"))
        return loaded
    if light is not None and len(text) >= PARTS_FROM and _parts_read_alike(text):
        _compose_by_document(loaded, text, line_offset, light)
        return loaded
    try:
        readers.read(loaded.documents, loaded.problems, text, path, loaded.lines, 0, line_offset)
    except Exception:  # any parse failure falls back to document-by-document reading
        loaded.documents.clear()
        loaded.problems.clear()
        _compose_by_document(loaded, text, line_offset)
    return loaded


def pass_over(loaded: LoadedFile, text: str, manifest_like: bool = False) -> None:
    """An input that does not parse and is a Helm template or no manifest at all is passed over.
    `manifest_like`: a document already let go had an apiVersion or a kind."""
    if loaded.problems:
        skipped = _skip_reason(loaded, text, manifest_like)
        if skipped is not None:
            loaded.documents.clear()
            loaded.problems.clear()
            loaded.light.clear()
            loaded.skipped = skipped


def _skip_reason(loaded: LoadedFile, text: str, manifest_like: bool = False) -> str | None:
    """A file that does not parse is passed over, not reported, when it is a Helm template (the parser
    stops at a `{{`, on its line or the line after), a docs template (it stops at a `{placeholder}` glued
    to text), or when nothing in it looks like a Kubernetes object (a `tsconfig.json` with comments, a
    CI file)."""
    stops = [p.line for p in loaded.problems if p.parse]
    if stops and any("{{" in line for line in loaded.lines[max(0, stops[0] - 2) : stops[0]]):
        return HELM_SKIP
    placeholder = next(filter(None, map(_placeholder_in, loaded.lines[max(0, stops[0] - 2) : stops[0]])), None) if stops else None
    if placeholder is not None:
        return f"a placeholder to fill in ({placeholder}, read as YAML's flow mapping); fill it in first"
    if not _MANIFEST_KEY.search(text) and not manifest_like and not any(isinstance(d.data, dict) and ("apiVersion" in d.data or "kind" in d.data) for d in loaded.documents):
        return NOT_A_MANIFEST
    return None


def _placeholder_in(line: str) -> str | None:
    """A docs template's `{name}` glued to more text (`image: {username}/torchserve:latest`): YAML reads
    the braces as a flow mapping and stops at what follows, which no manifest ever means."""
    at = line.find("{")
    while at >= 0:
        end = line.find("}", at + 1)
        if end < 0:
            return None
        name = line[at + 1 : end]
        glued = end + 1 < len(line) and line[end + 1] not in " \t,}]#\r"
        if glued and name[:1].isalpha() and all(c.isalnum() or c in "_.-" for c in name):
            return line[at : end + 1]
        at = line.find("{", at + 1)
    return None


def document_chunks(text: str) -> list[tuple[int, str]]:
    """The `---`-separated parts of a file as (first line, 0-based; text), without composing them."""
    return list(each_chunk(text))


def each_chunk(text: str) -> Iterator[tuple[int, str]]:
    """`document_chunks` one at a time: a big stream is never copied whole into its parts."""
    starts = [0] + [m.start() for m in _DOC_MARK.finditer(text) if m.start() > 0 and text[m.start() - 1] == "\n"]
    # The parser ends a line at a CR that no LF follows, a NEL, U+2028 and U+2029 too: a part after
    # one starts as many lines further down as the whole text read at once says.
    other_breaks = any(c in text for c in _OTHER_BREAKS)
    line = 0
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(text)
        yield line, text[start:end]
        line += text.count("\n", start, end)
        if other_breaks:
            line += text.count("\r", start, end) - text.count("\r\n", start, end) + sum(text.count(c, start, end) for c in _OTHER_BREAKS[1:])


_OTHER_BREAKS = ("\r", "\x85", "\u2028", "\u2029")  # line breaks to the parser besides LF (and CRLF)


def load_chunks(path: str, chunks: list[tuple[int, str]], lines: Sequence[str]) -> list[Document]:
    """Compose only some parts of a file (`lines` are the whole file's); parts that fail are left out
    (reading the whole file reports them)."""
    documents = []
    for line_offset, chunk in chunks:
        loaded = load_text(path, chunk, line_offset, lines)
        if not loaded.problems:
            documents.extend(loaded.documents)
    return documents


def _compose_by_document(loaded: LoadedFile, text: str, line_offset: int = 0, light: Light | None = None) -> None:
    """Read each `---`-separated part on its own, so one broken document does not hide the others."""
    loaded.documents.extend(each_part(loaded, document_chunks(text), line_offset, light))


def each_part(loaded: LoadedFile, chunks: Iterable[tuple[int, str]], line_offset: int = 0, light: Light | None = None) -> Iterator[Document]:
    """The documents of these parts of `loaded`'s file, part by part as they are asked for; their
    problems go to `loaded.problems`, the parts read for syntax alone to `loaded.light`."""
    if light is not None:
        from meshlint.source import screen  # its patterns are compiled only by runs that read parts
    index = 0
    for chunk_line, chunk in chunks:
        offset = line_offset + chunk_line
        if light is not None:
            named = screen.plain_kind(chunk)
            if named is not None and light(named[0], named[1], chunk) and screen.surely_valid(chunk):
                loaded.light.append(named)
                index += 1
                continue
        documents: list[Document] = []
        try:
            index = readers.read(documents, loaded.problems, chunk, loaded.path, loaded.lines, index, offset)
        except DocumentTooDeep as err:
            loaded.problems.append(SyntaxProblem(err.args[0], 1, f"document nests more than {MAX_DEPTH} levels deep; not read"))
        except Exception as err:  # ruamel raises several unrelated error types
            # libyaml refuses some YAML that Kubernetes reads; the pure-Python parser has the last word.
            # (The documents read before the error stay, and the second reading adds its own.)
            retried = _compose_pure(loaded, chunk, index, offset)
            if retried is not None:
                index, more = retried
                documents.extend(more)
            else:
                problem = problem_from(err, chunk)
                loaded.problems.append(SyntaxProblem(problem.line + offset, problem.column, problem.message))
        yield from documents


def _compose_pure(loaded: LoadedFile, chunk: str, index: int, offset: int) -> tuple[int, list[Document]] | None:
    """Compose one part with the pure-Python parser; None (and nothing added) when it fails too."""
    documents: list[Document] = []
    problems: list[SyntaxProblem] = []
    try:
        index = readers.read(documents, problems, chunk, loaded.path, loaded.lines, index, offset, pure=True)
    except Exception:  # the C parser's error is the one reported
        return None
    loaded.problems.extend(problems)
    return index, documents


# Reading part by part costs a parser per part; it pays from files of this size (a big stream, a CRD),
# where parts no rule reads skip the composer. Smaller files are read whole.
PARTS_FROM = 16 * 1024
_SOURCE_LINE = re.compile(r"^#\s*Source:", re.M)
_CONTENT_LINE = re.compile(r"^(?!---(?:[ \t]*(?:#.*)?)\r?$)[ \t]*[^#\s]", re.M)


def _parts_read_alike(text: str) -> bool:
    """Does reading `text` part by part give what reading it whole gives? Not when a directive
    (`%YAML`, `%TAG`) before a `---` belongs to the part after it, nor when a `# Source:` comment
    stands after a document's content or in a first part with no document (reading the stream whole,
    the gap a document's `# Source:` is looked for in then starts in the part before)."""
    if text.startswith("%") or "\n%" in text:  # a directive line (found by its literal, not `^%` tried everywhere)
        return False
    if "Source:" not in text:
        return True
    first = True
    for _, chunk in document_chunks(text):
        for comment in _SOURCE_LINE.finditer(chunk):
            content = _CONTENT_LINE.search(chunk, 0, comment.start())
            if content is not None or (first and _CONTENT_LINE.search(chunk) is None):
                return False
        first = False
    return True


def _nesting_beyond_limit(text: str) -> int:
    """Line of a nesting deep enough to crash the composer, or 0. Cheap unless brackets abound."""
    deep = _deep_indent_line(text)
    if deep:
        return deep
    if bracket_depth_bound(text) <= 4 * MAX_DEPTH:
        return 0
    # Only a deep file is walked bracket by bracket, and the line is found only when the walk finds one.
    brackets = _NOT_BRACKETS.sub("", text)
    depth = 0
    for n, bracket in enumerate(brackets):
        if bracket in "[{":
            depth += 1
            if depth > 4 * MAX_DEPTH:
                match = next(islice(re.finditer(r"[\[\]{}]", text), n, None))
                return text.count("\n", 0, match.start()) + 1
        elif depth:
            depth -= 1
    return 0


def bracket_depth_bound(text: str) -> int:
    """How deep the brackets of `text` may nest, at most (counted as `_nesting_beyond_limit` walks
    them, comments and strings too): under MAX_DEPTH, the number of opening brackets."""
    opens = text.count("[") + text.count("{")
    if opens < MAX_DEPTH:
        return opens
    # The brackets alone (cut out by one substitution in C): a 10 MB ConfigMap of JSON has millions,
    # and a match object for each made it slow. Removing the innermost pairs pass by pass bounds the
    # depth from above (the opens at any peak are a chain of nested pairs, at most one a pass, and
    # opens never closed), in a few passes over shallow JSON.
    pairs = _NOT_BRACKETS.sub("", text).translate(_AS_PARENTHESES)
    passes = 0
    while "()" in pairs and passes <= 4 * MAX_DEPTH:
        pairs = pairs.replace("()", "")
        passes += 1
    return passes + pairs.count("(")


def _deep_indent_line(text: str) -> int:
    """The first line that starts with `_DEEP_INDENT`, or 0. (Found by its literal: `^ {5000}` under
    re.M was tried at every character of every file.)"""
    if text.startswith(_DEEP_INDENT):
        return 1
    at = text.find("\n" + _DEEP_INDENT)
    return 0 if at < 0 else text.count("\n", 0, at + 1) + 1


_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")
_AS_PARENTHESES = str.maketrans("[{]}", "(())")
