"""The options of `meshlint check`, as data. The click command is built from them, and so is the plain
reading of a command line that lets a pre-commit run start without loading click (meshlint/entry.py).

click and its imports (inspect, gettext, uuid...) are a costly part of a one-file run. A plain
line (`check`, known options spelled in full, paths) is read here the way click reads it; anything else
(help, `--`, `-qj4`, a value click would refuse) goes to click, which reads it or says what is wrong.
"""

from __future__ import annotations

import os
import stat
from typing import Any

from meshlint import numbers
from meshlint.report import FORMATS

# What an option takes: nothing (a flag), any text, a path (click.Path: when it exists it must be
# readable), a file (a path, not a folder), a count (an integer >= 0) or one of `choices`.
FLAG, TEXT, PATH, FILE, COUNT, CHOICE = "flag", "text", "path", "file", "count", "choice"
MAX_COUNT = 10**18 - 1  # above it click refuses the value and says why


class Option:
    __slots__ = ("choices", "default", "dest", "help", "kind", "metavar", "multiple", "names")

    def __init__(self, names: tuple[str, ...], dest: str, kind: str, help: str, *, multiple: bool = False,
                 choices: tuple[str, ...] = (), default: Any = None, metavar: str | None = None, config_decides: bool = False) -> None:
        # A flag is False when not on the line; one the config decides is None then.
        self.names = names
        self.dest = dest
        self.kind = kind
        self.help = help
        self.multiple = multiple
        self.choices = choices
        self.default = False if kind == FLAG and default is None and not config_decides else default
        self.metavar = metavar

    def absent(self) -> Any:
        """What click gives the command when the option is not on the line."""
        if self.multiple:
            return ()
        return self.default

    def convert(self, value: str) -> Any:
        """The value as click converts it, or None where click would refuse it (click then says why)."""
        if self.kind == CHOICE:
            return value if value in self.choices else None
        if self.kind == COUNT:
            return numbers.whole(value, MAX_COUNT)
        if self.kind in (PATH, FILE) and not usable_path(value, folder_ok=self.kind == PATH):
            return None
        return value


def usable_path(value: str, *, folder_ok: bool) -> bool:
    """click.Path's checks for a path that need not exist: when it does, it is readable (and no folder
    where a file is asked for)."""
    try:
        mode = os.stat(value).st_mode
    except (OSError, ValueError):
        return True
    return (folder_ok or not stat.S_ISDIR(mode)) and os.access(value, os.R_OK)


