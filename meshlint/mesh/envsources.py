"""ConfigMaps and Secrets a container can take env from (`envFrom`, `configMapKeyRef`): what the
first pass keeps of them.

Which of them a workload names is known only in the second pass, so the first pass keeps small
facts of every one that could matter: name, namespace, file, its keys with their positions and, for
a ConfigMap, the values that look like network addresses. A Secret's values are never read. A
ConfigMap or Secret with nothing address-like in it is not even composed (`might_hold_env_source`).
"""

import os
import re
from functools import lru_cache
from typing import NamedTuple

from meshlint.findings import Position
from meshlint.model.prefilter import kind_lines
from meshlint.model.resource import Resource

ENV_SOURCE_KINDS = frozenset(("ConfigMap", "Secret"))

_KIND = re.compile(r"[\"']?kind[\"']?:[ \t]*[\"']?(ConfigMap|Secret)[\"']?[ \t]*(#.*)?\r?$")  # on a line of `kind_lines`
_ADDRESS_WORDS = ("URL", "URI", "DSN", "HOST", "ADDR", "SERVER", "DATABASE", "REDIS", "KAFKA")


@lru_cache(maxsize=1)
def _address_patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """`.svc`, `host:port` and an address-like key: compiled when a run first meets a ConfigMap or
    Secret, not at every start (a pre-commit run on a Deployment never needs them). Each starts
    with a literal, which the regex engine scans for fast: one alternation of them all would try
    every position of a big ConfigMap's block scalars."""
    return (
        re.compile(r"\.svc\b"),
        re.compile(r":(?<=[A-Za-z0-9]:)[0-9]{2,5}\b"),
        # A key that may name an address starts a block-style line or follows `{` or `,` in a flow
        # mapping (`data: {DB_HOST: db}`): the screen may let too much through, never too little.
        re.compile(r"(?:^[ \t]+|[{,][ \t]*)[\"']?[A-Z][A-Z0-9_]*(URL|URI|DSN|HOST|ADDR|ADDRESS|SERVER|DATABASE|REDIS|KAFKA)", re.M),
    )


def worth_reading(text: str) -> bool:
    """Does the text hold anything address-like: a URL, a `.svc` name, a `host:port`, or a key such
    as `DB_HOST` or `ORDERS_URL`? (tests/test_crlf.py holds the single pattern it stands for.)"""
    svc, host_port, address_key = _address_patterns()
    if "://" in text or svc.search(text) or host_port.search(text):
        return True
    return any(word in text for word in _ADDRESS_WORDS) and bool(address_key.search(text))


class EnvKey(NamedTuple):
    name: str
    position: Position  # the key
    value: str | None  # a ConfigMap value that looks like a network address; None otherwise
    value_position: Position | None


class EnvSource(NamedTuple):
    kind: str
    name: str
    namespace: str
    path: str
    keys: tuple[EnvKey, ...]

    @property
    def title(self) -> str:
        return f"{self.kind} {self.name}"


def might_hold_env_source(text: str, lines: list[str] | None = None) -> bool:
    """False only when the document surely holds no ConfigMap or Secret worth keeping. `lines`: its
    `kind_lines`, when the caller has them."""
    return any(_KIND.match(line) for line in (kind_lines(text) if lines is None else lines)) and worth_reading(text)


class EnvSources:
    """Every ConfigMap and Secret of the run that could feed a container's env, by name."""

    def __init__(self) -> None:
        self._by_name: dict[tuple[str, str], list[EnvSource]] = {}

    def add(self, resource: Resource) -> None:
        if resource.kind not in ENV_SOURCE_KINDS or not resource.name:
            return
        from meshlint.mesh.facts import addresses

        keys: list[EnvKey] = []
        root = resource.root
        for field in ("data", "stringData") if resource.kind == "Secret" else ("data",):
            for key, node in root.get(field).items():
                name = str(key)
                text = node.text if resource.kind == "ConfigMap" else None
                address = text if text is not None and addresses.looks_like_address(name, text) else None
                keys.append(EnvKey(name, node.key_pos or node.pos, address, node.pos if address is not None else None))
        source = EnvSource(resource.kind, resource.name, resource.namespace, resource.path, tuple(keys))
        self._by_name.setdefault((resource.kind, resource.name), []).append(source)

    def merge(self, later: "EnvSources") -> None:
        """Those `later` collected from files after every file these came from (MeshContext.merge)."""
        for key, sources in later._by_name.items():
            self._by_name.setdefault(key, []).extend(sources)

    def find(self, kind: str, name: str, namespace: str, near: str) -> EnvSource | None:
        """The ConfigMap or Secret a workload in `namespace`, written in file `near`, names: of the
        same namespace (or one of the two unsaid), the nearest to the workload's file."""
        found = [s for s in self._by_name.get((kind, name), ()) if not s.namespace or not namespace or s.namespace == namespace]
        if not found:
            return None
        here = os.path.dirname(os.path.abspath(near))
        return max(found, key=lambda s: (s.path == near, *_nearness(here, os.path.dirname(os.path.abspath(s.path)))))


def _nearness(workload_dir: str, source_dir: str) -> tuple[bool, int]:
    """A source in the workload's directory or above it first (nearest first), then the one in the
    tree that shares the most leading directories with it."""
    common = os.path.commonpath([workload_dir, source_dir])
    return common == source_dir, common.count(os.sep)
