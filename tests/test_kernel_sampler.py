"""The compiled sampler (truedeal._sampler) against the numpy reference path.

The seeded stream is a published contract: for the same spec and seed the
compiled path must give byte-identical deals to the numpy code, consuming the
SHAKE-256 stream in the same order.  Each test runs the same draw twice from
fresh, equal streams -- once as shipped, once inside ``kernel.numpy_only()``
(the reference) -- and compares the outputs and then the next bytes of the
two streams (so a path that read more or fewer bytes is caught even when its
draws happen to agree).  The whole CLI is also compared against a process
with TRUEDEAL_NO_KERNEL=1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from truedeal import kernel
from truedeal.constraints.dealer import parse_program
from truedeal.engine import Plan
from truedeal.randomness import CHUNK_DEALS, Rng, SeededBits
from truedeal.sampling import WideCategorical, _locate, _starts
from truedeal.spec import load_spec

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_constraints_exact import (  # noqa: E402
    CONDITIONS,
    _completions,
    _holds,
    _out_of_the_pack,
    _predeal_with_west_on_spots,
    _program,
    _random_predeal,
)
from test_engine import BRUTE_SPECS  # noqa: E402

FORCED = os.environ.get("TRUEDEAL_NO_KERNEL", "") not in ("", "0")
pytestmark = pytest.mark.skipif(FORCED, reason="TRUEDEAL_NO_KERNEL is set: nothing compiled to compare")

#: bench/specs builds slower than a test should wait for (seconds to a minute); bench_sampler covers them.
SLOW_TO_BUILD = {"four", "four-wide", "four-pool", "three-and-pool", "fit25", "fit25j", "hcp4", "weak2"}
SPEC_FILES = sorted(ROOT.glob("examples/*.json")) + sorted(p for p in ROOT.glob("bench/specs/*.json") if p.stem not in SLOW_TO_BUILD)


@pytest.fixture(scope="module", autouse=True)
def compiled():
    """The sampler must be built here (scripts/test.sh builds it): its absence is a failure."""
    from truedeal import _sampler  # noqa: F401

    assert kernel.sampler() is not None


def twice(fn, seed="s", chunk=0):
    """``fn(rng)`` on the compiled path and on the numpy path, each from a
    fresh stream (seed, chunk); returns both results and both streams' next bytes."""
    out = []
    for reference in (False, True):
        bits = SeededBits(seed, chunk)
        if reference:
            with kernel.numpy_only():
                result = fn(Rng(bits))
        else:
            result = fn(Rng(bits))
        out.append((result, bits.read(32)))
    return out


def same(a, b) -> bool:
    if isinstance(a, tuple):
        return all(same(x, y) for x, y in zip(a, b))
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def assert_twice_equal(fn, seed="s", chunk=0):
    (got, after), (ref, ref_after) = twice(fn, seed, chunk)
    assert same(got, ref)
    assert after == ref_after, "the paths consumed different amounts of the stream"


# ------------------------------------------------------------------ integer draws

# Bounds near the rejection edges: 2**k + 1 rejects almost half the words.
EDGES = [1, 2, 3, 52, 2**15 + 1, 2**16 - 1, 2**16, 2**16 + 1, 2**31 + 1, 2**32 - 1, 2**32, 2**32 + 1, 2**62 + 1, 2**63 - 1]


@pytest.mark.parametrize("bound", EDGES)
def test_below_one_bound_many_times(bound):
    assert_twice_equal(lambda rng: rng.below(np.full(3000, bound, np.int64)), seed=bound)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(EDGES) | st.integers(1, 2**63 - 1) | st.integers(1, 60), min_size=0, max_size=300),
       st.integers(0, 2**32))
def test_below_mixed_bounds(bounds, seed):
    assert_twice_equal(lambda rng: rng.below(np.array(bounds, np.int64).reshape(-1)), seed=seed)


