"""What `meshlint --version` says: the release, the Python, and which YAML readers this install has.

A build without meshlint's C reader (no compiler or no libyaml header when it was installed) reads
every file through slower readers and costs noticeably more CPU; nothing else tells a user so.
"""

from __future__ import annotations

import platform
from importlib import metadata

from meshlint import __version__

HOW_TO_BUILD_THE_READER = (
    "to build it: install libyaml's header and a C compiler (Debian/Ubuntu: apt-get install libyaml-dev gcc; "
    "Fedora: dnf install libyaml-devel gcc; macOS: brew install libyaml), then reinstall meshlint"
)


def version_text() -> str:
    from meshlint.source import document
    from meshlint.source.readers import events, native

    lines = [f"meshlint {__version__} (Python {platform.python_version()})"]
    if native.available():
        lines.append(f"YAML reader: meshlint's C reader, built (libyaml {native.libyaml_version()})")
    else:
        lines.append("YAML reader: meshlint's C reader is NOT built, so reading is slower; " + HOW_TO_BUILD_THE_READER)
    lines.append("  then: " + ("PyYAML's C parser" if events.built() else "PyYAML's C parser is missing") + f" (PyYAML {_release('PyYAML')})")
    lines.append(f"  then: ruamel.yaml {_release('ruamel.yaml')} ({'with' if _ruamel_c() else 'without'} its C composer)")
    core = "built" if document._Core is not document._NodeCore else "NOT built (the Python core is used)"
    lines.append(f"document node core in C: {core}")
    from meshlint.source.render import find_renderer

    renderer = find_renderer()
    if renderer is not None:
        lines.append(f"overlays rendered with: {renderer.name} ({renderer.command[0]})")
    else:
        lines.append("overlays rendered with: nothing (neither kustomize nor kubectl is on PATH): kustomizations are checked as written")
    return "\n".join(lines)


def _release(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def _ruamel_c() -> bool:
    from importlib.util import find_spec

    return find_spec("_ruamel_yaml") is not None  # ruamel.yaml.clib's extension
