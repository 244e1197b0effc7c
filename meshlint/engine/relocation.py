"""Where a rendered object was written: the source file and line its origin annotation names, then the
object by kind and name in that file, then the field by its path; a field a strategic-merge patch adds
goes to the patch's line, one a JSON 6902 patch adds to its operation. Names and cited lines in the
message are put back as written."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from meshlint.findings import Finding, Position
from meshlint.model.resource import Resource, resources_of
from meshlint.source import inputs
from meshlint.source.document import Node
from meshlint.source.loader import load_file
from meshlint.source.render import Rendered

if TYPE_CHECKING:
    pass


class Sources:
    """The source files rendered objects came from, each loaded once."""

    def __init__(self, names: dict[str, str]) -> None:
        self.names = names
        self._loaded: dict[str, tuple[list[Resource], Sequence[str], list[Node]] | None] = {}
        self._operations: dict[str, list[tuple[list[str], Node]]] = {}

    def name(self, absolute: str) -> str:
        real = os.path.realpath(absolute)
        named = self.names.get(real)
        if named is not None:
            return named
        relative = os.path.relpath(absolute, inputs.cwd())
        return absolute if relative.startswith("..") else relative

    def resources(self, path: str) -> list[Resource]:
        loaded = self._load(path)
        return loaded[0] if loaded is not None else []

    def operations(self, path: str) -> list[tuple[list[str], Node]]:
        """A JSON patch file's operations that set a value: (the path's segments, the value)."""
        if path not in self._operations:
            found: list[tuple[list[str], Node]] = []
            loaded = self._load(path)
            for root in loaded[2] if loaded is not None else ():
                for op in root.elements():
                    pointer, value = op.get("path").value, op.get("value")
                    if op.get("op").value in ("add", "replace") and isinstance(pointer, str) and pointer.startswith("/") and value.exists:
                        found.append(([s.replace("~1", "/").replace("~0", "~") for s in pointer[1:].split("/")], value))
            self._operations[path] = found
        return self._operations[path]

    def lines(self, path: str) -> Sequence[str] | None:
        loaded = self._load(path)
        return loaded[1] if loaded is not None else None

    def _load(self, path: str) -> tuple[list[Resource], Sequence[str], list[Node]] | None:
        """A file's objects, lines and documents (a JSON patch is a list, no object)."""
        if path not in self._loaded:
            try:
                loaded = load_file(path, input_file=False)
            except OSError:
                self._loaded[path] = None
            else:
                found = [r for document in loaded.documents for r in resources_of(document)]
                self._loaded[path] = (found, loaded.lines, [document.root for document in loaded.documents])
        return self._loaded[path]


