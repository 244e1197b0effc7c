"""What the run says about the mesh: the config's `mesh:` section and the target versions
(`--istio-version`, `--kubernetes-version`, `--linkerd-version`, parsed only when a run names one)."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from packaging.version import Version


class Versions(NamedTuple):
    istio: Version | None = None
    kubernetes: Version | None = None
    linkerd: Version | None = None  # the stable line (an edge release reads as the stable line it leads to)


def parse_version(text: str | None) -> Version | None:
    if not text:
        return None
    # packaging is imported only by runs that name a version: most pre-commit runs do not.
    from packaging.version import InvalidVersion, Version

    try:
        return Version(str(text).lstrip("v"))
    except InvalidVersion:
        return None


# The first edge release of each stable line whose change a rule depends on (reference §10, §11): the
# proxy-await default (2.11), native sidecars (2.15 alpha, 2.19 beta, 2.20 GA and default), and the
# /shutdown endpoint switched off by default (2.16). An edge release counts as the line it leads to.
_EDGE_LINES = (("26.5.2", "2.20"), ("25.10.2", "2.19"), ("24.6.2", "2.16"), ("23.11.4", "2.15"), ("21.4.4", "2.11"))


def parse_linkerd_version(text: str | None) -> Version | None:
    """A Linkerd version as its releases are named: `2.16`, `stable-2.14.10`, `version-2.20`, or an
    edge release `edge-24.6.2`, read as the stable line that first shipped what it has."""
    if not text:
        return None
    name = str(text).strip()
    for prefix in ("stable-", "version-"):
        name = name.removeprefix(prefix)
    if not name.startswith("edge-"):
        return parse_version(name)
    edge = parse_version(name.removeprefix("edge-"))
    if edge is None:
        return None
    for first, line in _EDGE_LINES:
        if at_least(edge, first):
            return parse_version(line)
    return parse_version("2.10")


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
