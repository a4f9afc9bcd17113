"""``truedeal explain``: a plan described for a person (sansio: data in, dict out)."""

from __future__ import annotations

from typing import Any

from .cards import SEAT_NAMES, SUIT_NAMES
from .class_split import ClassSplit
from .constraints.compile import compile_program
from .constraints.describe import cond, feature
from .engine import Plan
from .listing import MAX_ENTRIES, Listing
from .listing.paired import PairedListing
from .one_hand import OneHandListing
from .summary import CountSummary
from .union import Union
from .weighted import Weighted

_RANKS = "AKQJT98765432"


def explanation(plan: Plan) -> dict[str, Any]:
    """The internal form of a plan: condition, listing layout, exactness, size, time."""
    info = plan.summary()
    program = plan.source_program()
    listed = (plan.union.plans[0] or plan) if plan.union is not None else plan  # an either/or or a split: its first listing
    layout = getattr(listed.listing, "layout", None)
    # what the listing lists: a paired listing may list a seat by pattern that the spec does not shape
    comp = getattr(layout, "comp", None) or listed.listed or compile_program(listed.source_program())
    pool = _rank_pool(listed)
    folds = getattr(layout, "folds", {})  # truedeal.listing.folding
    out: dict[str, Any] = {
        "condition": cond(program.condition),
        "predealt": [f"{SEAT_NAMES[s]}: " + " ".join("SHDC"[c % 4] + _RANKS[c // 4] for c in cards) for s, cards in program.predeal],
        "method": info.method,
        "exact": plan.exact,
        "counted exactly": plan.counts_exactly,
        "listed by pattern": [SEAT_NAMES[s] for s in comp.patterned],
        "listed by card": [SEAT_NAMES[s] for s in comp.rank_seats if s not in pool],
        "weighed by rank counts": [SEAT_NAMES[s] for s in pool],
        "out of the pack": [f"{SEAT_NAMES[s]}: " + "SHDC"[c % 4] + _RANKS[c // 4] for c, s in sorted(comp.dead.items())],
        "tracked ranks": [f"{SUIT_NAMES[k]}: {''.join(_RANKS[r] for r in comp.tracked[k]) or '-'}" for k in range(4)],
        "forms": [_form(f) + (", read as the sum of the forms it adds up (not listed)" if i in folds else "")
                  + (", a filter: the holdings past it are left out (not listed)" if i in comp.filters else "")
                  for i, f in enumerate(comp.forms)],
        "cells": info.sizes.cells,
        "entries": info.sizes.entries,
        "cases": info.cases,
        "deals": _deals(info),
        "build seconds": info.sizes.build_seconds,
        "streams": _streams(plan),
    }
    if plan.union is not None:
        out["listings"] = _listings(plan.union)
    if isinstance(listed.listing, OneHandListing):  # rows of one hand, evaluated whole: no forms
        out["listed by pattern"] = out["listed by card"] = [SEAT_NAMES[listed.listing.seat]]
        out["tracked ranks"] = [f"{SUIT_NAMES[k]}: {''.join(_RANKS[r] for r in listed.listing.tracked[k]) or '-'}" for k in range(4)]
        out["forms"] = [f"none: the condition is evaluated once per row of {SEAT_NAMES[listed.listing.seat]}'s hand"]
    if plan.why_not_exact:
        out["not exact"] = plan.why_not_exact
    if plan.acceptance is not None:  # rejection, or rnd() weighed over classes listed with seats relaxed
        out["acceptance"] = plan.acceptance
    if info.rejection is not None:  # as count's "listed": the cases of the listing rejection draws from
        out["listed cases"] = info.rejection.listed_cases
    return out


def _deals(info: CountSummary) -> int | str:
    """The count, a script's expected count with ``rnd`` weighed, or an estimate."""
    if info.deals is not None:
        return info.deals
    if info.deals_expected is not None:
        return f"{info.deals_expected} expected"
    return f"about {info.deals_estimate:.6g}"


def _listings(union: Union | ClassSplit | Weighted) -> str:
    """How many listings an either/or or a split makes, and, for a split
    listed one class at a time, what it keeps between draws."""
    if not isinstance(union, ClassSplit):
        return f"{len(union.plans)}; the layout above is the first's"
    kept = sum(p is not None for p in union.plans)
    return (f"{len(union.classes)} classes of {union.placements:,} placements, listed one at a time; {kept} listings "
            f"and {len(union.samplers_kept)} samplers kept between draws, the others made again by each batch of "
            "draws that needs them; the layout above is the first's")


def _rank_pool(plan: Plan) -> tuple[int, ...]:
    """The seats a listing weighs by rank counts inside the paired listing
    (:mod:`truedeal.listing.rank_pool`), not card by card."""
    pool = getattr(getattr(plan.listing, "layout", None), "pool", None)
    return pool.seats if pool is not None else ()


def _streams(plan: Plan) -> str:
    """How the seeded streams draw this plan's deals."""
    if plan.every_deal:
        return "v1 deals through the listing; v2 and v3 read deal numbers straight off the stream (every deal fits)"
    if _routed(plan):
        return "v1 and v2 deal alike, through the listing; v3 deals it in 16 shards, each from a stream of its own"
    return "v1, v2 and v3 deal alike, through the listing"


def _routed(plan: Plan) -> bool:
    """Whether stream v3 routes this plan (:meth:`Plan.build_routed`), from
    what it is: one exact factored or paired listing within the entry limit,
    of the spec itself (v3 cuts that; a listing with filter forms was taken
    because it was too wide)."""
    return plan.routed or (plan.exact and plan.union is None and isinstance(plan.listing, Listing | PairedListing)
                           and len(plan.listing.e_weight) <= MAX_ENTRIES and not plan.listing.layout.comp.filters)


def _form(form) -> str:
    terms = " + ".join(("" if t.coef == 1 else f"{t.coef}*") + ("(max - " if t.complement else "") + feature(_feat(t))
                       + (")" if t.complement else "") for t in form.terms)
    top = f"{form.dim - 1} or more" if form.clamp else f"at most {form.dim - 1}"
    return f"{terms}: values 0..{form.dim - 1} ({top})"


def _feat(term):
    from .constraints import ir

    return ir.Feature(term.seat, term.suits, term.fn)
