"""What the run says about the mesh: the config's `mesh:` section and the target versions
(`--istio-version`, `--kubernetes-version`, parsed only when a run names one)."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from packaging.version import Version


class Versions(NamedTuple):
    istio: Version | None = None
    kubernetes: Version | None = None


def parse_version(text: str | None) -> Version | None:
    if not text:
        return None
    # packaging is imported only by runs that name a version: most pre-commit runs do not.
    from packaging.version import InvalidVersion, Version

    try:
        return Version(str(text).lstrip("v"))
    except InvalidVersion:
        return None


def at_least(version: Version | None, minimum: str) -> bool:
    """Known and at least `minimum`."""
    bound = parse_version(minimum)
    return version is not None and bound is not None and version >= bound


class MeshOptions(NamedTuple):
    """The `mesh:` section of the config and the target versions."""

    default_injection: str = "auto"
    injected_namespaces: tuple[str, ...] = ()
    root_namespace: str = "istio-system"
    versions: Versions = Versions()
