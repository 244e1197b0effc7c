"""The command line (spec §1): `check`, `rules`, `explain`. Exit 0 clean, 1 findings, 2 trouble.

A plain `meshlint check` line does not come here: meshlint/entry.py runs it without loading click."""

from __future__ import annotations

import sys
from typing import Any

from meshlint import checking  # first: it keeps the cycle collector off while click loads

# isort: split
import click

from meshlint.console import UsageProblem, fail, guarded, stdout_open, use_color, write_out
from meshlint.options import CHECK_OPTIONS, CHOICE, COUNT, FILE, FLAG, PATH, Option, report_flags

__all__ = ["main", "use_color"]  # use_color: the colour choice, for whoever tests it


class _CheckCommand(click.Command):
    """`check` remembers the order of --format and --output on its command line: the order pairs them."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["meshlint.report-flags"] = report_flags(args)
        return super().parse_args(ctx, args)


def _click_option(option: Option) -> Any:
    settings: dict[str, Any] = {"help": option.help, "multiple": option.multiple}
    if not option.multiple:
        settings["default"] = option.default
    if option.kind == FLAG:
        settings["is_flag"] = True
    elif option.kind == CHOICE:
        settings["type"] = click.Choice(option.choices)
    elif option.kind == COUNT:
        settings["type"] = click.IntRange(min=0)
    elif option.kind in (PATH, FILE):
        settings["type"] = click.Path(dir_okay=option.kind == PATH)
    if option.metavar:
        settings["metavar"] = option.metavar
    return click.option(*option.names, option.dest, **settings)


def _with_check_options(func: Any) -> Any:
    for option in reversed(CHECK_OPTIONS):  # click lists them in --help in the order they are applied
        func = _click_option(option)(func)
    return func


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=lambda ctx, _param, value: _print_version(ctx) if value and not ctx.resilient_parsing else None,
    help="Show the version and which YAML readers this install has, and exit.",
)
def main() -> None:
    """Static linter for Kubernetes manifests and Istio sidecar lifecycle hazards."""


def _print_version(ctx: click.Context) -> None:
    from meshlint.about import version_text

    click.echo(version_text())
    ctx.exit()


@main.command(cls=_CheckCommand)
@click.argument("paths", nargs=-1, type=click.Path(allow_dash=True))
@_with_check_options
@click.pass_context
def check(ctx: click.Context, /, **values: Any) -> None:
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
    2 usage error, invalid config, a named path that cannot be read, a report
    that cannot be written or an internal error outside any one file. A file
    passed over (unreadable, over max-file-size, or an internal error in its
    check) is listed, and exits 1 only with --fail-on-skipped. A reader that
    stops reading (| head) ends the run quietly with 141, as SIGPIPE ends
    other tools. Ctrl-C ends it with 130, SIGTERM with 143 (the process dies
    of that signal).
    """
    try:
        checking.check(ctx.meta.get("meshlint.report-flags", []), **values)
    except UsageProblem as problem:
        if problem.option:
            raise click.BadParameter(problem.message, param_hint=problem.option) from None
        raise click.UsageError(problem.message) from None


@main.command("rules")
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text",
              help="text: one line a rule; markdown: the full rules page (docs/rules.md); json: every rule as data.")
@guarded
def rules_command(fmt: str) -> None:
    """List every rule: code, name, default severity, summary."""
    from meshlint.registry import load_rules

    stdout_open("list of rules")
    rules = load_rules()
    if fmt in ("markdown", "json"):
        from meshlint.ruledocs import catalogue, markdown

        write_out((markdown if fmt == "markdown" else catalogue)(rules))
        return
    width = max(len(r.name) for r in rules)
    for r in rules:
        opt_in = "" if r.default_enabled else " (off by default: select it to run it)"
        click.echo(f"{r.code:<6} {r.name:<{width}}  {r.severity!s:<7}  {r.summary}{opt_in}")


# Below this a wrapped line holds a word or two: wrap there and let the terminal fold the rest.
_NARROWEST = 40


@main.command()
@click.argument("rule")
@click.option("--color", "color_choice", type=click.Choice(["auto", "always", "never"]), default="auto", help="Colour (auto: on a terminal, as for check).")
@click.option("--no-color", is_flag=True, help="Same as --color never.")
@guarded
def explain(rule: str, color_choice: str, no_color: bool) -> None:
    """Explain a rule (by code or name): why, a bad and a good example, how to fix.

    Prose is wrapped to the terminal's width ($COLUMNS when set; 80 when the
    output is no terminal); examples are printed as they are written."""
    import shutil

    from meshlint.registry import load_rules
    from meshlint.ruledocs import explain as explain_text

    stdout_open("explanation")
    color = use_color("never" if no_color else color_choice, sys.stdout.isatty())
    width = max(_NARROWEST, shutil.get_terminal_size((80, 24)).columns)
    for r in load_rules():
        if rule.upper() in (r.code, r.name.upper()):
            click.echo(explain_text(r, color=color, width=width), nl=False, color=color)
            return
    fail(f"unknown rule {rule!r}; `meshlint rules` lists them")
