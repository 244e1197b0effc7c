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
from typing import TYPE_CHECKING, Any

from meshlint.engine.cachefiles import MAX_ENTRIES, file_header, quiet, read_bucket, read_kept, seal, write_whole
from meshlint.engine.cachekeys import content_digest, hasher, stable
from meshlint.engine.results import FileResult
from meshlint.source import inputs

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from meshlint.engine.plan import Plan
    from meshlint.mesh.options import MeshOptions

# json, tempfile, platformdirs and hashlib are imported where they are used: a run without findings to
# keep or results to read does not pay for them (tempfile alone brings shutil, bz2 and lzma).

# A run over less than this checks its files faster than it could read and write their cached results:
# such runs neither read nor write the cache.
CACHE_FROM = 256 * 1024


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
        self.entries: dict[bytes, bytes] = read_bucket(self.path, run_key)  # file key -> "DIGEST JSON"
        self.fresh: dict[str, FileResult] = {}
        self.spoilt: set[bytes] = set()  # lines that did not verify: dropped when the bucket is written
        self.hits = 0
        self.configs: dict[int, str] = {}  # each governing config's `stable` text, made once a run
        from meshlint.engine.keptresult import decode  # imported by runs that keep results, and once

        self.decode = decode

    @staticmethod
    def file_key(path: str, content: str, flags: str) -> str:
        """A file's key: its bytes' digest (`content_digest`), its path and how the run treats it."""
        return content_digest(f"{content}\0{path}\0{flags}".encode("utf-8", "surrogatepass"))

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
        return seal(b"%s\0%s" % (self.run_key.encode(), name), body)

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
        write_whole(self.path, b"".join([file_header(self.run_key), *(b"%s %s\n" % line for line in lines)]))

    def _touch(self) -> None:
        with quiet():
            os.utime(self.path)


def open_cache(directory: str, plan: Plan, code: str, facts: str) -> ResultCache:
    """The cache bucket of this run: everything besides the file that a file's result depends on.
    `code` is `code_fingerprint` of the run's rules."""
    digest = hasher()
    digest.update(code.encode("utf-8", "surrogatepass"))
    for governed in plan.governing.all():
        digest.update(stable(governed.config).encode("utf-8", "surrogatepass"))
    plan_facts = (plan.stdin_name, plan.unseen, plan.context_named, plan.root, plan.report_unused, sorted(plan.known), os.getcwd(), facts)
    digest.update(stable(plan_facts).encode("utf-8", "surrogatepass"))
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
        data = read_kept(self.path)
        header = file_header(self.key, self.kind)
        if data is None or not data.startswith(header):
            return None
        digest, _, body = data[len(header) :].partition(b" ")
        if digest != seal(self.key.encode(), body):
            return None
        from meshlint.engine.keptcontext import decode  # its shapes bring the readers of every kind of context

        return decode(body, options)

    def save(self, kept: dict[str, Any]) -> None:
        from meshlint.engine.keptcontext import encode

        body = encode(kept)
        if body is not None:  # a context holding what JSON cannot give back exactly is read again next time
            write_whole(self.path, b"%s%s %s" % (file_header(self.key, self.kind), seal(self.key.encode(), body), body))
