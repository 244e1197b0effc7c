# Types of the C reader (_fastread.c), for mypy.
from collections.abc import Callable
from typing import Any, final

from meshlint.source import document

@final
class Mark:
    def __init__(self, line: int, column: int) -> None: ...
    @property
    def line(self) -> int: ...
    @property
    def column(self) -> int: ...

# Per document: root, root mark, 0-based end line, and the raw maps, sequences and starts by id,
# typed as the position table keeps them (its marks are this Mark).
Read = list[tuple[Any, document.Mark, int, dict[int, document.RawMap], dict[int, document.RawSeq], dict[int, document.Mark]]]

def read(text: str, first_characters: frozenset[str], letter_words: frozenset[str], resolve_plain: Callable[[str], Any], max_depth: int, /) -> Read | None: ...
def parses(text: str, /) -> bool: ...
