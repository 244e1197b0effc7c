"""Kustomize patch fragments: files that a `kustomization.yaml` names as patches are pieces of objects,
not objects, so they are checked for syntax only (wave-2 spec §W3). `kustomize build DIR | meshlint
check -` checks what they make."""

import os
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from meshlint.source import inputs

KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


def patch_fragments(files: Iterable[str]) -> frozenset[str]:
    """The real paths of the files that a kustomization among the inputs, or beside or above a named
    input, names in `patchesStrategicMerge`, `patches[].path` or `patchesJson6902[].path`."""
    files = [f for f in files if f != inputs.STDIN]
    found: set[str] = set()
    for kustomization in kustomizations(files):
        found.update(patch_paths(kustomization, read_kustomization(kustomization).patches))
    return frozenset(found)


def patch_paths(kustomization: str, patches: Iterable[str]) -> set[str]:
    """The real paths of the patch files a kustomization names (as written, relative to its folder)."""
    base = os.path.dirname(os.path.realpath(kustomization))
    return {os.path.realpath(os.path.join(base, entry)) for entry in patches}


class Kustomization(NamedTuple):
    """A kustomization as read: its fields (empty when it cannot be read or is not a mapping), the
    paths it names as patches, as written, and its lines."""

    fields: dict[str, Any]
    patches: list[str]
    lines: Sequence[str]


def kustomizations(files: list[str]) -> list[str]:
    """The kustomization files among `files`, and beside or above each of their folders (up to the
    working folder), each once."""
    seen: set[str] = set()
    result: list[str] = []

    def add(path: str) -> None:
        if os.path.isfile(path):  # one stat, and mostly no: then no realpath (a stat of each folder up)
            real = os.path.realpath(path)
            if real not in seen:
                seen.add(real)
                result.append(path)

    cwd = os.path.realpath(os.getcwd())
    directories: set[str] = set()
    last = None  # a walk gives a folder's files one after another: each folder is looked at once
    for path in files:
        if path.endswith(KUSTOMIZATION_NAMES) and os.path.basename(path) in KUSTOMIZATION_NAMES:
            add(path)
        folder = inputs.head(path)
        if folder == last:
            continue
        last = folder
        directory = os.path.dirname(inputs.real(path))  # the walk knows most real paths already
        # A named file (pre-commit passes a few) may be patched by a kustomization above it.
        while directory not in directories:
            directories.add(directory)
            for name in KUSTOMIZATION_NAMES:
                add(os.path.join(directory, name))
            parent = os.path.dirname(directory)
            if parent == directory or not (directory + os.sep).startswith(cwd + os.sep) or directory == cwd:
                break
            directory = parent
    return result


def read_kustomization(kustomization: str) -> Kustomization:
    """A kustomization's fields, and the paths it names as patches in `patchesStrategicMerge`,
    `patches[].path` or `patchesJson6902[].path`."""
    from meshlint.source.loader import load_file

    try:
        loaded = load_file(kustomization, input_file=False)
    except OSError:
        return Kustomization({}, [], ())
    fields: dict[str, Any] = {}
    found: list[str] = []
    for document in loaded.documents:
        data = document.data
        if not isinstance(data, dict):
            continue
        fields = fields or data
        for entry in _list(data.get("patchesStrategicMerge")):
            if isinstance(entry, str) and "\n" not in entry:  # an inline patch is YAML, not a path
                found.append(entry)
        for key in ("patches", "patchesJson6902"):
            for entry in _list(data.get(key)):
                if isinstance(entry, dict) and isinstance(entry.get("path"), str):
                    found.append(entry["path"])
    return Kustomization(fields, found, loaded.lines)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
