"""What a run reads beyond its paths, so that a few files get the verdicts the whole tree would give.

- A named file sees the mesh-wide sources beside it and in each folder above it, up to its tree
  (wave-2 spec §W2.7): read for context only, never checked.
- A named file that holds a mesh-wide source brings in the workload files of its tree that the source
  can change (§W2.6): pre-commit passes only the changed IstioOperator, and the workloads it breaks
  must still be checked. (A named folder does not: it is the extent the user chose.)

A file's tree is the folder of the config that governs it; without a config file, the top of its git
repository; outside one, its own folder.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from meshlint.engine.governance import Governing
from meshlint.mesh.context import MeshContext
from meshlint.mesh.istio import REV_LABEL
from meshlint.mesh.scope import Place
from meshlint.mesh.sources import is_mesh_config, mesh_source
from meshlint.model.kinds import LINKERD_HELM_VALUES
from meshlint.model.resource import Resource
from meshlint.source import inputs, walk

# A pod template's containers: a file without the word holds no workload a mesh-wide source could change.
_WORKLOAD_HINT = b"containers"


def is_mesh_wide(resource: Resource) -> bool:
    """A source whose change can alter other files' workloads. Not a Service: it is matched by namespace
    and selector, never by where it lies (§W2.1-4 do not scope it), and nearly every application file
    holds one, so pre-commit would check the whole tree on every commit."""
    kind = resource.kind
    if kind in ("Namespace", "PeerAuthentication"):
        return True
    if kind == "MutatingWebhookConfiguration":
        return REV_LABEL in resource.labels or resource.name.startswith("istio")
    if kind == LINKERD_HELM_VALUES:
        from meshlint.mesh import linkerdsource

        return bool(linkerdsource.claims(resource))
    if is_mesh_config(resource):
        source = mesh_source(resource)
        return source is not None and bool(source.revision or source.tags or next(iter(source.claims()), None) is not None)
    return False


def tree_of(path: str, governing: Governing) -> str:
    """The folder a file's mesh-wide sources govern, absolute."""
    config = governing.configs.for_file(path).path
    folder = os.path.dirname(os.path.abspath(path))
    if config is not None:
        top = os.path.dirname(os.path.abspath(config))
        return top if _inside(folder, top) else folder
    return walk.repository_top(folder)


def neighbours(named: Iterable[str], governing: Governing, taken: set[str]) -> tuple[list[str], bool]:
    """The files, not inputs, in each named file's folder and the folders above it up to its tree:
    those folders' own files, not their subtrees, in path order; and whether those folders have
    subfolders off the named files' paths (parts of the tree the run does not see)."""
    folders: set[str] = set()
    for path in named:
        top = tree_of(path, governing)
        folder = os.path.dirname(os.path.abspath(path))
        while True:
            folders.add(folder)
            if folder == top or not _inside(folder, top):
                break
            folder = os.path.dirname(folder)
    found = []
    unseen = False
    for folder in sorted(folders):
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            kind = walk.kind_of(entry)  # a loop, a FIFO: passed over, and the run goes on
            if not unseen and not entry.name.startswith(".") and kind is inputs.DIRECTORY and entry.path not in folders:
                unseen = not governing.excluded(_shown(entry.path))
            if not entry.name.endswith(inputs.YAML_SUFFIXES) or entry.name.startswith(".") or kind is not inputs.FILE:
                continue
            path = _shown(entry.path)
            if inputs.real(path) in taken or governing.excluded(path):
                continue
            found.append(path)
    return found, unseen


def kustomizations_around(named: Iterable[str], governing: Governing) -> list[str]:
    """Every kustomization of the repository (else the working folder) that holds a named file: the
    overlays that may reach a named base file, which a pre-commit run names alone. Hidden folders,
    `node_modules` and excluded paths are passed over; the search stops at MOST_KUSTOMIZATIONS."""
    from meshlint.source import gitexcludes
    from meshlint.source.kustomize import KUSTOMIZATION_NAMES
    from meshlint.source.units import MOST_KUSTOMIZATIONS

    here = os.getcwd()
    tops: set[str] = set()
    for path in named:
        folder = os.path.dirname(os.path.abspath(path))
        tops.add(gitexcludes.repository_top(folder) or (here if _inside(folder, here) else folder))
    found: list[str] = []
    for top in sorted(tops):
        for folder, folders, files in os.walk(top):
            folders[:] = sorted(f for f in folders if not f.startswith(".") and f != "node_modules")
            for name in KUSTOMIZATION_NAMES:
                if name in files:
                    path = _shown(os.path.join(folder, name))
                    if not governing.excluded(path):
                        found.append(path)
            if len(found) >= MOST_KUSTOMIZATIONS:
                return found
    return found


def trees(sources: Iterable[str], governing: Governing) -> dict[str, list[str]]:
    """The named files holding mesh-wide sources, by the tree each governs."""
    found: dict[str, list[str]] = {}
    for path in sorted(set(sources)):
        found.setdefault(tree_of(path, governing), []).append(path)
    return found


def tree_files(tree: str, governing: Governing) -> list[str]:
    """A tree's files as a walk of it finds them (its `.gitignore` and its config's `exclude` apply)."""
    config = governing.configs.for_file(os.path.join(tree, "_"))  # the config of the tree's own folder
    return [p for p in walk.collect([_shown(tree)], config.exclude, config.base).files if not governing.excluded(p)]


def governed_files(sources: list[str], files: list[str], mesh: MeshContext, taken: set[str]) -> dict[str, list[str]]:
    """For each named file holding mesh-wide sources, the files of its tree the run does not already
    check whose workloads those sources decide, or help decide, under §W2.1-4 (the tree was read for
    context first, so nearer sources are known); each file once, under the first source in path order."""
    widened: dict[str, list[str]] = {}
    claimed = set(taken)
    for path in files:
        real = inputs.real(path)
        if real in claimed:
            continue
        try:
            data = inputs.read(path)
        except OSError:
            continue
        if _WORKLOAD_HINT not in data:
            continue
        place = Place.of(path)
        for source in sources:
            fields, namespaces = mesh.decided_by(source, place)
            if fields or any(_mentions(data, name) for name in namespaces):
                widened.setdefault(source, []).append(path)
                claimed.add(real)
                break
    return widened


def _mentions(data: bytes, namespace: str) -> bool:
    """Could a workload in this file be in `namespace`? Workloads that name none are in `default`."""
    return namespace == "default" or namespace.encode() in data


def _inside(folder: str, top: str) -> bool:
    return folder == top or folder.startswith(top.rstrip(os.sep) + os.sep)


def _shown(path: str) -> str:
    """A path as findings name the files of a walk: relative to the working directory."""
    return os.path.relpath(path)