CHECK_OPTIONS = (
    Option(("--format",), "fmt", CHOICE, "Report format (default: text). Repeatable, see above.", multiple=True, choices=FORMATS),
    Option(("--output", "-o"), "output", TEXT, "Write the report of the --format before it to FILE. Repeatable.", multiple=True),
    Option(("--config",), "config_path", FILE, "Config file (default: nearest .meshlint.yaml or pyproject.toml)."),
    Option(("--select",), "select", TEXT, "Only these codes, code prefixes (ML1), rule names or ALL; comma-separated, any case.", multiple=True),
    Option(("--ignore",), "ignore", TEXT, "Leave out these codes, prefixes or names (replaces the config's ignore).", multiple=True),
    Option(("--extend-select",), "extend_select", TEXT, "Add to the selected rules (the config's select, or all).", multiple=True),
    Option(("--extend-ignore",), "extend_ignore", TEXT, "Leave out these too, besides the config's ignore.", multiple=True),
    Option(("--fail-on",), "fail_on", CHOICE, "Lowest severity that exits 1 (default: warning); never: report only.",
           choices=("error", "warning", "info", "never")),
    Option(("--exit-zero",), "exit_zero", FLAG, "Same as --fail-on never: exit 0 unless meshlint itself fails."),
    Option(("--baseline",), "baseline_path", TEXT, "Report only findings not in this baseline (config: baseline).", metavar="FILE"),
    Option(("--write-baseline",), "write_baseline", TEXT, "Record every current finding in FILE, then report them as baselined.", metavar="FILE"),
    Option(("--diff-base",), "diff_base", TEXT, "Report only findings on lines changed since git REF, or citing one.", metavar="REF"),
    Option(("--kubernetes-version",), "kubernetes_version", TEXT, "Target Kubernetes version, e.g. 1.30."),
    Option(("--istio-version",), "istio_version", TEXT, "Target Istio version, e.g. 1.24."),
    Option(("--linkerd-version",), "linkerd_version", TEXT, "Target Linkerd version, e.g. 2.16, stable-2.14.10 or edge-24.6.2."),
    Option(("--mesh-config",), "mesh_config", PATH, "Context file read every run (IstioOperator, Helm values, Namespaces...). Repeatable.", multiple=True),
    Option(("--color",), "color_choice", CHOICE, "Colour the text report (auto: on a terminal, unless NO_COLOR or TERM=dumb; FORCE_COLOR forces it).",
           choices=("auto", "always", "never"), default="auto"),
    Option(("--no-color",), "no_color", FLAG, "Same as --color never."),
    Option(("--quiet", "-q"), "quiet", FLAG, "Only the findings (and the --statistics asked for): no summary, no notes."),
    Option(("--statistics",), "statistics", FLAG, "Also count findings per rule (on stderr when no text report is written)."),
    Option(("--report-unused-suppressions",), "report_unused_suppressions", FLAG, "List suppression entries that silenced no finding (on stderr)."),
    Option(("--jobs", "-j"), "jobs", COUNT, "Processes for large trees (default 0: one per core). Output is the same for any number.", default=0),
    Option(("--stdin-filename",), "stdin_filename", TEXT, 'The name "-" (stdin) goes by in every report, e.g. the file a rendered stream came from.'),
    Option(("--docs-url",), "docs_url", TEXT, "Where the rules page (docs/rules.md) is published: SARIF links each rule's section there (config: docs-url).",
           metavar="URL"),
    Option(("--max-file-size",), "max_file_size", TEXT, "Report and skip inputs larger than SIZE, unread (default 50M; K, M, G: powers of 1024).",
           metavar="SIZE"),
    Option(("--fail-on-skipped",), "fail_on_skipped", FLAG, "Exit 1 when any input was passed over whole (a Helm template, not a manifest).",
           config_decides=True),
    Option(("--render",), "render", CHOICE, "auto (the default): build each root kustomization with kustomize or kubectl when on PATH, "
           "and check what it deploys; never: check the files as written (config: render).", choices=("auto", "never")),
    Option(("--fix",), "fix", FLAG, "Apply the safe fixes to the files given (never stdin, never a file with a syntax error), then report what remains."),
    Option(("--diff",), "show_diff", FLAG, "Print the fixes --fix would make as a unified diff and write nothing; exit 1 when there is one."),
    Option(("--unsafe-fixes",), "unsafe_fixes", FLAG, "Fixes that change behaviour beyond the finding count too: --fix and --diff apply them, [*] marks them."),
    Option(("--cache-dir",), "cache_dir", TEXT, "Keep results here for the next run (default: meshlint in the user cache directory, $XDG_CACHE_HOME or ~/.cache on Linux).",
           metavar="DIR"),
    Option(("--no-cache",), "no_cache", FLAG, "Neither read nor write cached results."),
)


def report_flags(args: list[str]) -> list[tuple[str, str]]:
    """("format", X) and ("output", FILE) in command-line order: the order pairs them (--output FILE
    writes the report of the --format before it)."""
    takes_value = {name for o in CHECK_OPTIONS if o.kind != FLAG for name in o.names}
    names = {"--format": "format", "--output": "output", "-o": "output"}
    flags, i = [], 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            break
        name, eq, value = arg.partition("=")
        if arg.startswith("--") and eq:
            if name in names:
                flags.append((names[name], value))
        elif arg in takes_value:
            if arg in names and i + 1 < len(args):
                flags.append((names[arg], args[i + 1]))
            i += 1
        elif arg.startswith("-o") and len(arg) > 2:
            flags.append(("output", arg[2:]))
        i += 1
    return flags


def read_plain(args: list[str]) -> dict[str, Any] | None:
    """The values click would give `check` for ARGS (what follows `check`), or None when the line is
    not a plain one and click is to read it."""
    by_name = {name: o for o in CHECK_OPTIONS for name in o.names}
    values: dict[str, Any] = {o.dest: o.absent() for o in CHECK_OPTIONS}
    paths: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "-" or not arg.startswith("-"):
            if arg != "-" and not usable_path(arg, folder_ok=True):
                return None
            paths.append(arg)
            continue
        name, eq, value = arg.partition("=")
        option = by_name.get(name) if eq and arg.startswith("--") else by_name.get(arg)
        if option is None:
            return None  # `--`, `-qj4`, `-j4`, help, a misspelling: click's to read or refuse
        if option.kind == FLAG:
            if eq:
                return None
            values[option.dest] = True
            continue
        if not eq:
            if i == len(args):
                return None
            value = args[i]
            i += 1
        converted = option.convert(value)
        if converted is None:
            return None
        values[option.dest] = values[option.dest] + (converted,) if option.multiple else converted
    values["paths"] = tuple(paths)
    return values
