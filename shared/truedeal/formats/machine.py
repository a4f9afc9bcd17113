"""Card numbering shared by the dealing-machine formats (DUP, BRI, DLM).

Machine card number ``n`` (1..52) is ``13 * suit + rank + 1`` with suits
S H D C and ranks A..2, so ``01`` is the spade ace, ``13`` the spade two,
``14`` the heart ace and ``52`` the club two.  Our card index is
``4 * rank + suit`` (see :mod:`truedeal.cards`).
"""

from __future__ import annotations

from collections.abc import Sequence

from .records import FormatLimit, HandRecord

#: The largest board number the Duplimate formats (DUP, DLM) can hold.
MAX_MACHINE_BOARD = 99


def machine_number(card: int) -> int:
    """Machine card number 1..52 of our card index."""
    return 13 * (card & 3) + (card >> 2) + 1


def card_of_machine(n: int) -> int:
    """Our card index of machine card number ``n`` (1..52)."""
    if not 1 <= n <= 52:
        raise ValueError(f"machine card number must be 1..52, got {n}")
    return 4 * ((n - 1) % 13) + (n - 1) // 13


def bri_hands(owners: Sequence[int]) -> str:
    """The 78 characters of N, E, S: 13 two-digit machine numbers each, ascending."""
    out = []
    for seat in (0, 1, 2):
        nums = sorted(machine_number(c) for c in range(52) if owners[c] == seat)
        out.append("".join(f"{n:02d}" for n in nums))
    return "".join(out)


def owners_of_bri(text: str) -> tuple[int, ...]:
    """Owners row of 78 BRI characters (West holds the cards not listed)."""
    if len(text) != 78 or not text.isdigit():
        raise ValueError("a BRI hand block must be 78 digits")
    owners = [3] * 52
    seen = set()
    for i in range(39):
        c = card_of_machine(int(text[2 * i: 2 * i + 2]))
        if c in seen:
            raise ValueError("a card is listed twice")
        seen.add(c)
        owners[c] = i // 13
    return tuple(owners)


def check_machine_boards(records: Sequence[HandRecord], fmt: str) -> None:
    """Raise :class:`FormatLimit` unless boards are consecutive within 1..99."""
    if not records:
        raise FormatLimit(f"{fmt}: no boards")
    boards = [r.board for r in records]
    if boards != list(range(boards[0], boards[0] + len(boards))):
        raise FormatLimit(f"{fmt}: boards must be consecutive")
    if boards[-1] > MAX_MACHINE_BOARD:
        raise FormatLimit(f"{fmt} holds boards 1-{MAX_MACHINE_BOARD} only, this session reaches {boards[-1]}")
