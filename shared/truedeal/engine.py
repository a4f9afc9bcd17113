"""One spec, one plan: its count and its stream of uniform deals.

This is the core's entry point for the CLI, the workers and the web app::

    plan = Plan.build(load_spec("examples/strong-nt.json"))
    plan.summary()                      # CountSummary: exact deals, probability, cases
    for owners in plan.deals(100, seed="club night"):
        ...                             # (k, 52) uint8 batches

Every seat is enumerated exactly when the factored listing fits the memory
limits.  When it does not (typically three or four seats constrained by HCP
alone, with wide ranges), the plan lists as many seats as fit and handles the
others by rejection: deals drawn uniformly from the listed seats' constraints
are kept only if the other seats' constraints hold too.  The kept deals are
still exactly uniform over the whole spec; only the count becomes an estimate,
and :meth:`Plan.summary` says so, with the acceptance rate.  A script's
``rnd`` compared with constants is weighed instead where that is worth its
listings (:mod:`truedeal.weighted`): each deal is drawn as often as the
script keeps it, and its count is the exact expected count.

Seeded streams are cut into chunks of :data:`~truedeal.randomness.CHUNK_DEALS`
deals, chunk ``j`` drawing from the stream of ``(seed, j)``; the first ``n``
deals of a seed never depend on how many deals were asked for.
"""

from __future__ import annotations

import functools
import itertools
import math
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from .cards import SEAT_NAMES, D
from .choices import MAX_DEALS
from .class_split import ClassSplit, class_split, is_patient
from .constraints import card_classes, card_owner, ir, opaque, rnd_levels, separable
from .constraints.compile import Compiled, compile_program, with_filters
from .constraints.complements import complemented
from .constraints.dds import needs_double_dummy
from .cost import estimate_build_seconds, widest_first
from .dealnumber import decode_batch, encode_batch
from .either_or import cross_seat_branches, pattern_branches
from .errors import Impossible, TooLargeToDeal
from .evaluate import satisfies
from .every_deal import deal_numbers
from .fill import OPEN, deal_open
from .listing import Listing, TooWide, build_listing, count_cases
from .listing.layout import MAX_FEATURE_CELLS
from .randomness import CHUNK_DEALS, DEFAULT_STREAM, Rng, SeededBits, check_stream, chunk_rng
from .relaxation import KEEP, WHOLE, Relaxation, SeatsRead, ranked, relax
from .sampling import Sampler
from .shape_complements import broad_shapes
from .spec import SeatConstraint, Spec
from .summary import CountSummary, ListingSizes, Rejection, pilot_stderr
from .union import Union
from .weighted import Weighted

if TYPE_CHECKING:
    from .one_hand import OneHandListing

#: A seat's rows by the identity of the relaxed program they list (:func:`_relaxed_rows`).
RowsMemo = dict[int, tuple[ir.Program, "OneHandListing | None"]]

#: Draws used to estimate the acceptance rate of seats handled by rejection.
PILOT_DRAWS = 200_000
#: Weighing a script's ``rnd`` lists each class of its numbers as the plan
#: lists the rest: a factored listing again per class costs little (0.1-2 s
#: in the practice library), a paired listing or a split may cost as much
#: as the whole plan again (Benjamin 2D: 29 s -> 94 s, Bergen Raises 2.0 ->
#: 4.9 GB).  And a class's listing may draw slower than the support's (the
#: leveled 1NT opener: 151,000 deals/s kept by rejection at 72%, 89,000
#: weighed).  So rnd is weighed where the rest is one factored listing,
#: there are at most WEIGH_CLASSES more classes and rejection keeps fewer
#: than WEIGH_CHEAP_BELOW of the deals it draws; where rejection keeps fewer
#: than WEIGH_BELOW, whatever the listings; or where it keeps too few to deal.
#: Decided by counts and a seeded pilot, never by time: a plan, and so a
#: seed's deals, must not depend on the machine.
WEIGH_CLASSES = 4
WEIGH_CHEAP_BELOW = 0.5
WEIGH_BELOW = 0.05
#: ... and where the rest's seats are relaxed too, only where rnd's own share
#: of what rejection throws away is worth it: the pilot's deals that fit the
#: support (rnd set aside) are at least this many times those kept.
WEIGH_GAIN = 2.0
GAIN_DRAWS = 20_000  # the pilot's first deals that estimate that share
#: A relaxed plan of a leveled script that keeps under this share also tries
#: keeping each seat alone with rnd weighed (:meth:`Plan._weighed_on_one_seat`):
#: each try lists every class of one seat (1-7 s in the library).  Under 1% it
#: kept 2-15 times more in 5 scripts of the library's 70 (Ogust 0.0135% ->
#: 0.207%), and cost 4-18 s a plan for nothing in 5 others (Weak Jump Shift
#: 3.2 s -> 21.6 s); between 1% and 5% it gained at most 1.4 times (Vics 1m:
#: 3.67% -> 5.12%, plan 2.7 s -> 15.5 s) and cost up to 20 s a plan (Jacoby 2NT: 2 s -> 22 s, no gain).
WEIGH_SEAT_BELOW = 0.01
#: ... and only where it may keep this many times as much (:meth:`Plan._one_seat_gain`):
#: the estimate was within 8% of what the tries kept in the library
#: (Ogust 1.46 estimated, 1.46 kept; Basic Responses 1.83, 1.88; Gazzilli
#: 5.76, 5.51; Lebensohl 8.38, 9.03), and 0.01-0.6 for the tries that kept
#: less, which cost 4-18 s a plan (Weak Jump Shift 3.2 s -> 21.6 s).
WEIGH_SEAT_GAIN = 1.25
#: Deals of the whole pack (seeded) that estimate what a one-seat try lists.
PACK_DRAWS = 100_000
#: What a branch of an either/or counted by passes rejects (:meth:`Plan._union_by_passes`).
EARLIER_BRANCHES = "the earlier branches of the either/or"
#: ... when the check solves deals double dummy (about 25 deals a second per strain here).
DD_PILOT_DRAWS = 256
#: ... and the deals a rejection batch draws then (two DDS calls).
DD_BATCH_DRAWS = 80
#: Below this acceptance rate rejection is refused as too slow: about 10
#: deals kept a second where the listing draws and checks a million.
MIN_ACCEPTANCE = 1e-5
#: A pilot that keeps fewer than this many of its PILOT_DRAWS draws on, the
#: same stream, to LONG_PILOT_DRAWS: a rare plan's rate then rests on about as
#: many kept deals (only plans below 1e-4, refused until 2026-11-27, do).
PILOT_KEPT = 20
LONG_PILOT_DRAWS = 2_000_000
#: Most listings a split by a seat's patterns makes, splits within its branches included.
MAX_PATTERN_PARTS = 8
#: ... and the estimated seconds (:func:`~.cost.estimate_build_seconds`, the
#: factored listing's upper bound) of a branch of a split whose branches read
#: other seats too, past which it is not tried.  The library's branches that
#: list were estimated at 2-375 s (We Overcall NT then Jacoby: 230 s, listed in
#: about 1 s by filters), those too wide at 2e10 s and more, and took up to 20 s
#: to fail (Preempt X XX).
ACROSS_SEATS_BRANCH_SECONDS = 1000.0
#: Chunks that :meth:`Plan.deals` draws together (262,144 deals: 14 MB of
#: cards; four-pool draws 8% faster than with 32, 40% faster than one by one).
CHUNKS_TOGETHER = 64
#: Chunks drawn together from a split that readies some listings again for
#: each batch (:attr:`Plan.readies_again`): 1,048,576
#: deals, 55 MB of cards, so that readying them again costs each deal little.
READYING_CHUNKS_TOGETHER = 256


class SplitPastBounds(Exception):
    """A split by coin cards whose listings would pass its bounds together."""


