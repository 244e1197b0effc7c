"""The files a run reads: the named paths, each folder walked (hidden folders, `testdata` folders,
`.gitignore`d paths and excluded patterns passed over, symbolic links followed once, loops and devices
named and passed over), in an order that does not depend on the file system."""

from __future__ import annotations

import errno
import os
import stat
from functools import lru_cache
from typing import Any

from meshlint.source import gitexcludes
from meshlint.source.inputs import (
    CONFIG_NAMES,
    DIRECTORY,
    FILE,
    STDIN,
    YAML_SUFFIXES,
    InputError,
    absolute,
    placed,
    real,
    special_kind,
    within,
)

TEST_DATA = "testdata"


class Inputs:
    """The files a run's paths name (folders walked), the warnings met on the walk, and the walked
    files that cannot be read as files (a loop, a FIFO, a device), each with why."""

    files: list[str]
    warnings: list[str]
    passed_over: list[tuple[str, str]]
    trees: frozenset[str]  # each named folder and each named file's folder, resolved: where `--fix` may write
    linked_out: frozenset[str]  # files reached through a symbolic link that leads out of every tree
    test_folders: list[str]  # `testdata` folders the walks passed over

    def __init__(self, files: list[str] | None = None, warnings: list[str] | None = None) -> None:
        self.files = [] if files is None else files
        self.warnings = [] if warnings is None else warnings
        self.passed_over = []
        self.trees = frozenset()
        self.linked_out = frozenset()
        self.test_folders = []


class Excluder:
    """The config's `exclude` patterns (gitwildmatch, relative to the config's directory), applied to
    walked and named paths alike. pathspec is imported only by runs that have patterns."""

    def __init__(self, patterns: tuple[str, ...], base: str) -> None:
        self.base = os.path.abspath(base)
        self.patterns = patterns
        self._spec: Any = None

    def excludes(self, path: str, directory: bool = False) -> bool:
        if not self.patterns:
            return False
        if self._spec is None:
            from pathspec import GitIgnoreSpec

            self._spec = GitIgnoreSpec.from_lines(self.patterns)
        suffix = "/" if directory else ""
        candidates = {path.replace(os.sep, "/").removeprefix("./")}
        relative = os.path.relpath(os.path.abspath(path), self.base).replace(os.sep, "/")
        if not relative.startswith("../"):
            candidates.add(relative)
        return any(self._spec.match_file(c + suffix) for c in candidates)


class _GitIgnores:
    """What git ignores in a walk: the `.gitignore` files from the top of the repository (or, outside
    one, of the walk) down to each folder, and in a repository its `info/exclude` and the file
    `core.excludesFile` names. As in git, a deeper `.gitignore`'s verdict wins over a higher one's,
    any `.gitignore`'s over `info/exclude`'s, and that over the excludes file's."""

    def __init__(self, top: str) -> None:
        self.root = repository_top(os.path.abspath(top))
        self._specs: dict[str, Any] = {}  # directory (absolute) -> its .gitignore, or None
        # The repository's own patterns, lowest precedence first (relative to its top).
        self._repository = [spec for spec in map(_spec_of, gitexcludes.exclude_files(self.root)) if spec is not None]

    def _spec(self, directory: str) -> Any:
        if directory not in self._specs:
            self._specs[directory] = _spec_of(os.path.join(directory, ".gitignore"))
        return self._specs[directory]

    def any_in(self, directory: str) -> bool:
        """Does anything git ignores by govern what is in `directory`? Most trees have no
        `.gitignore` on most paths, and a walk then asks nothing of each of their files."""
        return bool(self._repository) or any(self._spec(folder) is not None for folder in _folders_between(self.root, absolute(directory)))

    def ignores(self, path: str, directory: bool) -> bool:
        full = absolute(path)
        suffix = "/" if directory else ""
        verdict = None
        for spec in self._repository:
            result = spec.check_file(os.path.relpath(full, self.root).replace(os.sep, "/") + suffix)
            if result.include is not None:
                verdict = result.include
        for folder in _folders_between(self.root, os.path.dirname(full)):
            spec = self._spec(folder)
            if spec is None:
                continue
            result = spec.check_file(os.path.relpath(full, folder).replace(os.sep, "/") + suffix)
            if result.include is not None:
                verdict = result.include
        return bool(verdict)


