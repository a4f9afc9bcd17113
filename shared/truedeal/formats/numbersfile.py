"""Deal numbers, one per line."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from .. import kernel
from .rotation import STANDARD, Rotation, _check_board
from .stream import Batch, _batches, _is_limbs

#: Most lines formatted into one yielded chunk: 30 bytes a line, so 120 KB
#: (a call per 256 lines cost as much as the formatting).
NUMBER_LINES = 4096


def numbers(batches: Iterable[Batch], first_board: int = 1, *, rotation: Rotation = STANDARD) -> Iterator[str]:
    """Deal numbers, one decimal integer per line (``"\\n"``-terminated).

    ``first_board`` and ``rotation`` are accepted for interface uniformity
    (``first_board`` is validated) but not written.  Every batch must carry its numbers; its owners may be None.  Yields chunks of at
    most NUMBER_LINES lines; limbs are formatted by :func:`truedeal.kernel.format_numbers`.
    """
    _check_board(first_board)

    def records() -> Iterator[str]:
        for b, owners, nums in _batches(batches, first_board, numbers_only=True):
            if nums is None and not len(owners):
                continue
            if nums is None:
                raise ValueError(f"board {b}: the numbers format needs deal numbers")
            for i in range(0, len(nums), NUMBER_LINES):  # chunks stay bounded
                part = nums[i : i + NUMBER_LINES]
                if _is_limbs(part):
                    yield kernel.format_numbers(part).decode("ascii")
                else:
                    yield "".join([f"{int(x)}\n" for x in part])

    return records()
