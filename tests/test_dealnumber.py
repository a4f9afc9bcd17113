"""Tests for truedeal.dealnumber (Pavlicek 7Z68 deal numbers).

Expected values come from the article (D in decimal and hex, the first and
last deal, the hand counts, the "billion years" figure) or from independent
calculations written here (multinomial ranking, lexicographic order), never
from the code under test.
"""

from __future__ import annotations

import random
from collections import Counter
from math import comb, factorial

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from truedeal import dealnumber as dn
from truedeal.cards import D

N, E, S, W = 0, 1, 2, 3
D_ARTICLE = 53_644_737_765_488_792_839_237_440_000
D_HEX = "AD55E315634DDA658BF49200"
FULL = [N] * 13 + [E] * 13 + [S] * 13 + [W] * 13

deals = st.permutations(FULL)
numbers = st.integers(min_value=0, max_value=D_ARTICLE - 1)


# ---------------------------------------------------------------------------
# Independent reference: lexicographic rank by counting smaller words
# ---------------------------------------------------------------------------


def multinomial(counts) -> int:
    out = factorial(sum(counts))
    for v in counts:
        out //= factorial(v)
    return out


def reference_rank(row) -> int:
    """Number of 52-letter words with 13 of each seat that are lexicographically
    smaller than ``row``: at each position, every smaller seat still available
    there starts a block of multinomial(remaining counts) smaller words."""
    row = list(row)
    rank = 0
    for pos, seat in enumerate(row):
        left = Counter(row[pos:])  # seats still to be placed, including pos
        for smaller in range(seat):
            if left[smaller]:
                left[smaller] -= 1
                rank += multinomial([left[j] for j in range(4)])
                left[smaller] += 1
    return rank


