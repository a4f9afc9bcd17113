"""Deal numbers, one per line."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from .rotation import _check_board
from .stream import Batch, _boards, _chunked


def numbers(batches: Iterable[Batch], first_board: int = 1) -> Iterator[str]:
    """Deal numbers, one decimal integer per line (``"\\n"``-terminated).

    ``first_board`` is accepted for interface uniformity and validated but
    not written.  Every batch must carry its numbers.
    """
    _check_board(first_board)

    def records() -> Iterator[str]:
        for b, _seats, num in _boards(batches, first_board):
            if num is None:
                raise ValueError(f"board {b}: the numbers format needs deal numbers")
            yield f"{num}\n"

    return _chunked(records())
