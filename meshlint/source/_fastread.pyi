# Types of the C reader (csrc/fastread/), for mypy.
from collections.abc import Callable
from typing import Any, final

from meshlint.source import positions

@final
class Mark:
    def __init__(self, line: int, column: int) -> None: ...
    @property
    def line(self) -> int: ...
    @property
    def column(self) -> int: ...

# Per document: root, root mark, 0-based end line, and the raw maps, sequences and starts by id,
# typed as the position table keeps them (its marks are this Mark).
Read = list[tuple[Any, positions.Mark, int, dict[int, positions.RawMap], dict[int, positions.RawSeq], dict[int, positions.Mark]]]

def read(text: str, first_characters: frozenset[str], letter_words: frozenset[str], resolve_plain: Callable[[str], Any], max_depth: int, /) -> Read | None: ...
def parses(text: str, /) -> bool: ...
