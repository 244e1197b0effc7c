"""Which files a run reads: named paths, directory walks (`.gitignore` respected), `exclude`, stdin."""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache

YAML_SUFFIXES = (".yaml", ".yml", ".json")
CONFIG_NAMES = (".meshlint.yaml", ".meshlint.yml")  # meshlint's own config: never a manifest, so walks pass over it
STDIN = "-"
STDIN_NAME = "<stdin>"


_REAL: dict[str, str] = {}


def real(path: str) -> str:
    """`os.path.realpath`, once per path and run: a run asks it of every input several times (taken,
    fragments, context files, fingerprints), and each answer costs a system call per path component."""
    found = _REAL.get(path)
    if found is None:
        found = _REAL[path] = os.path.realpath(path)
    return found


# The working directory while a run is on (`at_work`). meshlint never changes it, and asking the
# system for it, as os.path.abspath does for every relative path, was most of what the tens of
# thousands of paths a tree's run makes absolute (places, charts, configs) cost.
_CWD: list[str] = []
# Within a run, the absolute form of each path that has something to fold ('.', '..', '//', a
# trailing '/'), worked out once: a file's path is made absolute for its place, its chart, its config,
# its scope and its ignores, several times per file. A path with nothing to fold (what the walk
# gives) is joined to the working directory as it is, and kept in no table: a table of every file
# stayed to the end of the run, an entry per file that a big tree's memory carried for nothing.
_ABSOLUTE: dict[str, str] = {}
# The last path joined that way, and its answer: the resources of one file ask for it one after
# another, and each keeps what it is given (a Place), so they share one string.
_LAST: list[str] = ["", ""]
# Within a run, `helm_chart_of`'s answer for each folder, as the paths spell it: both passes ask it of
# every file in turn, and an answer costs an absolute path, its folder and a cache lookup, part of it
# paid before the first pass's workers start.
_CHARTS: dict[str, str | None] = {}


@contextmanager
def at_work(max_file_size: int | None = None) -> Iterator[None]:
    """Within it, `cwd()` is the working directory as it was on entering, without a system call, and
    `read` refuses a file or stream over `max_file_size` bytes (default `MAX_FILE_SIZE`)."""
    _CWD.append(os.getcwd())
    _LIMIT.append(MAX_FILE_SIZE if max_file_size is None else max_file_size)
    _ABSOLUTE.clear()
    _LAST[:] = ["", ""]
    _CHARTS.clear()
    try:
        yield
    finally:
        _CWD.pop()
        _LIMIT.pop()
        _ABSOLUTE.clear()
        _LAST[:] = ["", ""]
        _CHARTS.clear()


def cwd() -> str:
    """The working directory: the run's, within `at_work`, else the system's answer now."""
    return _CWD[-1] if _CWD else os.getcwd()


def absolute(path: str) -> str:
    """`os.path.abspath`, against `cwd()`."""
    if not _CWD:
        return os.path.normpath(path if os.path.isabs(path) else os.path.join(os.getcwd(), path))
    stripped = path
    while stripped.startswith("./"):  # `meshlint check .` walks ./a/b.yaml
        stripped = stripped[2:]
    if _nothing_to_fold(stripped):
        if path[0] == "/":  # nothing was stripped: it is its own answer
            return path
        if path == _LAST[0]:
            return _LAST[1]
        base = _CWD[-1]
        if base != "/" and stripped[0] != "/":  # (`.//a` had a '//' to fold)
            _LAST[:] = [path, f"{base}/{stripped}"]
            return _LAST[1]
    found = _ABSOLUTE.get(path)
    if found is None:
        found = _ABSOLUTE[path] = os.path.normpath(path if os.path.isabs(path) else os.path.join(_CWD[-1], path))
    return found


def _nothing_to_fold(path: str) -> bool:
    """Is `path` already what normpath makes of it: no '.' or '..' part, no '//', no trailing '/'
    (and a POSIX path)? Any name that starts with a dot is left to normpath too."""
    return bool(path) and os.sep == "/" and path[0] != "." and "/." not in path and "//" not in path and path[-1] != "/"


def placed(path: str, real_path: str) -> str:
    """`real(path)`, told by a walk that knows it: a file that is no link is where its folder really is."""
    return _REAL.setdefault(path, real_path)


def forget_paths() -> None:
    """A new run may see the files anew (links changed between two runs of one process)."""
    _REAL.clear()


def within(real_path: str, roots: frozenset[str]) -> bool:
    """`real_path` is one of `roots` or lies inside one (a set of resolved folders): a file reached
    through a symbolic link (to it, or to a folder on its way) that leads out of them is not."""
    current = real_path
    while current not in roots:
        parent = os.path.dirname(current)
        if parent == current:
            return False
        current = parent
    return True


class InputError(Exception):
    """A path named on the command line that cannot be read: exit 2."""


DIRECTORY, FILE = "directory", "file"


# A `--fix` session's files as fixed so far, by real path: its runs read them instead of the disk, so
# every fix is checked before anything is written (meshlint.fix.rounds). Empty in any other run.
OVERLAY: dict[str, bytes] = {}

