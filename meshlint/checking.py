"""`meshlint check`, whatever read its command line: click (meshlint/cli.py) or the plain reading that
spares a pre-commit run loading click (meshlint/entry.py). Nothing here imports click."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from meshlint.console import EXIT_CLEAN, EXIT_FINDINGS, UsageProblem, echo, echo_all, fail, guarded, stdout_open
from meshlint.reportfiles import pair_reports, skipped_on_stdout, writable, write_reports

if TYPE_CHECKING:
    from meshlint.config import Config
    from meshlint.configset import ConfigSet
    from meshlint.engine.plan import Reads

# Start-up creates tens of thousands of objects that live as long as the run (modules, classes, rule
# tables); letting the cycle collector sweep them over and over while they are made slows every
# pre-commit run. Collection resumes, with those objects frozen out of it, once they exist.
_COLLECTING = gc.isenabled()
gc.disable()


# --- the run ---------------------------------------------------------------------------------------


def _web_address(text: str) -> bool:
    """What the config's `docs-url` takes: an http(s) address, whose fragment each rule's link adds."""
    import re

    return re.fullmatch(r"https?://[^\s#]+", text) is not None


def _csv(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


class CheckOptions:
    """The options of `check` (meshlint/options.py), as either command-line reader gives them."""

    def __init__(self, **values: Any) -> None:
        self.paths: tuple[str, ...] = values["paths"]
        self.fmt: tuple[str, ...] = values["fmt"]
        self.output: tuple[str, ...] = values["output"]
        self.config_path: str | None = values["config_path"]
        self.select: tuple[str, ...] = values["select"]
        self.ignore: tuple[str, ...] = values["ignore"]
        self.extend_select: tuple[str, ...] = values["extend_select"]
        self.extend_ignore: tuple[str, ...] = values["extend_ignore"]
        self.fail_on: str | None = values["fail_on"]
        self.exit_zero: bool = values["exit_zero"]
        self.baseline_path: str | None = values["baseline_path"]
        self.write_baseline: str | None = values["write_baseline"]
        self.diff_base: str | None = values["diff_base"]
        self.kubernetes_version: str | None = values["kubernetes_version"]
        self.istio_version: str | None = values["istio_version"]
        self.linkerd_version: str | None = values["linkerd_version"]
        self.mesh_config: tuple[str, ...] = values["mesh_config"]
        self.color_choice: str = values["color_choice"]
        self.no_color: bool = values["no_color"]
        self.quiet: bool = values["quiet"]
        self.statistics: bool = values["statistics"]
        self.report_unused_suppressions: bool = values["report_unused_suppressions"]
        self.jobs: int = values["jobs"]
        self.stdin_filename: str | None = values["stdin_filename"]
        self.docs_url: str | None = values["docs_url"]
        self.max_file_size: str | None = values["max_file_size"]
        self.fail_on_skipped: bool | None = values["fail_on_skipped"]
        self.render: str | None = values["render"]
        self.fix: bool = values["fix"]
        self.show_diff: bool = values["show_diff"]
        self.unsafe_fixes: bool = values["unsafe_fixes"]
        self.cache_dir: str | None = values["cache_dir"]
        self.no_cache: bool = values["no_cache"]


@guarded
def check(report_flags: list[tuple[str, str]], **values: Any) -> None:
    """Run `check` with the options of meshlint/options.py; REPORT_FLAGS are its --format and --output
    in command-line order. Exits with the run's exit code. Everything that can fail on a bad option
    fails before the run."""
    from meshlint.registry import load_rules

    o = CheckOptions(**values)
    size_limit = _validated(o)
    config, configs = _configs(o, size_limit)
    reports = _reports(o, report_flags, config.format)
    kept = _Kept(o, config)
    if o.show_diff and (o.fmt or o.output):
        raise UsageProblem("--diff prints the diff on stdout; it takes no --format or --output")
    rules = load_rules()
    _check_selectors(rules, {"--select": o.select, "--ignore": o.ignore, "--extend-select": o.extend_select, "--extend-ignore": o.extend_ignore})
    _started()
    report, fixing, unwritten = _lint(o, configs, rules, kept, _reads(o, reports, kept))
    report.unsafe_fixes = o.unsafe_fixes
    notes = [f"{s.path}: skipped: {s.reason}" for s in report.summary.skipped_inputs[skipped_on_stdout(reports, o.quiet):]]
    notes += report.notes + fixing
    notes += kept.apply(report)
    for note in ([] if o.quiet else notes) + unwritten:
        echo(f"meshlint: {note}", err=True)
    color = "never" if o.no_color else o.color_choice
    write_reports(report, reports, color_choice=color, statistics=o.statistics, quiet=o.quiet, docs_url=config.docs_url)
    failing = config.fail_on is not None and any(f.severity >= config.fail_on for f in report.findings)
    # An advisory run (--fail-on never) reports skipped inputs too, and still exits 0.
    failing = failing or (config.fail_on is not None and config.fail_on_skipped and bool(report.summary.skipped_inputs))
    sys.exit(EXIT_FINDINGS if failing or unwritten else EXIT_CLEAN)


def _validated(o: CheckOptions) -> int | None:
    """The options a config cannot mend, checked before anything is read; the size limit they give."""
    from meshlint.mesh.options import version_problem
    from meshlint.source.inputs import parse_size

    for setting, value in (("kubernetes-version", o.kubernetes_version), ("istio-version", o.istio_version), ("linkerd-version", o.linkerd_version)):
        problem = version_problem(setting, value) if value else None
        if problem:
            raise UsageProblem(problem, option=f"--{setting}")
    if o.docs_url and not _web_address(o.docs_url):
        raise UsageProblem(f"{o.docs_url!r} is not an http(s) address without a #fragment", option="--docs-url")
    size_limit = parse_size(o.max_file_size) if o.max_file_size is not None else None
    if o.max_file_size is not None and size_limit is None:
        raise UsageProblem(f"{o.max_file_size!r} is not a size such as 50M (bytes, or a whole number of K, M or G)", option="--max-file-size")
    return size_limit


def _configs(o: CheckOptions, size_limit: int | None) -> tuple[Config, ConfigSet]:
    """The top config with the command line's word over it, and the set of every config of the run,
    each nested one overridden the same way."""
    from meshlint.config import find_config, load_config, parse_fail_on
    from meshlint.configset import ConfigSet

    def overridden(config: Config) -> None:
        """The command line's word over every config's, nested ones too."""
        if o.select:
            config.select = _csv(o.select)
        if o.ignore:
            config.ignore = _csv(o.ignore)
        config.extend_select += _csv(o.extend_select)
        config.extend_ignore += _csv(o.extend_ignore)
        config.kubernetes_version = o.kubernetes_version or config.kubernetes_version
        config.istio_version = o.istio_version or config.istio_version
        config.linkerd_version = o.linkerd_version or config.linkerd_version

    try:
        os.getcwd()  # relative paths, the config search and the cache's keys all start from it
    except FileNotFoundError:
        fail("the working directory no longer exists (it was deleted or moved): run meshlint from one that does")
    config = load_config(o.config_path if o.config_path else find_config("."))
    overridden(config)
    # What belongs to the run as a whole comes from the top config (the working directory's, or --config).
    if o.fail_on:
        config.fail_on = parse_fail_on(o.fail_on)
    if o.exit_zero:
        config.fail_on = None
    config.report_unused_suppressions = o.report_unused_suppressions
    config.stdin_filename = o.stdin_filename or config.stdin_filename
    config.docs_url = o.docs_url or config.docs_url
    config.max_file_size = size_limit or config.max_file_size
    config.fail_on_skipped = config.fail_on_skipped if o.fail_on_skipped is None else o.fail_on_skipped
    config.render = o.render or config.render
    return config, ConfigSet(config, forced=bool(o.config_path), adjust=overridden)


def _reports(o: CheckOptions, report_flags: list[tuple[str, str]], default_format: str) -> list[tuple[str, str | None]]:
    """Each report's format and file (None: stdout), each file checked writable and stdout open."""
    flags = report_flags
    if [v for k, v in flags if k == "format"] != list(o.fmt) or [v for k, v in flags if k == "output"] != list(o.output):
        flags = [("format", f) for f in o.fmt] + [("output", p) for p in o.output]  # spelled some other way: pair in order
    reports = pair_reports(flags, default_format)
    for report_format, path in reports:
        if path is not None:
            writable(path, "report")
        elif not o.show_diff:
            stdout_open(f"{report_format} report (give it an --output FILE)")
    if o.show_diff:
        stdout_open("diff")
    if o.write_baseline:
        writable(o.write_baseline, "baseline")
    return reports


