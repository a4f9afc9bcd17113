"""PBN deal strings: :func:`deal_string` writes one, :func:`parse_deal` reads one.

Conventions are those of :mod:`truedeal.cards`: card = 4*rank + suit (ranks
A..2 = 0..12, suits S H D C = 0..3), seats N E S W = 0..3, and a deal is a
length-52 row ``owners`` with ``owners[card] = seat``.
"""

from __future__ import annotations

import re

import numpy as np

from ..cards import RANKS, SEAT_NAMES, SEATS, SUIT_NAMES, SUITS, deal_seats

_check_row = deal_seats  # one validator for every deal row


def _check_first(first: int) -> int:
    if isinstance(first, bool) or not isinstance(first, (int, np.integer)) or not 0 <= first <= 3:
        raise ValueError(f"first seat must be an int 0..3 (N E S W), got {first!r}")
    return int(first)


def _holdings(seats: list[int]) -> list[list[str]]:
    """``h[seat][suit]`` = ranks held, highest first (no validation)."""
    h: list[list[list[str]]] = [[[], [], [], []] for _ in range(4)]
    for c, s in enumerate(seats):  # card order is rank-major, A first
        h[s][c & 3].append(RANKS[c >> 2])
    return [["".join(x) for x in hand] for hand in h]


def _pbn_deal(h: list[list[str]], first: int) -> str:
    return SEATS[first] + ":" + " ".join(
        ".".join(h[(first + i) % 4]) for i in range(4)
    )


def deal_string(owners_row, first: int = 0) -> str:
    """PBN ``Deal`` value of one deal, hands clockwise from seat ``first``.

    ``owners_row`` is a length-52 integer array (``owners_row[card] = seat``)
    in which every seat holds exactly 13 cards; ``first`` is 0..3 (N E S W).
    Each hand is written ``S.H.D.C`` with ranks ``AKQJT98765432`` in
    descending order, ``T`` for ten and an empty string for a void, e.g.
    ``"N:AKQJ.AKQ.AKQ.AKQ T98.... ..."``.  Raises ``ValueError`` on an invalid
    deal or seat.
    """
    first = _check_first(first)
    return _pbn_deal(_holdings(_check_row(owners_row)), first)


_DEAL_TAG = re.compile(r'^\[\s*deal\s+"(.*)"\s*\]$', re.IGNORECASE | re.DOTALL)
_RANK_INDEX = {r: i for i, r in enumerate(RANKS)}


def _card_name(c: int) -> str:
    return SUITS[c & 3] + RANKS[c >> 2]


def _short(text: str, limit: int = 80) -> str:
    r = repr(text)
    return r if len(r) <= limit else r[: limit - 4] + "...'"


def parse_deal(text: str) -> np.ndarray:
    """Parse a PBN deal string into a ``(52,)`` uint8 owners row.

    Accepted: ``"<first>:<h1> <h2> <h3> <h4>"`` with ``<first>`` one of
    N E S W (any case), hands clockwise from ``<first>`` separated by
    whitespace, each hand ``S.H.D.C`` (void = empty).  Ranks may be upper or
    lower case, in any order, with ``T`` or ``10`` for the ten.  The whole
    string may be wrapped as a PBN tag, ``[Deal "..."]``, and surrounding
    whitespace is ignored.  As in PBN, at most one hand may be ``-`` (unknown);
    it then receives the 13 cards not in the other three hands.

    The result is always a complete, valid deal.  Anything else raises
    ``ValueError`` with a one-line message naming the problem (wrong number of
    hands, a hand without exactly 4 suits, an unknown character, a duplicate
    card, a seat whose card count is not 13, missing cards).
    """
    if not isinstance(text, str):
        raise ValueError(f"deal must be a string, got {type(text).__name__}")
    s = text.strip()
    m = _DEAL_TAG.match(s)
    if m:
        s = m.group(1).strip()
    if len(s) < 2 or s[1] != ":" or s[0].upper() not in SEATS:
        raise ValueError(
            f"deal must start with a seat and a colon (N:, E:, S: or W:), got {_short(text)}"
        )
    first = SEATS.index(s[0].upper())
    hands = s[2:].split()
    if len(hands) != 4:
        raise ValueError(f"deal must have 4 hands separated by spaces, got {len(hands)}")

    owners = np.full(52, 255, dtype=np.uint8)
    unknown: list[int] = []
    counts = [0, 0, 0, 0]
    for i, hand in enumerate(hands):
        seat = (first + i) % 4
        name = SEAT_NAMES[seat]
        if hand == "-":
            unknown.append(seat)
            continue
        suits = hand.split(".")
        if len(suits) != 4:
            raise ValueError(
                f"{name} hand {hand!r} has {len(suits)} suit(s); expected 4 separated by '.' (S.H.D.C)"
            )
        for suit, holding in enumerate(suits):
            ranks = holding.upper().replace("10", "T")
            for ch in ranks:
                r = _RANK_INDEX.get(ch)
                if r is None:
                    raise ValueError(
                        f"unknown character {ch!r} in {name} {SUIT_NAMES[suit]} {holding!r}; "
                        "ranks are AKQJT98765432 (or 10)"
                    )
                c = 4 * r + suit
                if owners[c] != 255:
                    prev = SEAT_NAMES[owners[c]]
                    where = f"twice in {name}" if prev == name else f"in both {prev} and {name}"
                    raise ValueError(f"duplicate card {_card_name(c)} ({where})")
                owners[c] = seat
                counts[seat] += 1

    if len(unknown) > 1:
        raise ValueError(
            f"at most one hand may be unknown ('-'), got {len(unknown)}: "
            + ", ".join(SEAT_NAMES[u] for u in unknown)
        )
    bad = [
        f"{SEAT_NAMES[seat]} has {counts[seat]} cards"
        for seat in range(4)
        if seat not in unknown and counts[seat] != 13
    ]
    if bad:
        missing = [c for c in range(52) if owners[c] == 255]
        msg = ", ".join(bad) + " (expected 13 each)"
        if missing and not unknown:
            msg += "; cards not dealt: " + " ".join(_card_name(c) for c in missing)
        raise ValueError(msg)
    if unknown:  # the three known hands hold 39 distinct cards
        owners[owners == 255] = unknown[0]
    return owners

