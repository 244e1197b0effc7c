"""The hosts a container is configured to call: what its env values and arguments name.

A URL (`http://orders:8080/api`, `postgres://db.data:5432/app`, `jdbc:mysql://...`), a `host:port`
(`cartservice:7070`) or a cluster DNS name (`orders.shop.svc.cluster.local`) is a destination the app
dials. What is not one: an address it listens on or hands to others (`0.0.0.0:8080`, names with
LISTEN, BIND, REDIRECT or CALLBACK), a literal IP, localhost, and a value still to be filled in
(`{{ .host }}`, `$(HOST)`). Which Service a name means is the mesh context's to say.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from meshlint.findings import Position
from meshlint.model.pod import Container

_URL = re.compile(r"^(?:jdbc:)?([a-zA-Z][a-zA-Z0-9+.-]*)://([^/?#\s]+)")
_HOST_PORT = re.compile(r"^([A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9-]+)*):([0-9]{1,5})$")
_CLUSTER_NAME = re.compile(r"^([a-z0-9-]+(?:\.[a-z0-9-]+)*\.svc(?:\.[a-z0-9-]+)*)\.?$")
_WORD = re.compile(r"[^\s;&|()'\"`=,]+")
_NOT_CALLED = re.compile(r"LISTEN|BIND|REDIRECT|CALLBACK", re.I)
_LOCAL = frozenset(("localhost", "127.0.0.1", "::1", "0.0.0.0"))
# The port a URL means when it names none.
SCHEME_PORTS = {
    "postgres": 5432, "postgresql": 5432, "mysql": 3306, "mariadb": 3306, "redis": 6379, "rediss": 6379,
    "mongodb": 27017, "amqp": 5672, "amqps": 5671, "nats": 4222, "http": 80, "https": 443, "grpc": 80, "ws": 80, "wss": 443,
}


class Destination(NamedTuple):
    host: str  # lower-cased, without a trailing dot
    port: int | None
    source: str  # `env ORDERS_URL` or `args`
    position: Position

    def __str__(self) -> str:
        return f"{self.source} ({self.position.path}:{self.position.line})"


def destinations(container: Container) -> list[Destination]:
    """Every host the container's env values, command and args name, in manifest order."""
    found = []
    for item in container.node.get("env").elements():
        name = item.get("name").text or ""
        value = item.get("value")
        if _NOT_CALLED.search(name) or not isinstance(value.value, str):
            continue
        parsed = destination_in(value.value.strip())
        if parsed is not None:
            found.append(Destination(parsed[0], parsed[1], f"env {name}", value.pos))
    for key in ("command", "args"):
        for node in container.node.get(key).elements():
            for word in _WORD.findall(node.text or ""):
                parsed = destination_in(word) if _URL.match(word) else None
                if parsed is not None:
                    found.append(Destination(parsed[0], parsed[1], key, node.pos))
    return found


def destination_in(text: str) -> tuple[str, int | None] | None:
    """(host, port) of a URL, `host:port` or cluster DNS name; None for anything else."""
    if "{{" in text or "$(" in text or "${" in text:
        return None
    url = _URL.match(text)
    if url:
        authority = url.group(2).rsplit("@", 1)[-1].split(",")[0]
        host, _, port = authority.rpartition(":") if re.search(r":[0-9]+$", authority) else (authority, "", "")
        return _checked(host, int(port) if port else SCHEME_PORTS.get(url.group(1).lower()))
    host_port = _HOST_PORT.match(text)
    if host_port:
        return _checked(host_port.group(1), int(host_port.group(2)))
    name = _CLUSTER_NAME.match(text)
    if name:
        return _checked(name.group(1), None)
    return None


def _checked(host: str, port: int | None) -> tuple[str, int | None] | None:
    host = host.strip("[]").rstrip(".").lower()
    if not host or host in _LOCAL or (port is not None and not 0 < port <= 65535):
        return None
    if re.fullmatch(r"[0-9.]+|[0-9a-f:]*:[0-9a-f:.]*", host):
        return None  # a literal address names no Service
    return host, port