class _Kept:
    """What the run is held against: the baseline's entries (read before the run) and the lines a
    --diff-base change touched."""

    def __init__(self, o: CheckOptions, config: Config) -> None:
        self.write = o.write_baseline
        self.file = o.baseline_path or config.baseline
        self.entries: Any = None
        self.changed: Any = None
        if self.file and not self.write:
            from meshlint.engine import baseline  # only runs with a baseline load it

            self.entries = _read_baseline(baseline, self.file, None if o.baseline_path else config)
        if o.diff_base:
            from meshlint.engine import changes

            self.changed = changes.changed_lines(o.diff_base)

    def apply(self, report: Any) -> list[str]:
        """The baseline written or applied and the change's lines applied to the report; the notes."""
        notes = []
        if self.write or self.entries is not None:
            from meshlint.engine import baseline

            if self.write:
                self.entries = baseline.write(self.write, report.findings, report.root)
                notes.append(f"wrote {len(self.entries)} finding{'s' if len(self.entries) != 1 else ''} to the baseline {self.write}")
                self.file = self.write
            baseline.apply(report, self.entries)
            notes += [f"{self.file}: stale entry, no such finding any more: {baseline.Entry(**e)}" for e in report.summary.stale_baseline]
        if self.changed is not None:
            from meshlint.engine import changes

            changes.apply(report, self.changed)
        return notes


