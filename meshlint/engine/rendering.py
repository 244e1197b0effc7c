"""Judging what the overlays deploy (wave-3 spec V1, "Rendering"): each root kustomization that builds is
checked as built, in its own unit, and what it finds is reported at the file and line the object was
written in.

Rendered findings take the place of the raw ones in the files every unit of which was built: a finding
an overlay's patch settles is gone, one a patch brings is there, and one that holds in several overlays
is said once, naming them. A rendered finding at the very place and with the very words of the raw one
is the raw one (its fix, its fingerprint, its suppression comments). Files in a unit that did not build
keep their raw findings, and the notes say why that unit was not built.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from meshlint.engine.filecheck import check_file
from meshlint.findings import Finding, Position, SaidKey, said_key
from meshlint.fingerprint import fingerprinted
from meshlint.model.resource import Resource, resources_of
from meshlint.rule import Rule
from meshlint.source import inputs
from meshlint.source.document import Node
from meshlint.source.loader import load_file
from meshlint.source.render import Rendered, Renderer, render
from meshlint.source.units import Root, Units
from meshlint.suppressions import comment_suppression

if TYPE_CHECKING:
    from meshlint.engine.plan import Plan
    from meshlint.engine.results import Report


class Outcome(NamedTuple):
    """The run's findings once rendering has spoken, the units each rendered finding holds in, notes."""

    findings: list[Finding]
    units: dict[SaidKey, list[str]]
    failed: list[tuple[str, str, str]]  # (unit, who said so, why) of each root not rendered
    rendered: int  # roots built


def judge_rendered(plan: Plan, report: Report, units: Units, checked: list[str], jobs: int, diff_files: frozenset[str] | None) -> None:
    """What the root kustomizations deploy, judged as built (engine/rendering.py), in place of the raw
    findings of the files they cover. `diff_files`: a --diff-base run's changed files: the roots that reach
    none are not built, unless a changed file lies in no unit (a platform's mesh config governs every one)."""
    from meshlint.source import render as renderers  # looked up at the call: a test may stand in for the search

    renderer = renderers.find_renderer()
    names = {inputs.real(f): f for f in checked if f != inputs.STDIN}
    # Only the roots that reach a file of the run: a pre-commit run's units hold the whole repository's.
    roots = [root for root in units.roots if not root.component and any(os.path.realpath(f) in names for f in root.files)]
    if diff_files is not None and all(units.of(path) for path in diff_files):
        roots = [root for root in roots if any(os.path.realpath(f) in diff_files for f in root.files)]
    if not roots:
        return
    if renderer is None:
        report.notes.append(f"{len(roots)} root kustomization{'s' if len(roots) != 1 else ''} not rendered: neither kustomize nor kubectl "
                            "is on PATH; their files are checked as written (--render never says this is meant)")
        return
    rules = plan.governing.rules()
    outcome = apply(
        report.findings, units, roots, renderer, lambda path, text: check_file(plan, path, text).findings, names, rules,
        lambda found: fingerprinted(found, plan.root), plan.governing.top.config.max_file_size, jobs,
    )
    report.findings = outcome.findings
    failed = sorted(outcome.failed)
    report.notes.extend(f"{unit}: not rendered ({who}): {why}; its files are checked as written" for unit, who, why in failed)
    report.held_in = outcome.units
    report.summary.rendered = {
        "renderer": renderer.name, "roots": len(roots), "rendered": outcome.rendered,
        "not_rendered": [{"unit": unit, "reason": why} for unit, _, why in failed],
    }


def apply(
    findings: list[Finding], units: Units, roots: list[Root], renderer: Renderer, check: Callable[[str, bytes], Iterable[Finding]], names: dict[str, str],
    rules: Sequence[Rule], fingerprint: Callable[[list[Finding]], list[Finding]], limit: int, jobs: int,
) -> Outcome:
    """`check(path, text)`: a rendered stream's findings, as if it were the file at `path`; `names`: the run's
    name of each file it checks, by real path. Only those files' findings change: a unit's other files
    (a base beside a named overlay file in a pre-commit run) are not reported on."""
    built = render(roots, renderer, limit, jobs, inputs.OVERLAY)
    failed = [(r.root.name, renderer.name, r.error) for r in built if r.text is None and r.error is not None]
    sources = _Sources(names)
    placed: list[tuple[Rendered, list[Finding | None]]] = []
    for each in built:
        if each.text is None:
            continue
        stream = names.get(os.path.realpath(each.root.kustomization), each.root.kustomization)
        try:
            moved = _Relocation(each, stream, sources, units.fragments)
            placed.append((each, [moved.finding(f) for f in check(stream, each.text)]))
        except Exception as err:  # a build whose findings cannot be placed is one not rendered: never a traceback
            failed.append((each.root.name, "meshlint", f"it could not check what it builds ({type(err).__name__}: {err})"))
    done = {each.root.name for each, _ in placed}
    if not done:
        return Outcome(findings, {}, failed, 0)
    # A file some of whose units were built: each built unit speaks for itself, and the file as written
    # speaks for the others only (a base one overlay of which needs a remote base).
    reached = {os.path.realpath(f): f for each, _ in placed for f in each.root.files if os.path.realpath(f) in names}
    covered = set(reached)
    unbuilt = {real: sorted(units.of(f) - done) for real, f in reached.items() if not units.of(f) <= done}
    raw = {said_key(f): f for f in findings}
    kept: list[Finding] = []
    held: dict[SaidKey, list[str]] = {}
    for f in findings:
        real = os.path.realpath(f.path) if f.resource is not None else ""
        if real not in covered:
            kept.append(f)
        elif real in unbuilt:
            kept.append(f)
            held[said_key(f)] = list(unbuilt[real])
    found: dict[SaidKey, Finding] = {}
    by_code = {rule.code: rule for rule in rules}
    for each, moved_findings in placed:
        for finding in moved_findings:
            if finding is None or os.path.realpath(finding.path) not in covered:
                continue
            rule = by_code.get(finding.code)
            lines = sources.lines(finding.path)
            if rule is not None and lines is not None and comment_suppression(lines, finding.position, rule) is not None:
                continue
            key = said_key(finding)
            if key not in found and key not in held:
                found[key] = raw.get(key, finding)
            held.setdefault(key, [])
            if each.root.name not in held[key]:
                held[key].append(each.root.name)
    kept.extend(f for k, f in found.items() if k in raw)
    kept.extend(fingerprint([f for k, f in found.items() if k not in raw]))
    return Outcome(kept, {k: sorted(v) for k, v in held.items()}, failed, len(done))


class _Sources:
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


class _Relocation:
    """Places in one rendered stream, moved to where their object was written."""

    def __init__(self, built: Rendered, stream: str, sources: _Sources, fragments: frozenset[str]) -> None:
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
            place = self.position(Position(self.stream, line, _indent(written) + 1))
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

