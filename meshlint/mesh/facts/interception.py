"""Traffic interception: what the sidecar captures, from which setting, and what the injector rejects.

Reference §5. Each `traffic.sidecar.istio.io/*` pod annotation has a mesh-wide Helm equivalent under
`global.proxy`; the annotation, when present, replaces the Helm value whole (they are never merged).
The injector validates the annotations (not the Helm values) and refuses the pod when one is
malformed, so a malformed value is reported once, as such, and never read as a list of ports.
"""

import re
from typing import Any, NamedTuple

from meshlint import numbers
from meshlint.findings import Position
from meshlint.mesh.istio import TRAFFIC_PREFIX
from meshlint.mesh.setting import Setting
from meshlint.source.document import Node


class Knob(NamedTuple):
    """One interception setting: its annotation, its Helm `global.proxy` key, default, and format."""

    name: str
    helm: str
    default: str
    kind: str  # "ports", "cidrs", or "free" (passed through without validation)
    star: bool  # whether exactly "*" (everything) is allowed

    @property
    def annotation(self) -> str:
        return TRAFFIC_PREFIX + self.name


KNOBS = {
    knob.name: knob
    for knob in (
        Knob("includeOutboundIPRanges", "includeIPRanges", "*", "cidrs", star=True),
        Knob("excludeOutboundIPRanges", "excludeIPRanges", "", "cidrs", star=False),
        Knob("includeInboundPorts", "includeInboundPorts", "*", "ports", star=True),
        Knob("excludeInboundPorts", "excludeInboundPorts", "", "ports", star=False),
        Knob("includeOutboundPorts", "includeOutboundPorts", "", "free", star=False),
        Knob("excludeOutboundPorts", "excludeOutboundPorts", "", "ports", star=False),
    )
}


class Parsed(NamedTuple):
    """A knob's value read the injector's way: everything (`*`), a list of items, or a problem."""

    everything: bool = False
    items: tuple[Any, ...] = ()
    problem: str | None = None
    offset: int = 0  # where in the value the problem is, for a precise position


def parse(knob: Knob, text: str) -> Parsed:
    if knob.star and text == "*":
        return Parsed(everything=True)
    if knob.kind == "ports":
        return parse_ports(text)
    if knob.kind == "cidrs":
        return parse_cidrs(text)
    return Parsed(items=tuple(text.split(",")) if text else ())


def parse_ports(text: str) -> Parsed:
    """Comma-separated ports; items are trimmed, each a base-10 uint16 (`strconv.ParseUint(p, 10, 16)`)."""
    if not text.strip():
        return Parsed()
    ports, offset = [], 0
    for item in text.split(","):
        word = item.strip()
        at = offset + (item.find(word) if word else 0)
        offset += len(item) + 1
        number = numbers.port(word, zero=True)
        if number is not None:
            ports.append(number)
        elif re.fullmatch(r"[0-9]+\s*[-:]\s*[0-9]+", word):
            return Parsed(problem=f"{word!r} is a port range, and port lists take single ports only", offset=at)
        elif not word:
            return Parsed(problem="an empty item (a stray comma) is not a port", offset=at)
        else:
            return Parsed(problem=f"{word!r} is not a port number (0-65535)", offset=at)
    return Parsed(items=tuple(ports))


def parse_cidrs(text: str) -> Parsed:
    """Comma-separated CIDRs, each parsed whole (`netip.ParsePrefix`): no spaces, `/len` required."""
    if text == "":
        return Parsed()
    import ipaddress  # only pods with CIDR annotations need it

    cidrs, offset = [], 0
    for item in text.split(","):
        at = offset
        offset += len(item) + 1
        word = item.strip()
        if item != word or " " in item:
            return Parsed(problem=f"{item!r} has spaces, which the injector does not trim", offset=at)
        if word == "*":
            return Parsed(problem="'*' is allowed only in includeOutboundIPRanges", offset=at)
        address, slash, length = word.partition("/")
        try:
            ipaddress.ip_address(address)
            valid_address = True
        except ValueError:
            valid_address = False
        if valid_address and not slash:
            bits = 128 if ":" in address else 32
            return Parsed(problem=f"{word!r} is an address, not a CIDR (write {word}/{bits})", offset=at)
        if not valid_address or not re.fullmatch(r"[0-9]{1,3}", length):
            return Parsed(problem=f"{word!r} is not a CIDR such as 10.0.0.0/8", offset=at)
        try:
            ipaddress.ip_network(word, strict=False)
        except ValueError:
            return Parsed(problem=f"{word!r} is not a CIDR such as 10.0.0.0/8", offset=at)
        cidrs.append(word)
    return Parsed(items=tuple(cidrs))


def covers_everything(cidr: str) -> bool:
    """0.0.0.0/0 and ::/0 (and any other /0) cover every address of their family."""
    return cidr.partition("/")[2] == "0"


class Interception(NamedTuple):
    """The effective value of one knob for one workload, and where it came from."""

    knob: Knob
    setting: Setting[Any]  # the text as written; origin None for the default; local for the pod annotation
    parsed: Parsed
    node: Node | None = None  # the pod annotation, when it decides

    @property
    def problem_position(self) -> Position | None:
        """Where in the pod annotation the injector would stop reading, when it rejects the value."""
        if self.node is None or self.parsed.problem is None or not isinstance(self.node.value, str):
            return None
        return self.node.position_at(self.parsed.offset)

    @property
    def source(self) -> str:
        """`traffic.sidecar.istio.io/excludeInboundPorts "9000" (app.yaml:12)`, or the Helm value."""
        name = self.knob.annotation if self.setting.local else f"global.proxy.{self.knob.helm}"
        if self.setting.origin is None:
            return f'{self.knob.name} "{self.knob.default}" (default)'
        return f'{name} "{self.setting.value}" ({self.setting.where})'


def effective(annotations: dict[str, Node], helm_proxy: dict[str, Setting[Any]]) -> dict[str, Interception]:
    """Each knob's value for a pod: its annotation, else the mesh-wide Helm value, else the default."""
    found = {}
    for knob in KNOBS.values():
        node = annotations.get(knob.annotation)
        helm = helm_proxy.get(knob.helm)
        if node is not None and not isinstance(node.value, str):
            # The API server rejects the manifest (ML404): nothing is captured or bypassed.
            found[knob.name] = Interception(knob, Setting(node.text, node.pos, local=True), Parsed(problem="not a string"), node)
            continue
        if node is not None:
            setting = Setting(node.value, node.pos, local=True)
        elif helm is not None and isinstance(helm.value, (str, int)) and not isinstance(helm.value, bool):
            setting = helm.derived(str(helm.value))
        else:
            setting = Setting(knob.default, None)
        found[knob.name] = Interception(knob, setting, parse(knob, setting.value), node)
    return found
