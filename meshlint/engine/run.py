"""One run: paths → loaded files → resources → mesh context → rules → suppressions → findings."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from itertools import pairwise
from typing import Any

from meshlint.config import Config, ConfigError, ConfigSet
from meshlint.engine import parallel, reach
from meshlint.engine.cache import (
    Facts,
    FirstPass,
    Folder,
    check_cached,
    code_fingerprint,
    content_digest,
    context_files_key,
    first_pass_key,
    hits_first,
    open_cache,
    worth_caching,
)
from meshlint.engine.filecheck import check_file, contained, finding, internal_error, source_line
from meshlint.engine.governance import Governance, Governing, bind
from meshlint.engine.results import FileResult, Report, SkippedInput, Summary
from meshlint.engine.subjects import ResourceSubjects, subjects
from meshlint.findings import Finding, Issue, Position, SaidKey, said_key
from meshlint.fingerprint import fingerprinted, repository_root
from meshlint.mesh.context import MeshContext
from meshlint.mesh.envsources import ENV_SOURCE_KINDS, might_hold_env_source
from meshlint.mesh.istio import is_helm_profile
from meshlint.mesh.scope import Conflict, MeshRun, Place, conflict_key, met
from meshlint.mesh.setting import Setting
from meshlint.mesh.sources import MeshSource, is_istiod, is_mesh_config, mesh_source
from meshlint.model.kinds import DECLARATION_KINDS, HELM_VALUES, MESH_CONTEXT_KINDS
from meshlint.model.prefilter import kind_lines, might_hold_context, might_show_istio
from meshlint.model.resource import Resource, resources_of
from meshlint.rule import FILE, RUN, Rule, RuleContext
from meshlint.source import inputs
from meshlint.source.kustomize import kustomizations, patch_fragments
from meshlint.source.loader import (
    LoadedFile,
    decode,
    each_chunk,
    load_chunks,
    load_file,
    newline_of,
)
from meshlint.source.units import Units, find_units
from meshlint.suppressions import comment_suppression

# Told of each file as a step of the run gets through it: files done, files found, and the step's
# word ("read", "checked"); what a watching person sees of a long run (meshlint/progress.py).
Progress = Callable[[int, int, str], None]


class Plan:
    """Everything the second pass needs, made once; worker processes inherit it when forked."""

    stdin: bytes | None
    stdin_name: str
    stdin_lines: Sequence[str] | None  # stdin's lines, as the first pass made them
    fragments: frozenset[str]  # Kustomize patches: syntax only
    mesh: MeshContext
    governing: Governing
    governed: dict[str, Governance]  # each input's config, decided before any worker forks
    widened: frozenset[str]  # files checked only for what a changed mesh-wide source can alter (§W2.6)
    alone: frozenset[str]  # named files, whose tree the run did not read whole (§W2.7)
    unseen: bool  # the named files' tree has folders the run did not read
    context_named: bool  # --mesh-config was given
    root: str  # the repository root that fingerprints are relative to
    known: frozenset[str]  # every rule's code and name (and ALL), upper-cased: suppressions may name them
    report_unused: bool  # list suppression entries that silenced nothing
    digests: dict[str, str]  # inputs' content digests, when the first pass's cache key read them

    def __init__(
        self,
        stdin: bytes | None,
        stdin_name: str,
        stdin_lines: Sequence[str] | None,
        fragments: frozenset[str],
        mesh: MeshContext,
        governing: Governing,
        governed: dict[str, Governance],
        widened: frozenset[str],
        alone: frozenset[str],
        unseen: bool,
        context_named: bool,
        root: str,
        known: frozenset[str],
        report_unused: bool,
        digests: dict[str, str] | None = None,
    ) -> None:
        self.stdin = stdin
        self.stdin_name = stdin_name
        self.stdin_lines = stdin_lines
        self.fragments = fragments
        self.mesh = mesh
        self.governing = governing
        self.governed = governed
        self.widened = widened
        self.alone = alone
        self.unseen = unseen
        self.context_named = context_named
        self.root = root
        self.known = known
        self.report_unused = report_unused
        self.digests = {} if digests is None else digests

    def of(self, path: str) -> Governance:
        return self.governed.get(path) or self.governing.of(path)


def run(
    paths: list[str], configs: Config | ConfigSet, rules: list[Rule], mesh_config: Iterable[str] = (), jobs: int = 1, beyond: bool = True,
    cache_dir: str | Callable[[], str] | None = None, progress: Progress | None = None, diff_files: frozenset[str] | None = None,
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
    paths a `--diff-base` run reports on: only the overlays that reach one are rendered."""
    top = configs.top if isinstance(configs, ConfigSet) else configs
    with inputs.at_work(top.max_file_size):
        return _run(paths, configs, rules, mesh_config, jobs, beyond, cache_dir, progress, diff_files)


