"""Samplers whose level-1 tables pass :data:`truedeal.sampling.MAX_PREFIX_BYTES`.

Past the bound padded, the tables are kept unpadded (no zero slice on an
axis of one value) and the draws are the padded sampler's, byte for byte.
Past it even so, ``Sampler(listing, lazy=True)`` makes them as draws need
them: with one (D,C) pair its draws are the stacked sampler's, byte for
byte; with many, they follow the exact law of the listing (chi-square
against counts of the spec cut by North's and South's HCP), and every deal fits."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.stats import chisquare

from truedeal import sampling
from truedeal.constraints.dealer import load_program, parse_program
from truedeal.constraints.evaluate import evaluate_cond
from truedeal.engine import Plan
from truedeal.randomness import chunk_rng

SCRIPTS = Path(__file__).parent / "scripts"
ONE_PAIR = "condition hcp(north) >= 15 && hcp(north) <= 17 && hcp(south) >= 8"
MANY_PAIRS = ("condition hcp(north) >= {lo} && hcp(north) <= {hi} && shape(north, any 4333 + any 4432 + any 5332)"
              " && hcp(south) >= 8 && hcp(south) <= 9")


def _listing(text: str):
    return Plan.build(parse_program(text)).listing


def test_unpadded_tables_draw_the_padded_samplers_deals(monkeypatch):
    """tests/scripts/45: a form of one value among five, 105 (D,C) pairs."""
    listing = Plan.build(load_program(SCRIPTS / "45_singular_names.dlr")).listing
    padded = sampling.Sampler(listing)
    assert padded.padded and padded.one_call_args()
    expected = padded.draw(3000, chunk_rng("unpadded", 0))
    n_pairs = len(padded.dc_prefix)
    monkeypatch.setattr(sampling, "MAX_PREFIX_BYTES", sampling._prefix_bytes(n_pairs, listing.layout, False)[1])
    unpadded = sampling.Sampler(listing)
    assert not unpadded.padded and unpadded.unpadded and unpadded.dc_prefix.size * 2 == padded.dc_prefix.size
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
    monkeypatch.setattr(sampling, "LAZY_KEPT_BYTES", sampling._prefix_bytes(3, listing.layout, False)[1])
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
