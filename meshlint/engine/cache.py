"""Results kept between runs: an unchanged file checked against an unchanged mesh context, config,
rule set and meshlint costs a read and a hash.

A run's key covers everything a file's result depends on besides the file itself: meshlint's own code
(its version, and the size and time of each of its modules, so an edited checkout never reads stale
results), the rules (plugins too), every config that governs a file, the facts of the mesh context
(each context document the first pass read, with the place it counts at), the repository root and
the working directory. A file's key adds its path, its bytes' hash and how the run treats it (widened,
named, a Kustomize patch, the Helm chart it belongs to). Results live in one file per run key, written
whole and swapped in, so a crash or a concurrent run leaves the previous one readable; the newest few
run keys are kept.

A run over folders also keeps its first pass, the mesh context (`FirstPass`), keyed by every input's
and mesh.context file's bytes and the configs: an unchanged tree then costs a read and a hash of each
file, and no YAML at all. A run that names files (pre-commit) keeps what its big mesh.context files
give (`context_files_key`), whatever its size. A run that could fork looks its results up first, and
starts workers only for the files the cache lacks, when they are worth it (`hits_first`).

The default folder is the user's cache directory (`$XDG_CACHE_HOME/meshlint`, else
`~/.cache/meshlint`); `--cache-dir` names another, `--no-cache` turns it off.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from meshlint import __version__
from meshlint.engine.results import FileResult
from meshlint.source import inputs

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from meshlint.engine.governance import Governing
    from meshlint.engine.run import Plan

# pickle, tempfile and hashlib are imported where they are used: a run without findings to keep or
# results to read does not pay for them (tempfile alone brings shutil, bz2 and lzma).

# A run over less than this checks its files faster than it could read and write their cached results
# (pickle alone costs a small run more than it checks): such runs neither read nor write the cache.
CACHE_FROM = 256 * 1024
KEEP_RUN_KEYS = 8  # buckets kept: a few configurations or context states of one machine's trees
MAX_ENTRIES = 200_000  # files per bucket, beyond which the oldest entries are dropped
_FORMAT = b"meshlint-cache-2\n"


def worth_caching(files: list[str], stdin: bytes | None) -> bool:
    total = len(stdin) if stdin is not None else 0
    for path in files:
        if total >= CACHE_FROM:
            return True
        try:
            total += os.path.getsize(path) if path != inputs.STDIN else 0
        except OSError:
            continue
    return total >= CACHE_FROM


def default_directory() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "meshlint")


def hasher() -> Any:
    """A strong hash without OpenSSL's start-up where CPython has its own BLAKE2 (it always builds it)."""
    try:
        from _blake2 import blake2b

        return blake2b(digest_size=32)
    except ImportError:  # a Python built without it
        import hashlib

        return hashlib.sha256()


def content_digest(data: bytes) -> str:
    digest = hasher()
    digest.update(data)
    return str(digest.hexdigest())


def code_fingerprint(rules: list[Any]) -> str:
    """meshlint's code and the rules' modules, as installed: version, module sizes and times."""
    digest = hasher()
    digest.update(f"{__version__}\0{sys.version}\0".encode())
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    modules: list[str] = []
    _modules_below(package, modules)
    digest.update("".join(sorted(modules)).encode())
    for rule in rules:
        digest.update(f"{rule.code}\0{rule.name}\0{rule.severity}\0{rule.scopes}\0{rule.check.__module__}.{rule.check.__qualname__}\0".encode())
        module = sys.modules.get(rule.check.__module__)
        source = getattr(module, "__file__", None)
        if source and not source.startswith(package):
            _stat_into(digest, source)  # a plugin's module
    try:
        from meshlint.source import libyaml

        digest.update(libyaml.readers())
    except Exception:  # the reader in use is part of the key; failing to tell is "ruamel"
        digest.update(b"ruamel")
    return str(digest.hexdigest())


def _modules_below(folder: str, into: list[str]) -> None:
    """Each module, compiled extension and .json file in `folder` and below, as its path, size and
    time (the C reader is code too: a rebuilt one is another key). One scandir a
    folder: a walk that stats each file by name cost a pre-commit run with a kept context 1.2 ms of
    its 1.7 ms key (143 files)."""
    try:
        with os.scandir(folder) as entries:
            found = list(entries)
    except OSError:
        return
    for entry in found:
        if entry.name.endswith((".py", ".json", ".so", ".pyd")):
            try:
                info = entry.stat()
            except OSError:
                continue
            into.append(_stamp(entry.path, info))
        elif entry.name != "__pycache__" and entry.is_dir(follow_symlinks=False):
            _modules_below(entry.path, into)


