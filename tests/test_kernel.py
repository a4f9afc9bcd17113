"""The compiled kernel against the numpy path and independent references.

Every kernel function must give byte-identical results to its numpy form
(the reference implementation) and to a reference computed here without
either: the article's plain big-integer loops (:func:`dealnumber.encode` /
:func:`dealnumber.decode`), Python's own ``str(int)``, and the one-deal PBN
writer :func:`formats.deal_string` (itself checked against endplay in
test_formats.py; here endplay reads a sample of the kernel's strings too).
The fallback is exercised by forcing the numpy path with TRUEDEAL_NO_KERNEL=1.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from truedeal import dealnumber as dn
from truedeal import kernel
from truedeal.cards import D
from truedeal.formats import Rotation, deal_string

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "truedeal.cli"]
FORCED = os.environ.get("TRUEDEAL_NO_KERNEL", "") not in ("", "0")

# Numbers at the edges: the extremes, decimal-width changes around 10**9 and
# 10**18 / 10**19 (the formatter's 9-digit groups), and the 64-bit limb edge.
EDGE_NUMBERS = sorted(
    {0, 1, 9, 10, 99, 10**9 - 1, 10**9, 10**9 + 1, 10**18 - 1, 10**18, 10**19 - 1, 10**19,
     10**27 - 1, 10**27, 10**28, 2**32 - 1, 2**32, 2**64 - 1, 2**64, 2**64 + 1, D // 2, D - 2, D - 1}
)


def random_deals(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    base = np.repeat(np.arange(4, dtype=np.uint8), 13)
    return rng.permuted(np.tile(base, (n, 1)), axis=1)


def random_numbers(n: int, seed: int) -> list[int]:
    rng = random.Random(seed)
    return [rng.randrange(D) for _ in range(n)]


@pytest.fixture(scope="module")
def ck():
    """The compiled module itself (the tests call it and the numpy path side by side)."""
    if FORCED:
        pytest.skip("TRUEDEAL_NO_KERNEL is set")
    from truedeal import _kernel  # scripts/test.sh builds it: its absence is a failure

    return _kernel


def c_encode(ck, owners: np.ndarray) -> np.ndarray:
    out = np.empty((len(owners), 2), np.uint64)
    ck.encode(np.ascontiguousarray(owners, np.uint8), out)
    return out


def c_decode(ck, limbs: np.ndarray) -> np.ndarray:
    out = np.empty((len(limbs), 52), np.uint8)
    ck.decode(np.ascontiguousarray(limbs, np.uint64), out)
    return out


# ---------------------------------------------------------------------------
# Deal numbers
# ---------------------------------------------------------------------------


def test_kernel_is_in_use_unless_forced_off():
    assert (kernel.native() is None) == FORCED
    assert (kernel.missing_reason() is None) != FORCED


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_encode_matches_numpy_and_plain_loop(ck, seed):
    owners = random_deals(20_000, seed)
    got = c_encode(ck, owners)
    assert got.tobytes() == dn.encode_batch_numpy(owners).tobytes()
    assert got.tobytes() == dn.encode_batch(owners).tobytes()
    sample = owners[:: 200]
    assert dn.limbs_to_ints(got[:: 200]) == [dn.encode(r) for r in sample]


@pytest.mark.parametrize("seed", [4, 5, 6])
def test_decode_matches_numpy_and_plain_loop(ck, seed):
    nums = random_numbers(20_000, seed) + EDGE_NUMBERS
    limbs = dn.ints_to_limbs(nums)
    got = c_decode(ck, limbs)
    assert got.tobytes() == dn.decode_batch_numpy(limbs).tobytes()
    assert got.tobytes() == dn.decode_batch(limbs).tobytes()
    for i in range(0, len(nums), 211):
        assert got[i].tolist() == dn.decode(nums[i]).tolist()
    assert c_encode(ck, got).tobytes() == limbs.tobytes()


def test_first_and_last_deal(ck):
    # the article: 0 is N N ... E ... S ... W ...; D - 1 is W ... S ... E ... N ...
    first = np.repeat(np.arange(4, dtype=np.uint8), 13)
    last = first[::-1].copy()
    limbs = c_encode(ck, np.stack([first, last]))
    assert dn.limbs_to_ints(limbs) == [0, D - 1]
    assert c_decode(ck, limbs).tolist() == [first.tolist(), last.tolist()]


def _neighbours(seed: int, n: int) -> list[int]:
    """Numbers on both sides of the first number of a random prefix (every
    comparison of the decoder at its edge): that number is the rank of the
    prefix followed by the remaining cards in seat order."""
    rng = random.Random(seed)
    out = []
    for row in random_deals(n, seed).tolist():
        cut = rng.randrange(1, 52)
        s = dn.encode(row[:cut] + sorted(row[cut:]))
        out += [x for x in (s - 1, s, s + 1) if 0 <= x < D]
    return out


def test_decode_at_prefix_boundaries(ck):
    nums = _neighbours(7, 2_000)
    limbs = dn.ints_to_limbs(nums)
    assert c_decode(ck, limbs).tobytes() == dn.decode_batch_numpy(limbs).tobytes()


def test_decode_every_cut_across_chunks(ck):
    # The kernel takes the first cards by a table look-up, the next ones (while
    # a count may reach 2**64) comparing I >> 32 only, a tie being redone
    # exactly, then 64-bit and 32-bit steps and a tail table, in chunks of
    # 16384 numbers and lanes of 8.  Numbers next to the first number of a
    # prefix of every length 1..51 reach each part's edges (and the ties),
    # multiples of 2**81 the look-up's buckets; the batch spans three chunks
    # and ends off a multiple of 8.
    rng = random.Random(11)
    edges = []
    for cut in range(1, 52):
        for row in random_deals(4, cut).tolist():
            s = dn.encode(row[:cut] + sorted(row[cut:]))
            edges += [x for x in (s - 1, s, s + 1) if 0 <= x < D]
    for b in rng.sample(range(D >> 81), 200):
        edges += [(b << 81) - 1, b << 81, (b << 81) + 1] if b else [0, 1]
    nums = random_numbers(2 * 16_384 + 5 - len(edges), 12) + edges
    rng.shuffle(nums)
    limbs = dn.ints_to_limbs(nums)
    got = c_decode(ck, limbs)
    assert got.tobytes() == dn.decode_batch_numpy(limbs).tobytes()
    assert c_encode(ck, got).tobytes() == limbs.tobytes()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=D - 1), min_size=1, max_size=20))
def test_roundtrip_property(ck, nums):
    limbs = dn.ints_to_limbs(nums)
    deals = c_decode(ck, limbs)
    assert [dn.encode(r) for r in deals] == nums
    assert c_encode(ck, deals).tobytes() == limbs.tobytes()


def test_bad_input_is_rejected_like_numpy(ck):
    good = random_deals(5, 8)
    seat4 = good.copy()
    seat4[2, 7] = 4
    fourteen = good.copy()
    fourteen[3, np.flatnonzero(fourteen[3] == 3)[0]] = 0  # 14 North, 12 West
    for bad in (seat4, fourteen):
        with pytest.raises(ValueError):
            dn.encode_batch_numpy(bad)
        with pytest.raises(ValueError, match="deal [23]"):
            c_encode(ck, bad)
        with pytest.raises(ValueError):
            dn.encode_batch(bad)
        with pytest.raises(ValueError):
            kernel.pbn_deal_strings(bad)
    for v in (D, 2**96 - 1, 2**127):
        limbs = np.array([[0, 5], [v >> 64, v & (2**64 - 1)]], np.uint64)
        with pytest.raises(ValueError, match="row 1"):
            c_decode(ck, limbs)
        with pytest.raises(ValueError, match="out of range"):
            dn.decode_batch(limbs)
        with pytest.raises(ValueError, match="out of range"):
            kernel.format_numbers(limbs)
    with pytest.raises(ValueError):
        ck.encode(good.tobytes()[:-1], np.empty((5, 2), np.uint64))
    with pytest.raises(ValueError):
        kernel.pbn_deal_strings(good, 4)
    with pytest.raises(ValueError):
        kernel.pbn_deal_strings(good, [0, 1])


def test_empty_batches():
    none = np.empty((0, 52), np.uint8)
    assert dn.encode_batch(none).shape == (0, 2)
    assert dn.decode_batch(np.empty((0, 2), np.uint64)).shape == (0, 52)
    assert kernel.format_numbers(np.empty((0, 2), np.uint64)) == b""
    assert kernel.pbn_deal_strings(none, 0) == b""
    assert kernel.pbn_deal_strings(none, np.empty(0, np.uint8)) == b""


# ---------------------------------------------------------------------------
# Text
# ---------------------------------------------------------------------------


def python_numbers(nums: list[int]) -> bytes:
    return "".join(f"{x}\n" for x in nums).encode()


def test_format_numbers_matches_str(ck):
    nums = EDGE_NUMBERS + random_numbers(20_000, 9) + [random.Random(1).randrange(10**k) for k in range(1, 29)]
    limbs = dn.ints_to_limbs(nums)
    want = python_numbers(nums)
    assert ck.format_numbers(limbs) == want
    assert kernel.format_numbers(limbs) == want


def test_number_bytes_are_twelve_big_endian_bytes(ck):
    nums = EDGE_NUMBERS + random_numbers(20_000, 12)
    limbs = dn.ints_to_limbs(nums)
    want = b"".join(x.to_bytes(12, "big") for x in nums)
    assert ck.number_bytes(limbs) == want
    assert dn.limbs_to_bytes(limbs) == dn.limbs_to_bytes_numpy(limbs) == want
    past = np.concatenate([limbs[:3], np.array([[D >> 64, D & (2**64 - 1)]], np.uint64)])
    with pytest.raises(ValueError, match=r"row 3"):
        ck.number_bytes(past)
    with pytest.raises(ValueError, match=r"deal number \d+ \(row 3\) out of range"):
        dn.limbs_to_bytes(past)  # the numpy check words the error


def python_pbn(owners, firsts) -> bytes:
    return "".join(deal_string(r, int(f)) + "\n" for r, f in zip(owners, firsts)).encode()


@pytest.mark.parametrize("seed", [10, 11])
def test_pbn_deal_strings_match_deal_string(ck, seed):
    owners = random_deals(5_000, seed)
    # voids and long suits: deal numbers 0 and D - 1 are four 13-card suits each
    owners = np.concatenate([owners, dn.decode_batch_numpy(dn.ints_to_limbs([0, D - 1, 2**64]))])
    firsts = np.random.default_rng(seed).integers(0, 4, len(owners)).astype(np.uint8)
    want = python_pbn(owners, firsts)
    assert ck.pbn_deal_strings(owners, firsts) == want
    assert kernel._pbn_numpy(owners, firsts).tobytes() == want
    assert kernel.pbn_deal_strings(owners, firsts) == want
    for f in range(4):
        want = python_pbn(owners[:500], [f] * 500)
        assert ck.pbn_deal_strings(owners[:500], f) == want
        assert kernel._pbn_numpy(owners[:500], f).tobytes() == want


def endplay_owners(deal) -> list[int]:
    """Owners row read by endplay (its N E S W = 0..3, S H D C = 0..3, and
    Rank.RA = 1 << 14 ... Rank.R2 = 1 << 2)."""
    from endplay.types import Player

    row = [99] * 52
    for player in Player:
        for card in deal[player]:
            row[4 * (15 - int(card.rank).bit_length()) + int(card.suit)] = int(player)
    return row


def test_pbn_deal_strings_read_by_endplay():
    from endplay.types import Deal

    owners = random_deals(40, 12)
    firsts = np.arange(40, dtype=np.uint8) % 4
    text = kernel.pbn_deal_strings(owners, firsts)
    assert len(text) == 40 * kernel.PBN_LEN
    lines = text.decode("ascii").split("\n")
    assert lines[-1] == "" and len(lines) == 41
    for d, line in enumerate(lines[:-1]):
        assert line[0] == "NESW"[firsts[d]]
        assert endplay_owners(Deal(line)) == owners[d].tolist()


# ---------------------------------------------------------------------------
# The fallback (numpy path forced in a fresh process)
# ---------------------------------------------------------------------------

_FALLBACK_SCRIPT = """
import sys, numpy as np
from truedeal import dealnumber as dn, kernel
assert kernel.native() is None
rng = np.random.default_rng(13)
owners = rng.permuted(np.tile(np.repeat(np.arange(4, dtype=np.uint8), 13), (3000, 1)), axis=1)
limbs = dn.encode_batch(owners)
out = sys.stdout.buffer
out.write(limbs.tobytes())
out.write(dn.decode_batch(limbs).tobytes())
out.write(kernel.format_numbers(limbs))
out.write(kernel.pbn_deal_strings(owners, np.arange(3000, dtype=np.uint8) % 4))
"""


def _run(argv, **env):
    return subprocess.run(argv, capture_output=True, cwd=ROOT, timeout=300, env={**os.environ, **env}, check=False)


def test_forced_fallback_gives_the_same_bytes(ck):
    p = _run([sys.executable, "-c", _FALLBACK_SCRIPT], TRUEDEAL_NO_KERNEL="1")
    assert p.returncode == 0, p.stderr.decode()
    owners = np.random.default_rng(13).permuted(np.tile(np.repeat(np.arange(4, dtype=np.uint8), 13), (3000, 1)), axis=1)
    limbs = c_encode(ck, owners)
    want = (
        limbs.tobytes()
        + c_decode(ck, limbs).tobytes()
        + ck.format_numbers(limbs)
        + ck.pbn_deal_strings(owners, np.arange(3000, dtype=np.uint8) % 4)
    )
    assert p.stdout == want


@pytest.mark.parametrize("fmt", ["numbers", "pbn"])
def test_cli_fallback_same_deals_and_one_note(ck, fmt):
    args = [*CLI, "generate", "examples/strong-nt.json", "-n", "300", "--seed", "kernel", "--format", fmt]
    fast = _run(args, TRUEDEAL_NO_KERNEL="")
    slow = _run(args, TRUEDEAL_NO_KERNEL="1")
    assert fast.returncode == 0 and slow.returncode == 0, slow.stderr.decode()
    assert fast.stdout == slow.stdout
    assert b"kernel" not in fast.stderr
    note = slow.stderr.decode().splitlines()
    assert len(note) == 1 and "kernel" in note[0] and "TRUEDEAL_NO_KERNEL" in note[0]


def test_encode_rejects_every_kind_of_bad_row(ck):
    """One bad byte anywhere in a row (a seat 4..255, or a seat moved so that
    one count is 14 and another 12) is refused, on every card position."""
    good = random_deals(1, 14)[0]
    for pos in range(52):
        for bad_value in (4, 7, 255, (int(good[pos]) + 1) % 4):
            row = good.copy()
            row[pos] = bad_value
            with pytest.raises(ValueError):
                c_encode(ck, np.stack([good, row]))


@pytest.mark.parametrize("first_board", [1, 6, 17, 2**62])
@pytest.mark.parametrize("options", [{}, {"crlf": True}, {"generator": False, "event": "Clüb {night}"},
                                     {"rotation": Rotation(2, "EW")}, {"rotation": Rotation(None, "All")}])
def test_pbn_writer_games_from_the_kernel_match_python(ck, monkeypatch, first_board, options):
    """The PBN writer's compiled games (kernel.pbn_games) against its Python form."""
    from truedeal.formats import pbn

    deals = random_deals(700, first_board % 1000)
    limbs = dn.encode_batch_numpy(deals)
    batches = [(deals[:300], limbs[:300]), (deals[300:], limbs[300:])]
    compiled = "".join(pbn(batches, first_board, **options)), "".join(pbn([(deals, None)], first_board, **options))
    monkeypatch.setattr(kernel, "pbn_games", lambda *a: None)  # the writer's Python form
    python = "".join(pbn(batches, first_board, **options)), "".join(pbn([(deals, None)], first_board, **options))
    assert compiled == python
    assert compiled[0].count("[DealNumber") == 700 and "[DealNumber" not in compiled[1]