def test_below_keeps_shape_and_refuses_zero():
    assert_twice_equal(lambda rng: rng.below(np.arange(1, 61).reshape(3, 4, 5)))
    for reference in (False, True):
        rng = Rng(SeededBits("z"))
        with pytest.raises(ValueError, match="bounds must be >= 1"):
            if reference:
                with kernel.numpy_only():
                    rng.below(np.array([3, 0]))
            else:
                rng.below(np.array([3, 0]))


@pytest.mark.parametrize("bound,shift", [(2**40 + 1, 0), (2**70 + 3, 8), (3 * 2**100 + 1, 40), (2**126 - 1, 64), (2**64 + 1, 2), (5, 0)])
def test_below_wide(bound, shift):
    assert_twice_equal(lambda rng: rng.below_wide(bound, 2000, shift), seed=str(bound))


@pytest.mark.parametrize("weights", [[1, 2, 3], [0, 5, 0, 7], [2**90, 1, 2**91 + 3, 17], [1] * 1000, [10**30 + k for k in range(300)],
                                     # past 4,096 weights the compiled search starts in a guide table's bucket:
                                     # zeros, runs of tied high keys (tiny weights beside 2**80) and an uneven spread
                                     [1] * 5000, [(k % 7) * 2**80 + k % 3 for k in range(6000)], [k**3 for k in range(9000)]])
def test_wide_categorical(weights):
    cat = WideCategorical(weights)
    assert_twice_equal(lambda rng: cat.draw(5000, rng), seed=len(weights))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 12), st.integers(0, 4)), min_size=1, max_size=300), st.booleans(), st.integers(0, 2**32))
def test_locate_with_tied_running_sums(entries, with_table, seed):
    """Sampler._locate on both paths: runs of 13 keys whose weights are
    often 0 (so the running sums tie, and a search must take the first entry
    past the draw), searched from the runs' table or from the whole array."""
    entries.sort()
    keys = np.array([k for k, _ in entries], np.int64)
    cum = np.cumsum([w for _, w in entries]).astype(np.int64)
    totals = {k: sum(w for kk, w in entries if kk == k) for k, _ in entries}
    asked = np.array([k for k, t in sorted(totals.items()) if t > 0] * 40, np.int64)
    starts = _starts(keys, 13) if with_table else np.zeros(0, np.int64)
    total = np.array([totals[k] for k in asked], np.int64)
    assert_twice_equal(lambda rng: _locate(rng, keys, cum, starts, asked, total), seed=seed)


# ------------------------------------------------------------------ whole specs


def deals_of(plan: Plan, n: int, seed: str, start_chunk: int = 0) -> np.ndarray:
    return np.concatenate(list(plan.deals(n, seed, start_chunk)))


def both_paths(plan: Plan, n: int, seed: str, start_chunk: int = 0):
    got = deals_of(plan, n, seed, start_chunk)
    with kernel.numpy_only():
        ref = deals_of(plan, n, seed, start_chunk)
    return got, ref


@pytest.mark.parametrize("path", SPEC_FILES, ids=lambda p: p.stem)
def test_spec_files_byte_identical(path):
    plan = Plan.build(load_spec(str(path)))
    for seed, n, start in (("club night", CHUNK_DEALS + 37, 0), ("7", 300, 5)):
        got, ref = both_paths(plan, n, seed, start)
        assert got.tobytes() == ref.tobytes(), (path.name, seed)
        assert got.shape == (n, 52)


@pytest.mark.parametrize("name", sorted(BRUTE_SPECS))
def test_engine_specs_byte_identical(name):
    plan = Plan.build(load_spec(BRUTE_SPECS[name]))
    got, ref = both_paths(plan, 1500, name)
    assert got.tobytes() == ref.tobytes()


