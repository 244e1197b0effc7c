"""Go duration strings (`time.ParseDuration`), as Istio reads ProxyConfig durations."""

from __future__ import annotations

import re

from meshlint import numbers

# Go keeps a duration in an int64 of nanoseconds, and ParseDuration refuses one beyond it.
MAX_SECONDS = numbers.INT64_MAX / 1e9
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h)")
PATTERN = r"^[-+]?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$"


def parse_duration(text: object) -> float | None:
    """Seconds for a valid Go duration string, else None. A unit is required except for `0`."""
    if not isinstance(text, str) or not text:
        return None
    body = text
    sign = 1.0
    if body[0] in "+-":
        sign = -1.0 if body[0] == "-" else 1.0
        body = body[1:]
    if body == "0":
        return 0.0
    total = 0.0
    pos = 0
    for match in _PART.finditer(body):
        if match.start() != pos:
            return None
        total += float(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    if pos != len(body) or pos == 0 or total > MAX_SECONDS:
        return None
    return sign * total


def format_seconds(seconds: float) -> str:
    return f"{seconds:g}s"
