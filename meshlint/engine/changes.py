"""`--diff-base REF`: only the findings on lines a change adds or modifies, and the findings that cite
such a line (a drain set in a mesh-wide IstioOperator that a pull request changed reports the
workloads it affects).

The change is `git diff` from the merge base of REF and HEAD to the working tree (for a REF that HEAD
descends from, the base is REF itself; without a merge base, REF), plus untracked files, which are new
in every line. git runs as a subprocess on the local repository only; nothing is fetched. Lines a
change only deletes are not lines of the new files, so nothing points at them.
"""

from __future__ import annotations

import os
import subprocess

from meshlint.config import ConfigError
from meshlint.engine.results import Report
from meshlint.findings import Position


class DiffBaseError(ConfigError):
    """No repository, no git, or an unknown REF: exit 2 with this one-line message."""


class ChangedLines:
    """The lines a change added or modified, by absolute path; None: every line (an untracked file)."""

    def __init__(self, top: str, lines: dict[str, set[int] | None]) -> None:
        self.top = top
        self.lines = lines
        self._resolved: dict[str, str] = {}

    def touches(self, position: Position) -> bool:
        path = self._resolved.get(position.path)
        if path is None:
            path = self._resolved[position.path] = os.path.realpath(position.path)
        if path not in self.lines:
            return False
        lines = self.lines[path]
        return lines is None or position.line in lines


def changed_lines(ref: str) -> ChangedLines:
    top = _git(["rev-parse", "--show-toplevel"], "not in a git repository", quote_git=False).strip()
    commit = _git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"], f"unknown revision {ref!r} (fetched? a shallow clone may not have it)").strip()
    try:
        base = _git(["merge-base", commit, "HEAD"], "no merge base").strip()
    except DiffBaseError:
        base = commit  # unrelated histories, or a shallow clone without the merge base
    diff = _git(
        ["-c", "core.quotePath=false", "diff", "--unified=0", "--no-color", "--no-ext-diff", "--no-relative",
         "--find-renames", "--src-prefix=a/", "--dst-prefix=b/", base, "--"],
        "git diff failed",
        cwd=top,
    )
    untracked = _git(["ls-files", "--others", "--exclude-standard", "-z"], "git ls-files failed", cwd=top)

    from unidiff import PatchSet  # only --diff-base runs need it

    lines: dict[str, set[int] | None] = {}
    for patched in PatchSet(diff):
        if patched.is_removed_file:
            continue
        added = {line.target_line_no for hunk in patched for line in hunk if line.is_added and line.target_line_no is not None}
        lines[os.path.realpath(os.path.join(top, patched.path))] = added
    for name in untracked.split("\0"):
        if name:
            lines[os.path.realpath(os.path.join(top, name))] = None
    return ChangedLines(top, lines)


def apply(report: Report, changed: ChangedLines) -> None:
    """Keep the findings on changed lines or citing one; count the others as outside the diff."""
    kept = [f for f in report.findings if changed.touches(f.position) or any(changed.touches(p) for p in f.related)]
    report.summary.outside_diff = len(report.findings) - len(kept)
    report.findings = kept
    report.summary.count(kept, report.fix_reachable)


def _git(args: list[str], problem: str, cwd: str | None = None, quote_git: bool = True) -> str:
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0", LC_ALL="C")
    try:
        done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, check=False, stdin=subprocess.DEVNULL)
    except FileNotFoundError as err:
        raise DiffBaseError("--diff-base needs git, which is not installed (or not on PATH)") from err
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise DiffBaseError(f"--diff-base: {problem}" + (f" ({detail[-1]})" if quote_git and detail else ""))
    return done.stdout.decode("utf-8", "replace")
