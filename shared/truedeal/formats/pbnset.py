"""PBN 2.1 export of a tournament set: 15 mandatory tags, DD and par.

One game per :class:`~.records.HandRecord`: the mandatory tag set in order
with Event, Site and Date filled in, then the supplemental tags sorted
alphabetically: ``DealNumber``, ``DoubleDummyTricks``, ``OptimumResultTable``,
``OptimumScore``, ``ParContract`` (the last four only when solved).  Line
ends are CRLF, as the export format requires, unless ``crlf=False``.
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import __version__
from ..cards import SEATS
from .records import STRAINS, HandRecord

_MTS_FIXED = ("West", "North", "East", "South")


def _value(text: str) -> str:
    if any(ch in text for ch in '"\r\n'):
        raise ValueError(f"PBN tag value must not contain quotes or line breaks: {text!r}")
    return text


def _game(r: HandRecord, event: str, site: str, date: str, nl: str) -> str:
    tags = [("Event", event), ("Site", site), ("Date", date), ("Board", str(r.board))]
    tags += [(seat, "?") for seat in _MTS_FIXED]
    tags += [("Dealer", SEATS[r.dealer]), ("Vulnerable", r.vulnerable), ("Deal", r.deal())]
    tags += [("Scoring", "?"), ("Declarer", "?"), ("Contract", "?"), ("Result", "?")]
    tags.append(("DealNumber", str(r.number)))
    lines = [f'[{k} "{_value(v)}"]' for k, v in tags]
    if r.dd is not None:
        lines.append(f'[DoubleDummyTricks "{r.dd.dd_hex()}"]')
        lines.append('[OptimumResultTable "Declarer;Denomination\\2R;Result\\2R"]')
        for seat in (0, 2, 1, 3):
            lines += [f"{SEATS[seat]} {s:>2} {r.dd.tricks[seat][t]:>2}" for t, s in enumerate(STRAINS)]
        lines.append(f'[OptimumScore "{r.dd.optimum_score()}"]')
        lines.append(f'[ParContract "{"; ".join(r.dd.par_contracts)}"]')
    return nl.join(lines) + nl + nl


def pbn_set(records: Sequence[HandRecord], *, event: str = "?", site: str = "?",
            date: str = "?", crlf: bool = True) -> str:
    """The PBN file of ``records`` (see module doc).  ``date`` is ``YYYY.MM.DD``."""
    nl = "\r\n" if crlf else "\n"
    head = f"% PBN 2.1{nl}% EXPORT{nl}%{nl}" + f'[Generator "truedeal {__version__}"]{nl}'
    event, site, date = (_value(x) for x in (event, site, date))
    return head + "".join(_game(r, event, site, date, nl) for r in records)


def read_pbn_deals(text: str) -> dict[int, tuple[int, ...]]:
    """Board number -> owners row of every game with ``Board`` and ``Deal`` tags.

    A plain tag reader for :func:`truedeal.tournament.verify`; raises
    ``ValueError`` on a malformed deal."""
    import re

    from .deal import parse_deal

    out: dict[int, tuple[int, ...]] = {}
    board = None
    for m in re.finditer(r'^\[(Board|Deal) "([^"]*)"\]', text, re.MULTILINE):
        if m.group(1) == "Board":
            board = int(m.group(2))
        elif board is not None:
            out[board] = tuple(parse_deal(m.group(2)).tolist())
            board = None
    return out
