"""Exactness of the integer draws: exhaustive where the word space is small."""

import hashlib

import numpy as np
import pytest
from scipy.stats import chisquare

from truedeal import kernel
from truedeal.randomness import CHUNK_DEALS, Rng, SeededBits, chunk_rng


class AllWords:
    """A 'bit source' that yields every 16-bit word once, in order: lets a test
    run Lemire's method over the whole word space."""

    def __init__(self):
        self.data = np.arange(1 << 16, dtype="<u2").tobytes() * 4
        self.pos = 0

    def read(self, n):
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out


@pytest.mark.parametrize("bound", [1, 2, 3, 5, 7, 13, 39, 52, 1000, 65535])
def test_lemire16_is_exactly_uniform_over_all_words(bound):
    # Over all 2**16 words, an exact method accepts each value the same number
    # of times (floor(2**16 / b)) and rejects the other 2**16 mod b words.
    rng = Rng(AllWords())
    m = (np.arange(1 << 16, dtype=np.uint64) * bound)
    accepted = (m & 0xFFFF) >= ((1 << 16) - bound) % bound
    values = (m >> 16)[accepted]
    counts = np.bincount(values.astype(np.int64), minlength=bound)
    assert (counts == (1 << 16) // bound).all()
    # and the implementation draws exactly those values for the accepted words
    out = rng.below(np.full(1 << 16, bound))
    assert (out[accepted] == values.astype(np.int64)).all()
    assert (out >= 0).all() and (out < bound).all()


def test_below_matches_reference_lemire_on_a_known_stream():
    # Recompute the first draws by hand from the seeded bytes.
    bits = SeededBits("ref", 0)
    raw = SeededBits("ref", 0).read(2 * 8)
    words = np.frombuffer(raw, dtype="<u2").astype(np.uint64)
    bound = 52
    expect = [(int(w) * bound) >> 16 for w in words]
    # no word in this prefix falls in the rejection zone (it is tiny: 2**16 mod 52 = 16 words)
    assert all((int(w) * bound) & 0xFFFF >= (65536 - bound) % bound for w in words)
    assert Rng(bits).below(np.full(8, bound)).tolist() == expect


@pytest.mark.parametrize("bound", [3, 10, 1 << 20, (1 << 32) + 7, (1 << 62) + 12345])
def test_below_is_uniform_chi_square(bound):
    rng = Rng(SeededBits("chi", 1))
    n = 200_000
    x = rng.below(np.full(n, bound))
    assert x.min() >= 0 and x.max() < bound
    k = min(bound, 10)
    # bucket by value * k // bound: each bucket's exact probability differs from
    # 1/k by < k / bound, negligible next to the sampling error here
    buckets = ((x.astype(object) * k) // bound).astype(np.int64)
    expected = np.array([len(range(-(-(j * bound) // k), -(-((j + 1) * bound) // k))) for j in range(k)], dtype=float)
    expected = expected / expected.sum() * n
    assert chisquare(np.bincount(buckets, minlength=k), expected).pvalue > 1e-4


def test_below_int_and_below_wide_stay_below_bound_and_split_correctly():
    rng = Rng(SeededBits("wide", 2))
    bound = 3 * (1 << 80) + 17
    shift = bound.bit_length() - 62
    hi, lo = rng.below_wide(bound, 50_000, shift)
    values = [(int(h) << shift) | int(low) for h, low in zip(hi, lo)]
    assert max(values) < bound and min(values) >= 0
    # the top third of the range [2 * bound / 3, bound) holds about a third of the draws
    top = sum(v >= 2 * bound // 3 for v in values) / len(values)
    assert abs(top - 1 / 3) < 5 * (1 / 3 * 2 / 3 / len(values)) ** 0.5
    assert all(0 <= rng.below_int(bound) < bound for _ in range(1000))


def test_seeded_stream_is_documented_shake256_counter_mode():
    seed = "club night"
    key = seed.encode()
    prefix = b"truedeal/v1" + len(key).to_bytes(4, "big") + key + (3).to_bytes(8, "big")
    block0 = hashlib.shake_256(prefix + (0).to_bytes(8, "big")).digest(1 << 16)
    block1 = hashlib.shake_256(prefix + (1).to_bytes(8, "big")).digest(1 << 16)
    got = SeededBits(seed, 3).read((1 << 16) + 100)
    assert got == block0 + block1[:100]


def _hashlib_stream(seed: bytes, chunk: int, nbytes: int) -> bytes:
    """The documented stream from hashlib alone, one 64 KiB block at a time."""
    prefix = b"truedeal/v1" + len(seed).to_bytes(4, "big") + seed + chunk.to_bytes(8, "big")
    blocks = -(-nbytes // (1 << 16))
    return b"".join(hashlib.shake_256(prefix + b.to_bytes(8, "big")).digest(1 << 16) for b in range(blocks))[:nbytes]


@pytest.mark.parametrize("seed_len", [1, 100, 113, 250, 4000, 5000])  # prefixes across SHAKE's 136-byte rate and the compiled 4 KiB limit
def test_compiled_shake_squeezes_hashlibs_bytes(seed_len):
    seed = bytes((7 * i + seed_len) % 256 for i in range(seed_len))
    sizes = [3, 65533, 10, 8 * 65536 - 65546, 70_000, 1, 600_000]  # reads across block and eight-block edges
    bits = SeededBits(seed, 5)
    got = b"".join(bits.read(n) for n in sizes)
    assert got == _hashlib_stream(seed, 5, sum(sizes))
    with kernel.numpy_only():  # the hashlib path, forced
        assert SeededBits(seed, 5).read(sum(sizes)) == got


@pytest.mark.skipif(kernel.shake() is None, reason="no compiled SHAKE (not built, or neither AVX-512F nor AVX2 on this CPU)")
def test_compiled_shake_is_in_use_where_the_cpu_has_it():
    out = bytearray(8 << 16)
    kernel.shake().blocks(b"x", 2**40, out)
    assert bytes(out[7 << 16 : (7 << 16) + 32]) == hashlib.shake_256(b"x" + (2**40 + 7).to_bytes(8, "big")).digest(32)
    stream = SeededBits("s", 0).readinto.__self__
    assert isinstance(stream, kernel.shake().Stream)  # the stream reads through it
    assert stream.lanes == kernel.shake().lanes()[0]  # on the fastest path


def _compiled_shake():
    """truedeal._shake when it is built (whatever this CPU runs), else None."""
    try:
        from truedeal import _shake
    except ImportError:
        return None
    return _shake


_SHAKE = _compiled_shake()
#: Each path of the compiled SHAKE by its lanes (8: AVX-512F, 4: AVX2): every
#: path this CPU runs is tested, forced, whichever the stream would choose.
PATHS = [pytest.param(8, id="avx512"), pytest.param(4, id="avx2")]


def _path(lanes: int):
    """The compiled module, or skip: not built, or this CPU lacks the path."""
    if _SHAKE is None:
        pytest.skip("the compiled SHAKE is not built")
    if lanes not in _SHAKE.lanes():
        pytest.skip(f"this CPU does not run the {lanes}-lane path")
    return _SHAKE


def _hashlib_blocks(prefix: bytes, first: int, count: int, block: int) -> bytes:
    return b"".join(hashlib.shake_256(prefix + (first + b).to_bytes(8, "big")).digest(block) for b in range(count))


@pytest.mark.parametrize("block", [1 << 11, 1 << 14, 1 << 16])  # v3's, v2's and v1's blocks
@pytest.mark.parametrize("lanes", PATHS)
def test_each_compiled_path_streams_hashlibs_bytes(lanes, block):
    shake = _path(lanes)
    for plen in [0, 1, 23, 127, 128, 135, 136, 137, 271, 272, 1000, 4096]:  # across the 136-byte rate, up to the limit
        prefix = bytes((13 * i + plen) % 256 for i in range(plen))
        stream = shake.Stream(prefix, block, lanes=lanes)
        assert stream.lanes == lanes
        passes = lanes * block  # bytes a pass computes
        # reads that stop short of, end on, and cross block and pass edges; one spans several passes
        sizes = [1, block - 2, 3, 0, block - 2, passes - 2 * block, 7, 2 * passes + block - 8, 1, 5, 3 * block // 2]
        got = bytearray()
        for k, n in enumerate(sizes):
            if k % 2:
                got += stream.read(n)
            else:
                buf = bytearray(n + 2)
                assert stream.readinto(memoryview(buf)[1 : n + 1]) == n
                got += buf[1 : n + 1]
        total = sum(sizes)
        assert bytes(got) == _hashlib_blocks(prefix, 0, -(-total // block), block)[:total], (plen, block)


@pytest.mark.parametrize("lanes", PATHS)
def test_each_compiled_path_computes_hashlibs_blocks_from_any_first(lanes):
    shake = _path(lanes)
    for plen, first in [(0, 1), (5, 9), (135, 2**40), (136, 2**63 - 3), (300, 2**64 - 8), (4096, 12345)]:
        prefix = bytes((7 * i + 1) % 256 for i in range(plen))
        for block in [8, 136, 144, 1 << 11, 1 << 14, 1 << 16]:  # squeezes within, on and past the rate
            out = bytearray(8 * block)
            shake.blocks(prefix, first, out, lanes=lanes)
            assert bytes(out) == _hashlib_blocks(prefix, first, 8, block), (plen, first, block)


def test_compiled_shake_refuses_what_it_cannot_run():
    if _SHAKE is None:
        pytest.skip("the compiled SHAKE is not built")
    assert _SHAKE.available() == bool(_SHAKE.lanes()) and set(_SHAKE.lanes()) <= {8, 4}
    for lanes in [1, 3, 16, -4] + [k for k in (8, 4) if k not in _SHAKE.lanes()]:
        with pytest.raises(ValueError):
            _SHAKE.Stream(b"x", 1 << 11, lanes=lanes)
        with pytest.raises(ValueError):
            _SHAKE.blocks(b"x", 0, bytearray(8 << 11), lanes=lanes)
    if _SHAKE.available():
        with pytest.raises(ValueError):
            _SHAKE.Stream(b"x" * 4097, 1 << 11)
        with pytest.raises(ValueError):
            _SHAKE.blocks(b"x", 0, bytearray(8 * 12))  # blocks of 12 bytes


def test_chunks_streams_are_independent_and_unseeded_streams_are_fresh():
    a = chunk_rng("s", 0).bits.read(64)
    b = chunk_rng("s", 1).bits.read(64)
    assert a != b and chunk_rng("s", 0).bits.read(64) == a
    fresh = {chunk_rng(None, 0).bits.read(64) for _ in range(20)}
    assert len(fresh) == 20 and a not in fresh
    assert CHUNK_DEALS == 4096  # changing it changes every seeded stream: make it deliberate
