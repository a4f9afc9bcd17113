"""A dealer script's print actions, run on every deal as dealer runs them.

:func:`dealer_actions` is a streaming writer like those of
:data:`truedeal.formats.WRITERS`: it takes ``(owners, numbers)`` batches and
yields text.  For each deal it runs the script's print actions in order
(dealer runs its whole action list on every deal it produces):

* ``printall``, ``printew``, ``printcompact[(EXPR)]``, ``printoneline[(EXPR)]``
  in dealer's layouts (:mod:`.dealer_layout`); printcompact prints the
  expression's value on a line of its own after the hands, printoneline at
  the end of its line;
* ``printes``: its strings (``\\n`` included) and the values of its expressions;
* ``printpbn``: the deal's game from the PBN writer (:mod:`.pbnfile`, with its
  Dealer and Vulnerable from ``rotation`` and its DealNumber); the PBN header
  (``% PBN 2.1`` ... and ``[Generator]``) is written once, at the top;
* ``print(SEATS)`` prints at the end, as dealer does: for each seat it names
  (N E S W order), a page title and that seat's hands, four deals to a row.
  Those rows wait in temporary files (on disk past :data:`SPOOL_BYTES`), so
  memory stays bounded however many deals there are.

A deal's number is its board number.  Expressions are evaluated with numpy
on each chunk of deals (:func:`~truedeal.constraints.evaluate.evaluate_nums`);
a condition prints 1 or 0.  ``average`` and ``frequency`` are not per-deal
output: they are ignored here.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from .. import kernel
from ..constraints import ir
from ..constraints.evaluate import evaluate_nums
from ..constraints.fold import as_num
from . import dealer_layout as layout
from .pbnfile import pbn
from .rotation import STANDARD, Rotation, _check_board
from .stream import CHUNK_BOARDS, Batch, _batches

#: The print styles this writer runs (``print`` at the end, the others on every deal).
STYLES = frozenset({"printall", "print", "printew", "printpbn", "printcompact", "printoneline", "printes"})
#: Bytes of print(SEATS)'s pages held in memory per seat before they spill to a temporary file.
SPOOL_BYTES = 1 << 20


def print_actions(program: ir.Program | None) -> tuple[ir.Action, ...]:
    """The print actions of a script, in its order (none for a JSON spec)."""
    return () if program is None else tuple(a for a in program.actions if a.kind == "print")


def has_estimates(program: ir.Program | None) -> bool:
    """Whether a script has ``average`` or ``frequency`` actions (dealer's estimates)."""
    return program is not None and any(a.kind in ("average", "frequency") for a in program.actions)


def actions_rng(seed: str | None) -> np.random.Generator:
    """The generator of ``rnd()`` in print expressions: keyed by ``seed`` (so
    that a seeded output is the same every time), else by the OS."""
    if seed is None:
        return np.random.default_rng()
    digest = hashlib.sha256(b"truedeal print actions rnd\0" + seed.encode("utf-8")).digest()
    return np.random.default_rng(int.from_bytes(digest, "big"))


@dataclass(frozen=True)
class _Step:
    """One print action, ready to run on a chunk of deals.

    ``value``: the index of printcompact's or printoneline's expression among
    the chunk's values; ``items``: printes' strings, or its expressions' indexes."""

    style: str
    value: int | None = None
    items: tuple[str | int, ...] = ()
    seats: tuple[int, ...] = ()


def dealer_actions(batches: Iterable[Batch], first_board: int = 1, *, actions: Sequence[ir.Action],
                   rotation: Rotation = STANDARD, rng: np.random.Generator | None = None) -> Iterator[str]:
    """The text of ``actions`` (print actions) run on every deal of ``batches``.

    The actions are checked at once (before any output): ValueError with
    one line for an unknown style.  ``rng`` serves ``rnd()``.  Batches
    need their cards (owners); numbers, when given, go into printpbn's games.
    """
    _check_board(first_board)
    steps, exprs = _steps(actions)
    return _run(batches, first_board, steps, exprs, rotation, rng)


def _steps(actions: Sequence[ir.Action]) -> tuple[list[_Step], list[ir.Num]]:
    """The actions as steps, and the expressions they print, as numbers."""
    exprs: list[ir.Num] = []

    def slot(x: ir.Num | ir.Cond) -> int:
        exprs.append(as_num(x))  # a condition prints 1 or 0, as in dealer
        return len(exprs) - 1

    steps: list[_Step] = []
    for a in actions:
        _check(a)
        if a.style == "printes":
            steps.append(_Step(a.style, items=tuple(x if isinstance(x, str) else slot(x) for x in a.items)))
        else:
            value = None if a.expr is None else slot(a.expr)
            steps.append(_Step(a.style, value=value, seats=tuple(sorted(set(a.seats)))))  # dealer keeps a seat mask
    return steps, exprs


def check_actions(actions: Sequence[ir.Action]) -> None:
    """Raise ValueError (one line) if :func:`dealer_actions` cannot run ``actions``."""
    for action in actions:
        _check(action)


def _check(action: ir.Action) -> None:
    """One action: a print style this writer knows (what it prints, the
    parser let through: every function it takes can be evaluated)."""
    if action.kind != "print" or action.style not in STYLES:
        raise ValueError(f"not a print action dealer_actions can run: {action.kind} {action.style}".rstrip())
    if action.style == "print" and not action.seats:
        raise ValueError("print needs at least one seat")


def _run(batches: Iterable[Batch], first_board: int, steps: list[_Step], exprs: list[ir.Num], rotation: Rotation,
         rng: np.random.Generator | None) -> Iterator[str]:
    """:func:`dealer_actions`' text: the PBN header if printpbn is used, each
    chunk's per-deal text, then print's pages."""
    with _Pages({seat for s in steps if s.style == "print" for seat in s.seats}) as pages:
        pbn_games = any(s.style == "printpbn" for s in steps)
        if pbn_games:
            yield "".join(pbn([]))  # the header, with the Generator tag
        for b0, owners, nums in _batches(batches, first_board):
            for i in range(0, len(owners), CHUNK_BOARDS):  # each chunk's text stays bounded
                part, num = owners[i : i + CHUNK_BOARDS], None if nums is None else nums[i : i + CHUNK_BOARDS]
                games = _games(part, num, b0 + i, rotation) if pbn_games else []
                yield _chunk(b0 + i, part, steps, exprs, rng, games, pages)
        pages.finish()
        for step in steps:
            if step.style == "print":
                for seat in step.seats:
                    yield from pages.section(seat)


def _chunk(first: int, owners: np.ndarray, steps: list[_Step], exprs: list[ir.Num], rng: np.random.Generator | None,
           games: list[str], pages: _Pages) -> str:
    """The per-deal text of consecutive deals numbered ``first``..; their hands go to ``pages`` too."""
    deals = _hands(owners)
    values = [v.tolist() for v in evaluate_nums(owners, exprs, rng)] if exprs else []
    out: list[str] = []
    for d, deal in enumerate(deals):
        number = first + d
        game = games[d] if games else ""
        out.extend(_text(step, number, deal, [v[d] for v in values], game) for step in steps)
        pages.add(number, deal)
    return "".join(out)


def _text(step: _Step, number: int, deal: list[str], values: list[int], game: str) -> str:
    """What one action prints for one deal (``print``: nothing until the end)."""
    style = step.style
    if style == "printall":
        return layout.printall(number, deal)
    if style == "printew":
        return layout.printew(deal)
    if style == "printcompact":
        return layout.compact(deal) + ("" if step.value is None else f"{values[step.value]}\n")
    if style == "printoneline":
        return layout.oneline(deal) + ("" if step.value is None else str(values[step.value])) + "\n"
    if style == "printes":
        return "".join(x if isinstance(x, str) else str(values[x]) for x in step.items)
    if style == "printpbn":
        return game
    return ""


def _hands(owners: np.ndarray) -> list[list[str]]:
    """Each deal's hands N E S W as ``"S.H.D.C"``, from the kernel's PBN deal strings."""
    text = kernel.pbn_deal_strings(owners, 0).decode("ascii")
    n = kernel.PBN_LEN
    return [text[n * d + 2 : n * (d + 1) - 1].split(" ") for d in range(len(owners))]


def _games(owners: np.ndarray, nums: Sequence[int] | None, first: int, rotation: Rotation) -> list[str]:
    """The PBN writer's games of these deals (boards ``first``..), one string each.

    The writer ends every game with an empty line and none has one inside,
    so its text, past the header, splits into games at the empty lines."""
    head = "".join(pbn([], generator=False))
    text = "".join(pbn([(owners, nums)], first_board=first, generator=False, rotation=rotation))
    games = [game + "\n\n" for game in text[len(head) :].split("\n\n")[:-1]]
    if len(games) != len(owners):
        raise RuntimeError(f"the PBN writer gave {len(games)} games for {len(owners)} deals")
    return games


class _Pages:
    """print(SEATS)'s pages of each seat: rows of four deals, written to a
    temporary file per seat as they fill, read back at the end."""

    def __init__(self, seats: set[int]) -> None:
        self.files = {seat: tempfile.SpooledTemporaryFile(SPOOL_BYTES, "w+", encoding="ascii", newline="")
                      for seat in sorted(seats)}
        self.row: list[tuple[int, list[str]]] = []

    def __enter__(self) -> _Pages:
        return self

    def __exit__(self, *exc: object) -> None:
        for f in self.files.values():
            f.close()

    def add(self, number: int, deal: list[str]) -> None:
        """One more deal, numbered ``number``."""
        if not self.files:
            return
        self.row.append((number, deal))
        if len(self.row) == layout.ROW:
            self._write_row()

    def finish(self) -> None:
        """Write the last, shorter row (after the last deal)."""
        if self.row:
            self._write_row()

    def _write_row(self) -> None:
        numbers = [number for number, _ in self.row]
        for seat, f in self.files.items():
            f.write(layout.seat_row(numbers, [deal[seat] for _, deal in self.row]))
        self.row = []

    def section(self, seat: int) -> Iterator[str]:
        """The seat's pages: the title, every row, the form feed (several print actions may read them)."""
        f = self.files[seat]
        f.seek(0)
        yield layout.seat_title(seat)
        while chunk := f.read(1 << 16):
            yield chunk
        yield layout.SEAT_END