def _run(
    paths: list[str], configs: Config | ConfigSet, rules: list[Rule], mesh_config: Iterable[str], jobs: int, beyond: bool,
    cache_dir: str | Callable[[], str] | None, progress: Progress | None, diff_files: frozenset[str] | None = None,
) -> Report:
    inputs.forget_paths()
    configs = configs if isinstance(configs, ConfigSet) else ConfigSet(configs, forced=True)
    mesh_config = tuple(mesh_config)
    top = configs.top
    governing = Governing(configs, rules)
    paths = paths or ["."]
    collected = inputs.collect(paths, top.exclude, top.base)
    files = [f for f in collected.files if not governing.excluded(f)]
    notes = list(collected.warnings)
    # Walked files that are no files (a loop, a FIFO, a device): passed over whole, like any unreadable input.
    passed_over = [SkippedInput(inputs.display_name(path), why) for path, why in collected.passed_over]

    stdin = None
    if inputs.STDIN in files:
        try:
            stdin = inputs.read(inputs.STDIN)
        except inputs.TooLarge as err:  # passed over, and the other inputs checked
            passed_over.append(SkippedInput(top.stdin_filename or inputs.STDIN_NAME, err.strerror or str(err)))
            files = [f for f in files if f != inputs.STDIN]
    # Where the mesh.context files' reading is kept, for runs of any size; and results, for big runs.
    folder = Folder(cache_dir, notes)
    cache_dir = folder.get() if folder.wanted and worth_caching(files, stdin) else None
    taken = {inputs.real(f) for f in files if f != inputs.STDIN}
    named = sorted({p for p in paths if p != inputs.STDIN and os.path.isfile(p) and inputs.real(p) in taken})
    # A run over named files (pre-commit) that will render finds the overlays reaching them too: a named
    # base is judged as each overlay deploys it.
    around = reach.kustomizations_around(named, governing) if named and beyond and top.render == "auto" and kustomizations(named) else []
    units = find_units(files + around)  # before the first pass: which signs it must read depends on them
    fragments = units.fragments
    code = code_fingerprint(rules) if cache_dir is not None else ""
    digests: dict[str, str] = {}
    first_pass = context_files = None
    if cache_dir is not None and not named and stdin is None:
        first_pass = FirstPass(cache_dir, first_pass_key(code, governing, mesh_config, files, fragments, digests))
    elif folder.wanted:  # a pre-commit run, say: its big mesh.context files are read once
        files_key = context_files_key(lambda: code or code_fingerprint(rules), governing, mesh_config, taken)
        keep_dir = folder.get() if files_key is not None else None
        context_files = FirstPass(keep_dir, files_key, "contextfiles") if keep_dir is not None and files_key is not None else None
    kept = _whole(first_pass.load(governing.top.options)) if first_pass is not None else None
    context = _Context(governing, mesh_config, taken, cache_dir is not None, kept, context_files, digests if first_pass is not None else None)
    context.mesh.set_units(units)
    sources: set[str] = set()
    if kept is None:
        context.read([f for f in files if inputs.real(f) not in fragments], stdin, sources, jobs, progress)
    extra: list[str] = []
    unseen = False
    if beyond:
        beside, unseen = reach.neighbours(named, governing, taken)
        context.read([p for p in beside if inputs.real(p) not in fragments], None, None)
        # Only a named file widens the run: a named folder is the extent the user chose.
        for tree, changed in reach.trees(sources.intersection(named), governing).items():
            found = reach.tree_files(tree, governing)
            # The tree's Kustomize patches are pieces of objects: never context, never checked as objects.
            fragments |= patch_fragments(found)
            found = [p for p in found if inputs.real(p) not in fragments]
            # The walk met the tree's nested configs: their mesh.context files are read as context
            # first, so the walk's copy of them is not counted again at its own path.
            context.files_of_configs()
            context.read([p for p in found if inputs.real(p) not in context.read_files], None, None, jobs)
            widened = reach.governed_files(changed, found, context.mesh, taken | {inputs.real(p) for p in extra})
            for path, more in sorted(widened.items()):
                notes.append(f"{path} changed: also checking {len(more)} file{'s' if len(more) != 1 else ''}")
                extra.extend(more)
    checked = files + sorted(extra)
    inputs.forget_paths()  # the second pass asks few realpaths (fragments, fingerprints): keep no table of every file's
    governed = {path: governing.of(path) for path in checked}
    context.files_of_configs()  # the mesh.context files of configs met only now
    notes.extend(context.failed)
    # A mesh.context file that does not parse is kept out: the report needs its documents with every
    # mark, which a kept first pass does not hold; it is read again until it is fixed.
    if first_pass is not None and kept is None and not context.unsure and not context.broken:
        first_pass.save(context.kept())
    context.let_paths_go()
    mesh = context.mesh
    if extra:  # files a changed source brought in: their kustomizations may make more units
        units = find_units(checked + around)
        mesh.set_units(units)
    for each in governing.all():
        bind(each, mesh)
    plan = Plan(
        stdin=stdin,
        stdin_name=top.stdin_filename or inputs.STDIN_NAME,
        stdin_lines=context.stdin_lines,
        fragments=fragments,
        mesh=mesh,
        governing=governing,
        governed=governed,
        widened=frozenset(extra),
        alone=frozenset(named) if beyond else frozenset(),
        unseen=unseen,
        context_named=bool(mesh_config),
        root=repository_root(top.path),
        known=frozenset(["ALL"] + [r.code.upper() for r in rules] + [r.name.upper() for r in rules]),
        report_unused=top.report_unused_suppressions,
        digests=digests,
    )
    cache = open_cache(cache_dir, plan, code, context.facts_digest() + units.digest()) if cache_dir else None
    # One big stream, on stdin (`helm template ... | meshlint check -`) or as the run's only file, is
    # shared among the workers by ranges of its documents; a tree, file by file.
    one_stream = len(checked) == 1 and jobs > 1 and (len(stdin) if stdin is not None else parallel.size_of(checked[0])) >= parallel.PARALLEL_BYTES
    if one_stream:
        from meshlint.engine.streams import check_stream  # only a big stream with --jobs

        checker: Callable[[Plan, str, bytes | None], FileResult] = partial(check_stream, jobs=jobs)
    else:
        checker = check_file
    check = contained(partial(checker, plan) if cache is None else partial(check_cached, plan, cache, checker))
    results: Iterable[FileResult]
    forking = not one_stream and parallel.worth_forking(checked, jobs)
    if forking and cache is not None:
        results = hits_first(plan, cache, checked, check, jobs)
    elif forking:
        results = parallel.check_files(check, checked, jobs)
    else:  # one job, or too little work to pay for a pool: each file's garbage goes as the next is read
        results = map(check, checked)

    writable = frozenset(f for f in files if f != inputs.STDIN)  # what --fix may write: never stdin or widened files
    report = Report(
        [], Summary(), governing.rules(), notes, root=plan.root, fail_on=top.fail_on, writable=writable,
        trees=collected.trees, linked_out=collected.linked_out,
    )
    report.summary.add(Summary(files=len(passed_over), skipped_files=len(passed_over), skipped_inputs=passed_over))
    for loaded in context.broken:  # mesh context files: not inputs, so not among report.files
        report.findings.extend(_check_context_file(plan, loaded).findings)
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
            progress(len(report.files), len(checked), "checked")
        for key, (conflict, count) in result.conflicts.items():
            conflicts[key] = met(conflicts.get(key), conflict, count)
        if cache is not None and result.cache_key is not None and not result.cached:
            cache.put(result.cache_key, result)
    if cache is not None:
        cache.save()
    if beyond and any(not root.component for root in units.roots) and top.render == "auto":
        _rendered(plan, report, units, checked, jobs, diff_files)
    report.findings = _combined(plan, report.findings, report.held_in)
    report.findings.extend(_check_run(plan, MeshRun(sorted(conflicts.values(), key=lambda c: conflict_key(c[0])))))
    report.findings.sort(key=_order)
    report.broken = frozenset(unparsed)
    report.summary.count(report.findings, report.fix_reachable)
    if report.summary.signs_seen:
        report.summary.istio_sign = _signs_seen(report.summary.signs_seen)
    if units:
        report.units = units.named
        report.summary.units = len(set().union(*map(units.named, report.files))) or None
    return report


