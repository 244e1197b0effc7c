"""Deployment units (wave-3 spec V1): the sets of objects that are applied to one cluster together.

A kustomization that no other kustomization of the run lists (in `resources`, `bases` or `components`)
is a root; the root and every file it reaches is one unit, and a file reached from several roots is in
each of their units. A Helm chart's folder (a `Chart.yaml`) is a unit. Every other file is in no unit:
the path rule of wave 2 decides for it.

What a unit changes is what may decide for a workload: sources, signs of Istio and policies of a sibling
overlay or sample never reach it (mesh/scope.py). Only the kustomization files are read here, and only
the entries that name local files or folders: a remote base is left out, never fetched.
"""

import hashlib
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from typing import Any, NamedTuple

from meshlint.source import inputs
from meshlint.source.kustomize import KUSTOMIZATION_NAMES, Kustomization, kustomizations, patch_paths, read_kustomization

CHART_FILE = "Chart.yaml"
MOST_KUSTOMIZATIONS = 20_000  # a walk of kustomizations through `../` stops there: a tree is never that deep
REFERENCE_KEYS = ("resources", "bases", "components")
NO_UNITS: frozenset[str] = frozenset()
# A JSON patch's path writes a key's `/` as `~1`.
_ISTIO_KEY = re.compile(r"(sidecar|proxy|traffic\.sidecar)\.istio\.io(/|~1)[\w.-]+|istio\.io(/|~1)rev|istio-injection")


class Sign(NamedTuple):
    """An Istio key a kustomization writes: its file (as the user names it), line, column and key."""

    path: str
    line: int
    column: int
    key: str


class Root(NamedTuple):
    """A root kustomization (absolute path), its unit's name and every file it reaches; `remote`: the
    first remote base its kustomizations list (rendering it would fetch that, so it is never rendered)."""

    kustomization: str
    name: str
    files: frozenset[str]
    remote: str | None
    component: bool  # a `kind: Component` no kustomization lists: a piece of overlays to come, never built alone


class Units:
    """Which units each file of the run is in. Unit names are the root's folder (`overlays/prod`) or
    the chart's folder, as the user would write them."""

    def __init__(self, members: dict[str, frozenset[str]] | None = None, charts: bool = True, signs: list[Sign] | None = None) -> None:
        self._members = members or {}  # absolute file -> names of the kustomize units it is in
        self._charts = charts
        self._memo: dict[str, frozenset[str]] = {}
        # Istio keys a kustomization itself writes (an inline patch adding an injection annotation):
        # a sign of Istio for its unit, which no object of the run shows until the overlay is built.
        self.signs = signs or []
        self.fragments: frozenset[str] = frozenset()  # real paths of the patches the run's kustomizations name
        self.roots: list[Root] = []  # the root kustomizations, in path order: what rendering builds

    def of(self, file: str) -> frozenset[str]:
        """The units of the file at this absolute path (none: the path rule decides for it)."""
        found = self._memo.get(file)
        if found is None:
            found = self._members.get(file, NO_UNITS)
            chart = _chart_of(os.path.dirname(file), inputs.cwd()) if self._charts and os.path.isabs(file) else None
            if chart is not None:
                found = found | {_display(chart)}
            if len(self._memo) > 50_000:  # one entry per file asked: a big tree's are let go
                self._memo.clear()
            self._memo[file] = found
        return found

    def named(self, path: str) -> frozenset[str]:
        """The units of a file as the run names it (relative or absolute; stdin is in none)."""
        return NO_UNITS if path.startswith("<") else self.of(inputs.absolute(path))

    def __bool__(self) -> bool:
        return bool(self._members) or self._charts

    def digest(self) -> str:
        """What the units are, for the key of kept results: a file moved into an overlay is judged anew."""
        hashed = hashlib.sha256()
        for file, names in sorted(self._members.items()):
            hashed.update(f"{file}\0{sorted(names)}\0".encode("utf-8", "surrogatepass"))
        for sign in self.signs:
            hashed.update(f"{sign}\0".encode("utf-8", "surrogatepass"))
        return hashed.hexdigest()[:16]

    def __getstate__(self) -> dict[str, Any]:
        return {"_members": self._members, "_charts": self._charts, "_memo": {}, "signs": self.signs}