def _stat_into(digest: Any, path: str) -> None:
    try:
        info = os.stat(path)
    except OSError:
        return
    digest.update(_stamp(path, info).encode())


def _stamp(path: str, info: os.stat_result) -> str:
    """A module as the code key knows it: where it is, its size and its time."""
    return f"{path}\0{info.st_size}\0{info.st_mtime_ns}\0"


def stable(value: Any) -> str:
    """A text that is the same for equal config values in any process (dict order aside)."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{stable(k)}:{stable(v)}" for k, v in sorted(value.items(), key=lambda kv: repr(kv[0]))) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(stable(v) for v in value) + "]"
    if isinstance(value, (set, frozenset)):
        return "{" + ",".join(sorted(stable(v) for v in value)) + "}"
    if getattr(type(value), "__repr__", None) is object.__repr__ and hasattr(value, "__dict__"):
        # A record (Config and what it holds): its repr would carry its address, different in every process.
        return type(value).__name__ + stable(vars(value))
    return repr(value)


class ResultCache:
    """The results of one run key: read once before the files are checked, written once after."""

    def __init__(self, directory: str, run_key: str) -> None:
        self.directory = directory
        self.path = os.path.join(directory, f"results-{run_key[:40]}.pickle")
        self.entries: dict[str, FileResult] = {}
        self.fresh: dict[str, FileResult] = {}
        self.hits = 0
        self.configs: dict[int, str] = {}  # each governing config's `stable` text, made once a run
        loaded = _read(self.path)
        if isinstance(loaded, dict):
            self.entries = loaded

    @staticmethod
    def file_key(path: str, content: str, flags: str) -> str:
        """A file's key: its bytes' digest (`content_digest`), its path and how the run treats it."""
        return content_digest(f"{content}\0{path}\0{flags}".encode())

    def get(self, key: str) -> FileResult | None:
        found = self.entries.get(key)
        if found is not None:
            self.hits += 1
        return found

    def put(self, key: str, result: FileResult) -> None:
        self.fresh[key] = result

    def save(self) -> None:
        """Write the bucket whole (entries read and kept, then this run's), and prune old buckets.
        A cache that cannot be written costs the next run its speed, never its result."""
        if not self.fresh and self.hits == len(self.entries):
            self._touch()
            return
        merged = {**self.entries, **self.fresh}
        if len(merged) > MAX_ENTRIES:
            merged = dict(list(merged.items())[-MAX_ENTRIES:])
        _write(self.path, merged)

    def _touch(self) -> None:
        with _quiet():
            os.utime(self.path)


def _read(path: str) -> Any:
    """What `_write` wrote at `path`; None for a missing, foreign or broken file (an empty cache)."""
    try:  # CPython's unpickler itself: pickle.py's Python classes cost a pre-commit run 1-1.5 ms to import
        from _pickle import UnpicklingError, load
    except ImportError:
        from pickle import UnpicklingError, load

    try:
        with open(path, "rb") as handle:
            if handle.read(len(_FORMAT)) == _FORMAT:
                return load(handle)
    except (OSError, EOFError, UnpicklingError, AttributeError, ImportError, TypeError, ValueError, IndexError):
        pass
    return None


def _write(path: str, value: Any) -> None:
    """Write `value` whole beside `path` and swap it in, then prune that kind's oldest files. A value
    that cannot be pickled or a folder that cannot be written costs the next run its speed only."""
    import pickle
    import tempfile

    directory, name = os.path.split(path)
    kind = name.split("-", 1)[0]
    try:
        os.makedirs(directory, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{kind}-", dir=directory)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(_FORMAT)
                pickle.dump(value, out, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(temporary, path)
        except BaseException:
            with _quiet():
                os.unlink(temporary)
            raise
    except (OSError, pickle.PicklingError, TypeError, AttributeError):
        return
    try:
        kept = [os.path.join(directory, n) for n in os.listdir(directory) if n.startswith(f"{kind}-") and n.endswith(".pickle")]
        kept.sort(key=os.path.getmtime, reverse=True)
    except OSError:
        return
    for old in kept[KEEP_RUN_KEYS:]:
        with _quiet():
            os.unlink(old)


class _quiet:
    """Ignore an OSError (a file another run removed first)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, value: Any, traceback: Any) -> bool:
        return kind is not None and issubclass(kind, OSError)