def _rendered(plan: Plan, report: Report, units: Units, checked: list[str], jobs: int, diff_files: frozenset[str] | None) -> None:
    """What the root kustomizations deploy, judged as built (engine/rendering.py), in place of the raw
    findings of the files they cover. `diff_files`: a --diff-base run's changed files: the roots that reach
    none are not built, unless a changed file lies in no unit (a platform's mesh config governs every one)."""
    from meshlint.source.render import find_renderer

    renderer = find_renderer()
    names = {inputs.real(f): f for f in checked if f != inputs.STDIN}
    # Only the roots that reach a file of the run: a pre-commit run's units hold the whole repository's.
    roots = [root for root in units.roots if not root.component and any(os.path.realpath(f) in names for f in root.files)]
    if diff_files is not None and all(units.of(path) for path in diff_files):
        roots = [root for root in roots if any(os.path.realpath(f) in diff_files for f in root.files)]
    if not roots:
        return
    if renderer is None:
        report.notes.append(f"{len(roots)} root kustomization{'s' if len(roots) != 1 else ''} not rendered: neither kustomize nor kubectl "
                            "is on PATH; their files are checked as written (--render never says this is meant)")
        return
    from meshlint.engine import rendering

    rules = plan.governing.rules()
    outcome = rendering.apply(
        report.findings, units, roots, renderer, lambda path, text: check_file(plan, path, text).findings, names, rules,
        lambda found: fingerprinted(found, plan.root), plan.governing.top.config.max_file_size, jobs,
    )
    report.findings = outcome.findings
    failed = sorted(outcome.failed)
    report.notes.extend(f"{unit}: not rendered ({who}): {why}; its files are checked as written" for unit, who, why in failed)
    report.held_in = outcome.units
    report.summary.rendered = {
        "renderer": renderer.name, "roots": len(roots), "rendered": outcome.rendered,
        "not_rendered": [{"unit": unit, "reason": why} for unit, _, why in failed],
    }


