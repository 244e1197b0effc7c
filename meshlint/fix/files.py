"""What a `--fix` session leaves behind: each changed file written atomically (a temporary file beside
it, renamed over it, its mode and owner kept), or, for `--diff`, a unified diff that `patch -p1`
applies. Only regular files inside the named paths are written, and never a read-only one."""

from __future__ import annotations

import contextlib
import difflib
import os
import secrets
import signal
import stat
import threading
from collections.abc import Iterator

from meshlint.fix.rounds import Outcome
from meshlint.source import inputs

NO_NEWLINE = "\\ No newline at end of file\n"


def diff(outcome: Outcome) -> Iterator[str]:
    """A unified diff of every changed file, paths as the findings name them (`a/` and `b/` before
    them), line breaks and a BOM as the files have them."""
    for path in outcome.changed:
        before, after = _lines(outcome.original[path]), _lines(outcome.fixed[path])
        for line in difflib.unified_diff(before, after, _named("a/", path), _named("b/", path)):
            if line.endswith("\n"):
                yield line
            else:
                yield line + "\n" + NO_NEWLINE


def _named(prefix: str, path: str) -> str:
    """A diff header's name: a path holding a control character is quoted C-style, as git writes it
    (`"a/w\\033[2J.yaml"`), which `patch` and `git apply` read; written raw it would reach the
    terminal of whoever reads the diff."""
    name = prefix + path
    if not any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        return name
    escapes = {"\t": "\\t", "\n": "\\n", '"': '\\"', "\\": "\\\\"}
    quoted = "".join(
        escapes.get(c) or (f"\\{ord(c):03o}" if ord(c) < 0x20 or ord(c) == 0x7F else c) for c in name
    )
    return f'"{quoted}"'


def _lines(data: bytes) -> list[str]:
    """Lines as `patch` reads them: each up to its `\n` (a CRLF file's keep their `\r`)."""
    text = data.decode("utf-8")
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def write(outcome: Outcome) -> dict[str, str]:
    """Write every changed file; for each left as it was, a line naming it and saying why."""
    unwritten = {}
    for path in outcome.changed:
        try:
            why = _replace(path, outcome.original[path], outcome.fixed[path], outcome.report.trees)
        except OSError as err:
            why = f"cannot write the fixes: {err.strerror or err}"
        if why is not None:
            unwritten[path] = f"error: {path}: {why}; not written, its findings stay"
    return unwritten


CHANGED = "changed on disk while it was being fixed"


def _replace(path: str, expected: bytes, data: bytes, trees: frozenset[str]) -> str | None:
    """Put `data` in place of the file (through a symbolic link inside `trees`, its target), keeping
    its mode and owner; or say why not."""
    target = os.path.realpath(path)
    if not inputs.within(target, trees):
        return "a symbolic link out of the named paths"
    try:
        before = os.lstat(target)
    except FileNotFoundError:
        return CHANGED
    return _refusal(target, before) or _swap(target, before, expected, data)


def _refusal(target: str, before: os.stat_result) -> str | None:
    """Why the file is not to be rewritten: the user's read-only marks hold even for root, whom
    the system lets write anyway. A file with several hard links is refused, not written in place:
    a rename splits the links, and an in-place write is not atomic (an interrupted one would leave
    half a file)."""
    if not stat.S_ISREG(before.st_mode):
        return "not a regular file"
    if _read_only(target, before):
        return "the file is read-only"
    if before.st_nlink > 1:
        return f"the file has {before.st_nlink} hard links, which a rewrite would split"
    folder = os.path.dirname(target)
    if _read_only(folder, os.stat(folder)):
        return "its folder is read-only"
    return None


def _read_only(path: str, status: os.stat_result) -> bool:
    return (status.st_mode & 0o222) == 0 or not os.access(path, os.W_OK)


def _swap(target: str, before: os.stat_result, expected: bytes, data: bytes) -> str | None:
    """Write a temporary file beside the target, then rename it over the target if the target still
    holds `expected`. From the temporary file's creation until the rename or its removal, Ctrl-C and
    termination wait (so they cannot strand it), and whatever is raised meanwhile removes it."""
    directory, name = os.path.split(target)
    # 64 random bits: a name no other run picks, so O_EXCL never meets one.
    temporary = os.path.join(directory, f".{name}.{secrets.token_hex(8)}.meshlint")
    with _signals_held():
        placed = False
        try:
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _BINARY, 0o600)
            try:
                _write_all(descriptor, data)
                _keep_owner_and_mode(descriptor, temporary, before)
                os.fsync(descriptor)
            finally:
                os.close(descriptor)
            if not _holds(target, before, expected):
                return CHANGED
            os.replace(temporary, target)
            placed = True
        finally:
            if not placed:
                _discard(temporary)
    return None


def _write_all(descriptor: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view):]


def _keep_owner_and_mode(descriptor: int, temporary: str, before: os.stat_result) -> None:
    """The temporary file takes the target's owner, then its mode (a change of owner clears the
    set-user-ID bits)."""
    if hasattr(os, "fchown"):
        made = os.fstat(descriptor)
        if (made.st_uid, made.st_gid) != (before.st_uid, before.st_gid):
            try:
                os.fchown(descriptor, before.st_uid, before.st_gid)
            except PermissionError as err:
                raise PermissionError(err.errno, "cannot keep the file's owner") from err
    mode = stat.S_IMODE(before.st_mode)
    if hasattr(os, "fchmod"):
        os.fchmod(descriptor, mode)
    else:
        os.chmod(temporary, mode)


def _holds(target: str, before: os.stat_result, expected: bytes) -> bool:
    """The target is still the file that was checked and still holds `expected`: asked just before
    the rename, so a run that changed it meanwhile keeps its change."""
    try:
        descriptor = os.open(target, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _BINARY)
    except FileNotFoundError:
        return False
    try:
        now = os.fstat(descriptor)
        if (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino) or not stat.S_ISREG(now.st_mode):
            return False
        return inputs.read_all(descriptor) == expected
    finally:
        os.close(descriptor)


def _discard(temporary: str) -> None:
    """Remove the temporary file; an interrupt that arrives meanwhile (possible where signals cannot
    be held) waits until it is gone, then is raised."""
    interrupt: BaseException | None = None
    while True:
        try:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
            break
        except OSError:
            break  # nothing more can be done
        except BaseException as err:  # raised again below, once the file is gone
            interrupt = interrupt or err
    if interrupt is not None:
        raise interrupt


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Ctrl-C, termination and hang-up wait until the block ends, then arrive. Only the main thread
    sees Python's signal handlers, and some systems hold no signals: there `_swap`'s cleanup does it."""
    hold = getattr(signal, "pthread_sigmask", None)
    if hold is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    held = hold(signal.SIG_BLOCK, _HELD)
    try:
        yield
    finally:
        hold(signal.SIG_SETMASK, held)


_HELD = {getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)}
_BINARY = getattr(os, "O_BINARY", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