@pytest.mark.parametrize("name", sorted(CONDITIONS))
def test_programs_with_predeals_byte_identical(name):
    """The constraint language's forms, unions and predeals (most cards predealt)."""
    # The first predeal that some completion fits, found by brute force over its 2,520 completions:
    # the plans of the empty predeals before it took seconds to build (equal lengths, spade fit).
    seed = next(s for s in range(1, 20) if _holds(_completions(_random_predeal(s, 11)), CONDITIONS[name]).any())
    plan = Plan.build(_program(CONDITIONS[name], _random_predeal(seed, 11)))
    assert plan.possible
    got, ref = both_paths(plan, 700, name)
    assert got.tobytes() == ref.tobytes()


def test_cards_out_of_the_pack_byte_identical():
    """West's predealt spot cards, out of the pack (``Compiled.dead``): the
    compiled fill starts from them and deals West one card fewer, as numpy does."""
    plan = _out_of_the_pack(_predeal_with_west_on_spots(5))
    got, ref = both_paths(plan, 700, "out of the pack")
    assert got.tobytes() == ref.tobytes()


def test_many_box_coordinates_byte_identical():
    """Nine range coordinates (a 1NT opener's points less a dubious doubleton
    honour, per suit): past the old compiled limit of eight, and most axes
    have a zero lower corner that the compiled box sum skips."""
    suits = ("spades", "hearts", "diamonds", "clubs")
    script = "".join(f"d{k} = {s}(south) == 2 and top4(south, {s}) > 0 and not hascard(south, A{s[0].upper()}) ? 1 : 0\n"
                     for k, s in enumerate(suits))
    script += "pts = hcp(south) - d0 - d1 - d2 - d3\ncondition shape(south, any 4333 + any 4432 + any 5332) and pts >= 15 and pts <= 17\n"
    plan = Plan.build(parse_program(script))
    assert plan.exact and plan.listing.layout.n_box == 9
    got, ref = both_paths(plan, 600, "nine axes")
    assert got.tobytes() == ref.tobytes()


def test_box_sums_of_the_numpy_path_against_the_table():
    """The numpy path's box sum (a draw picks one of several boxes by it)
    skips the corners on axes where every lower bound is 0; each sum must
    still equal the plain sum of the (D,C) table over the box."""
    plan = Plan.build(parse_program(
        "condition top4(south, spades) > 0 and hascard(south, AH) and "
        "((hcp(south) >= 12 and hcp(south) <= 14) or hcp(south) >= 18)\n"))
    sampler, lay = plan.sampler, plan.listing.layout
    nb, dims = lay.n_box, lay.dims
    dc_pairs = np.unique(plan.listing.cell_pairs[:, 1])
    rng = np.random.default_rng(7)
    n, k = 200, 3
    which = rng.integers(0, len(dc_pairs), n)
    lo = rng.integers(0, np.array(dims[:nb]), (n, k, nb))
    lo[:, :, 0] = 0  # an axis where every lower bound is 0: its corners are skipped
    hi = np.maximum(lo - 1, rng.integers(0, np.array(dims[:nb]), (n, k, nb)))  # some boxes empty
    exact = rng.integers(0, np.array(dims[nb:], dtype=np.int64), (n, len(dims) - nb))
    got = sampler._box(sampler.dc_prefix, which, lo, hi, exact)
    for r in range(n):
        table = plan.listing.pair_tables[dc_pairs[which[r]]].reshape(dims)
        for b in range(k):
            box = tuple(slice(lo[r, b, d], hi[r, b, d] + 1) for d in range(nb)) + tuple(exact[r])
            assert got[r, b] == table[box].sum()


def _deal_cards(gen, seed: int) -> np.ndarray:
    """4-13 cards, or 20-52 for seeds 3, 8, 13, ... (then a block may hold
    more than 16): ascending (one run), ascending within each suit and suit
    after suit (up to four runs, like the pool's spot cards), or in any order
    (then the compiled deal lists them card by card)."""
    many = seed % 5 == 3
    cards = np.sort(gen.choice(52, int(gen.integers(20, 53) if many else gen.integers(4, 14)), replace=False)).astype(np.int64)
    if seed % 3 == 1:
        return cards[np.argsort(cards % 4, kind="stable")]
    return gen.permutation(cards) if seed % 3 == 2 else cards