def _signs_seen(seen: set[tuple[str, int, int, str]]) -> str:
    """What the summary says of the signs of Istio that made workloads assumed meshed: the one, or how
    many and the first in path order."""
    path, line, _, text = min(seen)
    first = f"{text}, {path}:{line}" if path else text
    if len(seen) == 1:
        return f"Istio shown by {first}" if path else f"the run shows Istio: {first}"
    return f"Istio shown by {len(seen)} signs, each in its workloads' tree or unit; the first: {first}"


# What one file gives the first pass: the facts it gave, whether it holds a mesh-wide source, the digest
# of its bytes, and a note when an unexpected error cut its reading short.
_Read = tuple[list[bytes], bool, str | None, str | None]


class _Context:
    """The first pass. The context takes its facts from each resource as it is read, and the resource
    is dropped: a tree with thousands of Services keeps thousands of small facts, not documents."""

    def __init__(
        self, governing: Governing, mesh_config: Iterable[str], taken: set[str], cached: bool = False, kept: dict[str, Any] | None = None,
        context_files: FirstPass | None = None, digests: dict[str, str] | None = None,
    ) -> None:
        """`kept`: what the same first pass left in an earlier run (`kept()`, engine/cache.py FirstPass),
        taken back instead of reading anything. `context_files`: where the reading of the mesh.context
        files alone is kept (a run that reads beyond its inputs keeps no more than that). `digests`:
        the inputs' digests when the whole first pass is kept under them: each read is checked
        against its digest, and a file that changed in between leaves the pass `unsure`, never kept."""
        self.governing = governing
        self.top = governing.top
        self.mesh = MeshContext(options=self.top.options, istio_in_use=_configured_istio(governing, tuple(mesh_config)))
        self._signs_done = 0
        self.broken: list[LoadedFile] = []  # mesh.context files that do not parse: reported, never dropped
        self.taken = taken
        # A mesh.context file that is also an input keeps the place its config gives it (§W2.1).
        self.as_input: dict[str, str] = {}
        self._placed: set[tuple[str, str]] = set()
        self._configs_done = 0
        self.read_files: set[str] = set()
        # mesh.context files read as such: never read again as a named file's neighbour, where they
        # would count a second time, at their own path instead of the place their config gives them.
        self.context_reals: set[str] = set()
        # What the context was made of, in the order it was read: a cached result is only as good as
        # the context it was checked against (engine/cache.py). Kept only by runs with a cache.
        # Kept context files carry their digest (always made), which a later run with results to key may take.
        self.facts = Facts(cached or context_files is not None)
        self._signed = kept is not None  # a kept digest holds its sign already
        self.stdin_lines: Sequence[str] | None = None
        self.digests = digests
        self.unsure = False
        self.failed: list[str] = []  # a note for each file whose reading met an unexpected error
        if kept is not None:
            self._take_back(kept, cached)
            return
        before = _whole(context_files.load(self.top.options)) if context_files is not None else None
        if before is not None:
            self._take_back(before, cached)
        else:
            for path in mesh_config:  # --mesh-config files count as located beside the top config
                self._context_file(path, self.top.root)
            self.files_of_configs()
            if context_files is not None and not self.broken:  # (as for the whole first pass, below)
                context_files.save(self.kept(final=False))
        # The inputs' facts follow the context files' digest, whether those were read or taken back.
        self.facts = Facts(cached, self.facts.hexdigest())

    def _take_back(self, kept: dict[str, Any], cached: bool) -> None:
        self.mesh, self.broken, self.as_input, self._placed = kept["mesh"], kept["broken"], kept["as_input"], kept["placed"]
        self._configs_done, self.read_files, self.context_reals = kept["configs_done"], kept["read_files"], kept["context_reals"]
        self.facts = Facts(cached, kept["facts"])

    def let_paths_go(self) -> None:
        """The first pass is over: its tables of real paths (one per input, several times over) are not
        needed by the second, which would hold them to the end of the run."""
        self.taken.clear()
        self.read_files.clear()
        self.context_reals.clear()
        self._placed.clear()
        self.as_input.clear()

    def kept(self, final: bool = True) -> dict[str, Any]:
        """What a later run takes back instead of reading (see `__init__`): the whole first pass, or
        (`final` False) what the mesh.context files alone gave, with the facts digest so far."""
        return {
            "mesh": self.mesh, "broken": self.broken, "as_input": self.as_input, "placed": self._placed, "configs_done": self._configs_done,
            "read_files": self.read_files, "context_reals": self.context_reals, "facts": self.facts_digest() if final else self.facts.hexdigest(),
        }

    def files_of_configs(self) -> None:
        """The mesh.context files of every config met so far, each located beside the config naming it."""
        met = self.governing.all()
        for governed in met[self._signs_done :]:
            sign = _config_sign(governed.config)
            if sign is not None and self.mesh.istio_in_use is None:
                self.mesh.sign_config(sign, governed.root)
        self._signs_done = len(met)
        for governed in met[self._configs_done :]:
            for item, path in enumerate(governed.config.mesh_context):
                try:
                    self._context_file(path, governed.config.context_folders.get(path, governed.root))
                except ConfigError as err:  # a file that cannot be read: named with the setting naming it
                    raise ConfigError(f"{governed.config.at('mesh.context', item)}: {err}") from err
        self._configs_done = len(met)

    def _context_file(self, path: str, folder: str) -> None:
        real = inputs.real(path)
        if (real, folder) in self._placed:
            return
        self._placed.add((real, folder))
        if real in self.taken:
            self.as_input.setdefault(real, folder)
            return
        self.context_reals.add(real)
        display = os.path.relpath(path) if os.path.isabs(path) else path
        try:
            data = inputs.read(path)
        except OSError as err:
            raise ConfigError(f"{display}: cannot read mesh context file: {err.strerror or err}") from err
        self.facts.update(f"context file\0{display}\0{folder}\0".encode())
        self.facts.update(data)
        loaded = load_file(path, display, data, input_file=False)  # messages name it as the user would
        resources = [r for d in loaded.documents for r in resources_of(d)]
        place = Place.of(display, folder)  # one for the file: it costs an abspath
        for resource in resources:
            self.mesh.add(resource, place)
        if loaded.problems or any(s is not None and s.problems for s in map(_source, resources)):
            self.broken.append(loaded)

    def read(self, files: Iterable[str], stdin: bytes | None, sources: set[str] | None, jobs: int = 1, progress: Progress | None = None) -> None:
        """What the mesh context needs of these files; `sources` collects those that hold mesh-wide
        sources (inputs only: files read for context alone widen nothing). A big tree is read by
        `jobs` workers, each a range of its files into a context of its own; the ranges' contexts
        are merged in file order, which is what reading them one after the other gives. `progress`
        is told of each file as it is merged."""
        todo = []
        for path in files:
            real = inputs.real(path)
            if real in self.context_reals:
                continue
            self.read_files.add(real)
            if inputs.helm_chart_of(path) is not None:
                continue  # a chart's template says nothing until Helm renders it
            todo.append(path)
        if jobs > 1 and stdin is None and parallel.worth_forking(todo, jobs):
            # Ranges that shrink towards the end, so that the workers finish together; each range's
            # context is merged here, so they are fewer and longer than the second pass's tasks.
            bounds = parallel.shares(len(todo), jobs, most=512, least=16)
            # While the workers read, this process loads what the second pass's workers would each load.
            from meshlint.engine.warmup import load_for_checks

            ranges = [todo[a:b] for a, b in pairwise(bounds)]
            with contextlib.closing(parallel.each_in_workers(self._read_range, ranges, jobs, load_for_checks)) as parts:
                self._merge(parts, sources, len(todo), progress)  # each range as it comes
        else:
            # One file at a time: its facts are hashed and dropped before the next is read (a list of
            # every file's facts held the text of every context document until the pass was over).
            self._merge([(None, ((path, self._read_one(self.mesh, path, stdin)) for path in todo))], sources, len(todo), progress)

    def _merge(
        self, parts: Iterable[tuple[MeshContext | None, Iterable[tuple[str, _Read]]]], sources: set[str] | None,
        found: int, progress: Progress | None,
    ) -> None:
        """The ranges' contexts into this one, and each file's facts into the cache's digest, in file order."""
        done = 0
        for mesh, read in parts:
            if mesh is not None:
                self.mesh.merge(mesh)
            for path, (facts, source, digest, failed) in read:
                if self.digests is not None and digest != self.digests.get(path):
                    self.unsure = True  # changed since the key hashed it: this first pass is not kept
                if failed is not None:
                    self.failed.append(failed)
                    self.unsure = True  # so the next run reads it again, and says so again
                for fact in facts:
                    self.facts.update(fact)
                if source and sources is not None and path != inputs.STDIN:
                    sources.add(path)
                if progress is not None:
                    done += 1
                    progress(done, found, "read")

    def _read_range(self, paths: list[str]) -> tuple[MeshContext, list[tuple[str, _Read]]]:
        """In a worker: a range of the files, read into a context that starts as this one's sign."""
        mesh = MeshContext(options=self.mesh.options, istio_in_use=self.mesh.istio_in_use)
        mesh.units = self.mesh.units  # which signs a range must read depends on them
        return mesh, [(path, self._read_one(mesh, path, None)) for path in paths]

    def _read_one(self, mesh: MeshContext, path: str, stdin: bytes | None) -> _Read:
        """One file into `mesh`: the facts it gave (for the cache's key), whether it holds a
        mesh-wide source, the digest of the bytes read when the run keeps its first pass (see
        `read`), and a note when an unexpected error cut the reading short. A resource read only as a sign of Istio adds that sign and nothing else, and gives
        no fact of its own: the sign the whole first pass settles on is one (`facts_digest`), however
        the files were shared out."""
        facts: list[bytes] = []
        source = False
        try:
            data = stdin if path == inputs.STDIN and stdin is not None else inputs.read(path)
        except OSError:
            return facts, source, None, None  # the second pass reports it
        read = content_digest(data) if self.digests is not None else None
        name = self.top.config.stdin_filename or inputs.STDIN_NAME if path == inputs.STDIN else path
        folder = self.as_input.get(inputs.real(path)) if path != inputs.STDIN else None
        place = Place.of(name, folder) if folder is not None else None
        text = decode(data)[0]
        lines = None
        if path == inputs.STDIN:  # a big stream's lines are made once, for both passes
            from meshlint.source.lines import TextLines

            lines = self.stdin_lines = TextLines(text)
        try:
            for chunk, resource, context in _context_resources(mesh, name, text, lines):
                if resource.kind == HELM_VALUES and folder is None and is_helm_profile(path):
                    continue  # a profile an install may pick, unless mesh.context names it
                if not context:
                    mesh.note_sign(resource)
                    continue
                if self.facts.wanted:
                    facts.append(f"\0{name}\0{folder}\0{resource.document.line}\0".encode())
                    facts.append(chunk.encode())
                mesh.add(resource, place)
                source = source or reach.is_mesh_wide(resource)
        except Exception as err:  # a bug of meshlint's that this input meets: it costs this file's context only
            return facts, source, read, f"{name}: the rest of it is left out of the mesh context: {internal_error(err)}"
        return facts, source, read, None

    def facts_digest(self) -> str:
        """What the mesh context was made of, ending with the sign of Istio it settled on."""
        if not self._signed:
            self.facts.update(f"\0signs\0{self.mesh.sign_digest()}\0".encode())
            self._signed = True
        return self.facts.hexdigest()