@dataclass
class Plan:
    """A built listing for one spec, ready to count and to draw from."""

    spec: Spec | None  # None when the plan was built from a program (a script, or a spec beyond the first language)
    listing: Listing
    build_seconds: float
    rejected: list[SeatConstraint] = field(default_factory=list)
    acceptance: float | None = None  # estimated, when seats are rejected
    _sampler: Sampler | None = None
    program: ir.Program | None = None  # specs beyond the first language, and scripts
    listed: Compiled | None = None  # what the listing holds, when ``program`` is set
    relaxed: tuple[str, ...] = ()  # what rejection checks, when ``program`` is set
    #: why the whole is not listed exactly, where rejection checks what a listing could read:
    #: the limit the exact listing would pass (``count`` and ``explain`` say it)
    why_not_exact: str | None = None
    union: Union | ClassSplit | Weighted | None = None  # an either/or across seats, a split, or rnd's classes, listed one by one
    check_seconds: float = 0.0  # per listed deal, measured by the pilot: what rejection costs besides drawing
    draw_seconds: float = 0.0  # per listed deal, measured by the pilot (its first draws: high rather than low)
    _pilot_drawn: int = 0  # the pilot's draws, once measured
    _twin: tuple = ()  # (the plan in shards, or None) once stream v3 has been asked of a plan built whole
    #: the exact count of a plan that rejects (:mod:`truedeal.shape_complements`), else None
    counted: int | None = None

    @classmethod
    def build(cls, spec: Spec | ir.Program, progress: Callable[[int, int], None] | None = None,
              stream: str = DEFAULT_STREAM) -> Plan:
        """List ``spec`` exactly, or as many of its seats as fit (see module doc).
        For ``stream`` v3, a listing that can be cut is built in shards
        (:mod:`truedeal.shards`): such a plan draws stream v3 only.

        Raises :class:`TooWide` if even the rejection fallback cannot work.
        """
        if check_stream(stream) == "v3" and (routed := cls.build_routed(spec)) is not None:
            return routed
        t0 = time.perf_counter()
        if isinstance(spec, ir.Program) or not spec.is_simple():
            program = spec if isinstance(spec, ir.Program) else spec.program()
            rows: RowsMemo = {}  # listed for the ranking, then for the one-seat tries
            plan = cls._build_program(spec, progress, rows=rows)
            plan = cls._weighed_on_one_seat(plan, spec, program, progress, t0, rows)
            plan = cls._read_on_the_other_side(plan, program, progress, t0)
            plan = cls._split_by_one_suit_seat(plan, program, progress, t0)
            return cls._read_on_the_other_side(plan, program, progress, t0, by_shape=True)
        rules = spec.constraints()
        try:
            listing = build_listing(rules, progress)
            return cls(spec, listing, time.perf_counter() - t0)
        except TooWide as first:
            wide = _bare(first)
        other = _other_listing(compile_program(spec.program()))
        if other is not None:
            return cls(spec, other, time.perf_counter() - t0)
        for kept, dropped in _fallbacks(rules):
            try:
                listing = build_listing(kept, progress)
            except TooWide:
                continue
            plan = cls(spec, listing, 0.0, dropped, why_not_exact=str(wide))
            plan._measure_acceptance(f"{wide}; rejection on {_names(dropped)}")
            plan.build_seconds = time.perf_counter() - t0
            return plan
        raise wide

    @classmethod
    def _read_on_the_other_side(cls, plan: Plan, program: ir.Program, progress, t0: float, by_shape: bool = False) -> Plan:
        """``plan``; or, where it does not count exactly or rejects, the plan
        of ``program`` with its partnership sums read on the other side of
        the table (:func:`~.constraints.complements.complemented`: fewer
        seats read, or with ``by_shape`` fewer read by shape) when that one
        counts exactly and ranks higher (:attr:`rank`).  Tried after the
        plain plan (``by_shape``: after the other exact routes too), so that
        a plan that listed exactly keeps its deals."""
        if not plan.improvable or (other := complemented(program, by_shape)) is program:
            return plan
        if by_shape and other == complemented(program):
            return plan  # tried already
        read = cls._build_program(other, progress)
        if not (read.counts_exactly and read.rank > plan.rank):
            return plan
        read.build_seconds = time.perf_counter() - t0  # the plain plan's attempt included
        return read

    @classmethod
    def _split_by_one_suit_seat(cls, plan: Plan, program: ir.Program, progress, t0: float) -> Plan:
        """``plan``; or, where it does not list exactly and a seat is read
        only by its length in one suit beside a seat nothing reads, the split
        of :mod:`truedeal.one_suit_seat` when each of its branches is exact."""
        from .one_suit_seat import OneSuitSeatUnion, one_suit_seat

        if not plan.improvable or (split := one_suit_seat(program)) is None:
            return plan
        branches = {}
        for m in range(14):
            if any(split.ways(13 - m)):
                branches[m] = cls._build_program(split.branch(m), progress, exact_only=True)
                if not branches[m].exact:
                    return plan
        held = [m for m, p in branches.items() if p.deals_total] or list(branches)[:1]  # none: an exact 0
        if not held:
            return plan
        union = OneSuitSeatUnion(split, [branches[m] for m in held], held)
        return cls(None, union.plans[0].listing, time.perf_counter() - t0, program=program, union=union)

    @classmethod
    def build_to_count(cls, spec: Spec | ir.Program, progress: Callable[[int, int], None] | None = None) -> Plan:
        """:meth:`build` for a count (:meth:`summary`): a paired listing counts
        its cases before its weights, which keeps its peak memory lower."""
        from .listing.paired import cases_first

        with cases_first():
            return cls.build(spec, progress)

    @classmethod
    def build_routed(cls, spec: Spec | ir.Program) -> Plan | None:
        """The plan of ``spec`` in shards, which draws stream v3; None when its
        listing cannot be cut, or every deal fits (v3 then draws it as v2 does)."""
        from .shards import build_shards  # ~10 ms of imports that no other stream needs

        t0 = time.perf_counter()
        try:
            sharded = build_shards(spec)
        except TooWide:
            return None
        if sharded is None or sharded.deals == D:
            return None
        return cls.from_listing(spec, sharded, time.perf_counter() - t0)  # type: ignore[arg-type]

    @classmethod
    def from_listing(cls, spec: Spec | ir.Program, listing: Listing, build_seconds: float = 0.0) -> Plan:
        """The plan :meth:`build` makes when ``listing`` is ``build_listing(
        exact_source(spec))`` (e.g. merged from slices): the same draws."""
        if isinstance(spec, Spec) and spec.is_simple():
            return cls(spec, listing, build_seconds)
        program = spec if isinstance(spec, ir.Program) else spec.program()
        pool = getattr(listing.layout, "pool", None)  # a rank pool's layout lists the patterned seats alone
        listed = pool.source if pool is not None else listing.layout.comp
        return cls(spec if isinstance(spec, Spec) else None, listing, build_seconds, program=program, listed=listed)

    @classmethod
    def _build_program(cls, spec: Spec | ir.Program, progress, exact_only: bool = False, split: bool = True,
                       out_of_pack: bool = False, max_parts: int = MAX_PATTERN_PARTS, narrow_first: bool = False,
                       rows: RowsMemo | None = None) -> Plan:
        """List a Program: exactly, with its sums of per-suit pieces as single
        features when it is too wide as written (:mod:`truedeal.constraints.separable`),
        split by card owners when it is too wide
        (unless not ``split``: the parts of a split or of an either/or are not
        split again, which would list thousands of them), else by the
        patterns of a seat (into at most ``max_parts`` listings,
        :func:`~truedeal.either_or.pattern_branches`), or (unless
        ``exact_only``) a relaxed one (some parts checked by rejection,
        :mod:`truedeal.relaxation`) when it has parts the listing cannot read
        or is too wide.  ``out_of_pack``: dead predealt cards out of the pack
        first (the placements of a split on three or four cards).
        ``narrow_first``: filter forms first (:func:`_any_listing`)."""
        t0 = time.perf_counter()
        program = spec if isinstance(spec, ir.Program) else spec.program()
        branches = cross_seat_branches(program)
        if branches is not None and not ir.opaque_names(program.condition):  # (its branches must be exact)
            try:
                return cls._build_union(spec, program, *branches, progress, t0)
            except TooWide:
                pass  # the branches are too wide too: list the whole, relaxed
        wide: list[TooWide] = []
        failed: list[Relaxation] = []
        rows = {} if rows is None else rows  # a seat's rows, ranked and then planned
        last_tried = False  # the last exact tries, once, before the first relaxation
        for relaxation in _relaxations(program, exact_only, rows):
            if not (relaxation.none or last_tried):
                last_tried = True
                if (last := cls._last_exact_tries(spec, program, progress, t0, max_parts)) is not None:
                    return last
            if any(f.covers(relaxation) for f in failed) and _hand_read(program, relaxation) is None:
                continue  # it relaxes no more than one that was too wide (and no one seat's rows list it)
            comp = compile_program(program if relaxation.none else relax(program, relaxation), out_of_pack and relaxation.none)
            if relaxation.none and not comp.exact and (hand := cls._build_one_hand(spec, program, comp, t0)):
                return hand  # any listing of comp would reject
            listing = _any_listing(comp, progress, wide, narrow_first)
            plain = comp  # (its predealt cards as placed, not asked)
            if listing is None and relaxation.none and (narrow := compile_program(program, out_of_pack=True)).dead:
                comp, listing = narrow, _any_listing(narrow, progress, wide)
            if listing is None and relaxation.none and (pool := set(comp.pooled) & {s for s, _ in program.predeal}):
                asked = compile_program(card_owner.predeal_asked(program, pool))
                comp, listing = asked, _any_listing(asked, progress, wide)
            if listing is None and relaxation.none and (sums := separable.separated(program)) is not program:
                plan = cls._build_program(sums, progress, exact_only, split, out_of_pack, max_parts, narrow_first)
                plan.build_seconds = time.perf_counter() - t0  # the plain listing's attempt included
                return plan
            # (a split lists exact parts: with opaque parts, only their support splits, below)
            if listing is None and relaxation.none and split and comp.exact:
                try:
                    parts = cls._build_card_split(spec, program, progress, t0)
                except SplitPastBounds:
                    parts = cls._build_class_split(spec, program, progress, t0)
                if parts is not None:
                    return parts
            if listing is None and relaxation.none and max_parts > 1 and comp.exact:
                by_patterns = cls._build_by_patterns(spec, program, progress, t0, max_parts)
                if by_patterns is not None:
                    return by_patterns
            if listing is None and relaxation.none and (hand := cls._build_one_hand(spec, program, comp, t0)):
                return hand
            if listing is None and relaxation.none and (by_suit := _honours_by_suit((comp, plain), wide)):
                comp, listing = by_suit
            if listing is None and not relaxation.none and (hand := cls._build_hand_relaxed(spec, program, relaxation, rows, t0)):
                hand.why_not_exact = str(wide[0]) if wide else None  # (as below: what the whole would pass)
                return hand
            if listing is None:
                listing = _pool_filtered(comp, progress, wide, POOL_FILTERED_WIDTH if relaxation.none else MAX_FEATURE_CELLS)
            if listing is None and relaxation.none and not comp.exact and not exact_only:  # (a support plan rejects)
                held = cls._build_support(spec, program, _relaxed_parts(comp, relaxation), progress, t0,
                                          split, out_of_pack, max_parts)
                if held is not None:
                    return held
            if listing is None:
                failed.append(relaxation)
                continue
            plan = cls(spec if isinstance(spec, Spec) else None, listing, 0.0, program=program, listed=comp)
            plan.relaxed = _relaxed_parts(comp, relaxation)
            if not relaxation.none and wide:  # (with none relaxed, rejection checks only what no listing reads)
                plan.why_not_exact = str(wide[0])
            weigh = None if exact_only else (
                functools.partial(cls._build_weighted, spec, program, None, progress, t0, split, out_of_pack, max_parts)
                if relaxation.none else functools.partial(cls._build_weighted_relaxed, spec, program, relaxation, progress, wide, t0))
            if not plan.exact:
                try:
                    return cls._measured_or_weighed(plan, f"{wide[0] if wide else 'not exact'}; rejection", weigh, None,
                                                    None if relaxation.none else relaxation, t0)
                except TooLargeToDeal:  # its pilot cannot deal: a narrower relaxation may
                    failed.append(relaxation)
                    continue
            plan.build_seconds = time.perf_counter() - t0
            return plan
        raise wide[0] if wide else TooWide("no listing fits")

    @classmethod
    def _build_support(cls, spec, program: ir.Program, relaxed: tuple[str, ...], progress, t0: float, split: bool,
                       out_of_pack: bool, max_parts: int) -> Plan | None:
        """A plan listing exactly, by any plan, the deals that ``program``'s
        opaque parts (``rnd``, ``tricks``) may keep (:func:`~.constraints.opaque.support`),
        and keeping a deal drawn only if the whole condition holds; None when
        there is no such support or it is not exact; ``rnd`` weighed
        instead where that is worth it (:meth:`_measured_or_weighed`).  Tried
        after every listing of the whole program, so that the plans those make stay."""
        held = opaque.support(program)
        if held is None:  # (rnd on both sides of a negation: weighing it is the only exact listing)
            return cls._build_weighted(spec, program, None, progress, t0, split, out_of_pack, max_parts)
        inner = cls._exact_or_none(held, progress, split, out_of_pack, max_parts)
        if inner is None:
            return None
        plan = cls(spec if isinstance(spec, Spec) else None, inner.listing, 0.0, program=program, listed=inner.listed,
                   union=inner.union)
        plan.relaxed = relaxed
        weigh = functools.partial(cls._build_weighted, spec, program, inner, progress, t0, split, out_of_pack, max_parts)
        return cls._measured_or_weighed(plan, "the parts no listing can hold; rejection", weigh, inner, None, t0)

    @classmethod
    def _last_exact_tries(cls, spec, program: ir.Program, progress, t0: float, max_parts: int) -> Plan | None:
        """Plans tried once every plain one has failed, before any part goes
        to rejection (so plans that listed keep their deals): a split by the
        patterns of a seat that branches reading other seats too allow it
        disjointly, else broad shapes left to rejection and counted by their
        complements; None when neither is made."""
        plain = compile_program(program)
        if max_parts > 1 and plain.exact and (
                split := cls._build_by_patterns(spec, program, progress, t0, max_parts, across_seats=True)):
            return split
        return (cls._build_shape_complements(spec, program, progress, t0)
                or cls._build_pool_by_pattern(spec, program, progress, t0, plain)
                or cls._build_classed_split(spec, program, progress, t0, plain))

    @classmethod
    def _build_classed_split(cls, spec, program: ir.Program, progress, t0: float, plain: Compiled) -> Plan | None:
        """The exact plan of ``program`` listed once per class of one seat's
        patterns that its cells' signatures tell apart (a five-card major beside
        seats read by losers: :func:`~.listing.paired_classes.signature_split`),
        each part with one signature, so that a classed listing takes it; None
        when it does not apply or a part does not list exactly."""
        from .listing import paired_classes
        from .listing.paired import MAX_PAIRED_BYTES
        from .patterns import PATTERNS

        found = paired_classes.signature_split(plain, MAX_PATTERN_PARTS)
        if found is None:
            return None
        seat, classes = found
        plans: list[Plan] = []
        left = MAX_PAIRED_BYTES  # every part's tables are kept: together, one paired listing's bound
        for patterns in classes:
            shape = ir.ShapeIn(seat, frozenset(tuple(int(x) for x in p) for p in PATTERNS[patterns]))
            part = ir.Program(condition=ir.And((program.condition, shape)), predeal=program.predeal)
            with paired_classes.budget(left):
                plan = cls._exact_part(part, progress, out_of_pack=False)
            if plan is None:
                return None
            left -= paired_classes.table_bytes(plan.listing)
            plans.append(plan)
        return cls._of_disjoint(spec, program, plans, t0, patterns_of=seat)

    @classmethod
    def _build_pool_by_pattern(cls, spec, program: ir.Program, progress, t0: float,
                               plain: Compiled | None = None) -> Plan | None:
        """The exact plan of ``program`` with its one pooled seat listed by
        pattern, where the three other seats are: that seat's pattern is then
        the rest of each suit (no more cells), and the pool's coordinates of
        honour counts go.  North 15-17 balanced, East weak with a six-card suit,
        South 3+ controls, West at most 8 losers: 1.7M feature states a suit
        column pooled, 7,128 so.  None when it does not apply or list.
        ``plain``: ``program`` compiled as written, when the caller has it."""
        plain = compile_program(program) if plain is None else plain
        if not (plain.exact and len(plain.pooled) == 1 and len(plain.patterned) == 3 and not plain.free):
            return None
        comp = compile_program(program, pool_by_pattern=True)
        listing = _one_listing(comp, progress, [])
        if listing is None:
            return None
        return cls(spec if isinstance(spec, Spec) else None, listing, time.perf_counter() - t0, program=program,
                   listed=comp)

    @classmethod
    def _build_shape_complements(cls, spec, program: ir.Program, progress, t0: float) -> Plan | None:
        """A plan drawing from the listing of ``program`` less its broad
        shapes and keeping the deals they allow, its count exact by the
        listings of what they exclude (:mod:`truedeal.shape_complements`);
        None when it has none, a listing is not exact, or it keeps too few."""
        found = broad_shapes(program)
        # a part no listing reads fails, and slowly (Splinters after a Minor: 30 s); one listing a term, no
        # split, so that failing is quick
        if found is None or not compile_program(found.kept).exact:
            return None
        if (kept := cls._exact_part(found.kept, progress, out_of_pack=False)) is None:
            return None
        deals = kept.deals_total
        for sign, term in found.terms():
            if (part := cls._exact_part(term, progress, out_of_pack=False)) is None:
                return None
            deals += sign * part.deals_total
        if 0 < deals < kept.deals_total * MIN_ACCEPTANCE:
            return None
        plan = cls(spec if isinstance(spec, Spec) else None, kept.listing, 0.0, program=program, listed=kept.listed,
                   union=kept.union, relaxed=(found.describe(),), counted=deals)
        try:
            if deals:  # (an exact 0 draws nothing)
                plan._measure_acceptance(found.describe())  # the draws' and checks' costs
        except TooWide:
            return None
        plan.acceptance = deals / kept.deals_total if deals else 0.0
        plan.build_seconds = time.perf_counter() - t0
        return plan

    @classmethod
    def _measured_or_weighed(cls, plan: Plan, what: str, weigh: Callable[[], Plan | None] | None,
                             support: Plan | None, relaxation: Relaxation | None, t0: float) -> Plan:
        """``plan`` (rejection on top of a listing; with ``relaxation``: of
        some seats, besides ``rnd``) with its acceptance measured, or the plan
        ``weigh`` makes (the script's ``rnd`` weighed, :mod:`truedeal.weighted`)
        where :data:`WEIGH_CLASSES` says it is worth listing its classes
        (those that are not ``support``), or where rejection keeps too few to deal."""
        found = None if weigh is None else rnd_levels.levels(plan.source_program())
        try:
            plan._measure_acceptance(what)
        except TooWide:
            if found is None or weigh is None or (weighed := weigh()) is None:
                raise
            return weighed
        if weigh is not None and found is not None and plan._worth_weighing(found, support, relaxation) and (weighed := weigh()):
            return weighed
        plan.build_seconds = time.perf_counter() - t0
        return plan

    def _worth_weighing(self, found: rnd_levels.Levels, support: Plan | None, relaxation: Relaxation | None) -> bool:
        """Whether listing ``found``'s classes (but ``support``'s) beats this
        measured plan's rejection (see :data:`WEIGH_CLASSES`)."""
        classes = sum(not (level.support and support is not None) for level in found.parts)
        acceptance = self.acceptance or 0.0
        cheap = self.union is None and type(self.listing) is Listing and classes <= WEIGH_CLASSES
        if classes and relaxation is None and is_patient():  # count --exact: an exact count is worth the listings
            return True
        if not classes or not ((cheap and acceptance < WEIGH_CHEAP_BELOW) or acceptance < WEIGH_BELOW):
            return False
        return relaxation is None or self._relaxed_gain(found, relaxation) >= WEIGH_GAIN

    def _relaxed_gain(self, found: rnd_levels.Levels, relaxation: Relaxation) -> float:
        """How many times this plan's acceptance weighing would keep with
        each class listed under ``relaxation``: one over the classes' listed
        share of the pilot's deals, weighed (:func:`_weighed_share`).  Where
        the classes differ only in relaxed parts, each lists what this plan
        does: 1; and 1 where a relaxed part counts both ways (no support: no estimate)."""
        if any(opaque.support(relax(level.program, relaxation)) is None for level in found.parts):
            return 1.0
        share = _weighed_share(self._listed_draw(GAIN_DRAWS, Rng(SeededBits("truedeal/pilot"))), found, relaxation)
        return 1 / share if share else math.inf

    @classmethod
    def _build_weighted(cls, spec, program: ir.Program, support: Plan | None, progress, t0: float, split: bool = True,
                        out_of_pack: bool = False, max_parts: int = MAX_PATTERN_PARTS) -> Plan | None:
        """A plan weighing ``program``'s ``rnd`` exactly (:mod:`truedeal.weighted`):
        each class of its numbers listed exactly (the support's class is
        ``support``, when listed); None when it has no such classes, or one
        is not exact."""
        found = rnd_levels.levels(program)
        if found is None:
            return None
        plans: list[Plan] = []
        for level in found.parts:
            plan = support if level.support and support is not None else \
                cls._exact_or_none(level.program, progress, split, out_of_pack, max_parts)
            if plan is None:
                return None
            plans.append(plan)
        weighted = Weighted(plans, [level.weight for level in found.parts], found.points)
        return cls(spec if isinstance(spec, Spec) else None, plans[0].listing, time.perf_counter() - t0,
                   program=program, listed=plans[0].listed, union=weighted)

    @classmethod
    def _weighed_on_one_seat(cls, plan: Plan, spec, program: ir.Program, progress, t0: float,
                             rows: RowsMemo | None = None) -> Plan:
        """``plan`` (seats relaxed, its pilot measured), or a plan that keeps
        one seat alone, listed by its rows where no factored listing holds it,
        and weighs ``rnd`` over its classes (:meth:`_build_weighted_relaxed`),
        where that plan's pilot keeps more.  A leveled seat's classes then
        differ in what is listed (the library's Lebensohl: West's two-suiters
        always, its one-suiters 29 times in 1,000), which the relaxations that
        rank first, rejecting that seat, cannot weigh.  Tried only where
        ``plan`` keeps under :data:`WEIGH_SEAT_BELOW` and ``rnd`` has classes
        (the script as written: a seat may list as written and not with its
        sums made features, or the other way round), and each seat only where
        it may keep :data:`WEIGH_SEAT_GAIN` times as much (:meth:`_one_seat_gain`)."""
        found = rnd_levels.levels(program)
        if plan.counts_exactly or (plan.acceptance or 0.0) >= WEIGH_SEAT_BELOW or found is None:
            return plan
        sample = None if plan.union is not None else (  # plan's listed deals, and the pack's
            plan._listed_draw(GAIN_DRAWS, Rng(SeededBits("truedeal/pilot"))), _pack_deals(PACK_DRAWS, program.predeal))
        best = plan
        for relaxation in _one_seat_mixes(program):
            if sample is not None and plan._one_seat_gain(*sample, found, relaxation) < WEIGH_SEAT_GAIN:
                continue
            other = cls._build_weighted_relaxed(spec, program, relaxation, progress, [], t0, rows)
            if other is not None and (other.acceptance or 0.0) > (best.acceptance or 0.0):
                best = other
        best.build_seconds = time.perf_counter() - t0  # the tries included
        return best

    def _one_seat_gain(self, owners: np.ndarray, pack: tuple[np.ndarray, int], found: rnd_levels.Levels,
                       relaxation: Relaxation) -> float:
        """About how many times this plan's acceptance (``rnd`` and some
        seats rejected; ``owners``, its listed deals) a plan weighing ``rnd``
        over one seat's classes (``relaxation``) keeps.  Both keep the same
        deals, weighed; each draws its listed deals, weighed by the classes
        that list them: the try ``sum_c weights[c] listed(c)``, this plan
        ``points * listed``.  The share of ``owners`` that the classes list
        bounds that ratio (weakly: a class may list deals this plan does not);
        past :data:`WEIGH_SEAT_GAIN`, the share of ``pack`` (deals of the pack, and
        how many there are) that they list estimates it (where it holds some)."""
        share = _weighed_share(owners, found, relaxation)
        gain = 1 / share if share else math.inf
        held = _weighed_share(pack[0], found, relaxation) if gain >= WEIGH_SEAT_GAIN else 0.0
        return min(gain, self.listed_deals / (held * pack[1])) if held else gain

    @classmethod
    def _build_weighted_relaxed(cls, spec, program: ir.Program, relaxation: Relaxation, progress, wide: list[TooWide],
                               t0: float, rows: RowsMemo | None = None) -> Plan | None:
        """A plan weighing ``program``'s ``rnd`` (:mod:`truedeal.weighted`)
        over listings of its classes with ``relaxation``'s parts left to
        rejection (a class of one seat kept by its rows, among the whole
        script's, memoised in ``rows``); None when it has no such classes, a
        class does not list, or the pilot keeps too few (:data:`MIN_ACCEPTANCE`)."""
        found = rnd_levels.levels(program)
        if found is None:
            return None
        plans: list[Plan] = []
        rows = {} if rows is None else rows
        for level in found.parts:
            relaxed = relax(level.program, relaxation)
            compiled = compile_program(relaxed)
            listing: Listing | OneHandListing | None = _any_listing(compiled, progress, wide)
            comp: Compiled | None = compiled
            if listing is None and _hand_read(level.program, relaxation) is not None:  # one seat kept: its rows,
                # among those of the whole script's (rnd unknown), listed once for all the classes
                listing, comp = _hand_rows(opaque.possible(relaxed), within=_relaxed_rows(relax(program, relaxation), rows)), None
            if listing is None:
                return None
            plans.append(cls(None, listing, 0.0, program=level.program, listed=comp,  # type: ignore[arg-type]
                             relaxed=() if comp is not None and comp.exact else relaxation.describe()))
        weighted = Weighted(plans, [level.weight for level in found.parts], found.points)
        try:
            weighted.measure(PILOT_DRAWS)
        except TooLargeToDeal:
            return None
        if weighted.acceptance < MIN_ACCEPTANCE:
            return None
        plan = cls(spec if isinstance(spec, Spec) else None, plans[0].listing, 0.0, program=program,
                   listed=plans[0].listed, union=weighted, acceptance=weighted.acceptance)
        plan.build_seconds = time.perf_counter() - t0
        return plan

    @classmethod
    def _exact_or_none(cls, program: ir.Program, progress, split: bool, out_of_pack: bool, max_parts: int) -> Plan | None:
        """An exact plan of ``program``, or None."""
        try:
            plan = cls._build_program(program, progress, exact_only=True, split=split, out_of_pack=out_of_pack,
                                      max_parts=max_parts)
        except TooWide:
            return None
        return plan if plan.exact else None

    @classmethod
    def _build_union(cls, spec, program: ir.Program, common: list, branches: list, progress, t0: float) -> Plan:
        """A plan whose deals fit ``common`` and at least one of ``branches``:
        each branch listed exactly, the count by :func:`_union_deals`."""
        def of(conds: list) -> ir.Program:
            return ir.Program(condition=ir.And(tuple(common + conds)), predeal=program.predeal)

        def part(conds: list) -> Plan:
            plan = cls._build_program(of(conds), progress, exact_only=True, split=False, max_parts=1)
            if not plan.exact:
                raise TooWide("a branch of the either/or is not exact")
            return plan

        built = {i: part([branches[i]]) for i in widest_first([of([b]) for b in branches])}
        plans = [built[i] for i in range(len(branches))]
        conds: list[ir.Cond] = [ir.And(tuple(common + [b])) for b in branches]
        try:
            deals = _union_deals(plans, branches, part)
        except TooWide:  # the branches list, their conjunctions do not: drawn exactly, counted from the share kept
            return cls._union_by_passes(spec, program, plans, conds, t0)
        union = Union(plans, conds, deals)
        main = plans[0]
        plan = cls(spec if isinstance(spec, Spec) else None, main.listing, time.perf_counter() - t0, program=program, union=union)
        return plan

    @classmethod
    def _union_by_passes(cls, spec, program: ir.Program, plans: list[Plan], conds: list[ir.Cond], t0: float) -> Plan:
        """An either/or whose branches list exactly (``plans``, of ``conds``)
        but whose count no listing gives: each branch weighed once
        (:class:`~truedeal.weighted.Weighted`), a deal drawn from branch i kept
        only if it fits no earlier branch.  The law is uniform over the union
        (each deal comes from its first branch alone) and the count is the
        branches' sum times the share kept, an estimate.  Raises TooWide
        when the pilot keeps too few."""
        classes = [plans[0]] + [
            replace(p, program=ir.Program(condition=ir.And((c, ir.Not(ir.Or(tuple(conds[:i]))))), predeal=program.predeal),
                    relaxed=(EARLIER_BRANCHES,), _sampler=None) for i, (p, c) in enumerate(zip(plans, conds)) if i]
        union = Weighted(classes, [1] * len(classes), 1, either_or=True)
        union.measure(PILOT_DRAWS)
        if union.acceptance < MIN_ACCEPTANCE:
            raise TooWide(f"an either/or whose branches overlap: a draw keeps only {union.acceptance:.2g}")
        return cls(spec if isinstance(spec, Spec) else None, plans[0].listing, time.perf_counter() - t0,
                   program=program, relaxed=(EARLIER_BRANCHES,), union=union, acceptance=union.acceptance)

    @classmethod
    def _build_card_split(cls, spec, program: ir.Program, progress, t0: float) -> Plan | None:
        """A plan listing ``program`` once per placement of the cards it reads
        one at a time (:mod:`truedeal.constraints.card_owner`), or once per
        class of placements that count alike (:mod:`truedeal.constraints.card_classes`)
        when there are more cards or the placements are too many to list;
        None when there are none or a listing is not exact.  Raises
        :class:`SplitPastBounds` when the classes would list too much."""
        cards = card_owner.split_cards(program, card_classes.MAX_CLASSED_CARDS)
        if not cards:
            return None
        if len(cards) <= card_owner.MAX_SPLIT_CARDS:
            parts = list(card_owner.placements(program, cards))
            try:
                plans = cls._list_parts(parts, progress, out_of_pack=len(cards) > card_owner.PLAIN_SPLIT_CARDS)
            except SplitPastBounds:
                plans = None  # classes list fewer
            if plans is not None:  # every part exact: their sum is the count, 0 included
                return cls._of_disjoint(spec, program, plans, t0, split_on=cards)
        return cls._build_classes(spec, program, cards, progress, t0)

    @classmethod
    def _build_classes(cls, spec, program: ir.Program, cards: tuple[int, ...], progress, t0: float) -> Plan | None:
        """The split by classes of placements of ``cards``, or None.  The first
        placement is listed before the classes are sorted (a compile per
        reading of the coins, a second on a large script): when it is too
        wide, so are the others."""
        first = next(card_owner.placements(program, cards, pruned=True), None) if card_classes.classable(program) else None
        done = None if first is None else cls._list_parts([first], progress, out_of_pack=True)
        if done is None:
            return None
        classes = card_classes.placement_classes(program, cards)
        plans = cls._list_parts([c.program for c in classes], progress, True, done)
        if plans is None:
            return None
        return cls._of_disjoint(spec, program, plans, t0, split_on=cards, moves=[c.moves for c in classes])

    @classmethod
    def _build_one_hand(cls, spec, program: ir.Program, comp: Compiled, t0: float) -> Plan | None:
        """A program that reads one seat, listed by that hand's rows
        (:func:`_hand_rows`), or None when it reads more, or its rows are too many."""
        listing = _hand_rows(program, comp)
        if listing is None:
            return None
        return cls(spec if isinstance(spec, Spec) else None, listing, time.perf_counter() - t0, program=program)  # type: ignore[arg-type]

    @classmethod
    def _build_hand_relaxed(cls, spec, program: ir.Program, relaxation: Relaxation,
                            rows: RowsMemo, t0: float) -> Plan | None:
        """``program`` with every seat but one relaxed whole, that seat's
        hand listed by its rows (:func:`_relaxed_rows`, memoised in ``rows``)
        and the rest left to rejection; None when ``relaxation`` keeps more
        than one seat, the rows are too many, or the pilot keeps too few to deal."""
        listing = None if _hand_read(program, relaxation) is None else _relaxed_rows(relax(program, relaxation), rows)
        if listing is None:
            return None
        plan = cls(spec if isinstance(spec, Spec) else None, listing, 0.0, program=program)  # type: ignore[arg-type]
        plan.relaxed = relaxation.describe()
        try:
            return cls._measured_or_weighed(plan, "one hand's rows; rejection", None, None, relaxation, t0)
        except TooLargeToDeal:
            return None

    @classmethod
    def _build_class_split(cls, spec, program: ir.Program, progress, t0: float) -> Plan | None:
        """A split too large to keep whole, listed one merged class at a time
        (:mod:`truedeal.class_split`), or None past its bounds."""
        split = class_split(program, cls._exact_part, progress)
        if split is None:
            return None
        first = split.plans[0]
        assert first is not None  # a split keeps its first listing
        return cls(spec if isinstance(spec, Spec) else None, first.listing, time.perf_counter() - t0,
                   program=program, union=split)

    @classmethod
    def _list_parts(cls, parts: list[ir.Program], progress, out_of_pack: bool, done: list[Plan] | None = None) -> list[Plan] | None:
        """An exact plan of each part (the first ones ``done`` already), or None
        as soon as one is not exact; raises :class:`SplitPastBounds` as soon as
        their entries or boxes, projected over all parts (alike), pass the
        split's bounds."""
        plans: list[Plan] = []
        entries = boxes = 0
        for built, part in enumerate(parts, 1):
            plan = done[built - 1] if done and built <= len(done) else cls._exact_part(part, progress, out_of_pack)
            if plan is None:
                return None
            entries += len(plan.listing.e_weight)
            boxes += getattr(plan.listing, "grid_points", 0)
            if (entries * len(parts) > card_owner.MAX_SPLIT_ENTRIES * built
                    or boxes * len(parts) > card_owner.MAX_SPLIT_BOXES * built):
                raise SplitPastBounds
            plans.append(plan)
        return plans

    @classmethod
    def _exact_part(cls, part: ir.Program, progress=None, out_of_pack: bool = True) -> Plan | None:
        """An exact plan of one part of a split (not split again), or None."""
        try:
            plan = cls._build_program(part, progress, exact_only=True, split=False, out_of_pack=out_of_pack, max_parts=1)
        except TooWide:
            return None
        return plan if plan.exact else None

    @classmethod
    def _build_by_patterns(cls, spec, program: ir.Program, progress, t0: float, max_parts: int,
                           across_seats: bool = False) -> Plan | None:
        """A plan listing ``program`` once per branch of an either/or whose
        branches allow one seat disjoint patterns (each branch listed with
        its filters first, and split again within what is left of ``max_parts``),
        or None when there is none or a branch is not exact.  ``across_seats``:
        the branches may read other seats too (:func:`~.either_or.pattern_branches`)."""
        found = pattern_branches(program, across_seats)
        for common, branches, seat in found[:1] if across_seats else found:  # (across seats: the first alone,
            if len(branches) > max_parts:                                     # its branches not split again,
                continue                                                      # so that failing is quick)
            parts = [ir.Program(condition=ir.And((*common, branch)), predeal=program.predeal) for branch in branches]
            if across_seats and max(map(estimate_build_seconds, parts)) > ACROSS_SEATS_BRANCH_SECONDS:
                continue
            built: dict[int, Plan] = {}
            for i in widest_first(parts):
                try:
                    plan = cls._build_program(parts[i], progress, exact_only=True, split=False, narrow_first=True,
                                              max_parts=1 if across_seats else max_parts // len(branches))
                except TooWide:
                    break
                if not plan.exact:
                    break
                built[i] = plan
            else:
                return cls._of_disjoint(spec, program, [built[i] for i in range(len(parts))], t0, patterns_of=seat)
        return None

    @classmethod
    def _of_disjoint(cls, spec, program: ir.Program, plans: list[Plan], t0: float, split_on: tuple[int, ...] = (),
                     patterns_of: int | None = None, moves: list[np.ndarray] | None = None) -> Plan:
        """The plan of exact ``plans`` that no deal fits two of (a split):
        those with deals (or the first, when none has), as one union;
        ``moves[i]``: the placements plan i stands for (a class of placements)."""
        live = [i for i, p in enumerate(plans) if p.deals_total] or [0]
        union = Union([plans[i] for i in live], [ir.TRUE] * len(live), None, split_on, patterns_of,
                      None if moves is None else [moves[i] for i in live])
        return cls(spec if isinstance(spec, Spec) else None, plans[live[0]].listing, time.perf_counter() - t0,
                   program=program, union=union)

    # ----------------------------------------------------------------- counts

    @property
    def exact(self) -> bool:
        """Whether the plan lists a set of deals exactly, all drawn alike."""
        return not self.rejected and not self.relaxed and not self.weighted

    @property
    def weighted(self) -> bool:
        """Whether the plan weighs a script's ``rnd`` exactly (:mod:`truedeal.weighted`):
        nothing is rejected, but the deals are drawn as often as the script keeps them."""
        return isinstance(self.union, Weighted)

    @property
    def keeps_all(self) -> bool:
        """Whether every deal drawn from what the plan lists is kept (a
        weighing whose classes reject draws its own passes)."""
        return self.exact or self.weighted

    @property
    def counts_exactly(self) -> bool:
        """Whether :meth:`summary` is exact: no part rejected (or what is
        rejected :attr:`counted`), ``rnd`` weighed over exact classes at most."""
        return self.exact or self.counted is not None or (isinstance(self.union, Weighted) and self.union.exact)

    @property
    def rank(self) -> tuple[bool, bool]:
        """How good a plan is: first whether it counts exactly, then whether it keeps every deal it draws."""
        return self.counts_exactly, self.keeps_all

    @property
    def improvable(self) -> bool:
        """Whether another plan may do better: this one estimates its count, or rejects."""
        return self.rank != (True, True)

    @property
    def deals_total(self) -> int:
        """Exact number of complete deals that satisfy the spec (exact plans,
        and plans that reject but count exactly, only)."""
        if self.counted is not None:
            return self.counted
        if not self.exact:
            raise ValueError("this plan handles some seats by rejection, or weighs rnd(): its count is not exact")
        if self.union is not None and not isinstance(self.union, Weighted):
            return self.union.deals
        return self.listing.deals

    def source_program(self) -> ir.Program:
        """The program this plan lists: its own, or its spec's."""
        if self.program is not None:
            return self.program
        assert self.spec is not None  # a plan has a spec or a program
        return self.spec.program()

    @property
    def every_deal(self) -> bool:
        """Whether every deal fits (an exact plan that counts all D): stream
        v2 then reads deal numbers off the stream (:mod:`truedeal.every_deal`)."""
        return self.exact and self.deals_total == D

    @property
    def possible(self) -> bool:
        if isinstance(self.union, Weighted):
            return self.union.listed > 0 and self.union.acceptance > 0
        if self.exact:
            return self.deals_total > 0
        return bool(self.acceptance)

    @property
    def probability(self) -> Fraction:
        return Fraction(self.deals_total, D)

    def summary(self) -> CountSummary:
        """The result of ``truedeal count``: exact, or a labelled estimate."""
        listing = self.listing
        sizes = ListingSizes(listing.total, listing.layout.free_ways(), _cell_count(listing), len(listing.e_weight),
                             round(self.build_seconds, 4))
        if self.union is not None and self.keeps_all:
            return self.union.summary(sizes)
        if self.exact:
            return CountSummary.exact(self.deals_total, count_cases(listing), sizes, getattr(listing, "method", "exact"))
        if self.counted is not None:
            return CountSummary.exact(self.counted, None, sizes, self._method(), rejection=self._rejection(0.0))
        return self._estimate(sizes)

    @property
    def listed_deals(self) -> int:
        """The deals the listing (or the either/or, or the split) holds exactly:
        all the plan's deals when it is exact, those rejection draws from otherwise."""
        if isinstance(self.union, Weighted):
            raise ValueError("a plan that weighs rnd() lists no one set of deals")
        return self.listing.deals if self.union is None else self.union.deals

    def _listed_cases(self) -> int | None:
        """Pavlicek's cases of what the plan lists (None for a split listed one class at a time)."""
        if isinstance(self.union, ClassSplit):
            return None
        if self.union is not None:
            return self.union.cases
        return count_cases(self.listing)

    def _estimate(self, sizes: ListingSizes) -> CountSummary:
        listed, acceptance = self.listed_deals, self.acceptance or 0.0
        estimate = listed * acceptance
        se = pilot_stderr(acceptance, self.pilot_draws)
        return CountSummary(None, estimate / D, None, (D / estimate) if estimate else None, self.possible, None,
                            self._method(), sizes, self._rejection(se), deals_estimate=estimate,
                            deals_estimate_stderr=listed * se)

    def _rejection(self, stderr: float) -> Rejection:
        """What rejection checks and keeps; ``stderr`` 0 where the acceptance is exact (:attr:`counted`)."""
        return Rejection([SEAT_NAMES[c.seat] for c in self.rejected], list(self.relaxed), self.acceptance or 0.0,
                         stderr, self.pilot_draws, self.listed_deals, self._listed_cases(),
                         acceptance_exact=self.counted is not None, why_not_exact=self.why_not_exact)

    def _method(self) -> str:
        if self.program is not None:
            listed = "exact listing"
            if self.union is not None:  # the support of opaque parts, split or an either/or
                listed = f"exact listing ({self.union.method.removeprefix('exact: ').removesuffix(', no rejection')})"
            elif hasattr(self.listing, "what"):  # one seat's rows, the other seats relaxed
                listed = f"exact listing ({self.listing.what})"
            return listed + ", rejection for " + "; ".join(self.relaxed)
        return "exact for " + (_names(self.kept_rules()) or "no seat") + ", rejection for " + _names(self.rejected)

    def kept_rules(self):
        """What the listing holds: seat rules, or the compiled (relaxed) program."""
        if self.listed is not None:
            return self.listed
        dropped = {c.seat for c in self.rejected}
        return [c for c in self.spec.constraints() if c.seat not in dropped]

    # ------------------------------------------------------------------ draws

    @property
    def sampler(self) -> Sampler:
        if not self.listing.total:
            raise Impossible("no deal satisfies this spec")
        if self._sampler is None:
            make = getattr(self.listing, "make_sampler", None)
            self._sampler = make() if make else Sampler(self.listing, lazy=self.exact)
        return self._sampler

    def _draw(self, n: int, rng: Rng, enough: int | None = None) -> np.ndarray:
        """``n`` uniform deals, rejecting those that miss a rejected seat's
        constraint; by rejection, only the first ``enough`` of them are drawn
        (the batches depend on ``n`` alone, so they are the same deals)."""
        if self.keeps_all:
            return self._listed_draw(n, rng, enough)
        if self.counted == 0:  # rejection would never keep one
            raise Impossible("no deal satisfies this spec")
        return self._kept_on(np.zeros((0, 52), np.uint8), n, rng, enough)

    def _batch(self, n: int) -> int:
        """Listed deals that one pass of rejection draws for ``n`` kept deals."""
        if self.double_dummy:  # a few DDS calls a batch, so that a few deals come in seconds
            return DD_BATCH_DRAWS
        return min(max(64, int(n / max(self.acceptance or 0.0, MIN_ACCEPTANCE) * 1.1)), 200_000)

    def _kept_on(self, drawn: np.ndarray, n: int, rng: Rng, enough: int | None) -> np.ndarray:
        """:meth:`_draw`'s rejection from its first pass's listed deals ``drawn``
        (none yet: empty) on, drawing passes until ``enough`` are kept."""
        kept = [drawn[self._checks(drawn, rng)]] if len(drawn) else []
        have = sum(map(len, kept))
        while have < (n if enough is None else enough):
            owners = self._listed_draw(self._batch(n), rng)
            owners = owners[self._checks(owners, rng)]
            kept.append(owners)
            have += len(owners)
        return np.concatenate(kept)[:n]

    def _kept_together(self, wanted: Sequence[tuple[int, Rng, int]]) -> list[np.ndarray]:
        """``_draw(n, rng, enough)`` of each, their first passes drawn together
        by the split (each chunk's stream read as its own draw reads it), so
        that a listing it readies again is readied once for all of them."""
        sizes = [self._batch(n) for n, _, _ in wanted]
        assert self.union is not None  # draws_together: a split's draws
        first = self.union.draw_chunks([(size, rng) for size, (_, rng, _) in zip(sizes, wanted)])
        starts = np.cumsum([0, *sizes])
        return [self._kept_on(first[at : at + size], n, rng, enough)
                for at, size, (n, rng, enough) in zip(starts, sizes, wanted)]

    def draws(self, wanted: Sequence[tuple[int, Rng]]) -> list[np.ndarray]:
        """``[self._draw(n, rng) for n, rng in wanted]`` (nothing drawn for n = 0),
        drawn together where the plan is a split that takes them: a split
        within a split then readies its listings once for all chunks, not
        once per chunk (1NT with 5M and 6m: 2 s a chunk)."""
        live = [k for k, (n, _) in enumerate(wanted) if n]
        out = [np.zeros((0, 52), np.uint8) for _ in wanted]
        split = self.union
        if self.keeps_all and split is not None and all(split.takes_together(wanted[k][0]) for k in live) and len(live) > 1:
            together = split.draw_chunks([wanted[k] for k in live])
            starts = np.cumsum([0, *(wanted[k][0] for k in live)])
            for k, at in zip(live, starts):
                out[k] = together[at : at + wanted[k][0]]
            return out
        if self.exact and split is None and len(live) > 1 and hasattr(self.sampler, "draw_chunks"):
            together = self.sampler.draw_chunks([wanted[k] for k in live])  # (a paired listing's scans, once)
            starts = np.cumsum([0, *(wanted[k][0] for k in live)])
            for k, at in zip(live, starts):
                out[k] = together[at : at + wanted[k][0]]
            return out
        for k in live:
            out[k] = self._draw(*wanted[k])
        return out

    def _listed_draw(self, n: int, rng: Rng, enough: int | None = None) -> np.ndarray:
        """``n`` uniform deals of what the plan lists (its listing, either/or or split)."""
        if isinstance(self.union, ClassSplit | Weighted):
            return self.union.draw(n, rng, enough)
        if self.union is not None:
            return self.union.draw(n, rng)
        return self.sampler.draw(n, rng)

    @cached_property
    def double_dummy(self) -> bool:
        """Whether the rejection check solves deals double dummy (slow: see :data:`DD_PILOT_DRAWS`)."""
        return self.program is not None and not self.exact and needs_double_dummy(self.program.condition)

    @property
    def pilot_draws(self) -> int:
        """Deals the acceptance rate is measured on: fewer when each needs a
        double-dummy solve, more when the first ones keep few (see :data:`PILOT_KEPT`)."""
        return self._pilot_drawn or (DD_PILOT_DRAWS if self.double_dummy else PILOT_DRAWS)

    def _measure_acceptance(self, what: str) -> None:
        """Set the acceptance from the pilot; refuse (TooWide, naming ``what``)
        a rate below :data:`MIN_ACCEPTANCE`.  An empty listing keeps nothing
        (no deal satisfies); a pilot that keeps nothing proves only that the
        rate is small (fewer than 3 in ``pilot_draws`` at 95%), not that it is 0."""
        if not self.listed_deals:
            self.acceptance = 0.0
            return
        self.acceptance = self._pilot_acceptance()
        if self.acceptance < MIN_ACCEPTANCE:
            kept = (f"only {self.acceptance:.2g} of deals" if self.acceptance else
                    f"none of {self.pilot_draws:,} pilot deals (fewer than {3 / self.pilot_draws:.2g} at 95%)")
            raise TooWide(f"{what} would keep {kept}")

    def _pilot_acceptance(self) -> float:
        """The share of seeded listed deals that the checks keep (the cost of a
        check measured on the first batch)."""
        draws, checks = Rng(SeededBits("truedeal/pilot")), Rng(SeededBits("truedeal/pilot-rnd"))
        if self.union is None:
            _ = self.sampler  # made before the clock starts
        t0 = time.perf_counter()
        owners = self._listed_draw(self.pilot_draws, draws)
        t1 = time.perf_counter()
        kept = int(self._checks(owners, checks).sum())
        self.draw_seconds, self.check_seconds = (t1 - t0) / len(owners), (time.perf_counter() - t1) / len(owners)
        drawn = len(owners)
        long = kept < PILOT_KEPT and not self.double_dummy  # a fixed size, so that kept / drawn is unbiased
        while long and drawn < LONG_PILOT_DRAWS:
            owners = self._listed_draw(PILOT_DRAWS, draws)
            kept += int(self._checks(owners, checks).sum())
            drawn += len(owners)
        self._pilot_drawn = drawn
        return kept / drawn

    def rejection_seconds(self, kept: int) -> float:
        """Estimated seconds of draws and checks until ``kept`` deals are
        kept (0.0 when exact): what a job's chunk costs when each check
        solves deals double dummy, or when few deals are kept.  From the
        pilot, so rough at low acceptance."""
        if isinstance(self.union, Weighted) and not self.union.exact:
            return kept / max(self.union.acceptance, MIN_ACCEPTANCE) * self.union.pass_seconds
        if self.keeps_all or not self.acceptance:
            return 0.0
        return kept / self.acceptance * (self.draw_seconds + self.check_seconds)

    def _checks(self, owners: np.ndarray, rng: Rng) -> np.ndarray:
        """Which drawn deals meet the parts the listing does not hold.  A
        script's ``rnd`` draws from a generator seeded by ``rng``'s stream."""
        if self.program is None:
            return satisfies(owners, self.rejected)
        from .constraints.evaluate import evaluate_cond

        return evaluate_cond(owners, self.program.condition, np.random.default_rng(rng.words64(4)))

    @property
    def routed(self) -> bool:
        """Whether this plan is built in shards: it draws stream v3 alone."""
        shards = sys.modules.get(f"{__package__}.shards")  # not imported: no plan in shards exists
        return shards is not None and isinstance(self.listing, shards.ShardedListing)

    def chunk(self, index: int, seed: str | None, size: int = CHUNK_DEALS) -> np.ndarray:
        """Deals of chunk ``index`` (of stream v1, or v3 for a routed plan):
        when seeded, the first ``size`` deals of the full chunk (so that they
        are reproducible), else ``size`` fresh deals."""
        rng = chunk_rng(seed, index, "v3" if self.routed else "v1")
        return self._draw(CHUNK_DEALS if seed is not None else size, rng, size)[:size]

    def chunks(self, wanted: Sequence[tuple[int, int]], seed: str | None) -> list[np.ndarray]:
        """``chunk(index, seed, size)`` for each ``(index, size)``: the same
        deals, drawn together where the sampler can (a paired listing's
        scans then take every chunk's rows at once: 1.3-1.4x on four.json)."""
        if not self.draws_together or len(wanted) < 2:
            return [self.chunk(index, seed, size) for index, size in wanted]
        drawn = [CHUNK_DEALS if seed is not None else size for _, size in wanted]
        stream = "v3" if self.routed else "v1"
        if not self.keeps_all:
            kept = self._kept_together([(n, chunk_rng(seed, index, stream), size) for (index, size), n in zip(wanted, drawn)])
            return [owners[:size] for owners, (_, size) in zip(kept, wanted)]
        together = (self.union or self.sampler).draw_chunks  # type: ignore[union-attr]  # draws_together: it has one
        owners = together([(n, chunk_rng(seed, index, stream)) for (index, _), n in zip(wanted, drawn)])
        starts = np.cumsum([0, *drawn])
        return [owners[at : at + size] for at, (_, size) in zip(starts, wanted)]

    def numbered_chunk(self, index: int, seed: str | None, size: int = CHUNK_DEALS, stream: str = DEFAULT_STREAM,
                       cards: bool = True) -> tuple[np.ndarray | None, np.ndarray]:
        """Chunk ``index`` of ``stream`` as ``(owners, limbs)``: the deals and
        their numbers (:func:`~truedeal.dealnumber.encode_batch`'s limbs).
        In stream v2 a spec that every deal fits reads the numbers off the
        stream, and deals their cards only when ``cards`` (else ``owners`` is
        None); every other chunk is :meth:`chunk`'s deals, in either stream.
        In stream v3 a plan that can be routed draws through its shards, and
        every other plan as in v2."""
        if (stream == "v3") != self.routed:
            if self.routed:
                raise ValueError(f"this plan is built in shards: it draws stream v3, not {stream}")
            if check_stream(stream) == "v3" and (routed := self._routed_twin()) is not None:
                return routed.numbered_chunk(index, seed, size, stream, cards)
        if stream in ("v2", "v3") and self.every_deal:
            limbs = deal_numbers(chunk_rng(seed, index, "v2").bits, size)  # a prefix of the whole chunk's
            return (decode_batch(limbs) if cards else None), limbs
        owners = self.chunk(index, seed, size)
        return owners, encode_batch(owners)

    @property
    def draws_together(self) -> bool:
        """Whether :meth:`chunks` draws several chunks faster than one by one
        (an exact plan whose sampler takes them together: a paired listing;
        a split, exact or with rejection on top, whose passes fit one pick)."""
        if self.union is not None:
            return self.union.draws_together and (self.keeps_all or self.union.takes_together(self._batch(CHUNK_DEALS)))
        return self.exact and hasattr(self.sampler, "draw_chunks")

    def numbered_chunks(self, wanted: Sequence[tuple[int, int]], seed: str | None, stream: str = DEFAULT_STREAM,
                        cards: bool = True) -> list[tuple[np.ndarray | None, np.ndarray]]:
        """``numbered_chunk(index, seed, size, stream, cards)`` for each
        ``(index, size)``: the same deals, those of :meth:`chunk` drawn
        together by :meth:`chunks`."""
        if self.deals_chunks(stream):
            return [(owners, encode_batch(owners)) for owners in self.chunks(wanted, seed)]
        return [self.numbered_chunk(index, seed, size, stream, cards) for index, size in wanted]

    def deals_chunks(self, stream: str) -> bool:
        """Whether :meth:`numbered_chunk` deals ``stream`` as :meth:`chunk`'s
        deals, numbered after (else: as numbers read off the stream, or
        through a routed twin)."""
        if (stream == "v3") != self.routed:
            return False
        return not (stream in ("v2", "v3") and self.every_deal)

    def numbered_part(self, index: int, seed: str, size: int, shards: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """Of seeded chunk ``index`` of stream v3 (the first ``size`` deals),
        those in ``shards``, all held by this routed plan: their rows
        (ascending: :func:`~truedeal.routing.chunk_shards` says which) and their numbers' limbs."""
        if not self.routed:
            raise ValueError("only a plan built in shards draws parts of a chunk")
        rows, owners = self.sampler.draw_part(CHUNK_DEALS, chunk_rng(seed, index, "v3"), shards)  # type: ignore[attr-defined]
        keep = rows < size
        return rows[keep], encode_batch(owners[keep])

    def _routed_twin(self) -> Plan | None:
        """This plan's spec built in shards (once), None when it cannot be."""
        if not self._twin:
            spec = self.spec if self.spec is not None else self.source_program()
            self._twin = (Plan.build_routed(spec) if self.exact and self.union is None else None,)
        return self._twin[0]

    def deals(self, n: int, seed: str | None = None, start_chunk: int = 0) -> Iterator[np.ndarray]:
        """``n`` uniform deals of stream v1 as (k, 52) owners batches, in constant memory."""
        for wanted in _batches(self._chunks(n, start_chunk), self._together):
            yield from self.chunks(wanted, seed)

    def numbered_deals(self, n: int, seed: str | None = None, stream: str = DEFAULT_STREAM,
                       cards: bool = True) -> Iterator[tuple[np.ndarray | None, np.ndarray]]:
        """``n`` uniform deals of ``stream`` as :meth:`numbered_chunk` batches, in constant memory."""
        check_stream(stream)
        for wanted in _batches(self._chunks(n, 0), self._together):
            yield from self.numbered_chunks(wanted, seed, stream, cards)

    @property
    def readies_again(self) -> bool:
        """Whether each call of :meth:`chunks` readies some listings again (a
        split that keeps some samplers alone, or holds one that does: rnd's
        classes, each a split within a split): the more chunks a call takes,
        the less that costs a deal."""
        split = self.union
        if split is None or not split.draws_together:
            return False
        return len(split.samplers_kept) < len(split.plans) or any(p is not None and p.readies_again for p in split.plans)

    @property
    def _together(self) -> int:
        """Chunks that :meth:`deals` draws together."""
        return READYING_CHUNKS_TOGETHER if self.readies_again else CHUNKS_TOGETHER

    def _chunks(self, n: int, start: int) -> Iterator[tuple[int, int]]:
        """(chunk index, deals wanted from it) for ``n`` deals from chunk ``start`` on."""
        check_count(n)
        if not self.possible:  # fail before the first batch
            raise Impossible("no deal satisfies this spec")
        for k in range(0, n, CHUNK_DEALS):
            yield start + k // CHUNK_DEALS, min(n - k, CHUNK_DEALS)


def _union_deals(plans: list[Plan], branches: list, part: Callable[[list], Plan]) -> int:
    """The deals of the union of ``branches`` (``plans``: each one's, ``part``:
    the plan of their conjunction): by inclusion-exclusion for two, and for
    more by disjoint parts, each branch less the earlier ones: k - 1 more
    listings where inclusion-exclusion makes 2**k - 1 - k (the library's 1NT
    with 5M and 6m, unions of three inside unions: 83 s -> 50 s).  A part
    that is too wide (a long suit in any of four seats: its last part lists
    four patterned seats) falls back to inclusion-exclusion, whose parts are
    plain conjunctions."""
    if len(branches) <= 2:
        return sum(p.deals_total for p in plans) - (part(branches).deals_total if len(branches) == 2 else 0)
    token = _CLASSED.set(False)  # (a classed listing lists such a part, slower than inclusion-exclusion: 2.3 s, 0.6 s)
    try:
        return plans[0].deals_total + sum(part([b, ir.Not(ir.Or(tuple(branches[:i])))]).deals_total
                                          for i, b in enumerate(branches) if i)
    except TooWide:
        if len(branches) > MAX_INCLUSION_EXCLUSION:
            raise
    finally:
        _CLASSED.reset(token)
    return _inclusion_exclusion(plans, branches, part)


#: Branches an either/or may have for its count by inclusion-exclusion: up to 2**k - 1 listings.
MAX_INCLUSION_EXCLUSION = 6


def _inclusion_exclusion(plans: list[Plan], branches: list, part: Callable[[list], Plan]) -> int:
    """The deals of the union of ``branches`` by inclusion-exclusion.  A set
    of branches that no deal fits together is not listed past: no larger set
    is listed that holds it (branches that exclude one another, such as a
    7-card suit in each seat, need only their pairs)."""
    empty = [frozenset({i}) for i, p in enumerate(plans) if not p.deals_total]
    total = sum(p.deals_total for p in plans)
    for size in range(2, len(branches) + 1):
        for subset in itertools.combinations(range(len(branches)), size):
            if any(e <= set(subset) for e in empty):
                continue
            deals = part([branches[i] for i in subset]).deals_total
            empty += [frozenset(subset)] if not deals else []
            total += (-1) ** (size + 1) * deals
    return total


def _batches(chunks: Iterable[tuple[int, int]], together: int = CHUNKS_TOGETHER) -> Iterator[list[tuple[int, int]]]:
    """The chunks ``(index, size)`` in lists of up to ``together``."""
    it = iter(chunks)
    while batch := list(itertools.islice(it, together)):
        yield batch


def _other_listing(comp: Compiled, wide: list[TooWide] | None = None):
    """An exact listing of another kind when the factored one is too wide, else None
    (see :func:`other_listing_kind`); a classed listing's reason replaces the
    last of ``wide`` (the factored listing's, for this spec)."""
    from . import hand_rank_counts
    from .listing import paired
    from .listing.paired import build_paired
    from .rank_counts import RankCountListing

    kind = other_listing_kind(comp)
    if kind == "rank counts":
        return RankCountListing(comp)
    if kind == "hand and rank counts":
        return hand_rank_counts.HandRankCountListing(comp)
    listed = paired.view(comp) if kind == "paired" else None
    if listed is not None:
        try:
            return build_paired(listed)
        except TooWide:
            return _classed(listed, wide)
    return None


def _cell_count(listing) -> int:
    """The cells a listing stands for (a classed listing lists none of them)."""
    return listing.n_cells if hasattr(listing, "n_cells") else len(listing.cells)


#: Whether a classed listing may be tried (not for an either/or's disjoint
#: parts, which inclusion-exclusion counts when they are too wide).
_CLASSED: ContextVar[bool] = ContextVar("classed", default=True)


def _classed(comp: Compiled, wide: list[TooWide] | None = None):
    """The paired listing of ``comp`` with its cells never listed
    (:mod:`truedeal.listing.paired_classes`), tried where the paired one is
    too wide, so that the plans that list keep their deals; None when it
    does not apply or is too wide too.  Its reason then replaces the last
    of ``wide``: it lists the cells that the factored listing counted too
    many of, so its own limit is the one to name."""
    from .listing import paired_classes

    if not _CLASSED.get() or not paired_classes.applicable(comp):
        return None
    try:
        return paired_classes.build_classed(comp)
    except TooWide as exc:
        if wide:
            wide[-1] = _bare(exc)
        return None


def other_listing_kind(comp: Compiled) -> str | None:
    """The listing tried when the factored one is too wide, first that
    applies: by rank counts (:mod:`truedeal.rank_counts`), one hand in full
    and the other seats by rank counts (:mod:`truedeal.hand_rank_counts`), or
    aggregated by spades+hearts pair (:mod:`truedeal.listing.paired`)."""
    from . import hand_rank_counts, rank_counts
    from .listing import paired

    if rank_counts.applicable(comp):
        return "rank counts"
    if hand_rank_counts.applicable(comp):
        return "hand and rank counts"
    return "paired" if paired.view(comp) is not None else None


def _relaxations(program: ir.Program, exact_only: bool,
                 rows: RowsMemo) -> Iterator[Relaxation]:
    """None first; then, unless ``exact_only``, every relaxation, best first
    (ranked only once the exact listing has failed: ranking lists each seat
    alone, a seat's rows memoised in ``rows``)."""
    yield Relaxation()
    if not exact_only:
        yield from ranked(program, functools.partial(_listed_odds, rows=rows))


def _any_listing(comp: Compiled, progress, wide: list[TooWide], narrow_first: bool = False) -> Listing | None:
    """The factored listing of ``comp``, else another exact one, else the
    same of ``comp`` with its filter forms (:func:`with_filters`: narrower,
    but other draws), else None (the first reason it was too wide goes to
    ``wide``).  ``narrow_first``: with its filter forms only (the branches
    of a new kind of plan: they have no seeded deals to keep)."""
    narrow = with_filters(comp)
    if narrow_first or narrow is comp:
        return _one_listing(narrow, progress, wide)
    listing = _one_listing(comp, progress, wide)
    return listing if listing is not None else _one_listing(narrow, progress, wide)


#: Widest option and pair tables (entries) of :func:`_pool_filtered` for a spec
#: itself, the last listing tried before rejection: 4x the other listings' bound
#: (a relaxed spec, and the ranking of relaxations, keep that bound).
POOL_FILTERED_WIDTH = 4 * MAX_FEATURE_CELLS


def _pool_filtered(comp: Compiled, progress, wide: list[TooWide], max_width: int = MAX_FEATURE_CELLS) -> Listing | None:
    """The factored listing of ``comp`` with its filter forms, its pooled
    seats' included (calm opponents beside shaped seats), tried after every
    other listing (so that the plans those make, and their seeded deals,
    stay as they were); None when ``comp`` has no pooled seat or no filter,
    or the listing is wider than ``max_width``."""
    narrow = with_filters(comp, pooled=True)
    if narrow is comp or not narrow.pooled:
        return None
    try:
        return build_listing(narrow, progress, max_width)
    except TooWide as exc:
        wide.append(_bare(exc))
        return None


def _bare(exc: TooWide) -> TooWide:
    """``exc`` without its traceback and context, to be kept as a reason: its
    frames held the refused listing's arrays (each try's cells and tables) as
    long as the reason was kept, 2.9 GB at once in Open In Fourth Seat."""
    exc.__context__ = None
    return exc.with_traceback(None)


def _one_listing(comp: Compiled, progress, wide: list[TooWide]) -> Listing | None:
    try:
        return build_listing(comp, progress)
    except TooWide as exc:
        wide.append(_bare(exc))
        return _other_listing(comp, wide)


def _honours_by_suit(comps: tuple[Compiled, ...], wide: list[TooWide]):
    """The listing suit by suit (:mod:`truedeal.honours_by_suit`) of seats
    that read honours and no lengths, tried last: only plans that would
    otherwise relax some seats take it.  The first of ``comps`` (a spec's
    predealt cards asked of the deal, then placed) that lists, with its
    listing; None where none does."""
    from . import honours_by_suit

    for i, comp in enumerate(comps):
        if any(comp is c for c in comps[:i]) or not honours_by_suit.applicable(comp):
            continue
        try:
            return comp, honours_by_suit.HonoursBySuitListing(comp)
        except TooWide as exc:
            wide.append(_bare(exc))
    return None


def _listed_odds(program: ir.Program, rows: RowsMemo) -> float | None:
    """The probability of ``program``'s listing (or, for one seat, of its
    hand's rows: :func:`_relaxed_rows`), None if none fits."""
    comp = compile_program(program)
    listing = _any_listing(comp, None, []) or _pool_filtered(comp, None, []) or _relaxed_rows(program, rows)
    return None if listing is None else listing.deals / D


def _relaxed_rows(relaxed: ir.Program, rows: RowsMemo) -> OneHandListing | None:
    """:func:`_hand_rows` of what ``relaxed`` may keep (:func:`~.constraints.opaque.possible`),
    memoised in ``rows`` by its identity (:func:`~.relaxation.relax` gives
    the same object for the same ask): a seat's rows listed for the ranking
    are those a one-seat mix then plans with (3NT over RHO's 3x listed them
    twice: a plan of 6.4 s)."""
    hit = rows.get(id(relaxed))
    if hit is None:
        hit = rows[id(relaxed)] = (relaxed, _hand_rows(opaque.possible(relaxed)))
    return hit[1]


def _weighed_share(owners: np.ndarray, found: rnd_levels.Levels, relaxation: Relaxation) -> float:
    """The mean over ``owners`` of the share of ``rnd``'s numbers whose
    class, relaxed by ``relaxation``, may keep the deal
    (:func:`~.constraints.opaque.possible`)."""
    from .constraints.evaluate import satisfies as fits

    listed = np.zeros(len(owners))
    for level in found.parts:
        listed += level.weight * fits(owners, opaque.possible(relax(level.program, relaxation)))
    return float(listed.mean()) / found.points


def _pack_deals(n: int, predeal: tuple[tuple[int, tuple[int, ...]], ...]) -> tuple[np.ndarray, int]:
    """``n`` seeded uniform deals of the pack with the ``predeal``'s cards
    given, and how many such deals there are."""
    owners = np.full((n, 52), OPEN, np.uint8)
    left = [13] * 4
    for seat, cards in predeal:
        owners[:, list(cards)] = seat
        left[seat] -= len(cards)
    deal_open(owners, Rng(SeededBits("truedeal/pilot")), np.arange(52), np.tile(left, (n, 1)), np.arange(4, dtype=np.uint8))
    return owners, math.factorial(sum(left)) // math.prod(math.factorial(k) for k in left)


def _one_seat_mixes(program: ir.Program) -> list[Relaxation]:
    """For each seat ``program`` reads, the relaxation that leaves every
    other seat it reads to rejection, whole."""
    read = SeatsRead()(program.condition)[1]
    return [Relaxation(tuple(WHOLE if s in read and s != seat else KEEP for s in range(4)))  # type: ignore[arg-type]
            for seat in sorted(read)]


def _hand_read(program: ir.Program, relaxation: Relaxation) -> ir.Program | None:
    """What rejection leaves to list of ``program`` relaxed by ``relaxation``
    (:func:`~.constraints.opaque.possible`), when it reads one seat alone; else None."""
    from . import one_hand

    if relaxation.none:
        return None
    held = opaque.possible(relax(program, relaxation))
    return held if one_hand.hand_seat(held) is not None else None


def _hand_rows(program: ir.Program, comp: Compiled | None = None, within: OneHandListing | None = None) -> OneHandListing | None:
    """The listing of one seat's hand by its rows (:mod:`truedeal.one_hand`)
    of a ``program`` that reads that seat alone (``comp``, it compiled,
    bounds its patterns; ``within``, rows that hold all of its own); None
    when it reads more, or its rows are too many."""
    from . import one_hand  # ~25 ms of imports (the evaluator) that most plans never need

    seat = one_hand.hand_seat(program)
    if seat is None:
        return None
    patterns = one_hand.allowed_patterns(comp or compile_program(program), seat)
    if one_hand.row_count(program, seat, patterns) > one_hand.MAX_HAND_ROWS:
        return None
    return one_hand.OneHandListing(program, seat, patterns, within)


def exact_source(spec: Spec | ir.Program) -> Compiled | list[SeatConstraint] | None:
    """What :meth:`Plan.build` lists first when that listing alone is the
    plan (no either/or across seats, nothing checked by rejection), so that
    it can be built in slices; None when the plan takes another path.  The
    listing may still be too wide, and then :meth:`Plan.build` decides."""
    if isinstance(spec, Spec) and spec.is_simple():
        return spec.constraints()
    program = spec if isinstance(spec, ir.Program) else spec.program()
    if cross_seat_branches(program) is not None:
        return None
    comp = compile_program(program)
    return comp if comp.exact else None


def _relaxed_parts(comp: Compiled, relaxation: Relaxation) -> tuple[str, ...]:
    if relaxation.none and not comp.exact:
        from .constraints.describe import opaque_parts

        parts = opaque_parts(comp.rejection) if comp.rejection is not None else ""
        return (f"the parts no listing can hold ({parts or 'tricks, rnd'})",)
    return relaxation.describe()


def _names(rules: list[SeatConstraint]) -> str:
    return ", ".join(SEAT_NAMES[c.seat] for c in rules)


def _fallbacks(rules: list[SeatConstraint]):
    """(kept, dropped) splits to try, best estimated acceptance first.

    A dropped seat is checked by rejection, so a split keeps about the product
    of the dropped seats' own probabilities (exact, from one-seat listings;
    the seats are not independent, so this only orders the attempts)."""
    alone = []
    for c in rules:
        try:
            alone.append(Fraction(build_listing([c]).deals, D))
        except TooWide:
            alone.append(Fraction(0))
    splits = []
    for k in range(1, len(rules)):
        for dropped in itertools.combinations(range(len(rules)), k):
            estimate = math.prod(alone[i] for i in dropped)
            splits.append((-estimate, k, dropped))
    for _, _, dropped in sorted(splits):
        yield [c for i, c in enumerate(rules) if i not in dropped], [rules[i] for i in dropped]


def check_count(n: int) -> int:
    """Validate a requested number of deals; raises ValueError with a clear message."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise ValueError(f"the number of deals must be an integer, got {n!r}")
    if n < 1:
        raise ValueError(f"the number of deals must be at least 1, got {n}")
    if n > MAX_DEALS:
        raise ValueError(f"at most {MAX_DEALS:,} deals per request, got {n:,}")
    return n


__all__ = ["Plan", "Impossible", "TooWide", "check_count", "exact_source", "MAX_DEALS"]
