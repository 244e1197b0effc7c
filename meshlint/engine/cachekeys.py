"""What kept results depend on, as keys: meshlint's own code (its version and each module's size and
time), the rules, the configs, the facts of the mesh context, each input's bytes; a file's key adds how
the run treats it. Hashes are BLAKE2 where the machine's hashlib has it."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from meshlint import __version__
from meshlint.source import inputs

if TYPE_CHECKING:
    from collections.abc import Callable

    from meshlint.engine.governance import Governing

# mesh.context files smaller than this are read faster than their kept reading is.
CONTEXT_FROM = 16 * 1024


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
    digest.update(f"{__version__}\0{sys.version}\0".encode("utf-8", "surrogatepass"))
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    modules: list[str] = []
    modules_below(package, modules)
    digest.update("".join(sorted(modules)).encode("utf-8", "surrogatepass"))
    for rule in rules:
        digest.update(f"{rule.code}\0{rule.name}\0{rule.severity}\0{rule.scopes}\0{rule.check.__module__}.{rule.check.__qualname__}\0".encode("utf-8", "surrogatepass"))
        module = sys.modules.get(rule.check.__module__)
        source = getattr(module, "__file__", None)
        if source and not source.startswith(package):
            _stat_into(digest, source)  # a plugin's module
    try:
        from meshlint.source import readers

        digest.update(readers.names())
    except Exception:  # the reader in use is part of the key; failing to tell is "ruamel"
        digest.update(b"ruamel")
    return str(digest.hexdigest())


def modules_below(folder: str, into: list[str]) -> None:
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
            modules_below(entry.path, into)


def _stat_into(digest: Any, path: str) -> None:
    try:
        info = os.stat(path)
    except OSError:
        return
    digest.update(_stamp(path, info).encode("utf-8", "surrogatepass"))


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


def first_pass_key(code: str, governing: Governing, mesh_config: tuple[str, ...], files: list[str], fragments: frozenset[str], digests: dict[str, str]) -> str:
    """Everything the first pass of a run over folders depends on: meshlint's code (`code`), every
    config, the mesh.context files' bytes and every input's. The inputs' digests go into `digests`,
    so that the second pass keys its files without reading them again."""
    digest = hasher()
    digest.update(code.encode("utf-8", "surrogatepass"))
    for governed in governing.all():
        digest.update(stable(governed.config).encode("utf-8", "surrogatepass"))
    digest.update(stable((mesh_config, sorted(fragments), os.getcwd())).encode("utf-8", "surrogatepass"))
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
            digest.update(f"{inputs_now}\0{path}\0{content}\0{chart}\0".encode("utf-8", "surrogatepass"))
    return str(digest.hexdigest())


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
    digest.update(code().encode("utf-8", "surrogatepass"))
    for governed in governing.all():
        digest.update(stable(governed.config).encode("utf-8", "surrogatepass"))
    digest.update(stable((mesh_config, os.getcwd())).encode("utf-8", "surrogatepass"))
    digest.update("".join(parts).encode("utf-8", "surrogatepass"))
    return str(digest.hexdigest())