KEPT = frozenset(("mesh", "broken", "as_input", "placed", "configs_done", "read_files", "context_reals", "facts"))


def _whole(kept: dict[str, Any] | None) -> dict[str, Any] | None:
    """A kept first pass with every part `_Context.kept` writes; anything else (another version's) is none."""
    return kept if kept is not None and kept.keys() >= KEPT else None


def _context_resources(mesh: MeshContext, path: str, text: str, lines: Sequence[str] | None = None) -> Iterator[tuple[str, Resource, bool]]:
    """The parts of one input that could hold mesh context, or the first sign of Istio, each with
    the text of the part it is in, and False when it is read only as a sign."""
    for line_offset, chunk in each_chunk(text):
        kinds = kind_lines(chunk)
        context = might_hold_context(chunk, kinds) or might_hold_env_source(chunk, kinds)
        # Once a sign is known, later documents cannot come first: the place is asked before the text is scanned.
        # A `kind: List` may hold context and workloads alike: its items are looked at for a sign too.
        sign = mesh.wants_istio_sign(path) and might_show_istio(chunk)
        if not (context or sign):
            continue
        lines = text.splitlines() if lines is None else lines
        for document in load_chunks(path, [(line_offset, chunk)], lines):
            for resource in resources_of(document):
                if context and (resource.kind in MESH_CONTEXT_KINDS or resource.kind in DECLARATION_KINDS or resource.kind in ENV_SOURCE_KINDS or is_istiod(resource)):
                    yield chunk, resource, True
                elif sign:
                    yield chunk, resource, False


