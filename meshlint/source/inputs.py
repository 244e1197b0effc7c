"""Which files a run reads: named paths, directory walks, exclude globs, stdin."""

from __future__ import annotations

import contextlib
import os
import re
import sys
from dataclasses import dataclass, field
from functools import lru_cache

YAML_SUFFIXES = (".yaml", ".yml", ".json")
STDIN = "-"
STDIN_NAME = "<stdin>"


class InputError(Exception):
    """A path named on the command line that cannot be read: exit 2."""


@dataclass(eq=False, repr=False)
class Inputs:
    files: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """`**` crosses directories, `*` and `?` stay within one; a pattern without `/` matches any depth."""
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    body = "".join(out)
    if "/" not in pattern:
        body = "(?:.*/)?" + body
    return re.compile(body + r"\Z")


@lru_cache(maxsize=64)
def _compiled(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    return tuple(glob_to_regex(p) for p in patterns)


def is_excluded(path: str, patterns: tuple[str, ...], base: str) -> bool:
    if not patterns:
        return False
    candidates = {path.replace(os.sep, "/").removeprefix("./")}
    with contextlib.suppress(ValueError):
        candidates.add(os.path.relpath(os.path.abspath(path), base).replace(os.sep, "/"))
    return any(rx.match(c) for rx in _compiled(patterns) for c in candidates)


def collect(paths: list[str], exclude: tuple[str, ...] = (), base: str = ".") -> Inputs:
    """Expand paths into files, sorted within each directory so output never depends on the disk."""
    inputs = Inputs()
    seen: set[str] = set()
    for path in paths:
        if path == STDIN:
            inputs.files.append(STDIN)
            continue
        if not os.path.exists(path):
            if os.path.islink(path):
                raise InputError(f"{path}: broken symbolic link")
            raise InputError(f"{path}: no such file or directory")
        if os.path.isdir(path):
            _walk(path, inputs, seen, exclude, base)
        else:
            if not os.access(path, os.R_OK):
                raise InputError(f"{path}: permission denied")
            real = os.path.realpath(path)
            if real not in seen:
                seen.add(real)
                inputs.files.append(path)
    return inputs


def _walk(top: str, inputs: Inputs, seen: set[str], exclude: tuple[str, ...], base: str) -> None:
    visited_dirs: set[str] = set()
    stack = [top]
    while stack:
        directory = stack.pop()
        real = os.path.realpath(directory)
        if real in visited_dirs:
            inputs.warnings.append(f"{directory}: symbolic link loop; skipped")
            continue
        visited_dirs.add(real)
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as err:
            inputs.warnings.append(f"{directory}: {err.strerror or err}; skipped")
            continue
        subdirs = []
        for entry in entries:
            path = entry.path if directory != "." else entry.name
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            if is_dir:
                if entry.name.startswith(".") or is_excluded(path, exclude, base):
                    continue
                if entry.is_symlink() and _is_ancestor(os.path.realpath(path), real, visited_dirs):
                    inputs.warnings.append(f"{path}: symbolic link loop; skipped")
                    continue
                subdirs.append(path)
            elif entry.name.endswith(YAML_SUFFIXES):
                if is_excluded(path, exclude, base):
                    continue
                if entry.is_symlink() and not os.path.exists(path):
                    inputs.warnings.append(f"{path}: broken symbolic link; skipped")
                    continue
                real_file = os.path.realpath(path)
                if real_file in seen:
                    continue
                seen.add(real_file)
                inputs.files.append(path)
        stack.extend(reversed(subdirs))


def _is_ancestor(target: str, current: str, visited: set[str]) -> bool:
    return target in visited or current == target or current.startswith(target + os.sep)


def read(path: str) -> bytes:
    """Read one input. Raises OSError for a file that vanished or cannot be read."""
    if path == STDIN:
        return sys.stdin.buffer.read()
    with open(path, "rb") as handle:
        return handle.read()


def display_name(path: str) -> str:
    return STDIN_NAME if path == STDIN else path
