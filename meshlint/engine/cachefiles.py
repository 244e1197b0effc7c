"""Where kept results live and how a file of them is written and read: the folder (the user's cache
directory unless --cache-dir names another; made 0700, refused when another user owns or may write it),
each file headed by its whole key and sealed by a digest of key and body, written whole and swapped in."""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING, Any

from meshlint.engine.cachekeys import hasher

if TYPE_CHECKING:
    from collections.abc import Callable


KEEP_RUN_KEYS = 8  # buckets kept: a few configurations or context states of one machine's trees
MAX_ENTRIES = 200_000  # files per bucket, beyond which the oldest entries are dropped
FORMAT = 3  # of the files written: a file of another format is a miss
KINDS = ("results-", "context-", "contextfiles-")  # the files a cache folder holds (and their temporaries, dotted)


def default_directory() -> str:
    """The user's cache directory for meshlint, as the platform has it (on Linux `$XDG_CACHE_HOME/meshlint`,
    else `~/.cache/meshlint`). platformdirs is imported only by a run that uses the cache."""
    from platformdirs import user_cache_dir

    return user_cache_dir("meshlint", appauthor=False)


def refusal(directory: str) -> str | None:
    """Why `directory` must not hold this user's cache, in one line, or None. Whoever can write the
    folder decides what the next run reads back, so one that another user owns or may write is not
    used. A folder not there yet is made 0700 when first written."""
    try:
        info = os.stat(directory)
    except OSError:
        return None  # not there yet, or no folder at all: writing fails, which costs only speed
    if not stat.S_ISDIR(info.st_mode):
        return None
    if info.st_uid != os.geteuid():
        return f"{directory}: cache folder belongs to another user (uid {info.st_uid}); running without the cache"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"{directory}: cache folder is writable by other users (mode {stat.S_IMODE(info.st_mode):04o}); running without the cache"
    try:
        with os.scandir(directory) as found:
            theirs = sorted(e.name for e in found if e.name.lstrip(".").startswith(KINDS) and e.stat(follow_symlinks=False).st_uid != info.st_uid)
    except OSError:
        return None
    if theirs:
        return f"{directory}: cache folder holds {theirs[0]}, which belongs to another user; running without the cache"
    return None


class Folder:
    """A run's cache folder, looked up and vetted (`refusal`) once, when first needed: a run that keeps
    nothing never imports platformdirs for the default. `where` is the folder, or what names it."""

    def __init__(self, where: str | Callable[[], str] | None, notes: list[str]) -> None:
        self.where = where
        self.notes = notes
        self.path: str | None = None
        self.looked = False

    @property
    def wanted(self) -> bool:
        return self.where is not None

    def get(self) -> str | None:
        """The folder, or None when the run has none or may not use it (said once among the notes)."""
        if not self.looked and self.where is not None:
            self.looked = True
            path = self.where() if callable(self.where) else self.where
            refused = refusal(path)
            if refused is None:
                self.path = path
            else:
                self.notes.append(refused)
        return self.path


def file_header(key: str, kind: str = "results") -> bytes:
    """The first line of a cache file: its format and the whole key it was written under."""
    return b"meshlint-%s-%d %s\n" % (kind.encode(), FORMAT, key.encode())


def seal(key: bytes, body: bytes) -> bytes:
    """The digest that vouches for `body` as written under `key` (a flipped bit or a copy from another
    key does not match it)."""
    digest = hasher()
    digest.update(key + b"\0")
    digest.update(body)
    return str(digest.hexdigest()).encode()


def read_bucket(path: str, run_key: str) -> dict[bytes, bytes]:
    """A bucket's lines by file key, unverified (`ResultCache.get` checks each when asked); nothing for
    a missing bucket or one of another run key or format."""
    data = read_kept(path)
    header = file_header(run_key)
    if data is None or not data.startswith(header):
        return {}
    entries = {}
    for line in data[len(header) :].split(b"\n"):
        name, _, rest = line.partition(b" ")
        if rest:
            entries[name] = rest
    return entries


def read_kept(path: str) -> bytes | None:
    """The bytes of a cache file this user owns; None for a missing, unreadable or foreign one."""
    try:
        with open(path, "rb") as handle:
            if os.fstat(handle.fileno()).st_uid != os.geteuid():
                return None  # another user's file in this user's folder: never taken
            return handle.read()
    except OSError:
        return None


def write_whole(path: str, data: bytes) -> None:
    """Write `data` whole beside `path` and swap it in, then prune that kind's oldest files. A folder
    that cannot be written costs the next run its speed only."""
    import tempfile

    directory, name = os.path.split(path)
    kind, suffix = name.split("-", 1)[0], os.path.splitext(name)[1]
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{kind}-", dir=directory)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(temporary, path)
        except BaseException:
            with quiet():
                os.unlink(temporary)
            raise
    except OSError:
        return
    try:
        kept = [os.path.join(directory, n) for n in os.listdir(directory) if n.startswith(f"{kind}-") and n.endswith(suffix)]
        kept.sort(key=os.path.getmtime, reverse=True)
    except OSError:
        return
    for old in kept[KEEP_RUN_KEYS:]:
        with quiet():
            os.unlink(old)


class quiet:
    """Ignore an OSError (a file another run removed first)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, value: Any, traceback: Any) -> bool:
        return kind is not None and issubclass(kind, OSError)