def _configured_istio(governing: Governing, mesh_config: tuple[str, ...]) -> Setting[str] | None:
    """--mesh-config, or a top configuration that names mesh context or injected namespaces: the whole
    run is about an Istio mesh. (A nested configuration's says so of its own tree: `_config_sign`.)"""
    if mesh_config:
        return Setting("--mesh-config is given", None, "command line")
    return _config_sign(governing.top.config)


def _config_sign(config: Config) -> Setting[str] | None:
    """A configuration that names mesh context or injected namespaces is about an Istio mesh."""
    for key, value in (("mesh.context", config.mesh_context), ("mesh.injected-namespaces", config.injected_namespaces)):
        if value:
            return Setting(f"{key} is set", None, config.path or "config")
    return None


def _source(resource: Resource) -> MeshSource | None:
    return mesh_source(resource) if is_mesh_config(resource) else None


def _check_context_file(plan: Plan, loaded: LoadedFile) -> FileResult:
    """A mesh context file is read, not checked, unless it is also an input; but a context file that
    does not parse (or whose data.mesh / data.values does not) is never dropped in silence."""
    result = FileResult(loaded.path)
    findings = []
    governed = plan.governing.top
    for rule in governed.rules:
        if FILE not in rule.scopes:
            continue
        items = [ResourceSubjects(r, plan.mesh, governed.options) for d in loaded.documents for r in resources_of(d) if is_mesh_config(r)]
        for subject, about, _ in subjects(rule, loaded, items):
            for issue in rule.check(subject, governed.contexts[rule.code]):
                findings.append(finding(rule, issue, governed.severities[rule.code], about, source_line(loaded.lines, issue.position.line)))
    result.findings = fingerprinted(findings, plan.root)
    return result


