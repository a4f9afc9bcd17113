"""The constraint IR on real deals, vectorised: the rejection checker and the test oracle.

``owners`` is an ``(n, 52)`` uint8 array, ``owners[d, card]`` the seat (0..3)
holding ``card`` in deal ``d`` (card = 4 * rank + suit, see
:mod:`truedeal.cards`).  Numbers come back as ``int64`` arrays of length n,
conditions as ``bool`` arrays.

Arithmetic follows dealer (C integers): ``/`` truncates toward zero and ``%``
takes the sign of the dividend.  A division by zero on some deal gives 0 on
that deal (both branches of ``?:`` are computed on every deal, so
``b != 0 ? a / b : 0`` must not fail).

:class:`ir.OpaqueNum`:

* ``tricks(seat, strain)``: double-dummy tricks for ``seat`` as declarer, by
  endplay's DDS, one deal at a time (slow: use it on small batches);
* ``score(vul, (level, strain), tricks)``: the duplicate score of that
  contract, undoubled, for the declarer (endplay's scoring);
* ``imps(x)``: the IMP value of a score difference, sign kept;
* ``rnd(n)``: uniform in ``0 .. n-1`` per deal, only when a numpy ``rng`` is
  passed (a condition with ``rnd`` is not a function of the deal);
* anything else raises :class:`NotImplementedError` naming it.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from . import ir

_OPS = {
    "<": np.less,
    "<=": np.less_equal,
    "==": np.equal,
    "!=": np.not_equal,
    ">=": np.greater_equal,
    ">": np.greater,
}
#: Upper bounds of the IMP scale: a difference of at least _IMP_STEPS[k] is worth k + 1 IMPs.
_IMP_STEPS = np.array(
    [20, 50, 90, 130, 170, 220, 270, 320, 370, 430, 500, 600, 750, 900, 1100, 1300, 1500, 1750, 2000, 2250, 2500,
     3000, 3500, 4000]
)  # fmt: skip


def imps_of(d: np.ndarray) -> np.ndarray:
    """The IMP value of each score difference of ``d``, its sign kept."""
    return np.sign(d) * np.searchsorted(_IMP_STEPS, np.abs(d), side="right")


def feature_values(owners: np.ndarray, feature: ir.Feature) -> np.ndarray:
    """``feature`` on each deal, as int64."""
    return _Evaluator(owners).feature(feature)


def evaluate_num(owners: np.ndarray, num: ir.Num, rng: np.random.Generator | None = None) -> np.ndarray:
    """A number of the IR on each deal, as int64."""
    return _Evaluator(owners, rng).num(num)


def evaluate_nums(owners: np.ndarray, nums: list[ir.Num], rng: np.random.Generator | None = None) -> list[np.ndarray]:
    """Several numbers on the same deals, as :func:`evaluate_num` gives each;
    what they share (a feature, a double-dummy table) is computed once."""
    evaluator = _Evaluator(owners, rng)
    return [evaluator.num(x) for x in nums]


def evaluate_cond(owners: np.ndarray, cond: ir.Cond, rng: np.random.Generator | None = None) -> np.ndarray:
    """A condition of the IR on each deal, as bool."""
    return _Evaluator(owners, rng).cond(cond)


def evaluate_given(conds: Sequence[ir.Cond], values: dict[int, np.ndarray]) -> list[np.ndarray]:
    """Conditions that read no card, on the points where each
    :class:`ir.OpaqueNum` (by identity) takes its array of ``values``
    (all of one length): the classes of ``rnd`` (:mod:`.rnd_levels`)."""
    n = len(next(iter(values.values())))
    evaluator = _Given(np.broadcast_to(np.zeros((1, 52), np.uint8), (n, 52)), values)
    return [evaluator.cond(c) for c in conds]


def holds_predeal(owners: np.ndarray, program: ir.Program) -> np.ndarray:
    """True where every predealt card of ``program`` is with its seat."""
    ok = np.ones(len(owners), dtype=bool)
    for seat, cards in program.predeal:
        if cards:
            ok &= (owners[:, list(cards)] == seat).all(axis=1)
    return ok


def satisfies(owners: np.ndarray, program: ir.Program, rng: np.random.Generator | None = None) -> np.ndarray:
    """True where the deal fits the whole program: its predeal and its condition."""
    return holds_predeal(owners, program) & evaluate_cond(owners, program.condition, rng)


class _Evaluator:
    """Evaluates trees on one batch, caching each feature (trees share many)."""

    def __init__(self, owners: np.ndarray, rng: np.random.Generator | None = None):
        owners = np.asarray(owners)
        if owners.ndim != 2 or owners.shape[1] != 52:
            raise ValueError(f"owners must have shape (n, 52), got {owners.shape}")
        self.owners = owners
        self.n = len(owners)
        self.rng = rng
        self.cache: dict = {}

    def columns(self) -> np.ndarray:
        """``(52, n)``: the owners card by card.  Each card's column is then
        contiguous, which makes the per-card comparisons below ~10x faster
        than strided reads of ``owners``."""
        if "cols" not in self.cache:
            self.cache["cols"] = _by_card(self.owners)
        return self.cache["cols"]

    def holds(self, seat: int, rank: int, suit: int) -> np.ndarray:
        """bool per deal: does ``seat`` hold this card."""
        return self.columns()[4 * rank + suit] == seat

    def length(self, seat: int, suit: int) -> np.ndarray:
        key = ("length", seat, suit)
        if key not in self.cache:
            n = np.zeros(self.n, dtype=np.int8)  # at most 13
            for rank in range(13):
                n += self.holds(seat, rank, suit)
            self.cache[key] = n
        return self.cache[key]

    def weights_sum(self, seat: int, suits: tuple[int, ...], weights: tuple[int, ...]) -> np.ndarray:
        """``sum(weights[rank])`` over the cards of ``suits`` the seat holds,
        accumulated in the narrowest integer type that cannot overflow."""
        bound = sum(abs(w) for w in weights) * len(suits)
        dtype = np.int16 if bound < 2**15 else np.int32 if bound < 2**31 else np.int64
        total: np.ndarray = np.zeros(self.n, dtype=dtype)
        for s in suits:
            for rank, w in enumerate(weights):
                if w == 1:
                    total += self.holds(seat, rank, s)
                elif w:
                    total += self.holds(seat, rank, s) * dtype(w)
        return total

    def losers(self, seat: int, suit: int) -> np.ndarray:
        a, k, q = (self.holds(seat, rank, suit) for rank in range(3))
        return _losers(self.length(seat, suit), a, k, q)

    def table(self, fn: ir.LocalFn, seat: int, suit: int) -> np.ndarray:
        """A ``table`` function of the seat's holding in ``suit``."""
        index = self.length(seat, suit).astype(np.intp) << len(fn.ranks_read)
        for i, rank in enumerate(fn.ranks_read):
            index |= self.holds(seat, rank, suit).astype(np.intp) << i
        return np.asarray(fn.table, np.int64)[index]

    def feature(self, f: ir.Feature) -> np.ndarray:
        if f not in self.cache:
            if f.fn.kind == "weights":
                total = self.weights_sum(f.seat, f.suits, f.fn.weights).astype(np.int64)
            else:
                part = {"length": self.length, "losers": self.losers}.get(f.fn.kind) or functools.partial(self.table, f.fn)
                total = np.zeros(self.n, dtype=np.int64)
                for s in f.suits:
                    total += part(f.seat, s)
            self.cache[f] = total
        return self.cache[f]

    # -------------------------------------------------------------- numbers
    def num(self, x: ir.Num) -> np.ndarray:
        """Memoised by node identity: a variable used many times is computed once."""
        key = ("num", id(x))
        if key not in self.cache:
            self.cache[key] = (x, self.num_of(x))  # keep x alive so its id stays unique
        return self.cache[key][1]

    def num_of(self, x: ir.Num) -> np.ndarray:
        if isinstance(x, ir.Linear):
            if not x.terms:
                return np.full(self.n, x.const, dtype=np.int64)
            out = x.terms[0][0] * self.feature(x.terms[0][1])  # a new int64 array (features are int64)
            for coef, f in x.terms[1:]:
                out += coef * self.feature(f)
            if x.const:
                out += x.const
            return out
        if isinstance(x, ir.IfElse):
            return np.where(self.cond(x.cond), self.num(x.then), self.num(x.other))
        if isinstance(x, ir.Arith):
            return _arith(x.op, self.num(x.left), self.num(x.right))
        if isinstance(x, ir.OpaqueNum):
            return self.opaque(x)
        raise TypeError(f"not a number of the IR: {x!r}")

    def opaque(self, x: ir.OpaqueNum) -> np.ndarray:
        if x.name == "rnd":
            if self.rng is None:
                raise NotImplementedError("rnd() needs a random generator: pass rng= to the evaluator")
            n = self.num(x.args[0])
            return np.where(n > 0, self.rng.integers(0, np.maximum(n, 1)), 0)
        if x.name == "tricks":
            return self.tricks(*x.args)
        if x.name == "imps":
            return imps_of(self.num(x.args[0]))
        if x.name == "score":
            return self.score(*x.args)
        raise NotImplementedError(f"{x.name}() cannot be evaluated by truedeal")

    def tricks(self, seat: int, strain: int) -> np.ndarray:
        key = ("dd", strain)  # one strain at a time: DDS skips the others
        if key not in self.cache:
            from .dds import dd_tables

            self.cache[key] = dd_tables(self.owners, (strain,))[:, 0]
        return self.cache[key][:, seat]

    def score(self, vul: bool, contract: tuple[int, int], tricks: ir.Num) -> np.ndarray:
        from .dds import contract_scores

        table = contract_scores(contract[0], contract[1], vul)  # (14,) by tricks taken
        return table[np.clip(self.num(tricks), 0, 13)]

    # ----------------------------------------------------------- conditions
    def cond(self, c: ir.Cond) -> np.ndarray:
        key = ("cond", id(c))
        if key not in self.cache:
            self.cache[key] = (c, self.cond_of(c))
        return self.cache[key][1]

    def cond_of(self, c: ir.Cond) -> np.ndarray:
        if isinstance(c, ir.Compare):
            return _OPS[c.op](self.num(c.left), self.num(c.right))
        if isinstance(c, ir.ShapeIn):
            return self.shape_in(c)
        if isinstance(c, ir.And):
            out = np.ones(self.n, dtype=bool)
            for item in c.items:
                out &= self.cond(item)
            return out
        if isinstance(c, ir.Or):
            out = np.zeros(self.n, dtype=bool)
            for item in c.items:
                out |= self.cond(item)
            return out
        if isinstance(c, ir.Not):
            return ~self.cond(c.item)
        if isinstance(c, ir.Truth):
            return np.full(self.n, c.value, dtype=bool)
        raise TypeError(f"not a condition of the IR: {c!r}")

    def shape_in(self, c: ir.ShapeIn) -> np.ndarray:
        table = np.zeros((14, 14, 14), dtype=bool)  # by (spades, hearts, diamonds); clubs follow
        for s, h, d, _ in c.patterns:
            table[s, h, d] = True
        return table[self.length(c.seat, 0), self.length(c.seat, 1), self.length(c.seat, 2)]


