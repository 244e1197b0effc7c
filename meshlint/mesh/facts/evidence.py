"""Evidence that a container calls out as soon as it starts (spec §5 ML101/ML102, wave-2 §W4).

A container whose first act is to reach a database, a broker or another service is the one that
fails when the proxy is not listening yet. Evidence is a call made before the app serves: an env
value that names a peer (written in the container, or brought by `envFrom` / `configMapKeyRef` from a
ConfigMap in the inputs; a Secret's keys are read by name only), a network client, migration or
install the command model runs (`curl`, `nc`, `psql`, `flyway`, `pip install`, `cloud_sql_proxy`), or
an address a program is given to dial. Never a value in a comment, a file path, a listen or bind
address, the container's own loopback, a `{{ }}` placeholder, a variable that does not stand for a
host, a redirect or callback URI, or a call in an exit trap. Each piece keeps where it was read.
"""

import re
from itertools import pairwise
from typing import TYPE_CHECKING, NamedTuple

from meshlint import numbers
from meshlint.findings import Position
from meshlint.mesh.facts import addresses
from meshlint.mesh.facts.shellwords import Command, Word, basename

if TYPE_CHECKING:
    from meshlint.mesh.facts.environment import Environment
    from meshlint.model.pod import Container

URL, HOST_PORT, HOST, PROGRAM, NAME = "url", "host:port", "host", "program", "name"

# Clients that open TCP connections (DNS lookups are UDP, which a classic sidecar does not capture
# unless DNS proxying is on, so `nslookup` and `dig` are none).
_CLIENTS = frozenset(
    (
        "curl", "wget", "nc", "ncat", "netcat", "telnet", "psql", "pg_isready", "pg_dump", "pg_restore", "mysql", "mysqladmin",
        "mysqldump", "mongo", "mongosh", "mongodump", "mongorestore", "redis-cli", "cqlsh", "kcat", "kafkacat", "grpcurl", "kubectl", "aws", "gsutil", "gcloud", "az", "vault", "consul", "etcdctl", "mc", "cloud_sql_proxy", "cloud-sql-proxy", "dockerize",
    )
)
_MIGRATIONS = frozenset(("migrate", "flyway", "liquibase", "alembic", "goose", "dbmate", "sqitch"))
# Programs that reach the network only for some subcommands.
_FETCHING = {
    "pip": ("install", "download"), "pip3": ("install", "download"), "npm": ("install", "ci", "i"), "yarn": ("install", "add"),
    "pnpm": ("install", "add"), "apk": ("add", "update"), "apt-get": ("install", "update"), "apt": ("install", "update"),
    "yum": ("install",), "dnf": ("install",), "git": ("clone", "fetch", "pull", "ls-remote"), "go": ("get", "mod"),
    "gem": ("install",), "bundle": ("install",), "composer": ("install",), "helm": ("repo", "dependency", "pull"),
}
_HOST_OPTIONS = ("-h", "--host", "--hostname")
# Option names that say their value is a peer's address, so a bare `host:port` counts there.
_ADDRESS_OPTION = re.compile(r"addr|host|server|endpoint|broker|peer|upstream|backend|target|connect|join|seed|redis|db|database|kafka|mongo|mysql|postgres|etcd|nats|amqp|url|uri")  # matched lower-cased
_CLOUD_SQL_IMAGE = re.compile(r"(cloud-sql-proxy|cloudsql-proxy|gce-proxy|cloud_sql_proxy)")
# Connection strings of databases and brokers: a client that opens its pool as the app starts.
_DSN = re.compile(r"^(postgres(ql)?|mysql|mariadb|jdbc:[a-z0-9]+|redis|rediss|mongodb(\+srv)?|amqps?|nats|cassandra|clickhouse|sqlserver|mssql|oracle)(:|://)", re.I)
# A variable whose value is not in the inputs (a Secret's) but whose name says it holds a database's or
# broker's connection string (DATABASE_URL, REDIS_URI, DB_DSN, SPRING_DATASOURCE_URL). A bare address of
# one (REDIS_ADDR=redis-cart:6379, MYSQL_HOST) is only a peer's address: judged on real repositories,
# such clients mostly connect on the first request (cartservice, Bookinfo's ratings), so it is weak.
_DATA_STORE_NAME = re.compile(r"DATABASE|DATASOURCE|(^|_)DB(_|$)|DSN|POSTGRES|PG_|MYSQL|MARIADB|REDIS|MONGO|AMQP|RABBIT|KAFKA|NATS|JDBC|CASSANDRA|ELASTIC", re.I)
_CONNECTION_NAME = re.compile(r"DSN|JDBC|URL|URI|CONNECTION|CONN_?STR", re.I)
_OWN_PORT = re.compile(r"^(PORT|(SERVER|HTTP|HTTPS|GRPC|METRICS|ADMIN|MANAGEMENT|HEALTH|LISTEN|APP|WEB)_PORT)$")


