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


def closest(word: str, candidates: Iterable[str], *, fold_case: bool = False) -> str | None:
    """The candidate `word` was most likely meant to be (a misspelt key or rule name), or None when
    none is close. With `fold_case`, case is ignored in comparing and the candidate returned as given."""
    import difflib  # only a misspelling pays for it

    spelled = {(c.upper() if fold_case else c): c for c in candidates}
    found = difflib.get_close_matches(word.upper() if fold_case else word, list(spelled), n=1, cutoff=0.6)
    return spelled[found[0]] if found else None
