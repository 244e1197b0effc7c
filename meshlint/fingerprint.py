"""Where a finding is, independently of how the run was started: paths relative to the repository
root, and the fingerprint that SARIF, the GitLab report and the baseline all use.

The root is the git top-level, found upward from the working directory (a `.git` directory, or the
`.git` file of a worktree or submodule); without one, the config file's directory; without a config,
the working directory. So `examples`, `./examples`, an absolute path and `../examples` run from a
subdirectory name one file the same way.

A fingerprint hashes the repository-relative path, the resource's kind, namespace and name, the rule
code, the finding's place in its resource (`spec.template.metadata`) and an occurrence number for
findings that share all of those; never the line, the column or the message, so lines added above a
finding, or a reworded message, leave it unchanged.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import lru_cache
from operator import attrgetter

from meshlint.findings import Finding, ResourceId
from meshlint.source import inputs

# Changes when what is hashed changes; SARIF names its fingerprint after it.
SCHEME = "meshlint/v2"

_ORDER = attrgetter("path", "line", "column", "code")  # how a file's findings are sorted
_AT = Finding._fields.index("fingerprint")


def repository_root(config_path: str | None = None, start: str = ".") -> str:
    directory = os.path.realpath(start)
    candidate = directory
    while True:
        if os.path.exists(os.path.join(candidate, ".git")):
            return candidate
        parent = os.path.dirname(candidate)
        if parent == candidate:
            break
        candidate = parent
    if config_path is not None:
        return os.path.dirname(os.path.realpath(config_path))
    return directory


def repo_path(path: str, root: str) -> str:
    """`path` (as given, relative to the working directory, or absolute) relative to `root`, with
    `/` separators. Directories are resolved (a symlinked /tmp), the file's own name is not."""
    if path.startswith("<"):  # <stdin>
        return path
    return _relative(inputs.cwd(), path, root)


@lru_cache(maxsize=4096)
def _relative(cwd: str, path: str, root: str) -> str:
    absolute = os.path.join(cwd, path)
    name = os.path.basename(absolute)
    resolved = os.path.join(inputs.real(os.path.dirname(absolute)), name)
    # A resolved directory and the root are both absolute and normal, so a file below the root is the
    # rest of its path (what relpath, at several times the cost, would give); `.` or `..` as the name
    # and everything else go to relpath.
    if name not in ("", ".", "..") and len(root) > 1 and resolved.startswith(root + os.sep) and os.path.normpath(root) == root:
        return resolved[len(root) + 1 :].replace(os.sep, "/")
    return os.path.relpath(resolved, root).replace(os.sep, "/")


def fingerprint(path: str, resource: ResourceId | None, code: str, node_path: str, occurrence: int) -> str:
    """The one fingerprint function; `path` is repository-relative."""
    import hashlib  # loads OpenSSL: only runs with findings pay for it (a clean pre-commit run does not)

    kind, name, namespace = resource if resource is not None else ("", "", "")
    key = "\x00".join((SCHEME, path, kind, namespace, name, code, node_path, str(occurrence)))
    # surrogatepass: a lone surrogate ("\ud800" in a double-quoted name, a file name that is not
    # UTF-8) is hashed too, where plain UTF-8 refuses it; other text encodes as before.
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def fingerprinted(findings: Iterable[Finding], root: str, marks: bool = True) -> list[Finding]:
    """One file's findings, sorted, each with its fingerprint. Findings that share every input are
    numbered in that order (by line, then as the rules found them), which lines added above keep.
    Without `marks` (no output, baseline, --fix or cache of the run reads them: `Plan.marks`) they are
    only sorted."""
    ordered = sorted(findings, key=_ORDER)
    if not marks:
        return ordered
    seen: dict[tuple[str, ResourceId | None, str, str], int] = {}
    paths: dict[str, str] = {}  # a file's findings share its path
    result = []
    for f in ordered:
        path = paths.get(f.path)
        if path is None:
            path = paths[f.path] = repo_path(f.path, root)
        key = (path, f.resource, f.code, f.node_path)
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        # (Built as a tuple: namedtuple's _replace adds keyword handling to every finding.)
        result.append(Finding._make((*f[:_AT], fingerprint(*key, occurrence), *f[_AT + 1 :])))
    return result
