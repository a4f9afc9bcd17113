"""Card, seat and suit conventions shared by every module.

Cards are numbered in Pavlicek's 7Z68 order: card = 4 * rank + suit, with
ranks A K Q J T 9 ... 2 (0..12) and suits S H D C (0..3).  So cards 0-3 are
the four aces, and the 16 honours (A K Q J) are exactly cards 0-15; the 36
spot cards (T-2) are cards 16-51.

Seats are N E S W (0..3).  A batch of deals is an ``(n, 52)`` uint8 array
``owners`` whose entry ``[d, card]`` is the seat holding ``card`` in deal d.
"""

import operator
from math import factorial

SEATS = "NESW"
SEAT_NAMES = ("north", "east", "south", "west")
SUITS = "SHDC"
SUIT_NAMES = ("spades", "hearts", "diamonds", "clubs")
RANKS = "AKQJT98765432"

N_CARDS = 52
N_HONOURS = 16
SPOTS_PER_SUIT = 9
HCP_OF_RANK = (4, 3, 2, 1)  # A K Q J
MAX_HCP = 37  # 40 minus three jacks is the most one hand can hold

#: Number of deals, D = 52! / (13!)^4.
D = factorial(52) // factorial(13) ** 4


def card(rank: int, suit: int) -> int:
    """Index of the card of ``rank`` (0 = ace) in ``suit`` (0 = spades)."""
    return 4 * rank + suit


def rank_of(c: int) -> int:
    return c // 4


def suit_of(c: int) -> int:
    return c % 4


def card_names(cards) -> str:
    """Cards as dealer names them, suit first: ``"C2, D3"``."""
    return ", ".join(SUITS[suit_of(c)] + RANKS[rank_of(c)] for c in cards)


def suit_cards(suit: int) -> list[int]:
    """The 13 cards of ``suit``, highest first."""
    return [card(r, suit) for r in range(13)]


def mask_hcp(mask: int) -> int:
    """HCP of a 4-bit honour mask within one suit (bit r = rank r, A = bit 0)."""
    return sum(HCP_OF_RANK[r] for r in range(4) if mask >> r & 1)


def deal_seats(owners_row) -> list[int]:
    """The 52 seats of one deal as a list, after checking that it is a deal:
    52 integer seats 0..3 with 13 cards each.  Raises ValueError (one line)."""
    try:
        row = [operator.index(x) for x in owners_row]
    except TypeError:
        raise ValueError("a deal must be a sequence of 52 integer seats 0..3") from None
    if len(row) != 52:
        raise ValueError(f"a deal must have shape (52,), got {len(row)} entries")
    counts = [0, 0, 0, 0]
    for x in row:
        if not 0 <= x <= 3:
            raise ValueError(f"seat values must be 0..3, got {x}")
        counts[x] += 1
    if counts != [13, 13, 13, 13]:
        raise ValueError("each seat must hold 13 cards, got " + ", ".join(f"{SEATS[s]}={counts[s]}" for s in range(4)))
    return row