class Evidence(NamedTuple):
    what: str
    position: Position
    kind: str = NAME  # url, host:port, host, program or name (an env name whose value is not in the inputs)
    target: str | None = None  # the URL, host:port or host it calls, when known
    elsewhere: bool = False  # read in another file (a ConfigMap or Secret)
    # Strong evidence says the container itself connects as it starts (its command, a database or
    # broker DSN); weak evidence only names a peer's address in env, which an app may never dial at
    # start (wave-3 spec V2.1): the startup race is then said once, mesh-wide (ML100), not per workload.
    strong: bool = True
    source: str = ""  # the ConfigMap or Secret an env value came from (`ConfigMap app-env`), if any
    shared: bool = False  # from an address book every service of the app loads: a name, not a call

    def __str__(self) -> str:
        where = f"{self.position.path}:{self.position.line}" if self.elsewhere else f"line {self.position.line}"
        return f"{self.what} ({where})"


def env_evidence(environment: "Environment") -> list[Evidence]:
    """Variables that name a peer the app dials: their value, or their name when the inputs do not
    hold the value (a Secret)."""
    found = []
    for variable in environment.variables:
        name, value = variable.name, variable.value
        if addresses.own_address(name):
            continue
        origin = f" from {variable.source}" if variable.source else ""
        origin += f"; {variable.cut}" if variable.cut else ""
        if value is not None:
            address = addresses.dialed(value)
            if address is not None:
                strong = _DSN.match(value.strip()) is not None
                found.append(Evidence(f"env {name}={_short(value)}{origin}", variable.position, _kind(address), address.text, variable.elsewhere, strong, variable.source or ""))
            elif addresses.ADDRESS_NAME.search(name) and addresses.HOST_NAME.search(name) and addresses.host_value(value):
                found.append(Evidence(f"env {name}={value}{origin}", variable.position, HOST, value, variable.elsewhere, False, variable.source or ""))
        elif addresses.ADDRESS_NAME.search(name):
            # A Secret's value, read by name only: a database's or broker's connection string is a client that
            # opens its pool as it starts.
            strong = _DATA_STORE_NAME.search(name) is not None and _CONNECTION_NAME.search(name) is not None
            found.append(Evidence(f"env {name}{origin}", variable.position, NAME, None, variable.elsewhere, strong, variable.source or ""))
    return found


def command_evidence(commands: list[Command], startup: bool = True) -> list[Evidence]:
    """What the commands that run before the app serves call: a client, a migration, an install, or
    an address a program is told to dial. One piece per command; exit traps and dropped commands
    never count, nor calls to the container's own loopback. Nor do the calls of a loop that retries
    until one answers (`until kubectl version; do sleep 2; done`), nor any call after such a loop or
    after a long `sleep`: by then the proxy is up (wave-3 spec V2.2). `startup` False: every call,
    whenever it is made (the ports a container dials at all)."""
    found: list[Evidence] = []
    for command in commands:
        if command.trap or command.dropped is not None:
            continue
        evidence = _command_evidence(command)
        if startup and command.retried and evidence is not None:
            break  # a wait for the network: what follows runs once it answers
        if startup and not command.conditional and not command.background and _long_sleep(command):
            break
        if evidence is not None and evidence.what not in {e.what for e in found}:
            found.append(evidence)
    return found


LONG_SLEEP = 15  # seconds: a proxy not ready by then is stuck, and no sleep before a call shortens the race


def _long_sleep(command: Command) -> bool:
    argv = command.work
    if not argv or basename(argv[0].text) != "sleep" or len(argv) != 2:
        return False
    match = _DURATION.fullmatch(argv[1].text.strip())
    if match is None:
        return False
    return float(match.group(1)) * _UNIT_SECONDS[match.group(2) or "s"] >= LONG_SLEEP


_DURATION = re.compile(r"([0-9]+(?:\.[0-9]+)?)([smhd]?)")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def image_evidence(container: "Container") -> list[Evidence]:
    """A Cloud SQL Auth Proxy started by its image's own entrypoint dials Google's APIs at start."""
    image = container.image
    if container.node.get("command").exists or not _CLOUD_SQL_IMAGE.search(image):
        return []
    return [Evidence(f"image {_short(image)} runs the Cloud SQL proxy", container.node.get("image").pos, PROGRAM, None)]


def env_ports(container: "Container", environment: "Environment", commands: list[Command]) -> list[tuple[int, Evidence]]:
    """Destination ports the container dials: env URLs (explicit or scheme port), `host:port`, numbers
    in `*_PORT` variables that are not its own, and the ports of the calls its commands make."""
    own = {number for number, _, _ in container.ports}
    found: list[tuple[int, Evidence]] = []
    for variable in environment.variables:
        name, value = variable.name, (variable.value or "").strip()
        if not value or addresses.own_address(name):
            continue
        address = addresses.dialed(value)
        port = address.port if address is not None else None
        if port is None and address is None and name.endswith("_PORT") and not _OWN_PORT.match(name):
            port = numbers.port(value)
            port = None if port in own else port
        if port is not None and 0 < port <= 65535:
            origin = f" from {variable.source}" if variable.source else ""
            found.append((port, Evidence(f"env {name}={_short(value)}{origin}", variable.position, PROGRAM, value, variable.elsewhere)))
    for evidence in command_evidence(commands, startup=False):
        address = addresses.parse(evidence.target) if evidence.target else None
        if address is not None and address.port is not None:
            found.append((address.port, evidence))
    return found