def find_units(files: Iterable[str]) -> Units:
    """The kustomize units of the run's files (kustomizations among them, or beside or above a named
    one), each traced through its local resources, bases and components."""
    found = kustomizations([f for f in files if f != inputs.STDIN])
    if not found:
        return Units()
    graph: dict[str, tuple[list[str], list[str]]] = {}  # kustomization -> (kustomizations it lists, files it lists)
    remotes: dict[str, str] = {}  # kustomization -> the first remote entry it lists
    components: set[str] = set()
    signs: list[Sign] = []
    fragments: set[str] = set()
    named = {os.path.abspath(k): k for k in found}
    todo = list(named)
    while todo and len(graph) < MOST_KUSTOMIZATIONS:
        path = todo.pop()
        if path in graph:
            continue
        read = read_kustomization(path)
        children, listed_files, remote = _references(path, read)
        graph[path] = (children, listed_files)
        if remote is not None:
            remotes[path] = remote
        if read.fields.get("kind") == "Component":
            components.add(path)
        sign = _sign(path, read.lines)
        if sign is not None:
            signs.append(sign)
        if path in named:  # the patches of the run's own kustomizations: fragments, never whole objects
            fragments |= patch_paths(named[path], read.patches)
        todo.extend(c for c in children if c not in graph)
    listed = {child for children, _ in graph.values() for child in children}
    members: dict[str, set[str]] = {}
    roots: list[Root] = []
    for root in sorted(os.path.abspath(k) for k in found):
        if root in listed:
            continue
        name = _display(os.path.dirname(root))
        reached = list(_closure(root, graph))
        for file in reached:
            members.setdefault(file, set()).add(name)
        remote = next((remotes[k] for k in reached if k in remotes), None)
        roots.append(Root(root, name, frozenset(reached), remote, root in components))
    units = Units({file: frozenset(names) for file, names in members.items()}, signs=sorted(signs))
    units.fragments = frozenset(fragments)
    units.roots = roots
    return units


def _closure(root: str, graph: dict[str, tuple[list[str], list[str]]]) -> Iterator[str]:
    seen = {root}
    todo = [root]
    while todo:
        path = todo.pop()
        yield path
        children, listed_files = graph.get(path, ([], []))
        yield from listed_files
        for child in children:
            if child not in seen:
                seen.add(child)
                todo.append(child)


def _references(kustomization: str, read: Kustomization) -> tuple[list[str], list[str], str | None]:
    """The kustomizations (folders with one) and the files a kustomization lists, as absolute paths (its
    patches and the values files of its Helm charts are members too), and the first remote entry."""
    data, patches = read.fields, read.patches
    base = os.path.dirname(kustomization)
    children: list[str] = []
    remote: str | None = None
    members = [os.path.normpath(os.path.join(base, p)) for p in patches]
    for key in REFERENCE_KEYS:
        entries = data.get(key)
        for entry in entries if isinstance(entries, list) else ():
            if isinstance(entry, str) and _remote(entry):
                remote = remote or entry
            if not isinstance(entry, str) or _remote(entry):
                continue
            target = os.path.normpath(os.path.join(base, entry))
            if os.path.isdir(target):
                child = next((os.path.join(target, n) for n in KUSTOMIZATION_NAMES if os.path.isfile(os.path.join(target, n))), None)
                if child is not None:
                    children.append(child)
            else:
                members.append(target)
    for chart in data.get("helmCharts") or () if isinstance(data.get("helmCharts"), list) else ():
        if isinstance(chart, dict):
            named = [chart.get("valuesFile"), *(chart.get("additionalValuesFiles") or [])]
            members.extend(os.path.normpath(os.path.join(base, v)) for v in named if isinstance(v, str) and not _remote(v))
    return children, members, remote


def _sign(kustomization: str, lines: Sequence[str]) -> Sign | None:
    """The first line of a kustomization that writes an Istio key (`sidecar.istio.io/inject` in an inline
    patch, `istio.io/rev` in `commonLabels`), with the key."""
    for number, line in enumerate(lines, start=1):
        if "istio" not in line:
            continue
        found = _ISTIO_KEY.search(line)
        if found is not None and not line.lstrip().startswith("#"):
            key = found.group(0).replace("~1", "/")
            return Sign(_display(kustomization) if os.path.isabs(kustomization) else kustomization, number, found.start() + 1, key)
    return None


def _remote(entry: str) -> bool:
    """A base kustomize would fetch (a URL, `github.com/…`, `git@…`): never read."""
    return "://" in entry or entry.startswith(("github.com/", "git@", "gitlab.com/", "bitbucket.org/")) or "?ref=" in entry


@lru_cache(maxsize=4096)
def _chart_of(directory: str, cwd: str) -> str | None:
    """The chart folder this folder is in (a `Chart.yaml` here or above, up to the working folder)."""
    while True:
        if os.path.isfile(os.path.join(directory, CHART_FILE)):
            return directory
        parent = os.path.dirname(directory)
        if directory in (parent, cwd) or not directory.startswith(cwd + os.sep):
            return None
        directory = parent


def _display(folder: str) -> str:
    relative = os.path.relpath(folder, inputs.cwd())
    return folder if relative.startswith("..") else relative
