"""Double dummy and par with endplay's DDS (Bo Haglund's solver).

:func:`solve_boards` solves a batch: ``endplay.dds.calc_all_tables`` for
the tables (DDS threads over the batch), then ``endplay.dds.par`` per board
with its dealer and vulnerability.  Results are deterministic, so a board
solved twice (a retried chunk) gives the same answer.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ..formats.records import DoubleDummy, HandRecord

#: Boards per DDS call (endplay allows up to 200 tables; smaller keeps memory flat).
BATCH = 32
_STRAIN_ORDER = None  # endplay Denom for NT S H D C, filled lazily
_VUL = {"None": "none", "NS": "ns", "EW": "ew", "All": "both"}


def _denoms():
    from endplay.types import Denom

    return (Denom.nt, Denom.spades, Denom.hearts, Denom.diamonds, Denom.clubs)


def contract_text(c) -> str:
    """``"S 3Sx-1"``: declarer, level, strain (NT S H D C), x/xx, result (= or +n/-n)."""
    from endplay.types import Denom, Penalty

    strain = {Denom.nt: "NT", Denom.spades: "S", Denom.hearts: "H", Denom.diamonds: "D", Denom.clubs: "C"}[c.denom]
    pen = {Penalty.passed: "", Penalty.doubled: "x", Penalty.redoubled: "xx"}[c.penalty]
    res = "=" if c.result == 0 else f"{c.result:+d}"
    return f"{'NESW'[int(c.declarer)]} {c.level}{strain}{pen}{res}"


def solve_tables(records: Sequence[HandRecord]) -> list[DoubleDummy]:
    """Double dummy table and par of each record (endplay DDS)."""
    from endplay.dds import calc_all_tables, par
    from endplay.types import Deal, Player, Vul

    denoms = _denoms()
    out: list[DoubleDummy] = []
    for i in range(0, len(records), BATCH):
        part = records[i:i + BATCH]
        tables = calc_all_tables([Deal(r.deal(0)) for r in part])
        for r, table in zip(part, tables):
            tricks = tuple(tuple(table[d, Player(s)] for d in denoms) for s in range(4))
            p = par(table, getattr(Vul, _VUL[r.vulnerable]), Player(r.dealer))
            out.append(DoubleDummy(tricks, int(p.score), tuple(contract_text(c) for c in p)))
    return out


def solve_boards(records: Sequence[HandRecord]) -> list[HandRecord]:
    """``records`` with their ``dd`` filled in."""
    return [dataclasses.replace(r, dd=dd) for r, dd in zip(records, solve_tables(records))]
