"""One run: paths → loaded files → resources → mesh context → rules → suppressions → findings.

The steps, each a function below: gather the inputs; read what the mesh context needs of them (the first
pass, engine/firstpass.py), reaching beyond the named files where a change there governs others; make the
plan the second pass checks against (engine/plan.py); check each file (engine/execution.py chooses how);
then what is said once for the run (engine/rendering.py, engine/runwide.py)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from meshlint.config import Config
from meshlint.configset import ConfigSet
from meshlint.engine import reach
from meshlint.engine.execution import second_pass
from meshlint.engine.firstpass import ContextPass, whole
from meshlint.engine.governance import Governance, Governing, bind
from meshlint.engine.plan import EVERYTHING, Plan, Progress, Reads
from meshlint.engine.results import Report, SkippedInput, Summary
from meshlint.engine.runwide import check_context_file, check_run, combined, order
from meshlint.fingerprint import repository_root
from meshlint.mesh.scope import Conflict, MeshRun, conflict_key, met
from meshlint.rule import Rule
from meshlint.source import inputs, walk
from meshlint.source.kustomize import kustomizations, patch_fragments
from meshlint.source.units import Units, find_units

if TYPE_CHECKING:
    from meshlint.engine.cache import FirstPass, ResultCache
    from meshlint.engine.cachefiles import Folder


def run(
    paths: list[str], configs: Config | ConfigSet, rules: list[Rule], mesh_config: Iterable[str] = (), jobs: int = 1, beyond: bool = True,
    cache_dir: str | Callable[[], str] | None = None, progress: Progress | None = None, diff_files: frozenset[str] | None = None,
    reads: Reads = EVERYTHING,
) -> Report:
    """Two passes. The first reads only what the mesh context needs (context files, and the documents of
    the inputs that could be Namespaces, Services, PeerAuthentications or mesh config); the second
    reads each input on its own, checks it against that context and lets it go, so memory holds the
    context and the findings, never the whole tree. A big tree's second pass runs in `jobs` worker
    processes (one at least); the report is the same, byte for byte, for any number of them, and for
    any order of the paths. `beyond`: read and check beyond the paths as §W2.6-7 say (engine/reach.py);
    off, a file is a world of its own (a rule's fixture). `cache_dir`: keep results there for the next
    run, and take this run's from it where nothing they depend on changed (engine/cache.py).
    `progress`: told of each file the first pass reads and each the second checks. `diff_files`: the real
    paths a `--diff-base` run reports on: only the overlays that reach one are rendered. `reads`: what of
    the findings the run's outputs read (a run that keeps its results makes everything)."""
    top = configs.top if isinstance(configs, ConfigSet) else configs
    with inputs.at_work(top.max_file_size):
        return _run(paths, configs, rules, mesh_config, jobs, beyond, cache_dir, progress, diff_files, reads)


def _run(
    paths: list[str], configs: Config | ConfigSet, rules: list[Rule], mesh_config: Iterable[str], jobs: int, beyond: bool,
    cache_dir: str | Callable[[], str] | None, progress: Progress | None, diff_files: frozenset[str] | None = None, reads: Reads = EVERYTHING,
) -> Report:
    inputs.forget_paths()
    configs = configs if isinstance(configs, ConfigSet) else ConfigSet(configs, forced=True)
    governing = Governing(configs, rules)
    given = _gather(paths or ["."], governing)
    keep = _Keeping(governing, rules, tuple(mesh_config), given, cache_dir)
    read = _first_pass(given, governing, keep, beyond, jobs, progress)
    plan = _plan(given, governing, rules, keep, read, beyond, reads if keep.cache_dir is None else EVERYTHING)
    cache = keep.results(plan, read)
    report, conflicts = _check(plan, given, read, cache, jobs, progress)
    _said_once(plan, report, read.units, conflicts, read.checked, jobs, beyond, diff_files)
    return report


class _Given:
    """The run's inputs as collected: the files (stdin among them as `inputs.STDIN`), stdin's bytes, the
    named files, and what was passed over or noted on the way."""

    def __init__(
        self, collected: walk.Inputs, files: list[str], notes: list[str], passed_over: list[SkippedInput], stdin: bytes | None,
        taken: set[str], named: list[str],
    ) -> None:
        self.collected = collected
        self.files = files
        self.notes = notes
        self.passed_over = passed_over
        self.stdin = stdin
        self.taken = taken  # the real paths of the files
        self.named = named  # files named on the command line (pre-commit), not folders


def _gather(paths: list[str], governing: Governing) -> _Given:
    top = governing.top.config
    collected = walk.collect(paths, top.exclude, top.base)
    files = [f for f in collected.files if not governing.excluded(f)]
    # Walked files that are no files (a loop, a FIFO, a device): passed over whole, like any unreadable input.
    passed_over = [SkippedInput(inputs.display_name(path), why) for path, why in collected.passed_over]
    stdin = None
    if inputs.STDIN in files:
        try:
            stdin = inputs.read(inputs.STDIN)
        except inputs.TooLarge as err:  # passed over, and the other inputs checked
            passed_over.append(SkippedInput(top.stdin_filename or inputs.STDIN_NAME, err.strerror or str(err)))
            files = [f for f in files if f != inputs.STDIN]
    taken = {inputs.real(f) for f in files if f != inputs.STDIN}
    named = sorted({p for p in paths if p != inputs.STDIN and os.path.isfile(p) and inputs.real(p) in taken})
    return _Given(collected, files, list(collected.warnings), passed_over, stdin, taken, named)


class _Keeping:
    """What this run keeps between runs: results and the whole first pass for a big run over a tree, only
    the mesh.context files' reading for a run over named files (pre-commit)."""

    def __init__(self, governing: Governing, rules: list[Rule], mesh_config: tuple[str, ...], given: _Given, cache_dir: str | Callable[[], str] | None) -> None:
        self.governing, self.rules, self.mesh_config = governing, rules, mesh_config
        self.folder: Folder | None = None
        self.cache_dir: str | None = None
        self.code = ""
        self.digests: dict[str, str] = {}
        if cache_dir is not None:  # a run that keeps nothing loads no cache code
            from meshlint.engine.cache import worth_caching
            from meshlint.engine.cachefiles import Folder
            from meshlint.engine.cachekeys import code_fingerprint

            self.folder = Folder(cache_dir, given.notes)
            self.cache_dir = self.folder.get() if worth_caching(given.files, given.stdin) else None
            self.code = code_fingerprint(rules) if self.cache_dir is not None else ""

    def first_pass(self, given: _Given, fragments: frozenset[str]) -> tuple[FirstPass | None, FirstPass | None]:
        """Where the whole first pass is kept, or else where the mesh.context files' reading is."""
        if self.folder is None:
            return None, None
        from meshlint.engine.cache import FirstPass
        from meshlint.engine.cachekeys import code_fingerprint, context_files_key, first_pass_key

        if self.cache_dir is not None and not given.named and given.stdin is None:
            key = first_pass_key(self.code, self.governing, self.mesh_config, given.files, fragments, self.digests)
            return FirstPass(self.cache_dir, key), None
        # A pre-commit run, say: its big mesh.context files are read once.
        files_key = context_files_key(lambda: self.code or code_fingerprint(self.rules), self.governing, self.mesh_config, given.taken)
        keep_dir = self.folder.get() if files_key is not None else None
        if keep_dir is not None and files_key is not None:
            return None, FirstPass(keep_dir, files_key, "contextfiles")
        return None, None

    def results(self, plan: Plan, read: _Read) -> ResultCache | None:
        """The result cache the second pass reads and fills, keyed by the run's code and facts."""
        if self.cache_dir is None:
            return None
        from meshlint.engine.cache import open_cache

        return open_cache(self.cache_dir, plan, self.code, read.context.facts_digest() + read.units.digest())


class _Read:
    """What the first pass made: the mesh context, the files the second pass checks and the run's units."""

    def __init__(self, context: ContextPass, units: Units, fragments: frozenset[str]) -> None:
        self.context = context
        self.units = units
        self.fragments = fragments  # Kustomize patches: syntax only
        self.checked: list[str] = []
        self.extra: list[str] = []  # files a changed mesh-wide source brought in (§W2.6)
        self.unseen = False  # the named files' tree has folders the run did not read
        self.governed: dict[str, Governance] = {}  # each checked file's config, met before its mesh.context files are read


def _first_pass(given: _Given, governing: Governing, keep: _Keeping, beyond: bool, jobs: int, progress: Progress | None) -> _Read:
    top = governing.top.config
    # A run over named files (pre-commit) that will render finds the overlays reaching them too: a named
    # base is judged as each overlay deploys it.
    around = reach.kustomizations_around(given.named, governing) if given.named and beyond and top.render == "auto" and kustomizations(given.named) else []
    units = find_units(given.files + around)  # before the first pass: which signs it must read depends on them
    fragments = units.fragments
    first_pass, context_files = keep.first_pass(given, fragments)
    kept = whole(first_pass.load(governing.top.options)) if first_pass is not None else None
    context = ContextPass(governing, keep.mesh_config, given.taken, keep.cache_dir is not None, kept, context_files, keep.digests if first_pass is not None else None)
    context.mesh.set_units(units)
    sources: set[str] = set()
    if kept is None:
        context.read([f for f in given.files if inputs.real(f) not in fragments], given.stdin, sources, jobs, progress)
    read = _Read(context, units, fragments)
    if beyond:
        _reach_beyond(read, given, governing, sources, jobs)
    read.checked = given.files + sorted(read.extra)
    inputs.forget_paths()  # the second pass asks few realpaths (fragments, fingerprints): keep no table of every file's
    read.governed = {path: governing.of(path) for path in read.checked}
    context.files_of_configs()  # the mesh.context files of configs met only now
    given.notes.extend(context.failed)
    # A mesh.context file that does not parse is kept out: the report needs its documents with every
    # mark, which a kept first pass does not hold; it is read again until it is fixed.
    if first_pass is not None and kept is None and not context.unsure and not context.broken:
        first_pass.save(context.kept())
    context.let_paths_go()
    if read.extra:  # files a changed source brought in: their kustomizations may make more units
        read.units = find_units(read.checked + around)
        context.mesh.set_units(read.units)
    for each in governing.all():
        bind(each, context.mesh)
    return read


def _reach_beyond(read: _Read, given: _Given, governing: Governing, sources: set[str], jobs: int) -> None:
    """The named files' neighbours, read for context, and the files a changed mesh-wide source among
    them governs, brought in to be checked (§W2.6-7)."""
    context = read.context
    beside, read.unseen = reach.neighbours(given.named, governing, given.taken)
    context.read([p for p in beside if inputs.real(p) not in read.fragments], None, None)
    # Only a named file widens the run: a named folder is the extent the user chose.
    for tree, changed in reach.trees(sources.intersection(given.named), governing).items():
        found = reach.tree_files(tree, governing)
        # The tree's Kustomize patches are pieces of objects: never context, never checked as objects.
        read.fragments |= patch_fragments(found)
        found = [p for p in found if inputs.real(p) not in read.fragments]
        # The walk met the tree's nested configs: their mesh.context files are read as context
        # first, so the walk's copy of them is not counted again at its own path.
        context.files_of_configs()
        context.read([p for p in found if inputs.real(p) not in context.read_files], None, None, jobs)
        widened = reach.governed_files(changed, found, context.mesh, given.taken | {inputs.real(p) for p in read.extra})
        for path, more in sorted(widened.items()):
            given.notes.append(f"{path} changed: also checking {len(more)} file{'s' if len(more) != 1 else ''}")
            read.extra.extend(more)


def _plan(given: _Given, governing: Governing, rules: list[Rule], keep: _Keeping, read: _Read, beyond: bool, reads: Reads) -> Plan:
    top = governing.top.config
    return Plan(
        stdin=given.stdin,
        stdin_name=top.stdin_filename or inputs.STDIN_NAME,
        stdin_lines=read.context.stdin_lines,
        fragments=read.fragments,
        mesh=read.context.mesh,
        governing=governing,
        governed=read.governed,
        widened=frozenset(read.extra),
        alone=frozenset(given.named) if beyond else frozenset(),
        unseen=read.unseen,
        context_named=bool(keep.mesh_config),
        root=repository_root(top.path),
        known=frozenset(["ALL"] + [r.code.upper() for r in rules] + [r.name.upper() for r in rules]),
        report_unused=top.report_unused_suppressions,
        digests=keep.digests,
        reads=reads,
    )


def _check(
    plan: Plan, given: _Given, read: _Read, cache: ResultCache | None, jobs: int, progress: Progress | None,
) -> tuple[Report, dict[tuple[Any, ...], tuple[Conflict, int]]]:
    """The second pass, into the report; the conflicts the files met, merged in file order."""
    top = plan.governing.top.config
    results = second_pass(plan, read.checked, jobs, cache)
    writable = frozenset(f for f in given.files if f != inputs.STDIN)  # what --fix may write: never stdin or widened files
    report = Report(
        [], Summary(), plan.governing.rules(), given.notes, root=plan.root, fail_on=top.fail_on, writable=writable,
        trees=given.collected.trees, linked_out=given.collected.linked_out,
    )
    report.summary.add(Summary(files=len(given.passed_over), skipped_files=len(given.passed_over), skipped_inputs=given.passed_over))
    report.summary.test_folders = len(given.collected.test_folders)
    for loaded in read.context.broken:  # mesh context files: not inputs, so not among report.files
        report.findings.extend(check_context_file(plan, loaded).findings)
    conflicts: dict[tuple[Any, ...], tuple[Conflict, int]] = {}
    unparsed: set[str] = set()
    for result in results:
        if result.unparsed:
            unparsed.add(result.path)
        report.summary.add(result.summary)
        report.findings.extend(result.findings)
        report.notes.extend(result.notes)
        report.files.append(result.path)
        if progress is not None:
            progress(len(report.files), len(read.checked), "checked")
        for key, (conflict, count) in result.conflicts.items():
            conflicts[key] = met(conflicts.get(key), conflict, count)
        if cache is not None and result.cache_key is not None and not result.cached:
            cache.put(result.cache_key, result)
    if cache is not None:
        cache.save()
    report.broken = frozenset(unparsed)
    return report, conflicts


def _said_once(
    plan: Plan, report: Report, units: Units, conflicts: dict[tuple[Any, ...], tuple[Conflict, int]], checked: list[str], jobs: int,
    beyond: bool, diff_files: frozenset[str] | None,
) -> None:
    """What the overlays deploy in place of the raw findings, the grouped findings, the rules about the
    run as a whole, and the summary."""
    if beyond and any(not root.component for root in units.roots) and plan.governing.top.config.render == "auto":
        from meshlint.engine.rendering import judge_rendered  # loads the renderer's module: only where overlays are

        judge_rendered(plan, report, units, checked, jobs, diff_files)
    report.findings, report.summary.unheld = combined(plan, report.findings, report.held_in)
    report.findings.extend(check_run(plan, MeshRun(sorted(conflicts.values(), key=lambda c: conflict_key(c[0])))))
    report.findings.sort(key=order)
    report.summary.count(report.findings, report.fix_reachable)
    if report.summary.signs_seen:
        report.summary.istio_sign = _signs_seen(report.summary.signs_seen)
    if units:
        report.units = units.named
        report.summary.units = len(set().union(*map(units.named, report.files))) or None


def _signs_seen(seen: set[tuple[str, int, int, str]]) -> str:
    """What the summary says of the signs of Istio that made workloads assumed meshed: the one, or how
    many and the first in path order."""
    path, line, _, text = min(seen)
    first = f"{text}, {path}:{line}" if path else text
    if len(seen) == 1:
        return f"Istio shown by {first}" if path else f"the run shows Istio: {first}"
    return f"Istio shown by {len(seen)} signs, each in its workloads' tree or unit; the first: {first}"
