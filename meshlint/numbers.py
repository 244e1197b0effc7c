"""Whole numbers written as text, the one way meshlint reads them: ASCII digits only, bounded length.

A manifest is read by Go programs (the kubelet, the injectors, proxy-init), whose `strconv` takes the
ASCII digits 0-9 and nothing else. Python's `str.isdigit` also takes `²`, `٣` and `８`, and `int()` refuses
text of more than a few thousand digits; both would let a bad value end a run instead of being read
as "not a number". Every place that turns manifest text into a number asks here.
"""

from __future__ import annotations

UINT16_MAX = 2**16 - 1
INT64_MAX = 2**63 - 1
UINT64_MAX = 2**64 - 1


def digits(text: str) -> bool:
    """Only ASCII digits, and at least one."""
    return text.isascii() and text.isdigit()


def whole(text: str, maximum: int = UINT64_MAX) -> int | None:
    """The number that ASCII digits spell (leading zeros allowed, as Go reads them), or None: for
    anything else, and for a number above `maximum` (Go's parsers refuse it as out of range)."""
    if not digits(text):
        return None
    significant = text.lstrip("0")
    if len(significant) > len(str(maximum)):
        return None  # far out of range: never handed to int()
    number = int(significant or "0")
    return number if number <= maximum else None


def port(value: object, zero: bool = False) -> int | None:
    """A port number (1-65535; 0 too when `zero`) from a YAML integer or a string of digits."""
    if isinstance(value, bool):
        return None
    number = value if isinstance(value, int) else whole(value, UINT16_MAX) if isinstance(value, str) else None
    if number is None or not (0 if zero else 1) <= number <= UINT16_MAX:
        return None
    return number