def _spec_of(path: str) -> Any:
    """The gitignore patterns of the file at `path`, or None when there is none to read."""
    if not os.path.isfile(path):
        return None
    from pathspec import GitIgnoreSpec

    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return GitIgnoreSpec.from_lines(handle.read().splitlines())
    except OSError:
        return None


def repository_top(directory: str) -> str:
    """The top of the git repository holding `directory`, or `directory` itself outside one."""
    return gitexcludes.repository_top(directory) or directory


@lru_cache(maxsize=1024)
def _folders_between(root: str, directory: str) -> tuple[str, ...]:
    """`root`, then each folder down to `directory` (which is inside `root`)."""
    chain = []
    current = directory
    while current != root:
        chain.append(current)
        parent = os.path.dirname(current)
        if parent == current:
            return tuple(reversed(chain))
        current = parent
    chain.append(root)
    return tuple(reversed(chain))


def collect(paths: list[str], exclude: tuple[str, ...] = (), base: str = ".") -> Inputs:
    """Expand paths into files, sorted within each directory so output never depends on the disk.
    Walks leave out hidden folders, what `.gitignore` ignores and what `exclude` names; named files
    are left out only when `exclude` names them (pre-commit passes the files it wants checked)."""
    inputs = Inputs()
    seen: set[str] = set()
    excluder = Excluder(exclude, base)
    trees: set[str] = set()
    leaving: set[str] = set()  # files whose real path is out of the tree they were found in
    for path in paths:
        if path == STDIN:
            inputs.files.append(STDIN)
            continue
        try:
            mode = os.stat(path).st_mode
        except OSError as err:
            raise InputError(f"{path}: {why_unreadable(err, path)}") from None
        if stat.S_ISDIR(mode):
            trees.add(real(path))
            _walk(path, inputs, seen, excluder, _GitIgnores(path), leaving)
        else:
            if not stat.S_ISREG(mode):
                # Read, a FIFO would wait for a writer and a device never end: a stream goes to stdin.
                raise InputError(f"{path}: {special_kind(mode)}, not a regular file; pipe a stream to `meshlint check -`")
            folder = real(os.path.dirname(path) or ".")
            trees.add(folder)
            if not os.access(path, os.R_OK):
                raise InputError(f"{path}: permission denied")
            if excluder.excludes(path):
                continue
            real_path = real(path)
            if os.path.dirname(real_path) != folder:  # a link, to somewhere else: maybe out of the trees
                leaving.add(path)
            if real_path not in seen:
                seen.add(real_path)
                inputs.files.append(path)
    inputs.trees = frozenset(trees)
    inputs.linked_out = frozenset(path for path in leaving if not within(real(path), inputs.trees))
    return inputs


def _walk(top: str, inputs: Inputs, seen: set[str], excluder: Excluder, gitignores: _GitIgnores, leaving: set[str]) -> None:
    """Add the files below `top` to `inputs`; to `leaving`, those a symbolic link takes out of `top`."""
    walk = _Walk(top, inputs, seen, excluder, gitignores, leaving)
    stack = [top]
    while stack:  # depth first, each folder's own folders in the order of their names
        stack.extend(reversed(walk.folder(stack.pop())))