def _command_evidence(command: Command) -> Evidence | None:
    argv = command.work
    if not argv:
        return None
    program, args = _program(command)
    texts = [w.text for w in args]
    origin, position = argv[0].origin, command.position
    fetches = _FETCHING.get(program)
    if program in _CLIENTS or program.startswith("wait-for") or (fetches and texts and texts[0] in fetches):
        return _client_call(program, args, texts, f"{program} {texts[0]}" if fetches else program, origin, position)
    if program in _MIGRATIONS:
        return Evidence(f"{origin} runs {program!r}", position, PROGRAM)
    if any(t == "migrate" or t.endswith(":migrate") or t.startswith("migrate:") for t in texts):
        return Evidence(f"{origin} runs 'migrate'", position, PROGRAM)
    for word, address in _named_addresses(args):
        if address.remote:
            return Evidence(f"{word.origin} names {_short(address.text)}", word.position, _kind(address), address.text)
    return None



def _program(command: Command) -> tuple[str, list[Word]]:
    """The program a command runs and its arguments: args alone go to the image's entrypoint, and
    `python -m MODULE` runs the module."""
    argv = command.work
    program, args = basename(argv[0].text), argv[1:]
    if command.exec_form and argv[0].origin == "args" and argv[0].text.startswith("-"):
        program, args = "", argv  # args alone, to the image's entrypoint: every item is an argument
    if _LANGUAGE_MODULE.match(program) and len(args) > 1 and args[0].text == "-m":
        program, args = args[1].text, args[2:]  # python -m pip install ...
    return program, args


def _client_call(program: str, args: list[Word], texts: list[str], label: str, origin: str, position: Position) -> Evidence | None:
    """A network client, an install or a wait-for script: what it calls, unless only its own loopback."""
    targets = _targets(program, args)
    if _over_socket(texts) or (targets and not any(a.remote for a in targets)):
        return None  # it calls its own loopback (a health check, the proxy's quit endpoint)
    target = next((a for a in targets if a.remote), None)
    if target is None:
        return Evidence(f"{origin} runs {label!r}", position, PROGRAM)
    return Evidence(f"{origin} calls {_short(target.text)} with {label}", position, _kind(target), target.text)

_LANGUAGE_MODULE = re.compile(r"^python[0-9.]*$")
_SETTING = re.compile(r"^-{0,2}[A-Za-z_][A-Za-z0-9_.-]*$")  # `--db`, `-Dspring.datasource.url`, `DB_URL` before an `=`


def _over_socket(texts: list[str]) -> bool:
    """`mysql -S /run/mysqld.sock`, `psql -h /var/run/postgresql`: a local socket, no network."""
    return any(t in ("-S", "--socket") or t.startswith("--socket=") for t in texts) or any(
        a in ("-h", "--host") and b.startswith("/") for a, b in pairwise(texts)
    )


def _targets(program: str, args: list[Word]) -> list[addresses.Address]:
    """The addresses a client is pointed at: URLs and `host:port` arguments, `-h host` options, and
    `nc host port`'s two words."""
    found = [a for _, a in _named_addresses(args, any_host_port=True)]
    texts = [w.text for w in args]
    for i, text in enumerate(texts[:-1]):
        host = texts[i + 1]
        if program not in ("curl", "wget") and text in _HOST_OPTIONS and host and not host.startswith("-"):
            found.append(addresses.Address(host, None, host, None, ""))
    if program in ("nc", "ncat", "netcat", "telnet") and not found:
        positional = [t for t in texts if not t.startswith("-")]
        port = numbers.port(positional[1]) if len(positional) >= 2 else None
        if port is not None:
            host = positional[0]
            found.append(addresses.Address(f"{host}:{positional[1]}", None, host, port, ""))
    return found


def _named_addresses(args: list[Word], any_host_port: bool = False) -> list[tuple[Word, addresses.Address]]:
    """Addresses among a program's arguments (`--db=postgres://...`, `-Durl=...`, a bare URL), with
    the options that name the program's own address (`--listen`, `--bind`, `--redirect-uri`) left out.
    A bare `host:port` counts only where the option says it is a peer (`--redis-addr host:port`),
    or for a client (`any_host_port`)."""
    found = []
    option = ""
    for word in args:
        text = word.text
        if "{{" in text:
            option = ""
            continue
        name, equals, value = text.partition("=")
        if not equals or not _SETTING.match(name):
            name, value = option, text
        option = text if text.startswith("-") and not equals else ""
        if addresses.own_address(name):
            continue
        address = addresses.parse(value)
        if address is None:
            continue
        if address.scheme is None and ".svc" not in address.host and not (any_host_port or _ADDRESS_OPTION.search(name.lower())):
            continue
        found.append((word, address))
    return found


def _kind(address: addresses.Address) -> str:
    return URL if address.scheme else HOST_PORT if address.port is not None else HOST


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."
