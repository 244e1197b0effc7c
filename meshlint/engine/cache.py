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

What is kept is plain JSON (engine/keptresult.py, engine/keptcontext.py), each file headed by its
whole key and vouched for by a digest of key and body: reading it back builds nothing but meshlint's
own values, field by field, and a file or line whose digest or shape is off (a flipped bit, a cut
write, a copy from another key, anything planted) is a miss. The folder is the user's cache
directory (platformdirs) unless `--cache-dir` names another; `--no-cache` turns it off. It is made
0700, and one that another user owns or may write is not used (`refusal`).
"""

from __future__ import annotations

import os
import stat
import sys
from typing import TYPE_CHECKING, Any

from meshlint import __version__
from meshlint.engine.results import FileResult
from meshlint.source import inputs

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from meshlint.engine.governance import Governing
    from meshlint.engine.plan import Plan
    from meshlint.mesh.options import MeshOptions

# json, tempfile, platformdirs and hashlib are imported where they are used: a run without findings to
# keep or results to read does not pay for them (tempfile alone brings shutil, bz2 and lzma).

# A run over less than this checks its files faster than it could read and write their cached results:
# such runs neither read nor write the cache.
CACHE_FROM = 256 * 1024
KEEP_RUN_KEYS = 8  # buckets kept: a few configurations or context states of one machine's trees
MAX_ENTRIES = 200_000  # files per bucket, beyond which the oldest entries are dropped
FORMAT = 3  # of the files written: a file of another format is a miss
_KINDS = ("results-", "context-", "contextfiles-")  # the files a cache folder holds (and their temporaries, dotted)


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
    """The user's cache directory for meshlint, as the platform has it (on Linux `$XDG_CACHE_HOME/meshlint`,
    else `~/.cache/meshlint`). platformdirs is imported only by a run that uses the cache."""
    from platformdirs import user_cache_dir

    return user_cache_dir("meshlint", appauthor=False)


def refusal(directory: str) -> str | None:
    """Why `directory` must not hold this user's cache, in one line, or None. Whoever can write the
    folder decides what the next run reads back, so one that another user owns or may write is not
    used. A folder not there yet is made 0700 when first written."""
    try:
        info = os.stat(directory)
    except OSError:
        return None  # not there yet, or no folder at all: writing fails, which costs only speed
    if not stat.S_ISDIR(info.st_mode):
        return None
    if info.st_uid != os.geteuid():
        return f"{directory}: cache folder belongs to another user (uid {info.st_uid}); running without the cache"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"{directory}: cache folder is writable by other users (mode {stat.S_IMODE(info.st_mode):04o}); running without the cache"
    try:
        with os.scandir(directory) as found:
            theirs = sorted(e.name for e in found if e.name.lstrip(".").startswith(_KINDS) and e.stat(follow_symlinks=False).st_uid != info.st_uid)
    except OSError:
        return None
    if theirs:
        return f"{directory}: cache folder holds {theirs[0]}, which belongs to another user; running without the cache"
    return None


class Folder:
    """A run's cache folder, looked up and vetted (`refusal`) once, when first needed: a run that keeps
    nothing never imports platformdirs for the default. `where` is the folder, or what names it."""

    def __init__(self, where: str | Callable[[], str] | None, notes: list[str]) -> None:
        self.where = where
        self.notes = notes
        self.path: str | None = None
        self.looked = False

    @property
    def wanted(self) -> bool:
        return self.where is not None

    def get(self) -> str | None:
        """The folder, or None when the run has none or may not use it (said once among the notes)."""
        if not self.looked and self.where is not None:
            self.looked = True
            path = self.where() if callable(self.where) else self.where
            refused = refusal(path)
            if refused is None:
                self.path = path
            else:
                self.notes.append(refused)
        return self.path


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
    folder: a walk that stats each file by name was most of the key's cost, which a pre-commit run
    with a kept context pays each time."""
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
    """The results of one run key: read once before the files are checked, written once after.

    The bucket is text: a header naming its run key, then one line a file, `KEY DIGEST JSON`, where
    the digest covers the run key, the file's key and the JSON (`keptresult`). A line is decoded only
    when its file is looked up, and any line whose digest or shape is off (a flipped bit, a cut file,
    a line copied from another bucket) is a miss: that file is checked again and its line replaced."""

    def __init__(self, directory: str, run_key: str) -> None:
        self.directory = directory
        self.run_key = run_key
        self.path = os.path.join(directory, f"results-{run_key[:40]}.lines")
        self.entries: dict[bytes, bytes] = _read_bucket(self.path, run_key)  # file key -> "DIGEST JSON"
        self.fresh: dict[str, FileResult] = {}
        self.spoilt: set[bytes] = set()  # lines that did not verify: dropped when the bucket is written
        self.hits = 0
        self.configs: dict[int, str] = {}  # each governing config's `stable` text, made once a run
        from meshlint.engine.keptresult import decode  # imported by runs that keep results, and once

        self.decode = decode

    @staticmethod
    def file_key(path: str, content: str, flags: str) -> str:
        """A file's key: its bytes' digest (`content_digest`), its path and how the run treats it."""
        return content_digest(f"{content}\0{path}\0{flags}".encode())

    def get(self, key: str) -> FileResult | None:
        name = key.encode()
        line = self.entries.get(name)
        if line is None:
            return None
        digest, _, body = line.partition(b" ")
        found = self.decode(body) if digest == self._digest(name, body) else None
        if found is None:
            self.spoilt.add(name)
            return None
        self.hits += 1
        return found

    def put(self, key: str, result: FileResult) -> None:
        self.fresh[key] = result

    def _digest(self, name: bytes, body: bytes) -> bytes:
        return _seal(b"%s\0%s" % (self.run_key.encode(), name), body)

    def save(self) -> None:
        """Write the bucket whole (entries read and kept, then this run's), and prune old buckets.
        A cache that cannot be written costs the next run its speed, never its result."""
        if not self.fresh and not self.spoilt and self.hits == len(self.entries):
            self._touch()
            return
        from meshlint.engine.keptresult import encode

        merged = {name: line for name, line in self.entries.items() if name not in self.spoilt}
        for key, result in self.fresh.items():
            body = encode(result)
            if body is not None:  # a value JSON cannot give back exactly: checked again next time
                name = key.encode()
                merged[name] = self._digest(name, body) + b" " + body
        lines = list(merged.items())[-MAX_ENTRIES:]
        _write(self.path, b"".join([_header(self.run_key), *(b"%s %s\n" % line for line in lines)]))

    def _touch(self) -> None:
        with _quiet():
            os.utime(self.path)