def random_deals(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    base = np.array(FULL, dtype=np.uint8)
    return rng.permuted(np.tile(base, (n, 1)), axis=1)


def prefix_boundaries(n: int, seed: int) -> list[int]:
    """Numbers S and S - 1 where S is the smallest deal with a random prefix.

    S is found independently: the smallest completion of a prefix puts the
    remaining cards in seat order.  Crossing such boundaries exercises every
    comparison at its edge (including ties of the high 64 bits in the batch
    decoder's two-limb phase)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        row = FULL[:]
        rng.shuffle(row)
        cut = rng.randrange(1, 52)
        smallest = row[:cut] + sorted(row[cut:])
        s = reference_rank(smallest)
        out += [s, s - 1] if s else [s]
    return out


# ---------------------------------------------------------------------------
# Article vectors
# ---------------------------------------------------------------------------


def test_number_of_deals():
    assert D == D_ARTICLE
    assert f"{D:X}" == D_HEX
    assert D.bit_length() == 96  # "96 binary bits or 12 bytes"
    # the article's product of hand counts
    assert comb(52, 13) == 635_013_559_600
    assert comb(39, 13) == 8_122_425_444
    assert comb(26, 13) == 10_400_600
    assert 635_013_559_600 * 8_122_425_444 * 10_400_600 == D
    # a million computers testing a million deals per second (365-day years)
    assert D // (10**6 * 10**6 * 365 * 86400) == 1_701_063_475


def test_first_and_last_deal():
    first = dn.decode(0)
    assert first.shape == (52,) and first.dtype == np.uint8
    assert first.tolist() == FULL  # N first 13, E next 13, S next 13, W last 13
    last = dn.decode(D - 1)
    assert last.tolist() == [W] * 13 + [S] * 13 + [E] * 13 + [N] * 13
    assert dn.encode(FULL) == 0
    assert dn.encode([W] * 13 + [S] * 13 + [E] * 13 + [N] * 13) == D - 1


def test_first_card_quarters():
    # "the first value of K is D and N/C = 1/4, so the space is divided into
    # four equal parts": the spade ace goes N, E, S, W by quarter
    q = D // 4
    assert q * 4 == D
    for number, seat in [(0, N), (q - 1, N), (q, E), (2 * q - 1, E), (2 * q, S), (3 * q - 1, S), (3 * q, W), (D - 1, W)]:
        assert dn.decode(number)[0] == seat
    got = dn.decode_batch(dn.ints_to_limbs([q - 1, q, 2 * q - 1, 2 * q, 3 * q - 1, 3 * q]))[:, 0]
    assert got.tolist() == [N, E, E, S, S, W]


def test_batch_vectors():
    limbs = dn.encode_batch(np.array([FULL, [W] * 13 + [S] * 13 + [E] * 13 + [N] * 13], np.uint8))
    assert limbs.dtype == np.uint64 and limbs.shape == (2, 2)
    assert limbs[0].tolist() == [0, 0]
    assert limbs[1].tolist() == [int(D_HEX[:8], 16), int(D_HEX[8:], 16) - 1]
    back = dn.decode_batch(limbs)
    assert back.dtype == np.uint8 and back.shape == (2, 52)
    assert back[0].tolist() == FULL


def test_bytes_of_extremes():
    data = dn.limbs_to_bytes(dn.ints_to_limbs([0, D - 1]))
    assert data == bytes(12) + bytes.fromhex(D_HEX[:-4] + "91FF")  # ...9200 - 1
    assert dn.limbs_to_ints(dn.bytes_to_limbs(data)) == [0, D - 1]


# ---------------------------------------------------------------------------
# Scalar round trips and independent ranking
# ---------------------------------------------------------------------------


@given(deals)
def test_encode_decode_roundtrip(row):
    n = dn.encode(row)
    assert 0 <= n < D
    assert dn.decode(n).tolist() == list(row)


@given(numbers)
def test_decode_encode_roundtrip(number):
    row = dn.decode(number)
    assert sorted(Counter(row.tolist()).values()) == [13, 13, 13, 13]
    assert dn.encode(row) == number


@given(deals)
@settings(max_examples=200)
def test_encode_matches_reference_rank(row):
    assert dn.encode(row) == reference_rank(row)


def test_reference_rank_random_deals():
    rng = random.Random(11)
    for _ in range(300):
        row = FULL[:]
        rng.shuffle(row)
        assert dn.encode(row) == reference_rank(row)


@given(deals, st.data())
def test_swap_to_later_seat_increases(row, data):
    # Giving an earlier card to a later seat (and the later card to the
    # earlier seat) makes the word lexicographically larger.
    row = list(row)
    x = data.draw(st.integers(0, 50))
    y = data.draw(st.integers(x + 1, 51))
    if row[x] == row[y]:
        return
    lo, hi = (row[x], row[y]) if row[x] < row[y] else (row[y], row[x])
    before = row[:]
    before[x], before[y] = lo, hi
    after = row[:]
    after[x], after[y] = hi, lo
    assert dn.encode(after) > dn.encode(before)


def test_swap_north_east():
    row = FULL[:]  # number 0
    row[0], row[13] = E, N  # spade ace to East, its first card to North
    assert dn.encode(row) > 0
    assert dn.encode(row) == reference_rank(row)


def test_order_matches_lexicographic_order():
    rows = [tuple(r) for r in random_deals(500, seed=3).tolist()]
    rows.sort()
    nums = [dn.encode(r) for r in rows]
    assert nums == sorted(nums)
    assert len(set(nums)) == len(set(rows))


# ---------------------------------------------------------------------------
# Batch forms agree with the plain loops
# ---------------------------------------------------------------------------


def test_encode_batch_matches_scalar():
    owners = random_deals(3000, seed=1)
    limbs = dn.encode_batch(owners)
    assert limbs.shape == (3000, 2) and limbs.dtype == np.uint64
    assert (limbs[:, 0] < 2**32).all()
    assert dn.limbs_to_ints(limbs) == [dn.encode(r) for r in owners]


def test_decode_batch_matches_scalar_random_numbers():
    rng = random.Random(2)
    nums = [rng.randrange(D) for _ in range(3000)]
    nums += list(range(200)) + [D - 1 - i for i in range(200)]
    got = dn.decode_batch(dn.ints_to_limbs(nums))
    assert got.shape == (len(nums), 52) and got.dtype == np.uint8
    want = np.array([dn.decode(x) for x in nums])
    assert np.array_equal(got, want)


def test_decode_batch_at_prefix_boundaries():
    nums = prefix_boundaries(600, seed=5)
    got = dn.decode_batch(dn.ints_to_limbs(nums))
    want = np.array([dn.decode(x) for x in nums])
    assert np.array_equal(got, want)
    assert dn.limbs_to_ints(dn.encode_batch(got)) == nums


def test_decode_batch_near_limb_boundaries():
    nums = []
    for e in (32, 48, 63, 64, 65, 80, 95):
        for v in (2**e - 1, 2**e, 2**e + 1):
            if v < D:
                nums.append(v)
    nums += [D // 2, D // 2 - 1, D - 2]
    got = dn.decode_batch(dn.ints_to_limbs(nums))
    assert np.array_equal(got, np.array([dn.decode(x) for x in nums]))


def test_batch_roundtrip_across_chunks(monkeypatch):
    owners = random_deals(5000, seed=4)
    ref = dn.encode_batch(owners)
    monkeypatch.setattr(dn, "_ENC_CHUNK", 7)
    monkeypatch.setattr(dn, "_DEC_CHUNK", 333)
    limbs = dn.encode_batch(owners)
    assert np.array_equal(limbs, ref)
    assert np.array_equal(dn.decode_batch(limbs), owners)


def test_batch_roundtrip_large():
    owners = random_deals(150_000, seed=8)
    limbs = dn.encode_batch(owners)
    assert np.array_equal(dn.decode_batch(limbs), owners)
    sample = list(range(0, 150_000, 997))
    assert dn.limbs_to_ints(limbs[sample]) == [reference_rank(owners[i]) for i in sample]


@given(st.lists(numbers, min_size=1, max_size=40))
@settings(max_examples=50)
def test_batch_decode_encode_roundtrip(nums):
    limbs = dn.ints_to_limbs(nums)
    owners = dn.decode_batch(limbs)
    assert np.array_equal(dn.encode_batch(owners), limbs)
    assert owners[0].tolist() == dn.decode(nums[0]).tolist()


def test_batch_accepts_other_integer_dtypes_and_empty():
    owners = random_deals(20, seed=9)
    want = dn.encode_batch(owners)
    assert np.array_equal(dn.encode_batch(owners.astype(np.int64)), want)
    assert np.array_equal(dn.encode_batch(owners.tolist()), want)
    small = dn.ints_to_limbs(list(range(5)))
    assert np.array_equal(dn.decode_batch(small.astype(np.int64)), dn.decode_batch(small))
    assert dn.encode_batch(np.empty((0, 52), np.uint8)).shape == (0, 2)
    assert dn.decode_batch(np.empty((0, 2), np.uint64)).shape == (0, 52)
    assert dn.limbs_to_bytes(np.empty((0, 2), np.uint64)) == b""
    assert dn.bytes_to_limbs(b"").shape == (0, 2)
    assert dn.ints_to_limbs([]).shape == (0, 2)


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


@given(st.lists(numbers, max_size=30))
def test_limb_helpers_roundtrip(nums):
    limbs = dn.ints_to_limbs(nums)
    assert limbs.shape == (len(nums), 2) and limbs.dtype == np.uint64
    assert [int(hi) * 2**64 + int(lo) for hi, lo in limbs.tolist()] == nums
    data = dn.limbs_to_bytes(limbs)
    assert data == b"".join(x.to_bytes(12, "big") for x in nums)
    assert np.array_equal(dn.bytes_to_limbs(data), limbs)
    assert dn.bytes_to_limbs(bytearray(data)).tolist() == limbs.tolist()
    assert dn.limbs_to_ints(limbs) == nums


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [-1, D, D + 5, 2**96, 1.0, "7", None, True, 0.5])
def test_decode_rejects(bad):
    with pytest.raises(ValueError):
        dn.decode(bad)


def test_decode_accepts_numpy_integers():
    assert dn.decode(np.uint64(0)).tolist() == FULL


@pytest.mark.parametrize(
    "bad",
    [
        FULL[:51],
        FULL + [0],
        FULL[:-1] + [4],
        FULL[:-1] + [0],  # 14 North, 12 West
        [-1] + FULL[1:],
        FULL[:-1] + [2.0],
        "N" * 13 + "E" * 13 + "S" * 13 + "W" * 13,
        [FULL],
    ],
)
def test_encode_rejects(bad):
    with pytest.raises(ValueError):
        dn.encode(bad)


def test_encode_batch_rejects():
    good = random_deals(4, seed=0)
    with pytest.raises(ValueError):
        dn.encode_batch(good[:, :51])
    with pytest.raises(ValueError):
        dn.encode_batch(good[0])
    bad = good.copy()
    bad[2, 5] = 4
    with pytest.raises(ValueError):
        dn.encode_batch(bad)
    bad = good.copy()
    bad[3, np.flatnonzero(bad[3] == W)[0]] = N  # 14 North, 12 West
    with pytest.raises(ValueError, match="13 cards"):
        dn.encode_batch(bad)
    with pytest.raises(ValueError):
        dn.encode_batch(good.astype(np.int64) - 1)
    with pytest.raises(ValueError):
        dn.encode_batch(good.astype(np.float64))


def test_decode_batch_rejects():
    with pytest.raises(ValueError):
        dn.decode_batch(np.zeros((3, 3), np.uint64))
    with pytest.raises(ValueError):
        dn.decode_batch(np.zeros(2, np.uint64))
    for v in (D, D + 1, 2**96 - 1, 2**96 + 2**64):
        limbs = np.array([[0, 0], [v >> 64 & (2**64 - 1), v & (2**64 - 1)]], np.uint64)
        with pytest.raises(ValueError, match="out of range"):
            dn.decode_batch(limbs)
    with pytest.raises(ValueError):
        dn.decode_batch(np.array([[0, -1]], np.int64))
    with pytest.raises(ValueError):
        dn.decode_batch(np.zeros((1, 2), np.float64))


def test_helpers_reject():
    with pytest.raises(ValueError):
        dn.ints_to_limbs([0, D])
    with pytest.raises(ValueError):
        dn.ints_to_limbs([-1])
    with pytest.raises(ValueError):
        dn.bytes_to_limbs(bytes(13))
    with pytest.raises(ValueError):
        dn.bytes_to_limbs(D.to_bytes(12, "big"))
    with pytest.raises(ValueError):
        dn.bytes_to_limbs(12)
    with pytest.raises(ValueError):
        dn.limbs_to_bytes(np.array([[D >> 64, D & (2**64 - 1)]], np.uint64))
    with pytest.raises(ValueError):
        dn.limbs_to_ints(np.array([[2**32, 0]], np.uint64))


# ---------------------------------------------------------------------------
# Tables (built in 32-bit limbs by additions only)
# ---------------------------------------------------------------------------


def test_table_limbs_are_multinomials():
    """K of every state, and its offsets, against factorials computed here."""
    r = dn._state_counts()
    k = dn._k_limbs(r)
    o = dn._offset_limbs(r, k)
    assert k.max() < 2**32 and o.max() < 2**32  # normalised limbs
    got = [c << 64 | b << 32 | a for a, b, c in zip(*(x.tolist() for x in k))]
    counts = r.T.tolist()
    assert got == [multinomial(c) for c in counts]
    tb = dn._tables()
    for s in range(0, len(counts), 37):
        c = counts[s]
        want, acc = [], 0
        for j in range(4):
            want.append(acc)
            if c[j]:
                acc += multinomial([x - (i == j) for i, x in enumerate(c)])
        assert tb.off(s) == want