def _check_run(plan: Plan, subject: MeshRun) -> list[Finding]:
    """Rules about the run as a whole, once every file is checked; their findings land in the mesh-wide
    sources, which may be files of any process or mesh.context files, so their lines are read here."""
    findings: list[Finding] = []
    lines: dict[str, tuple[list[str], str]] = {}
    top = plan.governing.top
    for rule in plan.governing.rules():
        if RUN in rule.scopes:
            findings.extend(_said(plan, rule, rule.check(subject, (top.contexts.get(rule.code) or _any_context(plan, rule))), lines))
    return fingerprinted(findings, plan.root)


def _said(plan: Plan, rule: Rule, issues: Iterable[Issue], read: dict[str, tuple[list[str], str]]) -> list[Finding]:
    """Issues said once for the run, as findings: each the rule's and severity of the config that
    governs the file it lands in, unless a comment there suppresses it. `read`: each file's lines and
    line break, as far as read."""
    findings = []
    top = plan.governing.top
    for issue in issues:
        path = issue.position.path
        governed = plan.of(path) if path != plan.stdin_name else top
        if rule.code not in governed.severities:
            continue  # the config of that file leaves the rule out
        if path not in read:
            try:
                text = decode(inputs.read(path))[0] if path != plan.stdin_name else ""
            except OSError:
                text = ""
            read[path] = (text.splitlines(), newline_of(text))
        lines, newline = read[path]
        if comment_suppression(lines, issue.position, rule) is not None:
            continue
        # A fix writes new lines as its file ends its own.
        findings.append(finding(rule, issue, governed.severities[rule.code], None, source_line(lines, issue.position.line), newline))
    return findings


