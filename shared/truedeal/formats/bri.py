"""BRI: 128 bytes per board.

The 78-character hand block of :mod:`.machine` (N, E, S as two-digit
machine card numbers, West implied), then 18 spaces and 32 NUL bytes, as
BigDeal writes it.  Boards are consecutive from the file's first board
(the file itself does not name it); at most 99 boards.
"""

from __future__ import annotations

from collections.abc import Sequence

from .machine import bri_hands, check_machine_boards, owners_of_bri
from .records import HandRecord

RECORD_BYTES = 128
_PAD = b" " * 18 + b"\x00" * 32


def bri_bytes(records: Sequence[HandRecord]) -> bytes:
    """The BRI file of ``records`` (consecutive boards within 1..99)."""
    check_machine_boards(records, "BRI")
    return b"".join(bri_hands(r.owners).encode("ascii") + _PAD for r in records)


def read_bri(data: bytes, first_board: int) -> dict[int, tuple[int, ...]]:
    """Board number -> owners row; boards count from ``first_board``."""
    if len(data) % RECORD_BYTES:
        raise ValueError(f"BRI size {len(data)} is not a multiple of {RECORD_BYTES}")
    return {
        first_board + i: owners_of_bri(data[i * RECORD_BYTES:i * RECORD_BYTES + 78].decode("ascii"))
        for i in range(len(data) // RECORD_BYTES)
    }
