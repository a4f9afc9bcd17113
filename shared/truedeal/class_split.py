"""A split by coin cards too large to keep whole, listed one class at a time:
its exact count and its exact draws (:class:`ClassSplit`).

A plan splits a script by who holds its coin cards
(:mod:`truedeal.constraints.card_owner`, :mod:`truedeal.constraints.card_classes`)
and keeps the listings of all its classes to deal from, within
``MAX_SPLIT_ENTRIES``.  Past that, :func:`class_split` lists the merged
classes (:func:`~truedeal.constraints.card_classes.merged_classes`) one at a
time: it adds up their deals, keeps the listings that fit
:data:`MAX_KEPT_LISTINGS` (and the samplers that fit :data:`MAX_KEPT_SAMPLERS`),
and lists (or readies) the others again when a draw needs them.  A draw

1. picks a member of a class (a placement of the coins) with probability
   its deals over the whole;
2. deals from its class's listing (the class's first placement);
3. moves the coins onto the member's placement, seat by seat, and deals the
   free seats' other cards again among them, each seat keeping the coins the
   member gives it.

Given the other seats' hands, the free seats' hands are uniform among the
first member's deals, and after step 3 among the member's: every deal of
the script comes out with the same probability, and none is thrown away.

A chunk's stream picks the members of all its deals, then keys one stream
per class, from which the class deals all its rows.  So the first deals of
a seeded chunk need only the classes they picked (ten deals of a script of
57 classes ready at most ten samplers), and are the same as the whole
chunk's.  Draws of several chunks go class by class, so that a class listed
again is listed once for all of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

import numpy as np

from .cards import card_names
from .constraints import card_classes, card_owner, ir
from .errors import Impossible
from .fill import OPEN, deal_open
from .randomness import Rng, SeededBits
from .sampling import WideCategorical
from .summary import CountSummary, ListingSizes

if TYPE_CHECKING:
    from .engine import Plan

#: Most work the classes may take together, one class at a time: level-0
#: entries plus the entries of the suit-pair tables, projected from the
#: classes listed so far (a deterministic bound, as a split's).  A class
#: costs about 0.5 us a unit to list and 0.6 us to ready for draws.
MAX_CLASS_WORK = 15_000_000
#: Most work of the classes whose listings a split keeps (about 36 bytes a
#: unit: 220 MB); the others are listed again for each batch of chunks that
#: draws from them.
MAX_KEPT_LISTINGS = 6_000_000
#: Most work of the kept classes whose samplers a split keeps between draws
#: (about 185 bytes a unit: 185 MB); the others are readied again, from
#: their listings, for each batch of chunks (about 0.6 us a unit).
MAX_KEPT_SAMPLERS = 1_000_000
#: How many times their usual work the classes of a patient plan may take
#: (``truedeal count --exact``): still a deterministic bound, and the kept
#: listings and samplers keep theirs, so memory stays as it was.
PATIENT_SCALE = 20
_work_scale: ContextVar[int] = ContextVar("class_work_scale", default=1)
_ALL = np.arange(52)
#: Bytes of a chunk's stream that key each class's stream.
_CLASS_KEY_BYTES = 32


@contextmanager
def patient(scale: int | None = None) -> Iterator[None]:
    """Within it, :func:`class_split` may take ``scale`` (default
    :data:`PATIENT_SCALE`) times :data:`MAX_CLASS_WORK` (and the split's
    bound on boxes)."""
    token = _work_scale.set(PATIENT_SCALE if scale is None else scale)
    try:
        yield
    finally:
        _work_scale.reset(token)


def is_patient() -> bool:
    """Whether this is within :func:`patient` (``truedeal count --exact``)."""
    return _work_scale.get() > 1


def class_split(program: ir.Program, list_exactly: Callable[[ir.Program], Plan | None],
                progress: Callable[[int, int], None] | None = None) -> ClassSplit | None:
    """``program`` split by the merged classes of placements of its coin
    cards, each listed by ``list_exactly`` (an exact plan, or None); None
    when it has no coins, reads whole deals, a class is not exact, or the
    classes would pass :data:`MAX_CLASS_WORK` or the split's bound on boxes.
    ``progress`` hears (classes listed, classes)."""
    cards = card_owner.split_cards(program, card_classes.MAX_CLASSED_CARDS)
    if not cards or not card_classes.classable(program):
        return None
    classes = card_classes.merged_classes(program, cards)
    plans: list[Plan | None] = []
    deals, costs = [], []
    work = boxes = kept = 0
    most_work, most_boxes = MAX_CLASS_WORK * _work_scale.get(), card_owner.MAX_SPLIT_BOXES * _work_scale.get()
    for built, merged in enumerate(classes, 1):
        plan = list_exactly(merged.program)
        if plan is None:
            return None
        cost = listing_work(plan)
        work, boxes = work + cost, boxes + getattr(plan.listing, "grid_points", 0)
        if work * len(classes) > most_work * built or boxes * len(classes) > most_boxes * built:
            return None
        keep = built == 1 or kept + cost <= MAX_KEPT_LISTINGS  # the first always: it shows the layout
        kept += cost if keep else 0
        plans.append(plan if keep else None)
        deals.append(plan.deals_total)
        costs.append(cost)
        if progress is not None:
            progress(built, len(classes))
    return ClassSplit(cards, classes, plans, deals, list_exactly, kept_samplers(plans, costs))


def kept_samplers(plans: Sequence[Plan | None], costs: Sequence[int]) -> frozenset[int]:
    """The listed ``plans`` whose samplers fit :data:`MAX_KEPT_SAMPLERS` between
    draws, first listed first (``costs``: their :func:`listing_work`)."""
    kept, total = [], 0
    for i, (plan, cost) in enumerate(zip(plans, costs)):
        if plan is not None and total + cost <= MAX_KEPT_SAMPLERS:
            kept.append(i)
            total += cost
    return frozenset(kept)


def listing_work(plan: Plan) -> int:
    """What a plan's listing cost: its level-0 entries and its pair tables' entries."""
    tables = getattr(plan.listing, "pair_tables", None)
    return len(plan.listing.e_weight) + (0 if tables is None else int(tables.size))


class ClassSplit:
    """The deals of a program, split by the merged classes of placements of
    ``cards`` (see module doc).  ``plans[i]`` is class i's listing when kept,
    else None (listed again by ``list_exactly`` when a draw needs it); the
    classes ``samplers_kept`` keep their samplers between draws."""

    def __init__(self, cards: tuple[int, ...], classes: list[card_classes.MergedClass], plans: list[Plan | None],
                 class_deals: list[int], list_exactly: Callable[[ir.Program], Plan | None],
                 samplers_kept: frozenset[int] = frozenset()) -> None:
        self.cards, self.classes, self.plans = cards, classes, plans
        self.class_deals, self._list, self.samplers_kept = class_deals, list_exactly, samplers_kept
        member_deals = [d * r for c, d in zip(classes, class_deals) for r in c.ratios]
        if any(w.denominator != 1 for w in member_deals):
            raise ArithmeticError("a placement's deals came out a fraction")  # the ratios are wrong
        self.deals = int(sum(member_deals))
        self.class_of = np.repeat(np.arange(len(classes)), [len(c.members) for c in classes])
        self.member_of = np.concatenate([np.arange(len(c.members)) for c in classes])
        self.pick = WideCategorical([int(w) for w in member_deals]) if self.deals else None

    @property
    def draws_together(self) -> bool:
        """Whether :meth:`draw_chunks` draws several chunks as :meth:`draw` draws each."""
        return True

    def takes_together(self, n: int) -> bool:
        """Whether :meth:`draw_chunks` takes a draw of ``n`` deals: any."""
        return True

    @property
    def placements(self) -> int:
        return len(self.class_of)

    @property
    def method(self) -> str:
        """How the split is listed, as ``count`` prints it."""
        return (f"exact: split by who holds {card_names(self.cards)}, {self.placements:,} placements in "
                f"{len(self.classes)} classes listed one at a time, no rejection")

    def summary(self, sizes: ListingSizes) -> CountSummary:
        """An exact count, without Pavlicek's cases (counting them costs as much as the listings)."""
        return CountSummary.exact(self.deals, None, sizes, self.method)

    def draw(self, n: int, rng: Rng, enough: int | None = None) -> np.ndarray:
        """The first ``enough`` (default all) of ``n`` uniform deals: the
        classes that only the others picked are not dealt."""
        return self.draw_chunks([(n, rng)], [n if enough is None else min(n, enough)])

    def draw_chunks(self, wanted: Sequence[tuple[int, Rng]], enough: Sequence[int] | None = None) -> np.ndarray:
        """The first ``enough[k]`` (default all) deals of each ``draw(n, rng)``
        in ``wanted``, one after the other; each class listed at most once for all."""
        if self.pick is None:
            raise Impossible("no deal satisfies this spec (it counts 0 deals)")
        enough = [n for n, _ in wanted] if enough is None else enough
        picked = [self.pick.draw(n, rng) for n, rng in wanted]
        keys = [rng.bits.read(_CLASS_KEY_BYTES * len(self.classes)) for _, rng in wanted]
        out = [np.empty((n, 52), np.uint8) for n, _ in wanted]
        for i in range(len(self.classes)):
            rows = [np.nonzero(self.class_of[p] == i)[0] for p in picked]
            needed = [k for k, (r, m) in enumerate(zip(rows, enough)) if len(r) and r[0] < m]
            if not needed:
                continue
            plan = self.plans[i] or self._listed_again(i)
            for k in needed:
                rng = Rng(SeededBits(keys[k][i * _CLASS_KEY_BYTES : (i + 1) * _CLASS_KEY_BYTES], 0, "v1"))
                out[k][rows[k]] = self._moved(i, plan._draw(len(rows[k]), rng), self.member_of[picked[k][rows[k]]], rng)
            if i not in self.samplers_kept:
                plan._sampler = None  # readied again by the next batch that needs it
        return np.concatenate([o[:m] for o, m in zip(out, enough)])

    def _listed_again(self, i: int) -> Plan:
        plan = self._list(self.classes[i].program)
        if plan is None or plan.deals_total != self.class_deals[i]:
            raise RuntimeError(f"class {i} of a split listed differently the second time")
        return plan

    def _moved(self, i: int, owners: np.ndarray, members: np.ndarray, rng: Rng) -> np.ndarray:
        """Deals of class ``i``'s first member carried onto ``members``: the
        coins moved, the free seats' other cards dealt again among them."""
        merged = self.classes[i]
        if len(merged.members) == 1:
            return owners
        out = np.empty_like(owners)
        np.put_along_axis(out, merged.moves[members], owners, axis=1)
        free = sorted(merged.free)
        if len(free) < 2:  # one free seat: its share of the coins is the same in every member
            return out
        coins = list(self.cards)
        held = np.isin(out, free)
        held[:, coins] = False
        out[held] = OPEN
        given = np.array(merged.members, np.uint8)[members]  # each member's owner of each coin
        out[:, coins] = given
        need = 13 - np.stack([(given == s).sum(axis=1) for s in free[:-1]], axis=1)
        deal_open(out, rng, _ALL, need, np.array(free[:-1], np.uint8))
        out[out == OPEN] = free[-1]
        return out
