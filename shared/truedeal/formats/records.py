"""The board record of a tournament set, shared by the set-file writers.

A :class:`HandRecord` is one board as it goes on paper and into the
dealing-machine files: its number, dealer, vulnerability, the deal, its
7Z68 deal number, the label of the spec that made it and (when solved) its
double-dummy table and par.  The writers in this package take a sequence of
records; :mod:`truedeal.tournament` makes them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..cards import HCP_OF_RANK, SEATS
from .deal import _holdings, _pbn_deal

#: Strain order of a double-dummy row: notrump, then spades to clubs.
STRAINS = ("NT", "S", "H", "D", "C")
#: Declarer order of ``DoubleDummyTricks`` (PBN de-facto: N, S, E, W).
DD_DECLARERS = (0, 2, 1, 3)


class FormatLimit(ValueError):
    """A format cannot hold these boards (e.g. a board number above 99 in DLM)."""


@dataclass(frozen=True)
class DoubleDummy:
    """A board's solved double dummy: ``tricks[seat][strain]`` with seats
    N E S W and strains :data:`STRAINS`; par score from North-South's view;
    par contracts as ``"<declarer> <level><strain>[x|xx]<result>"``, e.g.
    ``"S 3Sx-1"`` or ``"N 4H="``."""

    tricks: tuple[tuple[int, ...], ...]
    par_score: int
    par_contracts: tuple[str, ...]

    def dd_hex(self) -> str:
        """The 20 hex digits of PBN ``DoubleDummyTricks``: declarers N S E W,
        each with NT S H D C."""
        return "".join(f"{self.tricks[s][t]:x}" for s in DD_DECLARERS for t in range(5))

    def optimum_score(self) -> str:
        """PBN ``OptimumScore`` value, e.g. ``"NS 420"`` or ``"NS -100"``."""
        return f"NS {self.par_score}"


@dataclass(frozen=True)
class HandRecord:
    """One board of a set (see module doc).  ``owners[card] = seat``."""

    board: int
    dealer: int
    vulnerable: str  # None NS EW All
    owners: tuple[int, ...]
    number: int
    spec: str = ""
    dd: DoubleDummy | None = None

    @property
    def hands(self) -> list[list[str]]:
        """``hands[seat][suit]``: ranks held, highest first (T for ten)."""
        return _holdings(list(self.owners))

    def deal(self, first: int | None = None) -> str:
        """PBN deal string starting with ``first`` (default: the dealer)."""
        return _pbn_deal(self.hands, self.dealer if first is None else first)

    def hcp(self) -> tuple[int, int, int, int]:
        """High-card points of N, E, S, W."""
        pts = [0, 0, 0, 0]
        for c in range(16):  # cards 0-15 are the honours, A K Q J of each suit
            pts[self.owners[c]] += HCP_OF_RANK[c >> 2]
        return pts[0], pts[1], pts[2], pts[3]

    @property
    def dealer_letter(self) -> str:
        return SEATS[self.dealer]
