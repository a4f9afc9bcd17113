"""CSV, one row per board, for spreadsheets.

Columns: ``board, dealer, vulnerable, spec, deal_number, deal`` (PBN, North
first), ``north, east, south, west`` (``S.H.D.C``), ``hcp_n .. hcp_w``, then
when solved the 20 double-dummy tricks ``dd_<declarer>_<strain>`` (N E S W
by NT S H D C), ``par_score`` (North-South's view) and ``par_contracts``.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from ..cards import SEATS
from .records import STRAINS, HandRecord

BASE_COLUMNS = ["board", "dealer", "vulnerable", "spec", "deal_number", "deal",
                "north", "east", "south", "west", "hcp_n", "hcp_e", "hcp_s", "hcp_w"]
DD_COLUMNS = [f"dd_{s.lower()}_{t.lower()}" for s in SEATS for t in STRAINS] + ["par_score", "par_contracts"]


def _row(r: HandRecord, solved: bool) -> list:
    h = r.hands
    row = [r.board, SEATS[r.dealer], r.vulnerable, r.spec, str(r.number), r.deal(0)]
    row += [".".join(h[s]) for s in range(4)] + list(r.hcp())
    if solved:
        dd = r.dd
        row += [dd.tricks[s][t] for s in range(4) for t in range(5)] if dd else [""] * 20
        row += [dd.par_score, "; ".join(dd.par_contracts)] if dd else ["", ""]
    return row


def csv_text(records: Sequence[HandRecord]) -> str:
    """The CSV file (RFC 4180, CRLF rows) of ``records``."""
    solved = any(r.dd is not None for r in records)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow(BASE_COLUMNS + (DD_COLUMNS if solved else []))
    for r in records:
        w.writerow(_row(r, solved))
    return buf.getvalue()


def read_csv_deals(text: str) -> dict[int, tuple[int, ...]]:
    """Board number -> owners row from the ``board`` and ``deal`` columns."""
    from .deal import parse_deal

    return {int(row["board"]): tuple(parse_deal(row["deal"]).tolist())
            for row in csv.DictReader(io.StringIO(text))}
