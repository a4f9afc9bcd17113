"""Samplers whose level-1 tables pass :data:`truedeal.sampling.MAX_PREFIX_BYTES`.

The tables are kept unpadded (no zero slice on an axis of one value), and
the draws are those of padded tables, byte for byte.  Past the bound even so, ``Sampler(listing, lazy=True)`` makes them as draws need
them: with one (D,C) pair its draws are the stacked sampler's, byte for
byte; with many, they follow the exact law of the listing (chi-square
against counts of the spec cut by North's and South's HCP), and every deal fits."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.stats import chisquare

from test_pool_filters import CALM_EVERYWHERE
from truedeal import kernel, sampling
from truedeal.constraints.dealer import load_program, parse_program
from truedeal.constraints.evaluate import evaluate_cond
from truedeal.engine import Plan
from truedeal.listing import prefix_sums
from truedeal.randomness import chunk_rng

SCRIPTS = Path(__file__).parent / "scripts"
ONE_PAIR = "condition hcp(north) >= 15 && hcp(north) <= 17 && hcp(south) >= 8"
MANY_PAIRS = ("condition hcp(north) >= {lo} && hcp(north) <= {hi} && shape(north, any 4333 + any 4432 + any 5332)"
              " && hcp(south) >= 8 && hcp(south) <= 9")


def _listing(text: str):
    return Plan.build(parse_program(text)).listing


def _padded_twin(sampler: sampling.Sampler) -> sampling.Sampler:
    """``sampler`` with level-1 tables padded on every axis (a zero slice in
    front of an axis of one value too), as samplers kept them before."""
    twin = sampling.Sampler(sampler.listing)
    lay = sampler.listing.layout
    pairs = np.unique(sampler.listing.cell_pairs[:, 1])
    twin.dc_prefix = np.stack([prefix_sums(sampler.listing.pair_tables[p], lay, pad_single=True) for p in pairs])
    twin.unpadded = ()
    return twin


@pytest.mark.parametrize("script", [SCRIPTS / "45_singular_names.dlr", CALM_EVERYWHERE])
def test_unpadded_tables_draw_the_padded_tables_deals(script):
    """A form of one value among five (tests/scripts/45: 105 (D,C) pairs),
    and eight filter forms (calm opponents with no shape,
    tests/test_pool_filters.py): the tables are 2**k times smaller, and the
    compiled draw (one call) and the numpy steps both deal what the padded
    tables deal, byte for byte."""
    listing = Plan.build(load_program(script)).listing
    unpadded = sampling.Sampler(listing)
    padded = _padded_twin(unpadded)
    k = len(unpadded.unpadded)
    assert k and unpadded.dc_prefix.size << k == padded.dc_prefix.size
    assert unpadded.one_call_args() and padded.one_call_args()
    expected = padded.draw(3000, chunk_rng("unpadded", 0))
    assert (unpadded.draw(3000, chunk_rng("unpadded", 0)) == expected).all()
    with kernel.numpy_only():
        assert (unpadded.draw(3000, chunk_rng("unpadded", 0)) == expected).all()


def test_with_one_pair_a_lazy_sampler_draws_the_stacked_samplers_deals(monkeypatch):
    listing = _listing(ONE_PAIR)
    stacked = sampling.Sampler(listing).draw(3000, chunk_rng("lazy", 0))
    monkeypatch.setattr(sampling, "MAX_PREFIX_BYTES", 1000)
    monkeypatch.setattr(sampling, "LAZY_KEPT_BYTES", 1000)
    lazy = sampling.Sampler(listing, lazy=True)
    assert lazy.lazy is not None and lazy.lazy.room == 1
    assert (lazy.draw(3000, chunk_rng("lazy", 0)) == stacked).all()


def test_a_sampler_past_the_bound_refuses_unless_lazy(monkeypatch):
    from truedeal.errors import TooLargeToDeal

    listing = _listing(ONE_PAIR)
    monkeypatch.setattr(sampling, "MAX_PREFIX_BYTES", 1000)
    with pytest.raises(TooLargeToDeal, match="cannot deal"):
        sampling.Sampler(listing)


def test_with_many_pairs_lazy_draws_follow_the_listings_law(monkeypatch):
    listing = _listing(MANY_PAIRS.format(lo=15, hi=17))
    monkeypatch.setattr(sampling, "MAX_PREFIX_BYTES", 1000)
    monkeypatch.setattr(sampling, "LAZY_KEPT_BYTES", sampling._prefix_bytes(3, listing.layout)[1])
    lazy = sampling.Sampler(listing, lazy=True)
    assert lazy.lazy is not None and lazy.lazy.room == 3 and len(lazy.lazy.dc_pairs) > 3
    owners = lazy.draw(6000, chunk_rng("lazy law", 0))
    assert evaluate_cond(owners, parse_program(MANY_PAIRS.format(lo=15, hi=17)).condition).all()
    weights = np.array([4, 3, 2, 1] + [0] * 9)
    north_hcp = ((owners[:, :16] == 0) * np.repeat(weights[:4], 4)).sum(axis=1)
    south_hcp = ((owners[:, :16] == 2) * np.repeat(weights[:4], 4)).sum(axis=1)
    cells = [(n, s) for n in (15, 16, 17) for s in (8, 9)]
    expected = np.array([_listing(MANY_PAIRS.format(lo=n, hi=n).replace(">= 8 && hcp(south) <= 9", f"== {s}")).deals
                         for n, s in cells], float)
    observed = [int(((north_hcp == n) & (south_hcp == s)).sum()) for n, s in cells]
    assert chisquare(observed, expected / expected.sum() * len(owners)).pvalue > 1e-4
