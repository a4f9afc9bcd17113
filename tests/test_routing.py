"""Stream v3: a listing in 16 shards, each chunk's deals routed shard by shard.

The reference is the documented definition, computed here step by step: each
deal's shard drawn as level 0 is (``WideCategorical`` over the shards'
totals), then 32 bytes of key per shard, then each shard's deals from its own
stream through its own listing.  Beside it: the shards add up
to the whole listing, any partition into unions of shards deals the same
bytes, and the deals are uniform over the exact law of the whole listing.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import chisquare

from cli_runner import run
from truedeal import kernel
from truedeal.dealnumber import limbs_to_ints
from truedeal.engine import Plan
from truedeal.evaluate import hcp, lengths
from truedeal.listing import count_cases
from truedeal.randomness import CHUNK_DEALS, Rng, SeededBits
from truedeal.routing import KEY_BYTES, RoutedSampler
from truedeal.sampling import Sampler, WideCategorical
from truedeal.shards import SHARDS, build_part, build_shards, shard_cut, shards_of_part
from truedeal.spec import load_spec

BAL = "any 4333 + any 4432 + any 5332"
# Each shard's sampler has its own split and summed-area tables: sixteen of them
# hold about 3.6x the whole listing's (226 MB against 62 MB here), and the
# tests hold a whole plan beside the routed ones.
pytestmark = pytest.mark.memory_mb(1000)

NT_INVITE = load_spec({"north": {"hcp": [15, 17], "shape": BAL}, "south": {"hcp": [8, 9], "hearts": [5, 13]}})
FOUR = load_spec(json.loads((Path(__file__).parents[1] / "bench" / "specs" / "four.json").read_text()))


@pytest.fixture(scope="module")
def nt_invite():
    return Plan.build(NT_INVITE, stream="v3")


@pytest.fixture(scope="module")
def whole():
    """NT_INVITE listed whole (not routed): built once, as the tests only read it."""
    return Plan.build(NT_INVITE)


def _numbers(plan: Plan, n: int, seed: str, stream: str = "v3") -> bytes:
    return b"".join(limbs.tobytes() for _, limbs in plan.numbered_deals(n, seed, stream, cards=False))


def _reference_chunk(plan: Plan, seed: str, chunk: int, samplers: dict[int, Sampler]) -> np.ndarray:
    """Chunk ``chunk`` of stream v3 by its definition; ``samplers`` keeps each shard's
    sampler for the next chunk (built once, a sampler draws many times: a second a set)."""
    sharded = plan.listing
    rng = Rng(SeededBits(seed, chunk, "v3"))
    shard = WideCategorical(sharded.totals).draw(CHUNK_DEALS, rng).tolist()
    keys = rng.bits.read(KEY_BYTES * SHARDS)
    out = np.zeros((CHUNK_DEALS, 52), np.uint8)
    for k in sorted(set(shard)):
        rows = [i for i, s in enumerate(shard) if s == k]
        sub = Rng(SeededBits(keys[KEY_BYTES * k : KEY_BYTES * (k + 1)], 0, "v3"))
        if k not in samplers:
            samplers[k] = Sampler(sharded.shards[k])
        out[rows] = samplers[k].draw(len(rows), sub)
    return out


def test_the_shards_add_up_to_the_whole_listing(nt_invite, whole):
    sharded = nt_invite.listing
    assert nt_invite.routed and not whole.routed
    assert sum(sharded.totals) == whole.listing.total and nt_invite.deals_total == whole.deals_total
    assert sharded.cases == count_cases(whole.listing)
    assert sorted(sharded.e_weight) == sorted(whole.listing.e_weight)  # the same level-0 entries, shard by shard
    assert sum(1 for t in sharded.totals if t) > 4  # the shards share out the listing


def test_a_chunk_is_its_definition(nt_invite):
    samplers: dict[int, Sampler] = {}
    for chunk in (0, 3):
        assert np.array_equal(nt_invite.chunk(chunk, "routed"), _reference_chunk(nt_invite, "routed", chunk, samplers))


@pytest.mark.parametrize("parts", [3, 16])
def test_partitions_of_the_shards_deal_the_same_bytes(nt_invite, parts):
    """Each partition holds only its shards (built alone, the others' totals
    given) and draws its part of each chunk; together they are the chunk."""
    sharded = nt_invite.listing
    holders = [RoutedSampler(build_shards(NT_INVITE, shards_of_part(k, parts), sharded.totals)) for k in range(parts)]
    for chunk in (0, 5):
        got = np.zeros((CHUNK_DEALS, 52), np.uint8)
        seen = []
        for k, part in enumerate(holders):
            rows, owners = part.draw_part(CHUNK_DEALS, Rng(SeededBits("parts", chunk, "v3")), shards_of_part(k, parts))
            got[rows] = owners
            seen.append(rows)
        assert sorted(np.concatenate(seen).tolist()) == list(range(CHUNK_DEALS))
        assert np.array_equal(got, nt_invite.chunk(chunk, "parts"))
    with pytest.raises(ValueError, match="not held"):
        holders[0].draw(CHUNK_DEALS, Rng(SeededBits("parts", 0, "v3")))


def test_v3_deals_are_uniform_over_the_exact_law(nt_invite):
    """North's HCP and South's heart length, against their exact joint law
    (each cell counted by its own exact plan)."""
    cells = [(h, s) for h in (15, 16, 17) for s in range(5, 12)]
    exact = [Plan.build(load_spec({"north": {"hcp": h, "shape": BAL}, "south": {"hcp": [8, 9], "hearts": s}})).deals_total
             for h, s in cells]
    assert sum(exact) == nt_invite.deals_total  # North holds 2+ hearts: South at most 11
    owners = np.concatenate([nt_invite.chunk(i, "uniform") for i in range(10)])
    got = list(zip(hcp(owners, 0).tolist(), lengths(owners, 2)[:, 1].tolist()))
    observed = [got.count(c) for c in cells]
    expected = np.array(exact, float) / sum(exact) * len(got)
    keep = expected >= 5
    stat = chisquare(np.array(observed)[keep], expected[keep] * sum(np.array(observed)[keep]) / expected[keep].sum())
    assert stat.pvalue > 1e-3, (observed, expected.round(1).tolist())


def test_v3_is_the_same_with_and_without_the_kernel(nt_invite):
    want = nt_invite.chunk(2, "numpy")
    with kernel.numpy_only():
        plan = Plan.build(NT_INVITE, stream="v3")
        assert np.array_equal(plan.chunk(2, "numpy"), want)


def test_a_plan_built_whole_asked_for_v3_deals_v3_and_a_routed_plan_refuses_v1(nt_invite, whole):
    assert _numbers(whole, 5000, "twin") == _numbers(nt_invite, 5000, "twin")
    assert _numbers(whole, 5000, "twin", "v1") != _numbers(whole, 5000, "twin")
    with pytest.raises(ValueError, match="stream v3"):
        _numbers(nt_invite, 10, "twin", "v1")


@pytest.mark.parametrize("spec", ['{}', '{"condition": "hcp(north) >= 12 && rnd(2) == 0"}',
                                  '{"any_of": [{"north": {"hcp": [20, 21]}}, {"south": {"hcp": [20, 21]}}]}'],
                         ids=["every deal", "rejection", "either-or"])
def test_a_plan_that_cannot_be_routed_deals_v2_s_deals_in_v3(spec):
    plan = Plan.build(load_spec(spec), stream="v3")
    assert not plan.routed
    assert _numbers(plan, 5000, "not routed") == _numbers(plan, 5000, "not routed", "v2")


def test_partition_shards_are_checked():
    assert shards_of_part(1, 4) == [1, 5, 9, 13]
    assert sorted(sum((shards_of_part(k, 3) for k in range(3)), [])) == list(range(SHARDS))
    for bad in [(0, 17), (3, 3), (0, 0)]:
        with pytest.raises(ValueError, match="partition"):
            shards_of_part(*bad)
    with pytest.raises(ValueError, match="every shard.s total"):
        build_shards(NT_INVITE, [0, 1])
    with pytest.raises(ValueError, match="totals differ"):
        build_shards(NT_INVITE, [0], [1] * SHARDS)


@pytest.mark.memory_mb(1500)  # four.json's stated budget is 1 GB
def test_the_paired_listing_in_shards():
    """four.json (the paired listing): the shards add up to its count (from
    the paired tests) and partitions deal the same bytes."""
    routed = Plan.build(FOUR, stream="v3")
    assert routed.routed and routed.deals_total == 79_620_058_488_307_725_653_954_976  # test_paired's count
    chunk = routed.chunk(1, "paired")
    got = np.zeros_like(chunk)
    cut = shard_cut(FOUR)  # kept for both partitions, as a worker keeps it for a job's (half a second of a core)
    for k in range(2):
        part = RoutedSampler(build_part(FOUR, shards_of_part(k, 2), cut).routed(routed.listing.totals))
        rows, owners = part.draw_part(CHUNK_DEALS, Rng(SeededBits("paired", 1, "v3")), shards_of_part(k, 2))
        got[rows] = owners
    assert np.array_equal(got, chunk)


def test_the_cli_deals_v3(nt_invite):
    spec = json.dumps({"north": {"hcp": [15, 17], "shape": BAL}, "south": {"hcp": [8, 9], "hearts": [5, 13]}})
    out = run("generate", spec, "-n", "5", "--seed", "cli", "--stream", "v3", "--format", "numbers")
    assert out.returncode == 0, out.stderr
    limbs = next(iter(nt_invite.numbered_deals(5, "cli", "v3")))[1]  # the CLI builds its own plan of the spec
    assert out.stdout.split() == [str(x).encode() for x in limbs_to_ints(limbs)]
