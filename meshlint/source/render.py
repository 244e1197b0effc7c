"""Building root kustomizations with the real tool (wave-3 spec V1, "Rendering").

What an overlay deploys is only known by building it: a patch adds the hold annotation, a namespace
transformer moves the workload, a prefix renames it. Each root is built with `kustomize build`, else
`kubectl kustomize`, whichever is found first, with origin annotations on, so each rendered object names
the file it came from.

A build never reaches the network and never runs plugins or exec functions: a root whose kustomizations
list a remote base is not built at all, no flag that enables plugins, exec functions or Helm is ever
passed, and the child gets proxy settings that lead nowhere. A build that fails, runs too long or writes
too much is a root not rendered, with the renderer's first error line; its files are checked as written.
"""

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import IO, NamedTuple

from meshlint.source.kustomize import KUSTOMIZATION_NAMES
from meshlint.source.units import Root

TIMEOUT = 120  # seconds for one build: a root that takes longer is listed as not rendered
MOST_BUILDS_AT_ONCE = 8
WRAPPER = "kustomization.yaml"
# Every proxy variable points at a port nothing listens on: a fetch the static checks missed fails at once.
_NOWHERE = "http://127.0.0.1:9"


class Renderer(NamedTuple):
    """The command that builds a kustomization folder given last, and what to call it."""

    command: tuple[str, ...]
    name: str


class Rendered(NamedTuple):
    """One root's build: its objects as YAML (None when it was not built) or why not, the folder the
    origin annotations' paths are relative to, and, for a build of a copy, (the copy's top, the top
    of what it copies): a path under the first stands for the same path under the second."""

    root: Root
    text: bytes | None
    error: str | None
    folder: str
    copied: tuple[str, str] | None = None

    def written(self, origin: str) -> str:
        """The file an origin annotation's path names, absolute."""
        path = os.path.normpath(os.path.join(self.folder, origin))
        if self.copied is not None and (path + os.sep).startswith(self.copied[0] + os.sep):
            return os.path.normpath(self.copied[1] + path[len(self.copied[0]):])
        return path


def find_renderer(path: str | None = None) -> Renderer | None:
    """`kustomize` on PATH, else `kubectl` (its built-in kustomize), else either beside this Python (a
    virtual environment that installed one but is not on PATH)."""
    here = os.path.dirname(sys.executable)
    for search in (path, here):
        kustomize = shutil.which("kustomize", path=search)
        if kustomize is not None:
            return Renderer((kustomize, "build"), "kustomize build")
        kubectl = shutil.which("kubectl", path=search)
        if kubectl is not None:
            return Renderer((kubectl, "kustomize"), "kubectl kustomize")
    return None


def render(roots: Iterable[Root], renderer: Renderer, limit: int, jobs: int = 1, edited: Mapping[str, bytes] | None = None) -> list[Rendered]:
    """Each root built, in the order given; `limit`: the most bytes a build may write. `edited`: files
    (by real path) whose text is not yet on disk (a --fix round's): a root that reaches one is built
    from a copy of its folders holding that text."""
    todo = list(roots)
    if not todo:
        return []
    with tempfile.TemporaryDirectory(prefix="meshlint-render-") as scratch:
        texts = edited or {}

        def build(n: int) -> Rendered:
            return _build(todo[n], os.path.join(scratch, str(n)), texts, renderer, limit)

        if jobs <= 1 or len(todo) == 1:
            return [build(n) for n in range(len(todo))]
        with ThreadPoolExecutor(max_workers=min(jobs, MOST_BUILDS_AT_ONCE, len(todo))) as pool:
            return list(pool.map(build, range(len(todo))))


