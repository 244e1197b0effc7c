"""What a `--fix` session leaves behind: each changed file written atomically (a temporary file beside
it, renamed over it, its mode kept), or, for `--diff`, a unified diff that `patch -p1` applies."""

from __future__ import annotations

import contextlib
import difflib
import os
import stat
import tempfile
from collections.abc import Iterator

from meshlint.fix.rounds import Outcome

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


def write(outcome: Outcome) -> list[str]:
    """Write every changed file; notes for those left as they were (changed on disk meanwhile, or not
    writable)."""
    notes = []
    for path in outcome.changed:
        try:
            if not _replace(path, outcome.original[path], outcome.fixed[path]):
                notes.append(f"{path}: changed on disk while it was being fixed; not written")
        except OSError as err:
            notes.append(f"{path}: cannot write the fixes: {err.strerror or err}")
    return notes


def _replace(path: str, expected: bytes, data: bytes) -> bool:
    """Put `data` in place of the file (through a symbolic link, its target), unless the file no longer
    holds `expected`."""
    target = os.path.realpath(path)
    with open(target, "rb") as handle:
        if handle.read() != expected:
            return False
    mode = stat.S_IMODE(os.stat(target).st_mode)
    directory, name = os.path.split(target)
    descriptor, temporary = tempfile.mkstemp(dir=directory, prefix=f".{name}.", suffix=".meshlint")
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return True