def _reads(o: CheckOptions, reports: list[tuple[str, str | None]], kept: _Kept) -> Reads:
    """What of the findings this run reads: node paths and fingerprints where a report prints them,
    the baseline is written or applied, or --fix and --diff run their rounds; fixes where a report
    shows or counts them, or --fix and --diff apply them."""
    from meshlint.engine.plan import Reads
    from meshlint.report import READS_FIXES, READS_MARKS

    rounds = o.fix or o.show_diff
    formats = {f for f, _ in reports}
    return Reads(rounds or bool(kept.file or kept.write) or bool(formats & READS_MARKS), rounds or bool(formats & READS_FIXES))


def _lint(o: CheckOptions, configs: ConfigSet, rules: list[Any], kept: _Kept, reads: Reads) -> tuple[Any, list[str], list[str]]:
    """The run, or the rounds of --fix; --diff prints its diff and exits here. The report, the notes of
    fixing, and the files --fix could not write (a line each: their findings stay, and the run fails)."""
    from meshlint.engine.run import run
    from meshlint.progress import on_terminal

    where: str | Callable[[], str] | None = o.cache_dir
    if o.no_cache or o.fix or o.show_diff:
        where = None  # --fix lints its own edits in memory, round by round: nothing to keep
    elif o.cache_dir is None:
        from meshlint.engine.cachefiles import default_directory

        where = default_directory  # looked up only by a run that uses the cache
    progress = on_terminal()
    changed = kept.changed

    def lint() -> Any:
        try:
            return run(
                list(o.paths) or ["."], configs, rules, o.mesh_config, jobs=o.jobs or _cores(), cache_dir=where, progress=progress,
                diff_files=frozenset(changed.lines) if changed is not None else None, reads=reads,
            )
        finally:
            if progress is not None:
                progress.clear()  # before any note, diff or report is written

    if not (o.fix or o.show_diff):
        return lint(), [], []
    from meshlint.fix import command  # only --fix and --diff load the fixing code

    shown = command.shown_by(kept.entries if not kept.write else None, changed)
    if o.show_diff:
        something, fixing = command.diff(lint, o.unsafe_fixes, shown, echo_all)
        for note in [] if o.quiet else fixing:
            echo(f"meshlint: {note}", err=True)
        sys.exit(EXIT_FINDINGS if something else EXIT_CLEAN)
    report, fixing, unwritten = command.fix(lint, o.unsafe_fixes, shown)
    return report, fixing, unwritten


def _check_selectors(rules: list[Any], given: dict[str, tuple[str, ...]]) -> None:
    """The command line's selectors, before the run, naming the option of an unknown one (the
    config's are checked with the rules of each config, naming its file and key)."""
    from meshlint.engine.selection import unknown_selector

    for option, values in given.items():
        for selector in _csv(values):
            problem = unknown_selector(rules, selector)
            if problem is not None:
                fail(f"{option}: {problem}")


def _read_baseline(baseline: Any, path: str, config: Config | None) -> Any:
    """The baseline's entries; an unusable one named by the config that names it (`config`), if any."""
    from meshlint.config import ConfigError

    try:
        return baseline.read(path)
    except ConfigError as err:
        if config is None:
            raise
        raise ConfigError(f"{config.at('baseline')}: {err}") from err


def _started() -> None:
    """Everything a run needs is loaded: keep it out of every later collection, and collect again."""
    if _COLLECTING:
        gc.freeze()
        gc.enable()


def _cores() -> int:
    from meshlint.engine.parallel import usable_cores

    return usable_cores()  # the cores this process may use (affinity, cgroup quota), not all the machine has
