"""The first pass of a run: what the mesh context needs of the context files and the inputs (the
documents that could be Namespaces, Services, PeerAuthentications, mesh config or signs of Istio), read
file by file or by worker processes in ranges, and kept between runs (engine/cache.py `FirstPass`)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from meshlint.config import Config, ConfigError
from meshlint.engine import parallel, reach
from meshlint.engine.filecheck import internal_error
from meshlint.engine.governance import Governing
from meshlint.engine.plan import Progress
from meshlint.mesh.context import MeshContext
from meshlint.mesh.envsources import ENV_SOURCE_KINDS, might_hold_env_source
from meshlint.mesh.istio import is_helm_profile
from meshlint.mesh.scope import Place
from meshlint.mesh.setting import Setting
from meshlint.mesh.sources import is_istiod, source_of
from meshlint.model.kinds import DECLARATION_KINDS, HELM_VALUES, MESH_CONTEXT_KINDS, WORKLOAD_KINDS
from meshlint.model.prefilter import kind_lines, might_hold_context, might_opt_out, might_show_istio
from meshlint.model.resource import Resource, resources_of
from meshlint.source import inputs
from meshlint.source.loader import LoadedFile, decode, each_chunk, load_chunks, load_file

if TYPE_CHECKING:
    from meshlint.engine.cache import FirstPass

# What one file gives the first pass: the facts it gave, whether it holds a mesh-wide source, the digest
# of its bytes, and a note when an unexpected error cut its reading short.
_Read = tuple[list[bytes], bool, str | None, str | None]


class ContextPass:
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
        self.mesh = MeshContext(options=self.top.options, istio_in_use=configured_istio(governing, tuple(mesh_config)))
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
        before = whole(context_files.load(self.top.options)) if context_files is not None else None
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
        self.facts.update(f"context file\0{display}\0{folder}\0".encode("utf-8", "surrogatepass"))
        self.facts.update(data)
        loaded = load_file(path, display, data, input_file=False)  # messages name it as the user would
        resources = [r for d in loaded.documents for r in resources_of(d)]
        place = Place.of(display, folder)  # one for the file: it costs an abspath
        for resource in resources:
            self.mesh.add(resource, place)
        if loaded.problems or any(s is not None and s.problems for s in map(source_of, resources)):
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
        read = _digest(data) if self.digests is not None else None
        name = self.top.config.stdin_filename or inputs.STDIN_NAME if path == inputs.STDIN else path
        folder = self.as_input.get(inputs.real(path)) if path != inputs.STDIN else None
        place = Place.of(name, folder) if folder is not None else None
        text = decode(data)[0]
        lines = None
        if path == inputs.STDIN:  # a big stream's lines are made once, for both passes
            from meshlint.source.lines import TextLines

            lines = self.stdin_lines = TextLines(text)
        try:
            for chunk, resource, context in context_resources(mesh, name, text, lines):
                if resource.kind == HELM_VALUES and folder is None and is_helm_profile(path):
                    continue  # a profile an install may pick, unless mesh.context names it
                if not context:
                    mesh.note_sign(resource)
                    continue
                if self.facts.wanted:
                    facts.append(f"\0{name}\0{folder}\0{resource.document.line}\0".encode("utf-8", "surrogatepass"))
                    facts.append(chunk.encode("utf-8", "surrogatepass"))
                mesh.add(resource, place)
                source = source or reach.is_mesh_wide(resource)
        except Exception as err:  # a bug of meshlint's that this input meets: it costs this file's context only
            return facts, source, read, f"{name}: the rest of it is left out of the mesh context: {internal_error(err)}"
        return facts, source, read, None

    def facts_digest(self) -> str:
        """What the mesh context was made of, ending with the sign of Istio it settled on."""
        if not self._signed:
            self.facts.update(f"\0signs\0{self.mesh.sign_digest()}\0".encode("utf-8", "surrogatepass"))
            self._signed = True
        return self.facts.hexdigest()


KEPT = frozenset(("mesh", "broken", "as_input", "placed", "configs_done", "read_files", "context_reals", "facts"))


def whole(kept: dict[str, Any] | None) -> dict[str, Any] | None:
    """A kept first pass with every part `ContextPass.kept` writes; anything else (another version's) is none."""
    return kept if kept is not None and kept.keys() >= KEPT else None


def context_resources(mesh: MeshContext, path: str, text: str, lines: Sequence[str] | None = None) -> Iterator[tuple[str, Resource, bool]]:
    """The parts of one input that could hold mesh context, or the first sign of Istio, each with
    the text of the part it is in, and False when it is read only as a sign."""
    for line_offset, chunk in each_chunk(text):
        kinds = kind_lines(chunk)
        opting = might_opt_out(chunk)
        context = might_hold_context(chunk, kinds) or might_hold_env_source(chunk, kinds) or opting
        # Once a sign is known, later documents cannot come first: the place is asked before the text is scanned.
        # A `kind: List` may hold context and workloads alike: its items are looked at for a sign too.
        sign = mesh.wants_istio_sign(path) and might_show_istio(chunk)
        if not (context or sign):
            continue
        lines = text.splitlines() if lines is None else lines
        for document in load_chunks(path, [(line_offset, chunk)], lines):
            for resource in resources_of(document):
                kind = resource.kind
                if context and (
                    kind in MESH_CONTEXT_KINDS or kind in DECLARATION_KINDS or kind in ENV_SOURCE_KINDS or is_istiod(resource)
                    or (opting and kind in WORKLOAD_KINDS)
                ):
                    yield chunk, resource, True
                elif sign:
                    yield chunk, resource, False


def configured_istio(governing: Governing, mesh_config: tuple[str, ...]) -> Setting[str] | None:
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


def _digest(data: bytes) -> str:
    from meshlint.engine.cachekeys import content_digest

    return content_digest(data)


class Facts:
    """The first pass's facts as a hash, or nothing at all in a run without a cache. `known` is a
    digest taken back (a kept first pass, or the mesh.context files' part of one): it is the digest
    until more is read, and then the seed of the rest."""

    def __init__(self, kept: bool, known: str = "") -> None:
        self.digest: Any = None
        self.known = known  # the digest a kept first pass had (FirstPass): this run's, unless more is read
        if kept:
            from meshlint.engine.cachekeys import hasher  # a run without a cache loads no cache code

            self.digest = hasher()

    @property
    def wanted(self) -> bool:
        """Whether facts are hashed at all: a run without a cache need not even make them."""
        return self.digest is not None

    def update(self, data: bytes) -> None:
        if self.digest is not None:
            if self.known:
                self.digest.update(self.known.encode("utf-8", "surrogatepass"))
                self.known = ""
            self.digest.update(data)

    def hexdigest(self) -> str:
        return self.known or (str(self.digest.hexdigest()) if self.digest is not None else "")