class Relocation:
    """Places in one rendered stream, moved to where their object was written."""

    def __init__(self, built: Rendered, stream: str, sources: Sources, fragments: frozenset[str]) -> None:
        assert built.text is not None
        self.built, self.stream, self.sources = built, stream, sources
        loaded = load_file(stream, data=built.text, input_file=False)
        self.lines = loaded.lines
        self.rendered = [r for document in loaded.documents for r in resources_of(document)]
        self.starts = sorted((r.document.line, n) for n, r in enumerate(self.rendered))
        self.root_name = sources.name(built.root.kustomization)
        # The root's patch files, where a field no source file has was most likely written.
        self.patches = sorted(sources.name(f) for f in built.root.files if os.path.realpath(f) in fragments)

    def finding(self, finding: Finding) -> Finding | None:
        if finding.path != self.stream:
            return finding
        place, written, rendered = self._locate(finding.position)
        if place is None:
            return None
        message, help_ = finding.message, finding.help
        resource = finding.resource
        if written is not None and rendered is not None:
            # Said of the object as written, so that what each overlay finds at one place is one finding.
            resource = written.identity
            if written.name and written.name != rendered.name:
                message = message.replace(f"{rendered.kind} {rendered.name}", f"{written.kind} {written.name}")
                help_ = help_.replace(f"{rendered.kind} {rendered.name}", f"{written.kind} {written.name}")
        related = tuple(p for p in (self.position(r) if r.path == self.stream else r for r in finding.related) if p is not None and p != place)
        lines = self.sources.lines(place.path)
        source = lines[place.line - 1] if lines is not None and 1 <= place.line <= len(lines) else None
        return finding._replace(
            path=place.path, line=place.line, column=place.column, source=source, rendered_from=None, related=related, fix=None, fingerprint="",
            message=self.cited(message, place.path), help=self.cited(help_, place.path), resource=resource,
        )

    def cited(self, text: str, here: str) -> str:
        """`text` with the stream's lines it cites (`line 21`, `<stream>:21`) made the written ones."""
        if "line " not in text and self.stream + ":" not in text:
            return text

        def moved(number: str, bare: bool) -> str:
            line = int(number)
            written = self.lines[line - 1] if 1 <= line <= len(self.lines) else ""
            place = self.position(Position(self.stream, line, _first_key(written)))
            if place is None:
                return f"line {number}" if bare else f"{self.stream}:{number}"
            return f"line {place.line}" if bare and place.path == here else f"{place.path}:{place.line}"

        text = re.sub(re.escape(self.stream) + r":(\d+)", lambda m: moved(m.group(1), False), text)
        return re.sub(r"\bline (\d+)\b", lambda m: moved(m.group(1), True), text)

    def position(self, position: Position) -> Position | None:
        return self._locate(position)[0]

    def _locate(self, position: Position) -> tuple[Position | None, Resource | None, Resource | None]:
        """Where the thing at `position` of the stream was written (in the object's own file when it is
        there, else in a patch of the root that writes it, else at its nearest enclosing field that is),
        the object as written and as built."""
        resource = self._resource_at(position.line)
        if resource is None:
            return Position(self.root_name, 1, 1), None, None
        origin = resource.rendered_from
        if origin is None:  # made by a generator: the kustomization that configured it
            return Position(self.root_name, 1, 1), None, resource
        path = self.sources.name(self.built.written(origin))
        steps = _steps(resource.root, position)
        at_key = _at_key(resource.root, steps, position)
        written = _matching(self.sources.resources(path), resource)
        if written is None:
            return Position(path, 1, 1), None, resource
        node, whole = _walk(written.root, steps)
        if not whole:
            for patch in self.patches:
                patched = _matching(self.sources.resources(patch), resource)
                if patched is not None:
                    in_patch, found = _walk(patched.root, steps)
                    if found:
                        return self._inside(in_patch, resource.root, steps, position, at_key), written, resource
            operation = self._operation(steps)
            if operation is not None:
                return _place(operation, at_key), written, resource
            return _place(node, at_key), written, resource
        return self._inside(node, resource.root, steps, position, at_key), written, resource

    def _inside(self, written: Node, rendered_root: Node, steps: list[Step], position: Position, at_key: bool) -> Position:
        """A place inside a written value (a line of a script): as many lines below the value's start as
        in the stream, shifted by the two lines' indentation."""
        place = _place(written, at_key)
        rendered, _ = _walk(rendered_root, steps)
        start = rendered.pos
        if at_key or not isinstance(rendered.value, str) or position.line <= start.line:
            return place
        line = place.line + position.line - start.line
        lines = self.sources.lines(place.path)
        if lines is None or line > len(lines):
            return place
        shift = _indent(lines[line - 1]) - _indent(self.lines[position.line - 1]) if position.line <= len(self.lines) else 0
        return Position(place.path, line, max(1, position.column + shift))

    def _operation(self, steps: list[Step]) -> Node | None:
        """The deepest place a JSON patch operation of the root writes on the way to `steps`: the one
        whose path leads furthest along them, then down its value."""
        best: tuple[int, Node] | None = None
        for patch in self.patches:
            for segments, value in self.sources.operations(patch):
                if len(segments) > len(steps) or not all(_same(segment, step) for segment, step in zip(segments, steps, strict=False)):
                    continue
                node, _ = _walk(value, steps[len(segments):])
                depth = len(segments)
                if best is None or depth > best[0]:
                    best = (depth, node)
        return best[1] if best is not None else None

    def _resource_at(self, line: int) -> Resource | None:
        found = None
        for start, n in self.starts:
            if start > line:
                break
            found = self.rendered[n]
        return found


