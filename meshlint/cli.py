"""The command line (spec §1): `check`, `rules`, `explain`. Exit 0 clean, 1 findings, 2 trouble."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

# Start-up creates tens of thousands of objects that live as long as the run (modules, classes, rule
# tables); letting the cycle collector sweep them over and over while they are made costs a pre-commit
# run about 7% of its time. Collection resumes, with those objects frozen out of it, once they exist.
_COLLECTING = gc.isenabled()
gc.disable()

import click  # noqa: E402

from meshlint import __version__  # noqa: E402
from meshlint.findings import Severity  # noqa: E402

FORMATS = ("text", "json", "sarif", "github", "junit")
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

        try:
            func(*args, **kwargs)
        except (ConfigError, InputError, RegistryError) as err:
            _fail(str(err))
        except (click.exceptions.Exit, click.ClickException, SystemExit, KeyboardInterrupt):
            raise
        except BrokenPipeError:
            sys.exit(EXIT_TROUBLE)
        except Exception as err:  # never a traceback unless MESHLINT_DEBUG=1
            if os.environ.get("MESHLINT_DEBUG") == "1":
                import traceback

                traceback.print_exc()
            _fail(f"internal error: {type(err).__name__}: {err} (set MESHLINT_DEBUG=1 for details)")

    wrapper.__name__ = func.__name__
    wrapper.__doc__ = func.__doc__
    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="meshlint")
def main() -> None:
    """Static linter for Kubernetes manifests and Istio sidecar lifecycle hazards."""


def _csv(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(allow_dash=True))
@click.option("--format", "fmt", type=click.Choice(FORMATS), help="Report format (default: text).")
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True), help="Write the report to FILE.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="Config file (default: nearest .meshlint.yaml or pyproject.toml).")
@click.option("--select", multiple=True, help="Only these codes, code prefixes (ML1) or rule names; comma-separated.")
@click.option("--ignore", multiple=True, help="Leave out these codes, prefixes or names; comma-separated.")
@click.option("--fail-on", type=click.Choice(["error", "warning", "info"]), help="Lowest severity that exits 1 (default: warning).")
@click.option("--kubernetes-version", help="Target Kubernetes version, e.g. 1.30.")
@click.option("--istio-version", help="Target Istio version, e.g. 1.24.")
@click.option("--mesh-config", multiple=True, type=click.Path(), help="Context file read every run (IstioOperator, Helm values, Namespaces...). Repeatable.")
@click.option("--no-color", is_flag=True, help="No colour, even on a terminal.")
@click.option("--quiet", "-q", is_flag=True, help="Only the findings: no summary, no notes.")
@click.option("--statistics", is_flag=True, help="Also count findings per rule (on stderr for machine formats).")
@click.option("--jobs", "-j", type=click.IntRange(min=0), default=0, help="Processes for large trees (default 0: one per core). Output is the same for any number.")
@click.option("--stdin-filename", help='The name "-" (stdin) goes by in every report, e.g. the file a rendered stream came from.')
@click.option("--fail-on-skipped", is_flag=True, default=None, help="Exit 1 when any input was passed over whole (a Helm template, not a manifest).")
@_guarded
def check(
    paths: tuple[str, ...], fmt: str | None, output: str | None, config_path: str | None, select: tuple[str, ...],
    ignore: tuple[str, ...], fail_on: str | None, kubernetes_version: str | None, istio_version: str | None,
    mesh_config: tuple[str, ...], no_color: bool, quiet: bool, statistics: bool, jobs: int,
    stdin_filename: str | None = None, fail_on_skipped: bool | None = None,
) -> None:
    """Lint PATHS (files or directories; "-" reads stdin; default ".")."""
    from meshlint.config import find_config, load_config
    from meshlint.engine.run import run
    from meshlint.mesh.options import parse_version
    from meshlint.registry import load_rules
    from meshlint.report import chunks

    config = load_config(config_path if config_path else find_config("."))
    if select:
        config.select = _csv(select)
    if ignore:
        config.ignore = config.ignore + _csv(ignore)
    if fail_on:
        config.fail_on = Severity.parse(fail_on)
    if fmt:
        config.format = fmt
    for flag, value in (("--kubernetes-version", kubernetes_version), ("--istio-version", istio_version)):
        if value and parse_version(value) is None:
            raise click.BadParameter(f"{value!r} is not a version such as 1.30", param_hint=flag)
    config.kubernetes_version = kubernetes_version or config.kubernetes_version
    config.istio_version = istio_version or config.istio_version
    config.stdin_filename = stdin_filename or config.stdin_filename
    config.fail_on_skipped = config.fail_on_skipped if fail_on_skipped is None else fail_on_skipped

    rules = load_rules()
    _started()
    report = run(list(paths) or ["."], config, rules, mesh_config, jobs=jobs or _cores())

    if not quiet:
        for note in report.notes:
            click.echo(f"meshlint: {note}", err=True)
    color = (
        config.format == "text"
        and not no_color
        and not output
        and "NO_COLOR" not in os.environ
        and sys.stdout.isatty()
    )
    pieces = chunks(config.format, report, color=color, statistics=statistics, quiet=quiet)
    if output:
        with open(output, "w", encoding="utf-8") as handle:
            handle.writelines(pieces)
    else:
        for piece in pieces:
            click.echo(piece, nl=False)
    if statistics and config.format != "text":
        from meshlint.report.text import statistics as per_rule

        for line in per_rule(report.findings):
            click.echo(line, err=True)
    failing = any(f.severity >= config.fail_on for f in report.findings)
    failing = failing or (config.fail_on_skipped and bool(report.summary.skipped_inputs))
    sys.exit(EXIT_FINDINGS if failing else EXIT_CLEAN)


def _started() -> None:
    """Everything a run needs is loaded: keep it out of every later collection, and collect again."""
    if _COLLECTING:
        gc.freeze()
        gc.enable()


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))  # the cores this process may use, not all the machine has
    except AttributeError:
        return os.cpu_count() or 1


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
        click.echo(f"{r.code:<6} {r.name:<{width}}  {r.severity!s:<7}  {r.summary}")


@main.command()
@click.argument("rule")
@click.option("--no-color", is_flag=True, help="No colour, even on a terminal.")
@_guarded
def explain(rule: str, no_color: bool) -> None:
    """Explain a rule (by code or name): why, a bad and a good example, how to fix."""
    from meshlint.registry import load_rules
    from meshlint.ruledocs import explain as explain_text

    color = not no_color and "NO_COLOR" not in os.environ and sys.stdout.isatty()
    for r in load_rules():
        if rule in (r.code, r.name) or rule.upper() == r.code:
            click.echo(explain_text(r, color=color), nl=False)
            return
    _fail(f"unknown rule {rule!r}; `meshlint rules` lists them")