def _deal_counts(gen, seed: int, avail: np.ndarray, blocks: int) -> np.ndarray:
    """Each row's counts: its cards in all, or some of them, in `blocks`
    blocks; of either sign for seeds 0, 4, 8, ... (then a block may end past
    the row's need), else each >= 0."""
    n = len(avail)
    want = avail if seed % 2 else gen.integers(0, avail + 1)
    if seed % 4 == 0:
        counts = gen.integers(-2, 4, (n, blocks))
        counts[:, -1] = np.abs(counts[:, -1])  # (a row taking all its cards shuffles need - last: at most its cards)
        counts[:, 0] += want - counts.sum(axis=1)
        return counts
    cuts = np.sort(gen.integers(0, want[:, None] + 1, (n, blocks - 1)), axis=1)
    return np.diff(np.concatenate([np.zeros((n, 1), np.int64), cuts, want[:, None]], axis=1), axis=1)


@pytest.mark.parametrize("seed", range(24))
def test_deal_of_any_blocks_byte_identical(seed):
    """fill.deal_open on both paths: 1 to 10 blocks (the compiled write-out keeps
    at most 8 block ends at hand), counts of either sign, some cards not
    available, rows that take every available card (then the last block is
    not shuffled) or not, cards in one or several ascending runs or in any order."""
    from truedeal.fill import deal_open

    gen = np.random.default_rng(seed)
    n, blocks = 40, int(gen.integers(1, 11))
    cards = _deal_cards(gen, seed)
    owners = np.full((n, 52), 255, np.uint8)
    owners[gen.random((n, 52)) < 0.25] = 7  # taken already
    avail = (owners[:, cards] == 255).sum(axis=1)
    counts = _deal_counts(gen, seed, avail, blocks)
    dest = np.arange(blocks, dtype=np.uint8)

    def deal(rng):
        out = owners.copy()
        deal_open(out, rng, cards, counts, dest)
        return out

    assert_twice_equal(deal, seed=f"deal {seed}")


class ZeroWords:
    """A bit source whose 16-bit words are zero at every third place: a zero
    word is rejected below any bound that is not a power of two, so the
    deal's redo path runs in most blocks of eight rows."""

    def __init__(self, seed: str) -> None:
        self.bits, self.at = SeededBits(seed), 0

    def read(self, nbytes: int) -> bytes:
        out = bytearray(self.bits.read(nbytes))
        for k in range(nbytes):
            if (self.at + k) // 2 % 3 == 0:
                out[k] = 0
        self.at += nbytes
        return bytes(out)


def test_deal_redoes_rejected_words_as_the_numpy_path_does():
    """fill.deal_open on both paths from a source that makes a third of the
    first tries rejected: the same deals, and the same bytes taken."""
    from truedeal.fill import deal_open

    gen = np.random.default_rng(5)
    n, cards = 37, np.arange(52, dtype=np.int64)  # 37 rows: four blocks of eight and a tail
    owners = np.full((n, 52), 255, np.uint8)
    owners[gen.random((n, 52)) < 0.3] = 7
    avail = (owners == 255).sum(axis=1)
    counts = _deal_counts(gen, 1, avail, 3)
    out = []
    for reference in (False, True):
        bits, got = ZeroWords("redo"), owners.copy()
        if reference:
            with kernel.numpy_only():
                deal_open(got, Rng(bits), cards, counts, np.arange(3, dtype=np.uint8))
        else:
            deal_open(got, Rng(bits), cards, counts, np.arange(3, dtype=np.uint8))
        out.append((got.tobytes(), bits.at))
    assert out[0] == out[1]


