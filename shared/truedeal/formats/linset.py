"""LIN as BBO writes it, one line per board, for a tournament set.

``pn|South,West,North,East|st||md|<D><S>,<W>,<N>|rh||ah|Board <B>|sv|<V>|pg||``
with the dealer digit ``<D>`` 1=S 2=W 3=N 4=E, three hands (East implied),
each ``S..H..D..C..``, and ``<V>`` ``o``/``n``/``e``/``b``.  Every board
starts with ``pn|`` (BBO's own files do, and readers such as endplay's split
a file into boards there).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..cards import SUITS
from .records import HandRecord

_DEALER_DIGIT = ("3", "4", "1", "2")  # indexed by seat N E S W
_VUL = {"None": "o", "NS": "n", "EW": "e", "All": "b"}


def _hand(hand: list[str]) -> str:
    return "".join(SUITS[s] + hand[s] for s in range(4))


def lin_board(r: HandRecord, names: Sequence[str] = ("", "", "", "")) -> str:
    """One LIN line (no line end); ``names`` are South, West, North, East."""
    h = r.hands
    md = _DEALER_DIGIT[r.dealer] + ",".join(_hand(h[seat]) for seat in (2, 3, 0))
    return f"pn|{','.join(names)}|st||md|{md}|rh||ah|Board {r.board}|sv|{_VUL[r.vulnerable]}|pg||"


def lin_set(records: Sequence[HandRecord], *, crlf: bool = False) -> str:
    """The LIN file of ``records``: one line per board."""
    nl = "\r\n" if crlf else "\n"
    return "".join(lin_board(r) + nl for r in records)


def read_lin_deals(text: str) -> dict[int, tuple[int, ...]]:
    """Board number -> owners row from the ``md`` and ``ah`` fields of each line."""
    from .deal import parse_deal

    out: dict[int, tuple[int, ...]] = {}
    for line in text.splitlines():
        fields = line.split("|")
        pairs = dict(zip(fields[::2], fields[1::2]))
        if "md" not in pairs or "ah" not in pairs:
            continue
        hands = [h for h in pairs["md"][1:].split(",") if h]
        if len(hands) < 3:
            raise ValueError(f"LIN md field has {len(hands)} hands")
        pbn = [_pbn_hand(h) for h in hands[:3]] + ["-"]
        out[int(pairs["ah"].split()[-1])] = tuple(parse_deal("S:" + " ".join(pbn)).tolist())
    return out


def _pbn_hand(lin_hand: str) -> str:
    import re

    parts = re.fullmatch(r"S([^SHDC]*)H([^SHDC]*)D([^SHDC]*)C([^SHDC]*)", lin_hand)
    if not parts:
        raise ValueError(f"bad LIN hand {lin_hand!r}")
    return ".".join(parts.groups())