class Facts:
    """The first pass's facts as a hash, or nothing at all in a run without a cache. `known` is a
    digest taken back (a kept first pass, or the mesh.context files' part of one): it is the digest
    until more is read, and then the seed of the rest."""

    def __init__(self, kept: bool, known: str = "") -> None:
        self.digest: Any = None
        self.known = known  # the digest a kept first pass had (FirstPass): this run's, unless more is read
        if kept:
            self.digest = hasher()

    @property
    def wanted(self) -> bool:
        """Whether facts are hashed at all: a run without a cache need not even make them."""
        return self.digest is not None

    def update(self, data: bytes) -> None:
        if self.digest is not None:
            if self.known:
                self.digest.update(self.known.encode())
                self.known = ""
            self.digest.update(data)

    def hexdigest(self) -> str:
        return self.known or (str(self.digest.hexdigest()) if self.digest is not None else "")


def open_cache(directory: str, plan: Plan, code: str, facts: str) -> ResultCache:
    """The cache bucket of this run: everything besides the file that a file's result depends on.
    `code` is `code_fingerprint` of the run's rules."""
    digest = hasher()
    digest.update(code.encode())
    for governed in plan.governing.all():
        digest.update(stable(governed.config).encode())
    plan_facts = (plan.stdin_name, plan.unseen, plan.context_named, plan.root, plan.report_unused, sorted(plan.known), os.getcwd(), facts)
    digest.update(stable(plan_facts).encode())
    return ResultCache(directory, str(digest.hexdigest()))


def check_cached(plan: Plan, cache: ResultCache, checker: Callable[[Plan, str, bytes | None], FileResult], path: str) -> FileResult:
    """A file's result from the cache when its bytes and the run's key are unchanged, else checked.
    A result is kept under the digest of the very bytes it was checked from: a file that changed
    since the first pass hashed it is keyed anew."""
    key, data, found = _look_up(plan, cache, path)
    if found is not None:
        return found
    if key is None:
        return checker(plan, path, None)  # unreadable: the check reports it
    if data is None:  # the digest was the first pass's: read the bytes this check sees
        try:
            data = inputs.read(path)
        except OSError:
            return checker(plan, path, None)
        key = _file_key(plan, cache, path, content_digest(data))
    result = checker(plan, path, data)
    result.cache_key = key
    return result


def hits_first(plan: Plan, cache: ResultCache, paths: list[str], check: Callable[[str], FileResult], jobs: int) -> Iterator[FileResult]:
    """Every path's result in path order, for a run that could fork: the cache's results are looked
    up here first, and workers are forked only when the files it lacks are worth it, so a warm run
    (or one with a few changed files) never starts a pool. The look-up stops as soon as the missing
    files alone pay for the workers: they take those and every file after (`check` looks up again)."""
    from meshlint.engine import parallel

    found: dict[int, FileResult] = {}
    missing: list[int] = []
    size = 0
    stop = len(paths)
    for index, path in enumerate(paths):
        _, data, hit = _look_up(plan, cache, path)
        if hit is not None:
            found[index] = hit
            continue
        missing.append(index)
        size += len(data) if data is not None else parallel.size_of(path)
        if parallel.pays(len(missing), size):
            stop = index + 1
            break
    rest = [paths[i] for i in missing] + paths[stop:]
    if stop < len(paths) or parallel.pays(len(missing), size):
        checked = parallel.check_files(check, rest, jobs)
    else:
        checked = map(check, rest)
    for index in range(len(paths)):
        yield found[index] if index in found else next(checked)