class _Walk:
    """The walk of one named folder: the folders it has been in (by their real paths), and where what
    it meets goes (`_walk`'s arguments)."""

    def __init__(self, top: str, inputs: Inputs, seen: set[str], excluder: Excluder, gitignores: _GitIgnores, leaving: set[str]) -> None:
        self.root = real(top)
        self.inputs = inputs
        self.seen = seen
        self.excluder = excluder
        self.gitignores = gitignores
        self.leaving = leaving
        self.visited: set[str] = set()

    def folder(self, directory: str) -> list[str]:
        """Add the files of `directory` to the run's; its folders to walk, in order."""
        real_dir = os.path.realpath(directory)
        entries = self._listing(directory, real_dir)
        if entries is None:
            return []
        left = not _under(real_dir, self.root)  # through a link to a folder elsewhere
        subdirs = []
        # What each file of the folder would ask again, asked once: asked per file, the walk's own
        # work outweighed the system's listing of the folders.
        ignoring = self.gitignores.any_in(directory)
        inside = real_dir if real_dir.endswith(os.sep) else real_dir + os.sep
        for entry in entries:
            path = entry.path if directory != "." else entry.name
            kind = kind_of(entry)
            if kind is DIRECTORY:
                if self._enters(entry, path, real_dir, ignoring):
                    subdirs.append(path)
            elif entry.name.endswith(YAML_SUFFIXES) and entry.name not in CONFIG_NAMES and not self._left_out(path, ignoring, directory=False):
                self._add_file(entry, path, kind, inside, left)
        return subdirs

    def _listing(self, directory: str, real_dir: str) -> list[os.DirEntry[str]] | None:
        """The entries of `directory`, by name; None, with a warning, when a link has led the walk back
        to a folder it has been in, or the folder cannot be listed."""
        if real_dir in self.visited:
            self.inputs.warnings.append(f"{directory}: symbolic link loop; skipped")
            return None
        self.visited.add(real_dir)
        try:
            return sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as err:
            self.inputs.warnings.append(f"{directory}: {err.strerror or err}; skipped")
            return None

    def _left_out(self, path: str, ignoring: bool, directory: bool) -> bool:
        """Does `exclude` name `path`, or git ignore it? Git is asked only where `ignoring` says a
        `.gitignore` or the repository's excludes could."""
        return self.excluder.excludes(path, directory=directory) or (ignoring and self.gitignores.ignores(path, directory=directory))

    def _enters(self, entry: os.DirEntry[str], path: str, real_dir: str, ignoring: bool) -> bool:
        """Is the folder `entry` (in `real_dir`) one to walk? Not a hidden, excluded or ignored one, nor
        (with a warning) a link back to that folder, to one above it or to one the walk has been in."""
        if entry.name.startswith(".") or self._left_out(path, ignoring, directory=True):
            return False
        if entry.name == TEST_DATA:
            # Test inputs and golden outputs (Go's tools pass these folders over too): broken on purpose,
            # or another tool's expected output, never deployed. A folder named on the command line is walked.
            self.inputs.test_folders.append(path)
            return False
        if entry.is_symlink() and _is_ancestor(os.path.realpath(path), real_dir, self.visited):
            self.inputs.warnings.append(f"{path}: symbolic link loop; skipped")
            return False
        return True

    def _add_file(self, entry: os.DirEntry[str], path: str, kind: str, inside: str, left: bool) -> None:
        """Add the YAML file `entry` (in the folder that really is `inside`) to the run's files, unless
        the run has it already by its real path. One that cannot be read as a file is passed over."""
        if kind is not FILE:  # a loop, a broken link, a FIFO, a socket, a device
            self.inputs.passed_over.append((path, kind))
            return
        linked = entry.is_symlink()
        # A file that is no link is where its folder really is: one realpath a folder, not a file.
        real_file = real(path) if linked else placed(path, inside + entry.name)
        if real_file in self.seen:
            return
        if left or (linked and not _under(real_file, self.root)):
            self.leaving.add(path)
        self.seen.add(real_file)
        self.inputs.files.append(path)


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root if root.endswith(os.sep) else root + os.sep)


def _is_ancestor(target: str, current: str, visited: set[str]) -> bool:
    return target in visited or current == target or current.startswith(target + os.sep)


def kind_of(entry: os.DirEntry[str]) -> str:
    """`DIRECTORY` or `FILE` (a link followed), or why a walk passes the entry over: a symbolic link
    loop, a broken link, a special file. Never raises: one odd entry must not end a walk."""
    try:
        if entry.is_dir():
            return DIRECTORY
        if entry.is_file():
            return FILE
        return special_kind(os.stat(entry.path).st_mode)
    except OSError as err:  # a loop (ELOOP) is raised by is_dir() itself
        return why_unreadable(err, entry.path)


def why_unreadable(err: OSError, path: str) -> str:
    """An error met on looking at `path`, in the words a note or an error uses."""
    if err.errno == errno.ELOOP:
        return "symbolic link loop"
    if err.errno == errno.ENOENT:
        return "broken symbolic link" if os.path.islink(path) else "no such file or directory"
    if err.errno == errno.EACCES:
        return "permission denied"
    return err.strerror or str(err)