def _header(key: str, kind: str = "results") -> bytes:
    """The first line of a cache file: its format and the whole key it was written under."""
    return b"meshlint-%s-%d %s\n" % (kind.encode(), FORMAT, key.encode())


def _seal(key: bytes, body: bytes) -> bytes:
    """The digest that vouches for `body` as written under `key` (a flipped bit or a copy from another
    key does not match it)."""
    digest = hasher()
    digest.update(key + b"\0")
    digest.update(body)
    return str(digest.hexdigest()).encode()


def _read_bucket(path: str, run_key: str) -> dict[bytes, bytes]:
    """A bucket's lines by file key, unverified (`ResultCache.get` checks each when asked); nothing for
    a missing bucket or one of another run key or format."""
    data = _read(path)
    header = _header(run_key)
    if data is None or not data.startswith(header):
        return {}
    entries = {}
    for line in data[len(header) :].split(b"\n"):
        name, _, rest = line.partition(b" ")
        if rest:
            entries[name] = rest
    return entries


def _read(path: str) -> bytes | None:
    """The bytes of a cache file this user owns; None for a missing, unreadable or foreign one."""
    try:
        with open(path, "rb") as handle:
            if os.fstat(handle.fileno()).st_uid != os.geteuid():
                return None  # another user's file in this user's folder: never taken
            return handle.read()
    except OSError:
        return None


def _write(path: str, data: bytes) -> None:
    """Write `data` whole beside `path` and swap it in, then prune that kind's oldest files. A folder
    that cannot be written costs the next run its speed only."""
    import tempfile

    directory, name = os.path.split(path)
    kind, suffix = name.split("-", 1)[0], os.path.splitext(name)[1]
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{kind}-", dir=directory)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(temporary, path)
        except BaseException:
            with _quiet():
                os.unlink(temporary)
            raise
    except OSError:
        return
    try:
        kept = [os.path.join(directory, n) for n in os.listdir(directory) if n.startswith(f"{kind}-") and n.endswith(suffix)]
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
        self.key = key
        self.kind = kind
        self.path = os.path.join(directory, f"{kind}-{key[:40]}.json")

    def load(self, options: MeshOptions) -> dict[str, Any] | None:
        """The kept first pass with the run's `options`; None when there is none, or its digest or
        shape is off (engine/keptcontext.py)."""
        data = _read(self.path)
        header = _header(self.key, self.kind)
        if data is None or not data.startswith(header):
            return None
        digest, _, body = data[len(header) :].partition(b" ")
        if digest != _seal(self.key.encode(), body):
            return None
        from meshlint.engine.keptcontext import decode  # its shapes bring the readers of every kind of context

        return decode(body, options)

    def save(self, kept: dict[str, Any]) -> None:
        from meshlint.engine.keptcontext import encode

        body = encode(kept)
        if body is not None:  # a context holding what JSON cannot give back exactly is read again next time
            _write(self.path, b"%s%s %s" % (_header(self.key, self.kind), _seal(self.key.encode(), body), body))


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


# mesh.context files smaller than this are read faster than their kept reading is.
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
