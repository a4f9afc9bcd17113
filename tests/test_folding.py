"""Forms that are sums of other forms, folded out of a paired listing (truedeal.listing.folding)."""

from __future__ import annotations

import numpy as np
import pytest

from truedeal import kernel
from truedeal.constraints.compile import compile_program, unclamped
from truedeal.constraints.dealer import load_program
from truedeal.constraints.evaluate import evaluate_cond
from truedeal.engine import Plan
from truedeal.listing import build_listing, count_cases
from truedeal.listing.folding import find_folds, folded
from truedeal.listing.layout import make_layout
from truedeal.listing.paired import Prepared, _fold_sources, build_paired, cases_first
from truedeal.listing.rank_pool import pool_layout
from truedeal.randomness import chunk_rng

_SEATS = "shape(north, any 4333) && shape(east, 3622) && shape(south, 4243)"

#: Specs that list with every form and with the sums folded: both must give the same listing.
BOTH = [
    # three patterned seats with a partnership sum beside each partner's range
    _SEATS + " && hcp(north) >= 12 && hcp(north) <= 13 && hcp(east) <= 3 && hcp(south) >= 6 && hcp(south) <= 8"
             " && hcp(north) + hcp(south) >= 20",
    # a weighted sum of three seats
    _SEATS + " && hcp(north) <= 4 && hcp(east) <= 3 && hcp(south) <= 4 && hcp(north) + 2 * hcp(south) + hcp(east) >= 6",
    # a rank pool (East) beside North and South, with a mixed form whose patterned part is North's HCP
    "shape(north, 4333) && hcp(north) <= 3 && shape(south, 5xxx) && hcp(south) <= 3 && hcp(east) <= 5"
    " && controls(north) + controls(south) <= 1 && hcp(north) + hcp(south) + hcp(east) >= 4",
]

#: Four partnership sums of three seats: too wide with every form listed
#: (64 x 75**3 x 112 feature states), 64 with the sums folded.
SUMS = ("shape(north, 4333) && hcp(north) <= 3 && shape(east, 3424) && hcp(east) <= 3 && shape(south, 5xxx) && hcp(south) <= 3"
        " && hcp(north) + hcp(south) >= 2 && hcp(north) + hcp(east) >= 2 && hcp(south) + hcp(east) >= 2"
        " && hcp(north) + hcp(south) + hcp(east) >= 5")


def _comp(condition: str):
    return compile_program(load_program(f"condition {condition}\n"))


def _layout(comp):
    return pool_layout(comp) if comp.pooled else make_layout(unclamped(comp))


def _listing(layout):
    prepared = Prepared._of(layout)
    return prepared.listing(prepared.cases())


def test_a_sum_of_whole_forms_is_folded_with_its_coefficients():
    forms = _comp(BOTH[1]).forms  # HCP of north, east and south, then the sum
    folds = find_folds(forms, list(range(len(forms))))
    assert list(folds) == [3] and dict(folds[3]) == {0: 1, 1: 1, 2: 2}  # N + E + 2 S
    forms = _comp(_SEATS + " && hcp(north) <= 4 && hcp(south) <= 4 && hcp(north) + controls(south) >= 3").forms
    assert find_folds(forms, list(range(len(forms)))) == {}  # South's controls are no form of their own


@pytest.mark.parametrize("condition", BOTH, ids=["partnership", "weighted", "pool"])
def test_a_folded_listing_is_the_listing_with_every_form(condition):
    layout = _layout(_comp(condition))
    narrow = folded(layout, _fold_sources(layout))
    assert narrow.folds and narrow.zsize < layout.zsize
    whole, fold = _listing(layout), _listing(narrow)
    assert fold.deals == whole.deals > 0 and fold.cases == whole.cases


def test_a_spec_too_wide_with_every_form_is_listed_folded_and_counts_what_the_factored_listing_counts():
    comp = _comp(SUMS)
    listing = build_paired(comp)
    assert len(listing.layout.folds) == 4 and listing.layout.zsize == 64
    factored = build_listing(comp)
    assert listing.deals == factored.deals > 0 and listing.cases == count_cases(factored)
    owners = listing.make_sampler().draw(3000, chunk_rng("folded", 0))
    assert evaluate_cond(owners, load_program(f"condition {SUMS}\n").condition).all()
    assert (np.sort(owners, axis=1) == np.repeat(np.arange(4), 13)).all()
    with kernel.numpy_only():
        again = listing.make_sampler().draw(3000, chunk_rng("folded", 0))
    assert (owners == again).all()


def test_a_paired_listing_counts_its_cases_when_asked_or_first_for_a_count():
    """Cases are left out of a build for drawing (generate never reads them)
    and counted on first use; a build for a count has them at once.  Equal."""
    comp = _comp(BOTH[0])
    lazy = build_paired(comp)
    assert lazy.known_cases is None and lazy.prepared is not None
    with cases_first():
        counted = build_paired(comp)
    assert counted.known_cases is not None and counted.prepared is None
    assert lazy.cases == counted.cases > 0 and lazy.prepared is None
    nt_game = ("hcp(north) >= 15 && hcp(north) <= 17 && shape(north, any 4333 + any 4432 + any 5332) && spades(east) >= 5"
               " && hcp(east) >= 8 && hcp(east) <= 16 && hcp(south) <= 12 && hcp(west) <= 10 && hcp(north) + hcp(south) >= 24")
    assert Plan.build_to_count(load_program(f"condition {nt_game}\n")).listing.known_cases is not None  # a paired listing