Step = tuple[str, object]  # ("key", key) or ("item", name or index)


def _steps(root: Node, position: Position) -> list[Step]:
    """The keys and list items from `root` down to what stands at `position`: the path `path_to` spells
    (`spec.template.metadata.annotations.sidecar.istio.io/inject`), read back against the tree, whose
    keys tell a dot in a key from a dot between two."""
    spelled = root.path_to(position)
    steps: list[Step] = []
    node = root
    while spelled:
        if spelled.startswith("["):
            label, _, spelled = spelled[1:].partition("]")
            spelled = spelled.removeprefix(".")
            # An item with a `name` goes by it, any other by its index.
            named = any(c.is_map and c.get("name").value == label for c in node.elements())
            step: Step = ("item", int(label) if label.isdigit() and not named else label)
        else:
            keys = [k for k, _ in node.items() if spelled == str(k) or spelled.startswith((f"{k}.", f"{k}["))]
            if not keys:
                break
            key = max(keys, key=lambda k: len(str(k)))
            spelled = spelled[len(str(key)):].removeprefix(".")
            step = ("key", key)
        child, whole = _walk(node, [step])
        if not whole:
            break
        steps.append(step)
        node = child
    return steps


def _same(segment: str, step: Step) -> bool:
    """A JSON pointer's segment names this step: the key, or a list index (or `-`, the end) for an item,
    whose place in the list as patched is not known here."""
    kind, label = step
    if kind == "key":
        return segment == label
    return segment == "-" or (segment.isdigit() and (not isinstance(label, int) or int(segment) == label))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _first_key(line: str) -> int:
    """The column of what a line holds, past its list dashes: at a `- name: x` item's dash the place
    is still the item before (its last field), one line above where the cited item is written."""
    rest = line.lstrip(" ")
    while rest.startswith("- "):
        rest = rest[2:].lstrip(" ")
    return len(line) - len(rest) + 1


def _walk(root: Node, steps: list[Step]) -> tuple[Node, bool]:
    """The node `steps` lead to from `root`, or the deepest one they reach, and whether they all did."""
    node = root
    for kind, label in steps:
        if kind == "key":
            child = node.get(label) if node.is_map else None
        elif isinstance(label, str):
            child = next((c for c in node.elements() if c.is_map and c.get("name").value == label), None)
        else:
            child = node.at(label) if node.is_list and isinstance(label, int) else None
        if child is None or not child.exists:
            return node, False
        node = child
    return node, True


def _at_key(root: Node, steps: list[Step], position: Position) -> bool:
    node, _ = _walk(root, steps)
    key = node.key_pos
    return key is not None and (key.line, key.column) == (position.line, position.column)


def _place(node: Node, at_key: bool) -> Position:
    return (node.key_pos if at_key and node.key_pos is not None else None) or node.pos


def _matching(written: list[Resource], rendered: Resource) -> Resource | None:
    """The object of a source file a rendered one was made from: same kind, and the same name, or the
    name a prefix or suffix was added to (the longest such), or the file's only object of that kind."""
    same_kind = [r for r in written if r.kind == rendered.kind]
    if len(same_kind) == 1:
        return same_kind[0]
    exact = [r for r in same_kind if r.name == rendered.name]
    if exact:
        return exact[0]
    within = [r for r in same_kind if r.name and r.name in rendered.name]
    return max(within, key=lambda r: len(r.name)) if within else None