def _combined(plan: Plan, findings: list[Finding], held_in: dict[SaidKey, list[str]]) -> list[Finding]:
    """The findings of rules that say theirs once per group (ML100), grouped; the others as they are."""
    combining = {r.code: r for r in plan.governing.rules() if r.combine is not None}
    if not combining or not any(f.code in combining for f in findings):
        return findings
    kept: list[Finding] = []
    grouped: dict[str, list[Finding]] = {}
    for found in findings:
        (grouped.setdefault(found.code, []) if found.code in combining else kept).append(found)
    units = plan.mesh.units
    sources = _SourcesAt(plan)
    lines: dict[str, tuple[list[str], str]] = {}
    for code, each in grouped.items():
        rule = combining[code]
        combine = rule.combine
        # A file whose config says `group: false` keeps its findings one by one.
        members: list[Finding] = []
        for found in each:
            (members if _groups(plan, found, code) else kept).append(found)
        if combine is None or not members:
            continue
        def units_of(found: Finding) -> list[str]:
            return held_in.get(said_key(found)) or sorted(units.named(found.path))

        said = combine(members, units_of, sources.at)
        made = [f for f in said if isinstance(f, Finding)]  # members kept as found, or reworded
        made.extend(fingerprinted(_said(plan, rule, [i for i in said if isinstance(i, Issue)], lines), plan.root))
        if held_in:  # what rendering found: the units of a combined finding are its members' own
            for found in made:
                places = {found.position, *found.related}
                held = sorted({u for m in members if m.position in places for u in units_of(m)})
                if held:
                    held_in[said_key(found)] = held
        kept.extend(made)
    kept.sort(key=_order)
    return kept


def _groups(plan: Plan, found: Finding, code: str) -> bool:
    governed = plan.of(found.path) if found.path != plan.stdin_name else plan.governing.top
    context = governed.contexts.get(code)
    return context is None or context.options.get("group") is not False


class _SourcesAt:
    """The mesh-wide source written at a place of the run (a grouped finding's fix edits it)."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.read: dict[str, list[MeshSource]] = {}

    def at(self, position: Position) -> MeshSource | None:
        path = position.path
        if path not in self.read:
            try:
                loaded = load_file(path, path, inputs.read(path), input_file=False) if path != self.plan.stdin_name else None
            except OSError:
                loaded = None
            found = [r for d in loaded.documents for r in resources_of(d)] if loaded is not None else []
            self.read[path] = [s for s in map(_source, found) if s is not None]
        before = [s for s in self.read[path] if s.resource.document.line <= position.line]
        return before[-1] if before else None


def _any_context(plan: Plan, rule: Rule) -> RuleContext:
    return next(g.contexts[rule.code] for g in plan.governing.all() if rule.code in g.contexts)


def _order(finding: Finding) -> tuple[str, int, int, str]:
    """Path, line, column and code; ties keep the order the files and rules were checked in, which is
    the same for any number of jobs. (A short key: a big report sorts without doubling its memory.)"""
    return finding.path, finding.line, finding.column, finding.code