class _Given(_Evaluator):
    """Opaque numbers given, not drawn: no card is read."""

    def __init__(self, owners: np.ndarray, values: dict[int, np.ndarray]):
        super().__init__(owners)
        self.values = values

    def opaque(self, x: ir.OpaqueNum) -> np.ndarray:
        return self.values[id(x)]


def _by_card(owners: np.ndarray, block: int = 8192) -> np.ndarray:
    """``owners`` transposed to ``(52, n)``, contiguous.  Done in blocks of
    rows so that each block stays in cache (a plain transpose copy of a tall
    uint8 array is several times slower)."""
    out = np.empty((52, len(owners)), dtype=owners.dtype)
    for i in range(0, len(owners), block):
        out[:, i : i + block] = owners[i : i + block].T
    return out


def _losers(length: np.ndarray, a: np.ndarray, k: np.ndarray, q: np.ndarray) -> np.ndarray:
    """dealer's losers in one suit (see :func:`ir.losers_in_suit`), vectorised."""
    a, k, q = (x.astype(np.int64) for x in (a, k, q))
    return np.select(
        [length == 0, length == 1, length == 2],
        [0, 1 - a, 2 - a - k],
        default=3 - a - k - q,
    )


def _arith(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    safe = np.where(b == 0, 1, b)
    q = np.abs(a) // np.abs(safe) * np.where((a >= 0) == (safe > 0), 1, -1)  # C truncation
    out = q if op == "/" else a - q * safe
    return np.where(b == 0, 0, out)

