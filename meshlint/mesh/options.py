"""What the run says about the mesh: the config's `mesh:` section and the target versions
(`--istio-version`, `--kubernetes-version`, `--linkerd-version`, parsed only when a run names one)."""

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from packaging.version import Version


class Versions(NamedTuple):
    istio: "Version | None" = None
    kubernetes: "Version | None" = None
    linkerd: "Version | None" = None  # the stable line (an edge release reads as the stable line it leads to)


# A release as clusters and meshes print it: `1.30`, `v1.28.9`, and whatever a distribution or a build
# adds after `+` or `-` (`v1.28.9+k3s1`, `1.29.3-gke.1093000`, `v1.30.2-eks-1552ad0`, `1.22-dev`,
# `1.23.0-rc.1`). What follows the release is left out: a distribution's build or a pre-release of a
# line has that line's features, which is all the rules ask of a version.
_RELEASE = re.compile(r"v?([0-9]+(?:\.[0-9]+){0,2})(?:[-+][0-9A-Za-z][0-9A-Za-z.+_-]*)?")


def parse_version(text: str | None) -> "Version | None":
    """The release a Kubernetes or Istio version names, however the command line or config spells it
    (the one reading of both), or None when `text` is no version."""
    if not text:
        return None
    match = _RELEASE.fullmatch(str(text).strip())
    if match is None:
        return None
    # packaging is imported only by runs that name a version: most pre-commit runs do not.
    from packaging.version import Version

    return Version(match.group(1))


# The first edge release of each stable line whose change a rule depends on (reference §10, §11): the
# proxy-await default (2.11), native sidecars (2.15 alpha, 2.19 beta, 2.20 GA and default), and the
# /shutdown endpoint switched off by default (2.16). An edge release counts as the line it leads to.
_EDGE_LINES = (("26.5.2", "2.20"), ("25.10.2", "2.19"), ("24.6.2", "2.16"), ("23.11.4", "2.15"), ("21.4.4", "2.11"))


def parse_linkerd_version(text: str | None) -> "Version | None":
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


# What each version setting is read with, and examples for the message that refuses one.
_READERS: "dict[str, tuple[Callable[[str | None], Version | None], str]]" = {
    "kubernetes-version": (parse_version, "1.30 or v1.28.9+k3s1"),
    "istio-version": (parse_version, "1.24 or 1.22.3"),
    "linkerd-version": (parse_linkerd_version, "2.16, stable-2.14.10 or edge-24.6.2"),
}


def version_problem(setting: str, text: str) -> str | None:
    """Why `text` is no value for the version `setting` (`kubernetes-version`, `istio-version` or
    `linkerd-version`, as the config names it), or None when it is one."""
    read, examples = _READERS[setting]
    return None if read(text) is not None else f"{text!r} is not a version such as {examples}"


def at_least(version: "Version | None", minimum: str) -> bool:
    """Known and at least `minimum`."""
    bound = parse_version(minimum)
    return version is not None and bound is not None and version >= bound


class MeshOptions(NamedTuple):
    """The `mesh:` section of the config and the target versions."""

    default_injection: str = "auto"
    injected_namespaces: tuple[str, ...] = ()
    root_namespace: str = "istio-system"
    versions: Versions = Versions()
    # Where the Istio release was read from the tree (`IstioOperator spec.tag 1.18.5, path:line`); empty
    # when the command line or config named it, or nothing did.
    istio_version_from: str = ""
    kubernetes_version_from: str = ""  # likewise, for the Kubernetes release (a kind Cluster's node image)
