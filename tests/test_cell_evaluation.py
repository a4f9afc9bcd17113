"""The cell-level evaluation of a compiled condition takes shortcuts (one
evaluation per distinct row of leaves, table lookups for atoms on one seat,
constant subtrees folded); each must give what the plain evaluation gives,
cell by cell, on scripts with many leaves."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from truedeal.constraints.compile import FALSE, UNKNOWN, _distinct_rows, compile_program, evaluate3, form_top
from truedeal.constraints.dealer import load_program
from truedeal.listing import make_layout
from truedeal.patterns import PATTERNS

SCRIPTS = Path(__file__).parent / "scripts"


def _many_leaves() -> str:
    """North in one of 30 patterns, each with its own length of South's:
    60 leaves, past the 31 that one packed key holds (library scripts reach 42)."""
    patterns = [p for p in PATTERNS.tolist() if max(p) <= 6][:30]
    suits = ["spades", "hearts", "diamonds", "clubs"]
    clauses = [f"(shape(north, {''.join(map(str, p))}) && {suits[i % 4]}(south) >= {1 + i // 4})"
               for i, p in enumerate(patterns)]
    return " || ".join(clauses) + "\n"


def _cells(name: str):
    """The script's compiled condition and 20,000 random pattern tuples of
    its patterned seats (not only the possible cells, which enumerate_cells
    keeps: the evaluation must say which are not)."""
    text = _many_leaves() if name == "many leaves" else (SCRIPTS / name).read_text()
    comp = make_layout(compile_program(load_program(text))).comp
    return comp, np.random.default_rng(7).integers(0, len(PATTERNS), (20_000, len(comp.patterned)))


@pytest.mark.parametrize("name", ["49_four_seats.dlr", "32_jacoby_2nt.dlr", "31_splinter.dlr", "12_1nt_north_or_south.dlr",
                                  "many leaves"])
def test_cell_possible_is_the_plain_evaluation_of_every_cell(name):
    comp, cells = _cells(name)
    leaves = comp._cell_leaves(cells)
    assert leaves and (len(leaves) > 31) == (name == "many leaves")
    plain = evaluate3(comp.tree, leaves, len(cells)) != FALSE
    assert np.array_equal(comp.cell_possible(cells), plain)
    assert plain.any() and not plain.all()  # the condition decides something here


@pytest.mark.parametrize("name", ["49_four_seats.dlr", "32_jacoby_2nt.dlr", "05_flannery.dlr", "28_michaels.dlr"])
def test_leaves_are_the_sums_of_lengths_and_the_shapes(name):
    comp, cells = _cells(name)
    lengths = PATTERNS[cells]  # (n, seats, 4)
    assert any(len({s for _, s, _ in a.lengths}) == 1 for a in comp.atoms)
    for atom in comp.atoms:
        v = sum((coef * lengths[:, comp.patterned.index(seat), suit] for coef, seat, suit in atom.lengths),
                np.zeros(len(cells), np.int64))
        want = v if atom.form is not None else atom.holds(0, v)
        assert np.array_equal(comp._length_part(atom, cells), want)
    for shape in comp.shapes:
        rows = lengths[:, comp.patterned.index(shape.seat)].tolist()
        assert comp._shape_truth(shape, cells).tolist() == [tuple(r) in shape.patterns for r in rows]


def test_constant_subtrees_fold_as_the_arrays_would():
    """AND/OR with a kid that is the same everywhere: FALSE decides an AND,
    TRUE an OR, UNKNOWN caps an AND and floors an OR (code 0 false, 1 true, 2 unknown)."""
    a, b = ("atom", 0), ("atom", 1)
    leaves = {a: np.array([0, 1, 2, 1], np.int8), b: np.array([1, 1, 0, 2], np.int8)}
    unknown, true, false = ("atom", 9), ("const", True), ("const", False)
    cases = {
        ("and", (a, unknown)): [0, 2, 2, 2],
        ("or", (a, unknown)): [2, 1, 2, 1],
        ("and", (a, false, b)): [0, 0, 0, 0],
        ("or", (b, true)): [1, 1, 1, 1],
        ("and", (a, true, b)): [0, 1, 0, 2],
        ("not", ("or", (unknown, false))): [2, 2, 2, 2],
        ("or", (("and", (a, b)), ("not", b))): [0, 1, 1, 2],
    }
    for tree, want in cases.items():
        assert evaluate3(tree, leaves, 4).tolist() == want, tree


def test_many_kids_combine_as_kleene_logic():
    """AND/OR of three or more arrays (combined in place) against the truth
    tables written out: AND is FALSE if a kid is, else UNKNOWN if a kid is;
    OR is TRUE if a kid is, else UNKNOWN if a kid is."""
    rng = np.random.default_rng(9)
    kids = [("atom", k) for k in range(4)]
    leaves = {kid: rng.integers(0, 3, 200).astype(np.int8) for kid in kids}
    values = np.array([leaves[kid] for kid in kids]).T.tolist()

    def kleene(row: list[int], decisive: int) -> int:
        return decisive if decisive in row else 2 if 2 in row else 1 - decisive

    for n in (3, 4):
        assert evaluate3(("and", tuple(kids[:n])), leaves, 200).tolist() == [kleene(r[:n], 0) for r in values]
        assert evaluate3(("or", tuple(kids[:n])), leaves, 200).tolist() == [kleene(r[:n], 1) for r in values]
        assert evaluate3(("and", (*kids[:n], ("atom", 9))), leaves, 200).tolist() == [kleene([*r[:n], 2], 0) for r in values]


def test_distinct_rows_are_numpys_distinct_rows():
    """Rows of 70 columns (three keys of packed leaves) and of 5: each row's
    index names a row equal to it, equal rows share it, and ``first`` holds
    one row of each distinct kind, as np.unique(axis=0) counts them."""
    rng = np.random.default_rng(3)
    for n_cols in (70, 5):
        table = rng.integers(0, 3, (5000, n_cols)).astype(np.int8)
        table[2500:] = table[rng.integers(0, 40, 2500)]  # many repeats
        row_of, first = _distinct_rows(list(table.T))
        assert len(first) == len(np.unique(table, axis=0))
        assert np.array_equal(table[first][row_of], table)
        assert np.array_equal(row_of[first], np.arange(len(first)))
    row_of, first = _distinct_rows(list(np.zeros((0, 70), np.int8).T))  # no cells (a spec nothing fits)
    assert len(row_of) == len(first) == 0


@pytest.mark.parametrize("name", ["49_four_seats.dlr", "32_jacoby_2nt.dlr", "64_leveled_1nt_opener.dlr",
                                  "63_raise_beside_a_calm_opponent.dlr"])
def test_forms_are_sized_as_each_form_alone_would_be(name):
    """_size_forms decides every capped form in one evaluation: each must be
    dropped or clamped as evaluating that form alone past its cap says (its
    atoms decided there, every other leaf unknown)."""
    comp = compile_program(load_program((SCRIPTS / name).read_text()))
    capped = [f for f, form in enumerate(comp.forms) if form.clamp or form.dim <= form_top(form)]
    assert capped
    for f in capped:
        form = comp.forms[f]
        cap = form.dim - 1 if form.clamp else form.dim
        leaves = {("atom", a): np.full(1, UNKNOWN if atom.lengths else int(atom.holds(cap, 0)), np.int8)
                  for a, atom in enumerate(comp.atoms) if atom.form == f}
        assert form.clamp == (evaluate3(comp.tree, leaves, 1)[0] != FALSE), f
