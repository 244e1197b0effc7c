"""Network addresses in values and arguments, and which of them a container dials.

A value can name an address the container calls (`postgres://db:5432/app`, `redis:6379`,
`orders.shop.svc.cluster.local`), one it serves on (`0.0.0.0:8080`, `:8080`, `[::]:9090`), its own
loopback (`localhost:15020`, which never crosses istio-proxy), or no address at all: a file path, a
`file://` URL, a `{{ }}` template placeholder. Only the first kind is evidence that the container
calls out. Settings that name the app's own address (listen, bind, advertise, redirect and callback
URIs, its public URL) are never calls, whatever their value.
"""

import re
from typing import NamedTuple

from meshlint import numbers

_URL = re.compile(r"^(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*)://(?P<rest>\S*)$")
_HOST_PORT = re.compile(r"^(?P<host>[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9-]+)*|\[[0-9a-fA-F:.]+\]|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?):(?P<port>[0-9]{2,5})(?P<path>/\S*)?$")
_SERVICE_NAME = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9-]+)*\.svc(\.cluster\.local)?\.?(:[0-9]+)?$")
_HOSTNAME = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9-]+)*\.?$")
_VARIABLE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)|\$\(([A-Za-z_][A-Za-z0-9_]*)\)")
# Schemes that are no network call, or not one through the pod's proxy.
_LOCAL_SCHEMES = frozenset(("file", "unix", "data", "jar", "classpath", "mailto", "about", "sqlite", "sqlite3"))
_SCHEME_PORTS = {
    "postgres": 5432, "postgresql": 5432, "mysql": 3306, "mariadb": 3306, "redis": 6379, "rediss": 6379,
    "mongodb": 27017, "amqp": 5672, "amqps": 5671, "nats": 4222, "http": 80, "https": 443, "ws": 80, "wss": 443,
}
LOOPBACK = frozenset(("localhost", "ip6-localhost", "::1", "[::1]"))
_LOOPBACK_V4 = re.compile(r"127(\.[0-9]{1,3}){3}")  # 127.0.0.0/8 written as an address, not a host name like 127.proxy.corp
_LISTEN_HOSTS = frozenset(("", "0.0.0.0", "::", "[::]", "*", "[::0]"))
# Names of settings that hold the app's own address (a value it serves or hands out), never a call.
_OWN_ADDRESS = re.compile(r"LISTEN|BIND|ADVERTISE|REDIRECT|CALLBACK|(PUBLIC|EXTERNAL)[_-]?UR[LI]|(ROOT|SITE)[_-]?URL|NO[_-]PROXY")
# Names of settings that hold a peer's address (or name it: DATABASE_*, REDIS*, KAFKA*): spec §5 ML101.
ADDRESS_NAME = re.compile(r"(_URL|_URI|_DSN|_HOST|_ADDR|_ADDRESS)$|^(DATABASE_|REDIS|KAFKA|SPRING_DATASOURCE_URL$)")
# ...of which these hold a host even when it is a bare name (`REDIS_HOST=redis-master`).
HOST_NAME = re.compile(r"(_HOST|_HOSTS|_ADDR|_ADDRESS|_SERVER|_SERVERS)$")
# Variables whose value is a host (Kubernetes' `<SERVICE>_SERVICE_HOST`, `DB_HOST`, `REDIS_ADDR`...).
_HOST_VARIABLE = re.compile(r"(HOST|ADDR|ADDRESS|SERVER|ENDPOINT|SERVICE)S?(_[A-Z]+)?$")  # matched upper-cased
_WORDS_NOT_HOSTS = frozenset(("true", "false", "yes", "no", "on", "off", "none", "null", "nil", "tcp", "udp", "unix", "auto", "default", "disabled", "enabled"))


class Address(NamedTuple):
    """An address as written, and its parts (port None when neither written nor implied)."""

    text: str
    scheme: str | None
    host: str
    port: int | None
    path: str

    @property
    def loopback(self) -> bool:
        host = self.host.lower()
        return host in LOOPBACK or bool(_LOOPBACK_V4.fullmatch(host))

    @property
    def listening(self) -> bool:
        """A wildcard host: an address the app serves on, not one it dials."""
        return self.host in _LISTEN_HOSTS

    @property
    def remote(self) -> bool:
        """The container dials it through istio-proxy: a real host that is not its own loopback."""
        return not (self.loopback or self.listening) and _is_host(self.host)


def parse(text: str) -> Address | None:
    """A URL, `host:port` (`:port`) or a Kubernetes service name; None for anything else, a file
    path or a template placeholder among them."""
    text = text.strip()
    if not text or "{{" in text or "}}" in text or text.startswith(("/", "./", "~")):
        return None
    url = _URL.match(text.removeprefix("jdbc:"))
    if url:
        scheme = url.group("scheme").lower()
        if scheme in _LOCAL_SCHEMES:
            return None
        rest = url.group("rest")
        authority, slash, path = rest.partition("/")
        authority = authority.split(";", 1)[0].split("?", 1)[0].rsplit("@", 1)[-1].split(",", 1)[0]
        host, port = _split_port(authority)
        if port is None and not re.search(r":[^\]]*$", authority):
            port = _SCHEME_PORTS.get(scheme)
        return Address(text, scheme, host, port, slash + path)
    if text.startswith(":") and numbers.digits(text[1:]):
        return Address(text, None, "", numbers.whole(text[1:]), "")
    first = text.split(",", 1)[0]
    match = _HOST_PORT.match(first)
    if match:
        return Address(text, None, match.group("host"), numbers.whole(match.group("port")), match.group("path") or "")
    if _SERVICE_NAME.match(first):
        host, port = _split_port(first)
        return Address(text, None, host, port, "")
    return None


def dialed(text: str) -> Address | None:
    """The address a value makes the container call, or None (not an address, or its own)."""
    address = parse(text)
    return address if address is not None and address.remote else None


def host_value(text: str) -> bool:
    """A bare host name (`redis`, `db.internal`): a value of a `*_HOST` setting that names a peer."""
    text = text.strip()
    if not _HOSTNAME.match(text) or numbers.digits(text) or text.lower() in _WORDS_NOT_HOSTS:
        return False
    return Address(text, None, text, None, "").remote


def own_address(name: str) -> bool:
    """A setting (env name, option) that holds the app's own address, never one it dials."""
    return bool(_OWN_ADDRESS.search(name.upper()))


def looks_like_address(name: str, value: str) -> bool:
    """A value that names a network address: a URL, `host:port`, a service name, or a bare host
    under a `*_HOST` / `*_ADDR` name."""
    return parse(value) is not None or (bool(HOST_NAME.search(name)) and host_value(value))


def _split_port(authority: str) -> tuple[str, int | None]:
    if authority.startswith("["):
        host, _, rest = authority.partition("]")
        port = rest.removeprefix(":")
        return host + "]", numbers.whole(port)
    host, colon, port = authority.rpartition(":")
    if not colon or authority.count(":") > 1:
        return authority, None
    return host, numbers.whole(port)


def _is_host(host: str) -> bool:
    """A host that is written, or a variable that stands for one (`$DB_HOST`, `orders.$NAMESPACE`)."""
    if not host:
        return False
    variables = _VARIABLE.findall(host)
    if not variables:
        return bool(_HOSTNAME.match(host)) or host.startswith("[")
    literal = _VARIABLE.sub("", host).strip("{}.")
    if literal:
        return True  # `bb-p2p.$NAMESPACE`: the host is written, its namespace comes from a variable
    return all(_HOST_VARIABLE.search((a or b).upper()) for a, b in variables)