def _build(root: Root, folder: str, edited: Mapping[str, bytes], renderer: Renderer, limit: int) -> Rendered:
    if root.remote is not None:
        return Rendered(root, None, f"needs the remote base {root.remote}, which is never fetched", folder)
    os.makedirs(folder)
    kustomization = root.kustomization
    copied = None
    if any(os.path.realpath(f) in edited for f in root.files):
        copied = _copy(root, os.path.join(folder, "copy"), edited, limit)
        kustomization = copied[0] + kustomization[len(copied[1]):]
    # Origin annotations can only be asked for in a kustomization: a wrapper of our own lists the root,
    # by a relative path (kustomize refuses absolute ones), and leaves the user's files untouched.
    target = os.path.relpath(os.path.dirname(kustomization), folder)
    with open(os.path.join(folder, WRAPPER), "w", encoding="utf-8") as wrapper:
        wrapper.write(f"resources:\n- {_quoted(target)}\nbuildMetadata: [originAnnotations]\n")
    err_path = os.path.join(folder, "err")
    try:
        with open(err_path, "wb") as err:
            text, why = _run([*renderer.command, folder], folder, err, limit)
    except OSError as failure:
        return Rendered(root, None, f"{renderer.name} could not run: {failure.strerror or failure}", folder, copied)
    if why == "timeout":
        return Rendered(root, None, f"{renderer.name} ran over {TIMEOUT} seconds", folder, copied)
    if why == "size":
        return Rendered(root, None, f"{renderer.name} wrote more than {limit} bytes", folder, copied)
    if text is None:
        with open(err_path, "rb") as err_file:
            said = err_file.read(64 * 1024).decode("utf-8", "replace")
        # What kustomize says of our wrapper's entry is said of the root as the user names it.
        said = said.replace(f"'{target}'", f"'{root.name}'")
        return Rendered(root, None, first_error(said, renderer.name, os.getcwd()), folder, copied)
    return Rendered(root, text, None, folder, copied)


def _run(command: list[str], folder: str, err: IO[bytes], limit: int) -> tuple[bytes | None, str | None]:
    """The command's output, read up to `limit` bytes (None when it failed), and why it was stopped
    ("timeout", "size"), if it was."""
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL, cwd=folder, env=_environment()) as child:
        stopped: list[str] = []

        def stop(why: str) -> None:
            stopped.append(why)
            child.kill()

        timer = threading.Timer(TIMEOUT, stop, ("timeout",))
        timer.start()
        try:
            chunks: list[bytes] = []
            size = 0
            assert child.stdout is not None
            while chunk := child.stdout.read(1 << 16):
                size += len(chunk)
                if size > limit:
                    stop("size")
                    break
                chunks.append(chunk)
            code = child.wait()
        finally:
            timer.cancel()
    if stopped:
        return None, stopped[0]
    return (b"".join(chunks) if code == 0 else None), None


def _copy(root: Root, top: str, edited: Mapping[str, bytes], limit: int) -> tuple[str, str]:
    """The root's files, and the other files of its kustomizations' folders (what generators read),
    copied under `top` as they stand below their common folder, with the edited ones' new text:
    (top, that common folder). A file over `limit` bytes is left out, as a run leaves it unread."""
    files = set(root.files)
    for path in root.files:
        if os.path.basename(path) in KUSTOMIZATION_NAMES:
            folder = os.path.dirname(path)
            with contextlib.suppress(OSError):
                files.update(e.path for e in os.scandir(folder) if e.is_file())
    common = os.path.commonpath([os.path.dirname(f) for f in files])
    for path in sorted(files):
        target = os.path.join(top, os.path.relpath(path, common))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        text = edited.get(os.path.realpath(path))
        try:
            if text is not None:
                with open(target, "wb") as out:
                    out.write(text)
            elif os.path.getsize(path) <= limit:
                shutil.copyfile(path, target)
        except OSError:
            continue  # a file that cannot be read: the build says what is missing
    return top, common


def first_error(text: str, name: str, home: str = "") -> str:
    """The renderer's first error line, without kubectl's log prefix, from where it speaks of the root
    itself (not of our wrapper), with paths below `home` made relative; its exit alone when it said nothing."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    found = next((line[len("error:"):].strip() for line in lines if line.lower().startswith("error:")), lines[0] if lines else "")
    if not found:
        return f"{name} failed"
    _, recursed, rest = found.partition("recursed accumulation of path '")
    if recursed and "': " in rest:
        found = rest.split("': ", 1)[1]
    if home:
        found = found.replace(home.rstrip(os.sep) + os.sep, "")
    return _short(found)


def _short(line: str) -> str:
    return line if len(line) <= 240 else line[:237] + "..."


def _quoted(path: str) -> str:
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.upper().endswith("_PROXY") and not k.startswith("KUSTOMIZE_PLUGIN")}
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"):
        env[name] = _NOWHERE
    env["GIT_ALLOW_PROTOCOL"] = "file"
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env
