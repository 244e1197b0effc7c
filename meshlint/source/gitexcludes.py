"""The files besides `.gitignore` whose patterns git ignores by in a repository: `info/exclude` in its
git directory and the file `core.excludesFile` names. Found by reading git's own files (a `.git`
folder or file, the config files), never by running git: a walk asks once, before its first folder.

Precedence is git's: the last `core.excludesFile` among the system config, the global ones
(`$XDG_CONFIG_HOME/git/config`, then `~/.gitconfig`; `$GIT_CONFIG_GLOBAL` instead of both) and the
repository's config wins; unset, it is `$XDG_CONFIG_HOME/git/ignore` (`~/.config/git/ignore`).
`[include]` sections are not followed.
"""

from __future__ import annotations

import os

_GITDIR_PREFIX = "gitdir:"


def repository_top(directory: str) -> str | None:
    """The top of the git repository holding `directory` (absolute), or None outside one."""
    current = directory
    while not os.path.exists(os.path.join(current, ".git")):
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent
    return current


def exclude_files(top: str) -> list[str]:
    """The exclude files of the repository whose top is `top`, lowest precedence first: the one
    `core.excludesFile` names, then `info/exclude`. None outside a repository."""
    common = common_dir(top)
    if common is None:
        return []
    return [excludes_file(top, os.path.join(common, "config")), os.path.join(common, "info", "exclude")]


def common_dir(top: str) -> str | None:
    """The git directory that holds the repository's config and `info/` (a linked worktree's and a
    submodule's `.git` is a file naming it), or None when `top` holds no repository."""
    dot_git = os.path.join(top, ".git")
    if os.path.isdir(dot_git):
        return dot_git
    try:
        with open(dot_git, encoding="utf-8", errors="replace") as handle:
            first = handle.readline().strip()
    except OSError:
        return None
    if not first.startswith(_GITDIR_PREFIX):
        return None
    git_dir = os.path.join(top, first[len(_GITDIR_PREFIX) :].strip())
    try:  # a linked worktree's git directory names the main one, which holds the config
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8", errors="replace") as handle:
            return os.path.normpath(os.path.join(git_dir, handle.read().strip()))
    except OSError:
        return os.path.normpath(git_dir)


def excludes_file(top: str, repository_config: str) -> str:
    """The file `core.excludesFile` names (a `~/` start is the home folder, a relative path is from
    the repository's top), or git's default."""
    value = None
    for config in config_files(repository_config):
        value = _core_excludes_file(config) or value
    if value is None:
        return os.path.join(_xdg_config_home(), "git", "ignore")
    if value.startswith("~/") or value == "~":
        value = os.path.expanduser(value)
    return os.path.join(top, value)


def config_files(repository_config: str) -> list[str]:
    """The config files git reads, lowest precedence first."""
    files = [] if os.environ.get("GIT_CONFIG_NOSYSTEM") else ["/etc/gitconfig"]
    forced = os.environ.get("GIT_CONFIG_GLOBAL")
    if forced is not None:
        files.append(forced)
    else:
        files += [os.path.join(_xdg_config_home(), "git", "config"), os.path.join(os.path.expanduser("~"), ".gitconfig")]
    files.append(repository_config)
    return files


def _xdg_config_home() -> str:
    return os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")


def _core_excludes_file(path: str) -> str | None:
    """The last `excludesFile` of a `[core]` section in the config file at `path`, if any."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError:
        return None
    return core_excludes_file(text)


def core_excludes_file(text: str) -> str | None:
    """The last `excludesFile` of a `[core]` section of a git config text (names in any case, a value
    quoted or not, `#` and `;` comments), or None."""
    found = None
    in_core = False
    for raw_line in text.splitlines():
        line = raw_line.strip()
        if line.startswith("["):
            header, bracket, line = line[1:].partition("]")
            if not bracket:
                in_core = False
                continue
            in_core = header.strip().lower() == "core"  # `[core "x"]` is another section
            line = line.strip()  # git reads a key on the header's line too
        if not in_core or not line or line[0] in "#;":
            continue
        name, equals, value = line.partition("=")
        if equals and name.strip().lower() == "excludesfile":
            found = config_value(value)
    return found


def config_value(text: str) -> str:
    """A git config value as git reads it: quotes removed, `\\"`, `\\\\`, `\\t` and `\\n` read,
    a comment outside quotes cut off, and the spaces around it left out."""
    out: list[str] = []
    quoted = False
    escapes = {"n": "\n", "t": "\t", "b": "\b", '"': '"', "\\": "\\"}
    chars = iter(text.strip())
    for char in chars:
        if char == "\\":
            out.append(escapes.get(next(chars, ""), ""))
        elif char == '"':
            quoted = not quoted
        elif char in "#;" and not quoted:
            break
        else:
            out.append(char)
    return "".join(out).strip() if not quoted else "".join(out)
