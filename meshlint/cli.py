"""The command line (spec §1): `check`, `rules`, `explain`. Exit 0 clean, 1 findings, 2 trouble."""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, NoReturn

# Start-up creates tens of thousands of objects that live as long as the run (modules, classes, rule
# tables); letting the cycle collector sweep them over and over while they are made costs a pre-commit
# run about 7% of its time. Collection resumes, with those objects frozen out of it, once they exist.
_COLLECTING = gc.isenabled()
gc.disable()

import click  # noqa: E402

from meshlint import __version__  # noqa: E402
from meshlint.report import FORMATS  # noqa: E402

if TYPE_CHECKING:
    from meshlint.config import Config

EXIT_CLEAN, EXIT_FINDINGS, EXIT_TROUBLE = 0, 1, 2


def _fail(message: str) -> NoReturn:
    click.echo(f"meshlint: error: {message}", err=True)
    sys.exit(EXIT_TROUBLE)


def _guarded(func: Callable[..., None]) -> Callable[..., None]:
    """Known errors are one line on stderr and exit 2; anything else too, traceback only on request."""

    def wrapper(*args: Any, **kwargs: Any) -> None:
        from meshlint.config import ConfigError
        from meshlint.registry import RegistryError
        from meshlint.source.inputs import InputError

        _robust_output()
        try:
            func(*args, **kwargs)
        except (ConfigError, InputError, RegistryError) as err:
            _fail(str(err))
        except (click.exceptions.Exit, click.ClickException, SystemExit, KeyboardInterrupt):
            raise
        except BrokenPipeError:
            _stdout_closed()  # `meshlint rules | head`: the reader has what it wanted
            sys.exit(EXIT_CLEAN)
        except Exception as err:  # never a traceback unless MESHLINT_DEBUG=1
            if os.environ.get("MESHLINT_DEBUG") == "1":
                import traceback

                traceback.print_exc()
            _fail(f"internal error: {type(err).__name__}: {err} (set MESHLINT_DEBUG=1 for details)")

    wrapper.__name__ = func.__name__
    wrapper.__doc__ = func.__doc__
    return wrapper


# --- output that never breaks a run -----------------------------------------------------------------

# What a console that cannot encode a character shows instead (Windows code pages, `LANG=C` runners).
_ASCII = {"≥": ">=", "≤": "<=", "≠": "!=", "→": "->", "←": "<-", "…": "...", "—": "--", "–": "-", "‘": "'", "’": "'",
          "“": '"', "”": '"', "×": "x", "•": "*", "\u00a0": " "}