def test_chunk_sizes_do_not_change_the_stream():
    """A chunk cut short gives the first deals of the full chunk, on both paths."""
    plan = Plan.build(load_spec(str(ROOT / "examples" / "strong-nt.json")))
    full = plan.chunk(3, "x")
    for size in (1, 17, 4000):
        short = plan.chunk(3, "x", size)
        with kernel.numpy_only():
            ref = plan.chunk(3, "x", size)
        assert short.tobytes() == ref.tobytes() == full[:size].tobytes()


@pytest.mark.parametrize("spec, stream", [
    ({"north": {"hcp": [15, 17], "shape": "any 4333 + any 4432 + any 5332"}, "south": {"shape": "5xxx + x5xx"}}, "v1"),
    ({}, "v2"),  # deal numbers read off the stream: the compiled below_d against numpy's
])
def test_cli_matches_a_process_without_the_kernel(spec, stream):
    """The whole CLI, numbers and PBN, with and without TRUEDEAL_NO_KERNEL."""
    cli = [sys.executable, "-m", "truedeal.cli", "generate", json.dumps(spec), "-n", "5000", "--seed", "cli", "--stream", stream]
    for fmt in ("numbers", "pbn"):
        outs = []
        for off in ("", "1"):
            env = {**os.environ, "TRUEDEAL_NO_KERNEL": off}
            p = subprocess.run([*cli, "--format", fmt], capture_output=True, env=env, cwd=ROOT)
            assert p.returncode == 0, p.stderr
            outs.append(p.stdout)
        assert outs[0] == outs[1]
        assert len(outs[0].splitlines()) >= 5000


@pytest.mark.parametrize("path", ["examples/strong-nt.json", "examples/flannery.json", "bench/specs/predeal.json",
                                  "bench/specs/none.json", "bench/specs/nt_hearts.json"])
def test_the_one_call_draw_is_taken_and_is_the_compiled_steps(path):
    """Sampler.draw in one compiled call: taken for these listings, with the
    deals and the stream position of the compiled steps made one by one."""
    sampler = Plan.build(load_spec(str(ROOT / path))).sampler
    assert sampler.one_call_args()
    one, steps = SeededBits("one", 2), SeededBits("one", 2)
    got = sampler.draw(3000, Rng(one))
    saved, sampler._one_call = sampler._one_call, ()  # the steps, still compiled
    try:
        want = sampler.draw(3000, Rng(steps))
    finally:
        sampler._one_call = saved
    assert got.tobytes() == want.tobytes() and one.read(32) == steps.read(32)


def test_the_one_call_draw_refuses_malformed_arrays():
    sampler = Plan.build(load_spec(str(ROOT / "examples/strong-nt.json"))).sampler
    assert sampler.one_call_args()
    *head, arrays = sampler.one_call_args()
    short = tuple(a[:-1] if i == 9 else a for i, a in enumerate(arrays))  # cell_dc one short
    with pytest.raises(ValueError, match="malformed"):
        kernel.sampler().draw(SeededBits("x"), *head, short, np.empty((10, 52), np.uint8))
    with pytest.raises(TypeError):
        kernel.sampler().draw(SeededBits("x"), *head, arrays[:-1], np.empty((10, 52), np.uint8))


def test_threads_drawing_at_once_get_their_own_deals():
    """The kernel's work arrays are lent to one call at a time: threads that
    interleave inside it (the bit source is Python code) still get the deals
    each would get alone."""
    import threading

    plan = Plan.build(load_spec(str(ROOT / "examples" / "nt-and-major.json")))
    seeds = [f"thread {i}" for i in range(4)]
    alone = {s: deals_of(plan, 2 * CHUNK_DEALS, s) for s in seeds}
    together: dict[str, np.ndarray] = {}
    saved = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        threads = [threading.Thread(target=lambda s=s: together.__setitem__(s, deals_of(plan, 2 * CHUNK_DEALS, s))) for s in seeds]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(saved)
    for s in seeds:
        assert together[s].tobytes() == alone[s].tobytes(), s