# Inputs are read in chunks of this size, from the descriptor in binary mode (Windows opens in text
# mode otherwise). Opened without blocking, so that a FIFO that slipped past the walk is refused
# rather than waited on; a regular file reads the same either way.
_READ_SIZE = 1 << 18
_BINARY = getattr(os, "O_BINARY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)

# A file or stream larger than this is reported and passed over, unread: real manifests are far
# smaller, and what parsing holds of a text is many times its size. `max-file-size` sets it.
MAX_FILE_SIZE = 50 * 1024 * 1024
_LIMIT: list[int] = []  # the running run's (`at_work`)
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


class TooLarge(OSError):
    """An input over the size limit: reported as an unreadable one is, and passed over."""

    def __init__(self, limit: int) -> None:
        super().__init__(errno.EFBIG, f"larger than the max-file-size limit of {size_text(limit)}")


def max_file_size() -> int:
    return _LIMIT[-1] if _LIMIT else MAX_FILE_SIZE


def parse_size(value: str | int) -> int | None:
    """A size as `max-file-size` takes it: bytes, or a whole number of K, M or G (1024, 1024², 1024³);
    None when it is none or not above 0."""
    if isinstance(value, int):
        return value if value > 0 and not isinstance(value, bool) else None
    text = value.strip().upper().removesuffix("B")
    number, unit = (text[:-1], text[-1]) if text[-1:] in _UNITS else (text, "")
    if not (number.isascii() and number.isdigit()) or len(number) > 15 or int(number) == 0:
        return None
    return int(number) * _UNITS[unit]


def size_text(size: int) -> str:
    """A size as `parse_size` reads it, in the largest unit it is a whole number of."""
    for unit in ("G", "M", "K"):
        if size % _UNITS[unit] == 0:
            return f"{size // _UNITS[unit]}{unit}"
    return f"{size} bytes"


def read(path: str) -> bytes:
    """Read one input: never more than the size limit and one byte. Raises OSError for a file that
    vanished or cannot be read, `TooLarge` (an OSError) for one over the limit, and InputError for a
    stdin that cannot be read (the run has no other input in its place)."""
    limit = max_file_size()
    if path == STDIN:
        return _read_stdin(limit)
    if OVERLAY:
        data = OVERLAY.get(os.path.realpath(path))
        if data is not None:
            return data
    # The descriptor's own reads, not a buffered file object: a tree's every file is read twice (the
    # first pass and the check), and the object's set-up was half of each small file's read.
    fd = os.open(path, os.O_RDONLY | _BINARY | _NONBLOCK)
    try:
        found = os.fstat(fd)
        if stat.S_ISDIR(found.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        if not stat.S_ISREG(found.st_mode):
            raise OSError(errno.EINVAL, f"{special_kind(found.st_mode)}, not a regular file")
        if found.st_size > limit:
            raise TooLarge(limit)
        return read_all(fd, limit)
    finally:
        os.close(fd)


def _read_stdin(limit: int) -> bytes:
    if sys.stdin is None:  # `meshlint check - <&-`
        raise InputError(f"{STDIN_NAME}: cannot read: stdin is closed")
    try:
        data = sys.stdin.buffer.read(limit + 1)
    except OSError as err:  # a folder (`< /`), a terminal that hung up
        raise InputError(f"{STDIN_NAME}: cannot read: {err.strerror or err}") from err
    if len(data) > limit:
        raise TooLarge(limit)
    return data


def read_all(fd: int, limit: int | None = None) -> bytes:
    """Everything left to read from an open descriptor; with a `limit`, `TooLarge` past it (a file
    may have grown since it was measured)."""
    parts: list[bytes] = []
    left = -1 if limit is None else limit + 1
    while left and (chunk := os.read(fd, _READ_SIZE if left < 0 else min(_READ_SIZE, left))):
        parts.append(chunk)
        left -= len(chunk) if left > 0 else 0
    if limit is not None and left == 0:
        raise TooLarge(limit)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def display_name(path: str) -> str:
    return STDIN_NAME if path == STDIN else path


def head(path: str) -> str:
    """The path up to its name, as written (`a/b/` of `a/b/c.yaml`): for one working directory, it
    names one folder, and costs a fraction of `dirname` or `absolute` (a big tree asks for each file)."""
    return path[: max(path.rfind("/"), path.rfind(os.sep)) + 1]


def helm_chart_of(path: str) -> str | None:
    """The chart directory when `path` is one of its templates or files (under `templates/` or `files/`,
    a Chart.yaml beside that folder): such a file is only meaningful once Helm has rendered the chart
    (a `files/profile-*.yaml` is a values profile the chart may pick, not the mesh's configuration)."""
    if path == STDIN:
        return None
    folder = head(path)
    if _CWD and folder in _CHARTS:
        return _CHARTS[folder]
    chart = _chart_above(os.path.dirname(absolute(path)))
    if chart is not None and not os.path.isabs(path):
        chart = os.path.relpath(chart)
    if _CWD:
        _CHARTS[folder] = chart
    return chart


def helm_chart_files(path: str) -> bool:
    """Is `path` under the chart's `files/` (rather than its `templates/`)?"""
    full = absolute(path)
    chart = _chart_above(os.path.dirname(full))
    return chart is not None and os.path.relpath(full, chart).split(os.sep, 1)[0] == "files"


@lru_cache(maxsize=256)
def _chart_above(directory: str) -> str | None:
    while True:
        parent = os.path.dirname(directory)
        if os.path.basename(directory) in ("templates", "files") and os.path.isfile(os.path.join(parent, "Chart.yaml")):
            return parent
        if parent == directory:
            return None
        directory = parent


def special_kind(mode: int) -> str:
    """What a file that is neither a regular file nor a folder is."""
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"
