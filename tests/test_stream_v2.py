"""Stream v2: a spec that every deal fits draws deal numbers straight off the stream.

The reference is the documented definition, computed here by other means:
the stream's bytes from hashlib, cut into 12-byte big-endian words, the
words below D kept in order (the same as repeated ``Rng.below_int(D)``).
Everything else about v2 is v1's deals, which the v1 tests cover.
"""

import hashlib
import json
from math import comb

import numpy as np
import pytest
from scipy.stats import chisquare

from cli_runner import run
from truedeal import kernel
from truedeal.cards import D, card
from truedeal.dealnumber import decode, decode_batch, encode_batch, limbs_to_bytes, limbs_to_ints
from truedeal.engine import Plan
from truedeal.every_deal import _below_d, below_d_numpy, deal_numbers
from truedeal.formats import parse_deal
from truedeal.randomness import CHUNK_DEALS, Rng, SeededBits
from truedeal.spec import load_spec

EVERY = load_spec("{}")
NT = load_spec('{"north": {"hcp": [15, 17], "shape": "any 4333 + any 4432 + any 5332"}}')
SPADES = [card(r, 0) for r in range(13)]


def _hashlib_v2(seed: str, chunk: int, nbytes: int) -> bytes:
    """Stream v2's bytes from hashlib: 16 KiB blocks of SHAKE-256 under the domain truedeal/v2."""
    key = seed.encode()
    prefix = b"truedeal/v2" + len(key).to_bytes(4, "big") + key + chunk.to_bytes(8, "big")
    blocks = -(-nbytes // (1 << 14))
    return b"".join(hashlib.shake_256(prefix + b.to_bytes(8, "big")).digest(1 << 14) for b in range(blocks))[:nbytes]


def _reference_numbers(seed: str, chunk: int, n: int) -> list[int]:
    """The first ``n`` words below D of the chunk's stream, as Python ints."""
    data = _hashlib_v2(seed, chunk, 12 * 2 * n + 1200)  # ample: 68% of words are kept
    words = (int.from_bytes(data[i : i + 12], "big") for i in range(0, len(data) - 11, 12))
    out = [w for w in words if w < D][:n]
    assert len(out) == n
    return out


def test_v2_bits_are_shake256_in_16_kib_blocks_with_and_without_the_compiled_shake():
    want = _hashlib_v2("club night", 3, 300_000)
    assert SeededBits("club night", 3, "v2").read(300_000) == want
    with kernel.numpy_only():
        assert SeededBits("club night", 3, "v2").read(300_000) == want
    assert SeededBits("club night", 3).read(64) != want[:64]  # v1 is another stream


def test_deal_numbers_are_the_words_below_d_in_stream_order():
    got = limbs_to_ints(deal_numbers(SeededBits("s", 7, "v2"), 5000))
    assert got == _reference_numbers("s", 7, 5000)
    rng = Rng(SeededBits("s", 7, "v2"))
    assert got[:300] == [rng.below_int(D) for _ in range(300)]  # the same as below_int, drawn again and again


EDGES = [0, 1, D - 2, D - 1, D, D + 1, (1 << 96) - 1, D >> 1, (D >> 64) << 64, ((D >> 64) << 64) - 1, (D >> 64) << 64 | 1 << 63]


def _words() -> np.ndarray:
    """(m, 12) words: the edges around D, then random ones."""
    edges = np.frombuffer(b"".join(x.to_bytes(12, "big") for x in EDGES), np.uint8).reshape(-1, 12)
    return np.concatenate([edges, np.random.default_rng(5).integers(0, 256, size=(20_000, 12), dtype=np.uint8)])


def test_the_numpy_reference_keeps_the_words_below_d():
    kept = limbs_to_ints(below_d_numpy(_words()))
    rnd = [int.from_bytes(w.tobytes(), "big") for w in _words()[len(EDGES):]]
    assert kept == [x for x in EDGES + rnd if x < D]


@pytest.mark.skipif(kernel.native() is None, reason="the compiled kernel is not built")
def test_compiled_below_d_keeps_the_same_words_as_numpy():
    assert _below_d(_words()).tobytes() == below_d_numpy(_words()).tobytes()


def test_a_plan_every_deal_fits_reads_its_chunk_off_the_stream():
    plan = Plan.build(EVERY)
    assert plan.every_deal and not Plan.build(NT).every_deal
    owners, limbs = plan.numbered_chunk(2, "x", CHUNK_DEALS, "v2")
    assert limbs_to_ints(limbs) == _reference_numbers("x", 2, CHUNK_DEALS)
    assert encode_batch(owners).tobytes() == limbs.tobytes()  # the cards are the numbers' deals
    assert owners[5].tolist() == decode(limbs_to_ints(limbs)[5]).tolist()
    short, few = plan.numbered_chunk(2, "x", 10, "v2", cards=False)
    assert short is None and few.tobytes() == limbs[:10].tobytes()  # a short chunk is the full one's prefix


def test_v2_deals_of_any_other_spec_are_v1s():
    plan = Plan.build(NT)
    v1 = list(plan.numbered_deals(5000, "same", "v1"))
    v2 = list(plan.numbered_deals(5000, "same", "v2"))
    assert all(a[1].tobytes() == b[1].tobytes() and (a[0] == b[0]).all() for a, b in zip(v1, v2))
    assert np.concatenate([o for o, _ in v1]).tobytes() == np.concatenate(list(plan.deals(5000, "same"))).tobytes()


def test_v2_deals_are_uniform_where_the_exact_distribution_is_known():
    """North's spade length (hypergeometric) and the ace of spades' holder
    (a quarter each), on 40,000 v2 deals from fixed seeds."""
    limbs = np.concatenate([lm for _, lm in Plan.build(EVERY).numbered_deals(40_000, "uniform", "v2", cards=False)])
    owners = decode_batch(limbs)
    spades = (owners[:, SPADES] == 0).sum(axis=1)
    expected = np.array([comb(13, k) * comb(39, 13 - k) for k in range(14)], float) / comb(52, 13) * len(owners)
    observed = np.bincount(spades, minlength=14).astype(float)
    big = expected >= 5
    pooled_obs = np.append(observed[big], observed[~big].sum())
    pooled_exp = np.append(expected[big], expected[~big].sum())
    assert chisquare(pooled_obs, pooled_exp).pvalue > 1e-4
    ace = np.bincount(owners[:, SPADES[0]], minlength=4)
    assert chisquare(ace).pvalue > 1e-4
    # the numbers' top digit-like bins: uniform below D
    assert chisquare(np.bincount([x * 16 // D for x in limbs_to_ints(limbs)], minlength=16)).pvalue > 1e-4


def test_cli_v2_numbers_and_pbn_are_the_same_deals_and_the_reference():
    spec = json.dumps({})
    nums = run("generate", spec, "-n", "5000", "--seed", "cli", "--stream", "v2", "--format", "numbers")
    assert nums.returncode == 0, nums.err
    got = [int(x) for x in nums.out.split()]
    assert got[:CHUNK_DEALS] == _reference_numbers("cli", 0, CHUNK_DEALS)
    assert got[CHUNK_DEALS:] == _reference_numbers("cli", 1, 5000 - CHUNK_DEALS)
    pbn = run("generate", spec, "-n", "5000", "--seed", "cli", "--stream", "v2", "--format", "pbn")
    deals = [line.split('"')[1] for line in pbn.out.splitlines() if line.startswith("[Deal ")]
    assert [decode(x).tolist() for x in got[:50]] == [parse_deal(d).tolist() for d in deals[:50]]
    assert limbs_to_bytes(encode_batch(np.array([parse_deal(d) for d in deals], np.uint8))) == b"".join(
        x.to_bytes(12, "big") for x in got)
    v1 = run("generate", spec, "-n", "5", "--seed", "cli", "--format", "numbers")
    assert v1.out.split() != nums.out.split()[:5]  # v1 stays the default, and another stream


def test_an_unknown_stream_is_one_line_and_exit_2():
    res = run("generate", "{}", "-n", "5", "--stream", "v4")
    assert res.returncode == 2 and res.out == ""
    assert len(res.err.strip().splitlines()) == 1 and "v4" in res.err and "v3" in res.err


@pytest.mark.parametrize("stream", ["v0", "", "V2"])
def test_seeded_bits_refuse_unknown_streams(stream):
    with pytest.raises(ValueError, match="unknown stream"):
        SeededBits("s", 0, stream)
