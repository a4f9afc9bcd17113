"""Duplimate DUP: 156 bytes per board, no separators.

Bytes 1-78 are the BRI hand block (N, E, S; see :mod:`.machine`).  Bytes
79-146 are four 17-byte DGE hands, N E S W, each the four DOS suit glyphs
(spades 0x06, hearts 0x03, diamonds 0x04, clubs 0x05) each followed by its
ranks, highest first, padded with spaces to 17 bytes.  Bytes 147-156 are
the trailer ``Y`` (random hands) ``N`` (not reversed), the lowest board
(3, left-aligned), copies (2, BigDeal writes ``0``) and the highest board
(3), space-padded: ``YN1  0 32 `` for boards 1-32.  At most 99 boards.
"""

from __future__ import annotations

from collections.abc import Sequence

from .machine import bri_hands, check_machine_boards, owners_of_bri
from .records import HandRecord

RECORD_BYTES = 156
_GLYPHS = b"\x06\x03\x04\x05"


def _dge_hand(hand: list[str]) -> bytes:
    body = b"".join(bytes([_GLYPHS[s]]) + hand[s].encode("ascii") for s in range(4))
    return body.ljust(17, b" ")


def dup_bytes(records: Sequence[HandRecord]) -> bytes:
    """The DUP file of ``records`` (consecutive boards within 1..99)."""
    check_machine_boards(records, "DUP")
    trailer = f"YN{records[0].board:<3}{0:<2}{records[-1].board:<3}".encode("ascii")
    out = []
    for r in records:
        h = r.hands
        out.append(bri_hands(r.owners).encode("ascii") + b"".join(_dge_hand(h[s]) for s in range(4)) + trailer)
    return b"".join(out)


def read_dup(data: bytes) -> dict[int, tuple[int, ...]]:
    """Board number -> owners row of a DUP file (from its BRI blocks and trailer)."""
    if len(data) % RECORD_BYTES:
        raise ValueError(f"DUP size {len(data)} is not a multiple of {RECORD_BYTES}")
    out = {}
    for i in range(len(data) // RECORD_BYTES):
        rec = data[i * RECORD_BYTES:(i + 1) * RECORD_BYTES]
        low = int(rec[148:151].decode("ascii"))
        out[low + i] = owners_of_bri(rec[:78].decode("ascii"))
    return out