def _look_up(plan: Plan, cache: ResultCache, path: str) -> tuple[str | None, bytes | None, FileResult | None]:
    """The file's key, its bytes (None when its digest was known: the check reads it) and its cached
    result (marked as such); no key for an unreadable file."""
    data = None
    content = plan.digests.get(path)  # read and hashed for the first pass's key (FirstPass)
    if content is None:
        try:
            data = plan.stdin if path == inputs.STDIN and plan.stdin is not None else inputs.read(path)
        except OSError:
            return None, None, None
        content = content_digest(data)
    key = _file_key(plan, cache, path, content)
    found = cache.get(key)
    if found is not None:
        found.cached = True
    return key, data, found


def _file_key(plan: Plan, cache: ResultCache, path: str, content: str) -> str:
    """The key of a file of these bytes (`content` is their digest) in this run: with how the run
    treats it, its config, and the Helm chart it is part of, which a Chart.yaml outside the inputs
    decides."""
    fragment = bool(plan.fragments) and path != inputs.STDIN and inputs.real(path) in plan.fragments
    governed = plan.of(path)
    config = cache.configs.get(id(governed.config))
    if config is None:
        config = cache.configs[id(governed.config)] = stable(governed.config)
    chart = inputs.helm_chart_of(path)
    return cache.file_key(path, content, f"{path in plan.widened}\0{path in plan.alone}\0{fragment}\0{chart}\0{config}")


class FirstPass:
    """The first pass of a run over folders, kept between runs: when every input, mesh.context file
    and config is as it was, the mesh context comes back from here instead of from composing the
    tree's Services, Namespaces and mesh config again (most of a warm run's time otherwise).

    A run that names files or reads stdin is not kept: it reads beyond its inputs as its mesh context
    decides (§W2.6-7), so what its first pass depends on is known only once it has run."""

    def __init__(self, directory: str, key: str, kind: str = "context") -> None:
        self.path = os.path.join(directory, f"{kind}-{key[:40]}.pickle")

    def load(self) -> dict[str, Any] | None:
        kept = _read(self.path)
        return kept if isinstance(kept, dict) else None

    def save(self, kept: dict[str, Any]) -> None:
        _write(self.path, kept)


def first_pass_key(code: str, governing: Governing, mesh_config: tuple[str, ...], files: list[str], fragments: frozenset[str], digests: dict[str, str]) -> str:
    """Everything the first pass of a run over folders depends on: meshlint's code (`code`), every
    config, the mesh.context files' bytes and every input's. The inputs' digests go into `digests`,
    so that the second pass keys its files without reading them again."""
    digest = hasher()
    digest.update(code.encode())
    for governed in governing.all():
        digest.update(stable(governed.config).encode())
    digest.update(stable((mesh_config, sorted(fragments), os.getcwd())).encode())
    context_files = [*mesh_config, *(path for governed in governing.all() for path in governed.config.mesh_context)]
    for inputs_now, paths in ((False, context_files), (True, files)):
        for path in paths:
            try:
                content = content_digest(inputs.read(path))
            except OSError:
                content = "unreadable"  # reported (or refused) by the run itself, never kept as read
            else:
                if inputs_now:
                    digests[path] = content
            chart = inputs.helm_chart_of(path) if inputs_now else None  # a Chart.yaml beside its folder makes it a template
            digest.update(f"{inputs_now}\0{path}\0{content}\0{chart}\0".encode())
    return str(digest.hexdigest())


# mesh.context files smaller than this are read faster than their kept reading is (pickle's import).
CONTEXT_FROM = 16 * 1024


def context_files_key(code: Callable[[], str], governing: Governing, mesh_config: tuple[str, ...], taken: set[str]) -> str | None:
    """The key of what a run's mesh.context files give before any input is read (kept by a
    `FirstPass` of kind "contextfiles"); None when they are too small to be worth keeping, or one
    cannot be read (the run says why). `code` gives `code_fingerprint`, asked only when needed."""
    parts = []
    size = 0
    for path in [*mesh_config, *(path for governed in governing.all() for path in governed.config.mesh_context)]:
        try:
            data = inputs.read(path)
        except OSError:
            return None
        size += len(data)
        parts.append(f"{path}\0{inputs.real(path) in taken}\0{content_digest(data)}\0")
    if size < CONTEXT_FROM:
        return None
    digest = hasher()
    digest.update(code().encode())
    for governed in governing.all():
        digest.update(stable(governed.config).encode())
    digest.update(stable((mesh_config, os.getcwd())).encode())
    digest.update("".join(parts).encode())
    return str(digest.hexdigest())
