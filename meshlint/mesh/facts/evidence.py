"""Evidence that a container makes network calls as soon as it starts (spec §5, ML101/ML102).

A container whose first act is to reach a database, a broker or another service is the one that
fails when the proxy is not listening yet. Each piece of evidence keeps the line it was read from,
so messages can list it.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from meshlint.findings import Position
from meshlint.model.kinds import BATCH_KINDS
from meshlint.model.pod import Container, PodTemplate

_URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://\S+")
_HOST_PORT = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9-]+)*:[0-9]{2,5}$")
_SERVICE_NAME = re.compile(r"(^|[/@.])[a-z0-9-]+(\.[a-z0-9-]+)*\.svc(\.cluster\.local)?\.?(:[0-9]+)?(/|$)")
_ENV_NAME = re.compile(r"(_URL|_URI|_DSN|_HOST|_ADDR|_ADDRESS)$|^(DATABASE_|REDIS|KAFKA|SPRING_DATASOURCE_URL$)")
_NETWORK_COMMANDS = frozenset(("migrate", "flyway", "liquibase", "alembic", "curl", "wget", "nc", "ncat", "psql", "mysql", "redis-cli"))
_WORD = re.compile(r"[^\s;&|()'\"`=]+")


class Evidence(NamedTuple):
    what: str
    position: Position

    def __str__(self) -> str:
        return f"{self.what} (line {self.position.line})"


def container_evidence(container: Container) -> list[Evidence]:
    found: list[Evidence] = []
    for item in container.node.get("env").elements():
        name = item.get("name").text or ""
        value = item.get("value")
        text = value.text or ""
        if text and (_URL.match(text) or _HOST_PORT.match(text) or _SERVICE_NAME.search(text)):
            found.append(Evidence(f"env {name}={_short(text)}", value.pos))
        elif name and _ENV_NAME.search(name):
            found.append(Evidence(f"env {name}", item.get("name").pos))
    for key in ("command", "args"):
        # One piece of evidence per list is enough to show the point; the first one says where.
        for node in container.node.get(key).elements():
            text = node.text or ""
            word = _network_word(text)
            target = next((w for w in _WORD.findall(text) if _URL.match(w) or _SERVICE_NAME.search(w)), None)
            if word:
                found.append(Evidence(f"{key} runs {word!r}", node.pos))
                break
            if target:
                found.append(Evidence(f"{key} names {_short(target)}", node.pos))
                break
    return found


# Ports a URL means when it names none; what a startup-race exclusion usually targets.
_SCHEME_PORTS = {
    "postgres": 5432, "postgresql": 5432, "mysql": 3306, "mariadb": 3306, "redis": 6379, "rediss": 6379,
    "mongodb": 27017, "amqp": 5672, "amqps": 5671, "nats": 4222, "http": 80, "https": 443,
}


def env_ports(container: Container) -> list[tuple[int, Evidence]]:
    """Destination ports the container's env points at: URLs (explicit or scheme port), `host:port`,
    and `*_PORT` variables holding a number."""
    found: list[tuple[int, Evidence]] = []
    for item in container.node.get("env").elements():
        name = item.get("name").text or ""
        value = item.get("value")
        text = (value.text or "").strip()
        port = _port_in(text)
        if port is None and name.endswith("_PORT") and text.isdigit():
            port = int(text)
        if port is not None and 0 < port <= 65535:
            found.append((port, Evidence(f"env {name}={_short(text)}", value.pos)))
    return found


def _port_in(text: str) -> int | None:
    url = _URL.match(text.removeprefix("jdbc:"))
    if url:
        scheme, _, rest = text.removeprefix("jdbc:").partition("://")
        authority = rest.split("/", 1)[0].rsplit("@", 1)[-1]
        host_port = re.search(r":([0-9]{1,5})$", authority.split(",")[0])
        return int(host_port.group(1)) if host_port else _SCHEME_PORTS.get(scheme.lower())
    if _HOST_PORT.match(text):
        return int(text.rsplit(":", 1)[1])
    return None


def workload_evidence(template: PodTemplate, containers: list[Container]) -> list[Evidence]:
    """Evidence for a whole pod: a batch workload always does its work, and its calls, at startup."""
    found: list[Evidence] = []
    if template.owner.kind in BATCH_KINDS:
        kind = template.owner.root.get("kind")
        found.append(Evidence(f"it is a {template.owner.kind}", kind.pos))
    for container in containers:
        found.extend(container_evidence(container))
    return found


def _network_word(text: str) -> str | None:
    for word in _WORD.findall(text):
        base: str = word.rsplit("/", 1)[-1]
        if base in _NETWORK_COMMANDS or base.startswith("wait-for") or base.endswith(":migrate"):
            return base
    return None


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."
