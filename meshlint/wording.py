"""How messages put things into words: lists that read as lists, counts with the right noun."""

from __future__ import annotations

from collections.abc import Iterable


def listing(items: Iterable[str], conjunction: str = "and") -> str:
    """`a`, `a and b`, `a, b and c`; each item once, in the order first given."""
    unique = list(dict.fromkeys(items))
    if len(unique) <= 1:
        return "".join(unique)
    return f"{', '.join(unique[:-1])} {conjunction} {unique[-1]}"


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`1 container`, `2 containers`."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"