def _ascii_fallback(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    import unicodedata

    def plain(char: str) -> str:
        return _ASCII.get(char) or unicodedata.normalize("NFKD", char).encode("ascii", "ignore").decode() or "?"

    return "".join(plain(c) for c in error.object[error.start:error.end]), error.end


def _robust_output() -> None:
    """Characters stdout or stderr cannot encode are written as ASCII (`≥` as `>=`), never an error."""
    import codecs

    codecs.register_error("meshlint-ascii", _ascii_fallback)
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(Exception):
                reconfigure(errors="meshlint-ascii")


def _stdout_closed() -> None:
    """The reader of stdout went away (`| head -1`): what is still buffered goes to the null device, so
    the interpreter's last flush is quiet too."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def use_color(choice: str, is_tty: bool) -> bool:
    """`always`/`never` as asked; `auto`: off with NO_COLOR, on with FORCE_COLOR (both when set and not
    empty, NO_COLOR first), off on TERM=dumb, else on a terminal only."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return os.environ.get("TERM") != "dumb" and is_tty


# --- reports and where they go -----------------------------------------------------------------------


class _CheckCommand(click.Command):
    """`check` remembers the order of --format and --output on its command line: the order pairs them."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["meshlint.report-flags"] = _report_flags(self, args)
        return super().parse_args(ctx, args)


def _report_flags(command: click.Command, args: list[str]) -> list[tuple[str, str]]:
    """("format", X) and ("output", FILE) in command-line order."""
    takes_value = {o for p in command.params if isinstance(p, click.Option) and not p.is_flag for o in p.opts}
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


def _pair_reports(flags: list[tuple[str, str]], default_format: str) -> list[tuple[str, str | None]]:
    """Each --output FILE takes the --format before it (the first one, when it comes first; the
    configured format, when there is none); a --format without an --output writes to stdout."""
    reports: list[list[Any]] = []
    early: list[str] = []
    for kind, value in flags:
        if kind == "format":
            reports.append([value, None])
        elif not reports:
            early.append(value)
        elif reports[-1][1] is None:
            reports[-1][1] = value
        else:
            raise click.UsageError(f"--format {reports[-1][0]} has two --output files; give each report its own --format")
    if early:
        if not reports:
            reports.append([default_format, None])
        if len(early) > 1 or reports[0][1] is not None:
            raise click.UsageError("more --output files than --format options; each --output follows its --format")
        reports[0][1] = early[0]
    if not reports:
        reports.append([default_format, None])
    on_stdout = [fmt for fmt, path in reports if path is None]
    if len(on_stdout) > 1:
        raise click.UsageError(f"only one report can go to stdout (--format {' and --format '.join(on_stdout)}); give the others an --output")
    paths = [path for _, path in reports if path is not None]
    if len(set(paths)) < len(paths):
        raise click.UsageError("two reports name the same --output file")
    return [(fmt, path) for fmt, path in reports]


def _writable(path: str, what: str) -> None:
    """A clear error before the run, not a traceback after it."""
    directory = os.path.dirname(path) or "."
    if os.path.isdir(path):
        _fail(f"{path}: cannot write the {what}: it is a directory")
    if not os.path.isdir(directory):
        _fail(f"{path}: cannot write the {what}: no such directory {directory}/")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="meshlint")
def main() -> None:
    """Static linter for Kubernetes manifests and Istio sidecar lifecycle hazards."""


def _csv(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


@main.command(cls=_CheckCommand)
@click.argument("paths", nargs=-1, type=click.Path(allow_dash=True))
@click.option("--format", "fmt", multiple=True, type=click.Choice(FORMATS), help="Report format (default: text). Repeatable, see above.")
@click.option("--output", "-o", multiple=True, help="Write the report of the --format before it to FILE. Repeatable.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="Config file (default: nearest .meshlint.yaml or pyproject.toml).")
@click.option("--select", multiple=True, help="Only these codes, code prefixes (ML1), rule names or ALL; comma-separated, any case.")
@click.option("--ignore", multiple=True, help="Leave out these codes, prefixes or names (replaces the config's ignore).")
@click.option("--extend-select", multiple=True, help="Add to the selected rules (the config's select, or all).")
@click.option("--extend-ignore", multiple=True, help="Leave out these too, besides the config's ignore.")
@click.option("--fail-on", type=click.Choice(["error", "warning", "info", "never"]), help="Lowest severity that exits 1 (default: warning); never: report only.")
@click.option("--exit-zero", is_flag=True, help="Same as --fail-on never: exit 0 unless meshlint itself fails.")
@click.option("--baseline", "baseline_path", metavar="FILE", help="Report only findings not in this baseline (config: baseline).")
@click.option("--write-baseline", metavar="FILE", help="Record every current finding in FILE, then report them as baselined.")
@click.option("--diff-base", metavar="REF", help="Report only findings on lines changed since git REF, or citing one.")
@click.option("--kubernetes-version", help="Target Kubernetes version, e.g. 1.30.")
@click.option("--istio-version", help="Target Istio version, e.g. 1.24.")
@click.option("--linkerd-version", help="Target Linkerd version, e.g. 2.16, stable-2.14.10 or edge-24.6.2.")
@click.option("--mesh-config", multiple=True, type=click.Path(), help="Context file read every run (IstioOperator, Helm values, Namespaces...). Repeatable.")
@click.option("--color", "color_choice", type=click.Choice(["auto", "always", "never"]), default="auto", help="Colour the text report (auto: on a terminal, unless NO_COLOR or TERM=dumb; FORCE_COLOR forces it).")
@click.option("--no-color", is_flag=True, help="Same as --color never.")
@click.option("--quiet", "-q", is_flag=True, help="Only the findings: no summary, no notes.")
@click.option("--statistics", is_flag=True, help="Also count findings per rule (on stderr when no text report is written).")
@click.option("--report-unused-suppressions", is_flag=True, help="List suppression entries that silenced no finding (on stderr).")
@click.option("--jobs", "-j", type=click.IntRange(min=0), default=0, help="Processes for large trees (default 0: one per core). Output is the same for any number.")
@click.option("--stdin-filename", help='The name "-" (stdin) goes by in every report, e.g. the file a rendered stream came from.')
@click.option("--fail-on-skipped", is_flag=True, default=None, help="Exit 1 when any input was passed over whole (a Helm template, not a manifest).")
@click.option("--fix", is_flag=True, help="Apply the safe fixes to the files given (never stdin, never a file with a syntax error), then report what remains.")
@click.option("--diff", "show_diff", is_flag=True, help="Print the fixes --fix would make as a unified diff and write nothing; exit 1 when there is one.")
@click.option("--unsafe-fixes", is_flag=True, help="Fixes that change behaviour beyond the finding count too: --fix and --diff apply them, [*] marks them.")
@click.option("--cache-dir", metavar="DIR", help="Keep results here for the next run (default: meshlint in the user cache directory, $XDG_CACHE_HOME or ~/.cache).")
@click.option("--no-cache", is_flag=True, help="Neither read nor write cached results.")
@click.pass_context
@_guarded
def check(
    ctx: click.Context, paths: tuple[str, ...], fmt: tuple[str, ...], output: tuple[str, ...], config_path: str | None,
    select: tuple[str, ...], ignore: tuple[str, ...], extend_select: tuple[str, ...], extend_ignore: tuple[str, ...],
    fail_on: str | None, exit_zero: bool, baseline_path: str | None, write_baseline: str | None, diff_base: str | None,
    kubernetes_version: str | None, istio_version: str | None, linkerd_version: str | None, mesh_config: tuple[str, ...], color_choice: str,
    no_color: bool, quiet: bool, statistics: bool, report_unused_suppressions: bool, jobs: int,
    stdin_filename: str | None = None, fail_on_skipped: bool | None = None, fix: bool = False, show_diff: bool = False,
    unsafe_fixes: bool = False, cache_dir: str | None = None, no_cache: bool = False,
) -> None:
    """Lint PATHS (files or directories; "-" reads stdin; default ".").

    \b
    Several reports in one run: each --output FILE writes the report of the
    --format just before it; a --format without an --output writes to stdout
    (one at most). An --output before every --format goes with the first one.
      meshlint check . --format sarif --output meshlint.sarif --format text

    \b
    --fix applies the fixes marked [*] and lints again until nothing is left
    to fix; a fix that would leave a finding that was not there before is
    not applied (a note says why). --diff shows them and writes nothing.

    \b
    Exit codes: 0 no finding at or above --fail-on, 1 findings at or above it,
    2 usage error, invalid config, unreadable path or internal error. A closed
    stdout (| head) ends the report quietly; the exit code stays 0 or 1.
    """
    from meshlint.config import ConfigSet, find_config, load_config, parse_fail_on
    from meshlint.engine.run import run
    from meshlint.mesh.options import parse_linkerd_version, parse_version
    from meshlint.registry import load_rules

    for flag, value in (("--kubernetes-version", kubernetes_version), ("--istio-version", istio_version)):
        if value and parse_version(value) is None:
            raise click.BadParameter(f"{value!r} is not a version such as 1.30", param_hint=flag)
    if linkerd_version and parse_linkerd_version(linkerd_version) is None:
        raise click.BadParameter(f"{linkerd_version!r} is not a Linkerd version such as 2.16 or edge-24.6.2", param_hint="--linkerd-version")

    def overridden(config: Config) -> None:
        """The command line's word over every config's, nested ones too."""
        if select:
            config.select = _csv(select)
        if ignore:
            config.ignore = _csv(ignore)
        config.extend_select += _csv(extend_select)
        config.extend_ignore += _csv(extend_ignore)
        config.kubernetes_version = kubernetes_version or config.kubernetes_version
        config.istio_version = istio_version or config.istio_version
        config.linkerd_version = linkerd_version or config.linkerd_version

    config = load_config(config_path if config_path else find_config("."))
    overridden(config)
    # What belongs to the run as a whole comes from the top config (the working directory's, or --config).
    if fail_on:
        config.fail_on = parse_fail_on(fail_on)
    if exit_zero:
        config.fail_on = None
    config.report_unused_suppressions = report_unused_suppressions
    config.stdin_filename = stdin_filename or config.stdin_filename
    config.fail_on_skipped = config.fail_on_skipped if fail_on_skipped is None else fail_on_skipped
    configs = ConfigSet(config, forced=bool(config_path), adjust=overridden)

    flags = ctx.meta.get("meshlint.report-flags", [])
    if [v for k, v in flags if k == "format"] != list(fmt) or [v for k, v in flags if k == "output"] != list(output):
        flags = [("format", f) for f in fmt] + [("output", o) for o in output]  # spelled some other way: pair in order
    reports = _pair_reports(flags, config.format)
    for _, path in reports:
        if path is not None:
            _writable(path, "report")
    if write_baseline:
        _writable(write_baseline, "baseline")

    # Everything that can fail on a bad option fails before the run.
    baseline_file = baseline_path or config.baseline
    entries = None
    if baseline_file or write_baseline:
        from meshlint.engine import baseline  # only runs with a baseline load it

        if baseline_file and not write_baseline:
            entries = baseline.read(baseline_file)
    changed = None
    if diff_base:
        from meshlint.engine import changes

        changed = changes.changed_lines(diff_base)

    if show_diff and (fmt or output):
        raise click.UsageError("--diff prints the diff on stdout; it takes no --format or --output")

    rules = load_rules()
    _started()
    if no_cache or fix or show_diff:
        cache_dir = None  # --fix lints its own edits in memory, round by round: nothing to keep
    elif cache_dir is None:
        from meshlint.engine.cache import default_directory

        cache_dir = default_directory()

    def lint() -> Any:
        return run(list(paths) or ["."], configs, rules, mesh_config, jobs=jobs or _cores(), cache_dir=cache_dir)

    fixing: list[str] = []
    if fix or show_diff:
        from meshlint.fix import command  # only --fix and --diff load the fixing code

        shown = command.shown_by(entries if not write_baseline else None, changed)
        if show_diff:
            something, fixing = command.diff(lint, unsafe_fixes, shown, _echo_all)
            for note in [] if quiet else fixing:
                click.echo(f"meshlint: {note}", err=True)
            sys.exit(EXIT_FINDINGS if something else EXIT_CLEAN)
        report, fixing = command.fix(lint, unsafe_fixes, shown)
    else:
        report = lint()
    report.unsafe_fixes = unsafe_fixes

    notes = [f"{s.path}: skipped: {s.reason}" for s in report.summary.skipped_inputs] + report.notes + fixing
    if write_baseline:
        entries = baseline.write(write_baseline, report.findings, report.root)
        notes.append(f"wrote {len(entries)} finding{'s' if len(entries) != 1 else ''} to the baseline {write_baseline}")
        baseline_file = write_baseline
    if entries is not None:
        baseline.apply(report, entries)
        notes += [f"{baseline_file}: stale entry, no such finding any more: {baseline.Entry(**e)}" for e in report.summary.stale_baseline]
    if changed is not None:
        changes.apply(report, changed)
    if not quiet:
        for note in notes:
            click.echo(f"meshlint: {note}", err=True)
    _write_reports(report, reports, color_choice="never" if no_color else color_choice, statistics=statistics, quiet=quiet)
    failing = config.fail_on is not None and any(f.severity >= config.fail_on for f in report.findings)
    # An advisory run (--fail-on never) reports skipped inputs too, and still exits 0.
    failing = failing or (config.fail_on is not None and config.fail_on_skipped and bool(report.summary.skipped_inputs))
    sys.exit(EXIT_FINDINGS if failing else EXIT_CLEAN)


def _echo_all(pieces: Iterable[str]) -> None:
    """Write to stdout; a reader that goes away early (`| head`) ends it quietly."""
    try:
        for piece in pieces:
            click.echo(piece, nl=False)
        sys.stdout.flush()
    except BrokenPipeError:
        _stdout_closed()


def _write_reports(report: Any, reports: list[tuple[str, str | None]], *, color_choice: str, statistics: bool, quiet: bool) -> None:
    """Files first, stdout last: a reader that goes away early (`| head`) costs no report file."""
    from meshlint.report import chunks

    for fmt, path in reports:
        if path is None:
            continue
        try:
            with open(path, "w", encoding="utf-8") as handle:
                handle.writelines(chunks(fmt, report, statistics=statistics, quiet=quiet))
        except OSError as err:
            _fail(f"{path}: cannot write the report: {err.strerror or err}")
    for fmt, path in reports:
        if path is not None:
            continue
        color = fmt == "text" and use_color(color_choice, sys.stdout.isatty())
        try:
            for piece in chunks(fmt, report, color=color, statistics=statistics, quiet=quiet):
                click.echo(piece, nl=False, color=color)
            sys.stdout.flush()
        except BrokenPipeError:
            _stdout_closed()
    if statistics and all(fmt != "text" for fmt, _ in reports):
        from meshlint.report.text import statistics as per_rule

        for line in per_rule(report.findings):
            click.echo(line, err=True)


def _started() -> None:
    """Everything a run needs is loaded: keep it out of every later collection, and collect again."""
    if _COLLECTING:
        gc.freeze()
        gc.enable()


def _cores() -> int:
    from meshlint.engine.parallel import usable_cores

    return usable_cores()  # the cores this process may use (affinity, cgroup quota), not all the machine has


@main.command("rules")
@click.option("--format", "fmt", type=click.Choice(["text", "markdown"]), default="text", help="text: one line a rule; markdown: the full rules page (docs/rules.md).")
@_guarded
def rules_command(fmt: str) -> None:
    """List every rule: code, name, default severity, summary."""
    from meshlint.registry import load_rules

    rules = load_rules()
    if fmt == "markdown":
        from meshlint.ruledocs import markdown

        click.echo(markdown(rules), nl=False)
        return
    width = max(len(r.name) for r in rules)
    for r in rules:
        opt_in = "" if r.default_enabled else " (off by default: select it to run it)"
        click.echo(f"{r.code:<6} {r.name:<{width}}  {r.severity!s:<7}  {r.summary}{opt_in}")


@main.command()
@click.argument("rule")
@click.option("--color", "color_choice", type=click.Choice(["auto", "always", "never"]), default="auto", help="Colour (auto: on a terminal, as for check).")
@click.option("--no-color", is_flag=True, help="Same as --color never.")
@_guarded
def explain(rule: str, color_choice: str, no_color: bool) -> None:
    """Explain a rule (by code or name): why, a bad and a good example, how to fix."""
    from meshlint.registry import load_rules
    from meshlint.ruledocs import explain as explain_text

    color = use_color("never" if no_color else color_choice, sys.stdout.isatty())
    for r in load_rules():
        if rule.upper() in (r.code, r.name.upper()):
            click.echo(explain_text(r, color=color), nl=False, color=color)
            return
    _fail(f"unknown rule {rule!r}; `meshlint rules` lists them")
