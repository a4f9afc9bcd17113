"""Exact laws of any dealer expression (truedeal.analysis.laws), against independent calculations.

Each expected value here is computed without the listing: combinatorics over
the honours (the 16 A-K-Q-J, or the aces and kings), a suit-by-suit
generating function for losers, symmetry among the other three seats, the
first language's conditioning route, or (for estimates) a closed form.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from itertools import combinations

import pytest
from click.testing import CliRunner

from truedeal.analysis.actions import answer_script
from truedeal.analysis.distribution import exact_distribution
from truedeal.analysis.general import parse_query
from truedeal.analysis.laws import distribution_of
from truedeal.analysis.sampled import DEFAULT_DD_SAMPLES, SampledDistribution, default_samples
from truedeal.cli import cli
from truedeal.constraints.load import load_constraints
from truedeal.spec import Spec, load_spec

C = math.comb
OTHER_HANDS = C(39, 13) * C(26, 13)  # ways to deal the other 39 cards to three seats
HONOUR_POINTS = [4, 3, 2, 1] * 4  # A K Q J of each suit


def _honour_law(n_cards: int, weights: list[int]) -> dict[int, int]:
    """value -> ways for one group of ``n_cards`` cards to hold honours worth
    ``value`` (sum of ``weights`` over the honours held), spots filling the rest."""
    others = 52 - len(weights)
    law: dict[int, int] = {}
    for k in range(len(weights) + 1):
        for held in combinations(weights, k):
            v = sum(held)
            law[v] = law.get(v, 0) + (C(others, n_cards - k) if k <= n_cards else 0)
    return {v: n for v, n in law.items() if n}


def _mean(law: dict[int, int]) -> Fraction:
    return Fraction(sum(v * n for v, n in law.items()), sum(law.values()))


def test_partnership_hcp_law_is_the_26_card_honour_law():
    # N+S hold 26 cards: their honours, then C(26,13) splits for N/S and for E/W
    expected = {v: n * C(26, 13) ** 2 for v, n in _honour_law(26, HONOUR_POINTS).items()}
    d = distribution_of(Spec(), "hcp(north)+hcp(south)", sample=False)
    assert d.counts == expected


def test_controls_law_of_one_hand_from_aces_and_kings():
    expected = {v: n * OTHER_HANDS for v, n in _honour_law(13, [2] * 4 + [1] * 4).items()}
    assert distribution_of(Spec(), "controls(west)", sample=False).counts == expected


@pytest.mark.parametrize(("field", "top", "least"), [("top2", 2, 3), ("top3", 3, 5), ("top5", 5, 7)])
def test_whole_hand_top_n_in_json_and_in_a_script_is_the_honour_law(field, top, least):
    """JSON's whole-hand ``topN`` and the script's ``topN(north)``: how many
    of the 4N top cards the hand holds."""
    expected = sum(n for v, n in _honour_law(13, [1] * (4 * top)).items() if v >= least) * OTHER_HANDS
    from truedeal.engine import Plan

    by_json = Plan.build(load_spec({"north": {field: [least, 4 * top]}}))
    by_script = Plan.build(load_constraints(f"{field}(north) >= {least}"))
    assert by_json.exact and by_json.deals_total == by_script.deals_total == expected


def _suit_losers(length: int, akq: tuple[bool, bool, bool]) -> int:
    """The documented definition (docs/dealer-scripts.md), written out again here."""
    a, k, q = akq
    if length == 0:
        return 0
    if length == 1:
        return 0 if a else 1
    if length == 2:
        return 0 if a and k else 1 if a or k else 2
    return 3 - a - k - q


def test_losers_law_of_one_hand_by_a_suit_by_suit_generating_function():
    # per suit: which of A, K, Q are held, and how many of the 10 other cards
    law = {(0, 0): 1}  # (cards so far, losers so far) -> ways
    for _suit in range(4):
        nxt: dict[tuple[int, int], int] = {}
        for (cards, losers), ways in law.items():
            for mask in range(8):
                akq = (bool(mask & 1), bool(mask & 2), bool(mask & 4))
                for spots in range(11):
                    n = sum(akq) + spots
                    if cards + n <= 13:
                        key = (cards + n, losers + _suit_losers(n, akq))
                        nxt[key] = nxt.get(key, 0) + ways * C(10, spots)
        law = nxt
    expected = {lo: w * OTHER_HANDS for (cards, lo), w in law.items() if cards == 13}
    assert distribution_of(Spec(), "losers(north)", sample=False).counts == expected


def test_a_free_seat_s_mean_follows_from_symmetry():
    # north 20+: south, east and west share the other 40 - hcp(north) points alike
    spec = load_spec({"north": {"hcp": [20, 37]}})
    north = _mean({v: n for v, n in _honour_law(13, HONOUR_POINTS).items() if v >= 20})
    d = distribution_of(spec, "hcp(south)", sample=False)
    assert d.mean == (40 - north) / 3
    assert d.total == sum(n for v, n in _honour_law(13, HONOUR_POINTS).items() if v >= 20) * OTHER_HANDS


def test_given_equals_the_first_language_s_conditioned_counts():
    spec = load_spec({"east": {"hcp": [10, 12]}})
    d = distribution_of(spec, "hcp(east) given spades(east) >= 6", sample=False)
    direct = exact_distribution(load_spec({"east": {"hcp": [10, 12], "spades": [6, 13]}}), "hcp(east)")
    assert d.counts == direct.counts and d.total == direct.total


def test_shape_class_agrees_with_the_conditioning_route():
    spec = load_spec("examples/strong-nt.json")
    general = distribution_of(spec, "shape class of east", sample=False)
    assert general.counts == exact_distribution(spec, "shape class of east").counts


def test_a_script_spec_and_its_json_twin_give_the_same_law():
    script = load_constraints("condition hcp(north) >= 15 && hcp(north) <= 17 && spades(north) >= 5\n")
    twin = load_spec({"north": {"hcp": [15, 17], "spades": [5, 13]}})
    assert distribution_of(script, "top3(north, spades)", sample=False).counts == \
        distribution_of(twin, "top3(north, spades)", sample=False).counts


def test_an_estimate_is_labelled_and_near_the_closed_form():
    """hcp(N) * hcp(S) * hcp(E) needs more pieces than a listing takes
    (bounded.MAX_PIECES), so it is estimated.  Its mean has a closed form:
    over ordered triples of distinct honours (i in N, j in S, k in E, each
    with probability 13/52 * 13/51 * 13/50) the points multiply, and the sum
    of w_i w_j w_k over distinct triples is (sum w)^3 - 3 (sum w^2)(sum w) + 2 sum w^3."""
    w = HONOUR_POINTS
    s1, s2, s3 = sum(w), sum(x * x for x in w), sum(x**3 for x in w)
    expected = float(Fraction(s1**3 - 3 * s2 * s1 + 2 * s3) * Fraction(13**3, 52 * 51 * 50))
    d = distribution_of(Spec(), "hcp(north) * hcp(south) * hcp(east)", samples=20_000, seed="laws")
    assert isinstance(d, SampledDistribution) and d.n == 20_000
    out = d.to_json()
    assert out["exact"] is False and "estimate" in out["method"]
    assert abs(d.mean - expected) < 4 * d.mean_stderr


def test_double_dummy_estimates_draw_fewer_deals_by_default():
    assert default_samples(parse_query("tricks(north, notrumps)")) == DEFAULT_DD_SAMPLES
    assert default_samples(parse_query("hcp(north) * 2 given tricks(south, spades) >= 10")) == DEFAULT_DD_SAMPLES
    assert default_samples(parse_query("hcp(north) * hcp(south)")) > DEFAULT_DD_SAMPLES


def test_script_average_and_frequency_are_exact():
    script = load_constraints(
        "condition hcp(north) >= 20\n"
        'action average "south" hcp(south), frequency "north" (hcp(north), 20, 22)\n'
    )
    result = answer_script(script)
    law = {v: n * OTHER_HANDS for v, n in _honour_law(13, HONOUR_POINTS).items() if v >= 20}
    avg, freq = result.answers
    assert avg.exact and Fraction(avg.body["mean_exact"]) == (40 - _mean(law)) / 3
    rows = {r["value"]: r["deals"] for r in freq.body["rows"]}
    assert rows["low"] == 0 and [rows[v] for v in (20, 21, 22)] == [law[v] for v in (20, 21, 22)]
    assert rows["high"] == sum(n for v, n in law.items() if v > 22)
    assert result.deals == sum(law.values())


@pytest.mark.parametrize("expr, step, values", [
    ("100 * (hcp(north) >= 20)", 100, {0, 100}),
    ("2 * controls(west) + 4", 2, set(range(4, 29, 2))),
    ("hcp(north) - hcp(south)", 1, None),
])
def test_a_law_counts_only_the_values_its_form_allows(expr, step, values):
    """``100 * cond`` takes only 0 and 100 (the BBO scripts' percentages):
    the law asks one count for them, not a bisection of 0..100; the counts
    are those of the closed form, and each value is on the lattice."""
    from truedeal.analysis.general import engine_counter, lattice, numeric_law
    from truedeal.constraints import ir

    query = parse_query(expr)
    assert lattice(query.num)[1] == step
    asked = []
    counter = engine_counter(ir.Program())

    def count(cond):
        asked.append(cond)
        return counter(cond)

    law = numeric_law(query.num, ir.TRUE, math.comb(52, 13) * OTHER_HANDS, count)
    if values is not None:
        assert set(law) <= values and len(asked) <= 2 * len(values)
    if expr.startswith("100"):
        above = sum(n for v, n in _honour_law(13, HONOUR_POINTS).items() if v >= 20) * OTHER_HANDS
        assert law == {0: math.comb(52, 13) * OTHER_HANDS - above, 100: above} and len(asked) == 1


def test_a_script_counts_each_condition_once(monkeypatch):
    """The script's condition and each range of a law are listed once, however
    many actions ask for them (an exact count does not change)."""
    from truedeal.analysis import general

    general._exact_deals.cache_clear()
    builds = []
    real = general.Plan.build
    monkeypatch.setattr(general.Plan, "build", lambda *a, **k: builds.append(1) or real(*a, **k))
    script = load_constraints("condition hcp(north) >= 20\n"
                              "action average 100 * (hcp(south) >= 10), average 100 * (hcp(south) >= 10)\n")
    first, second = answer_script(script).answers
    assert first.body == second.body and len(builds) == 2  # the condition, then hcp(south) < 10 within it


# ----------------------------------------------------------------- the CLI


def _run(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_cli_json_has_the_documented_keys():
    r = _run("distribution", '{"north": {"hcp": [15, 17]}}', "--of", "controls(north)", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["exact"] is True and out["mean_exact"]
    assert sum(row["deals"] for row in out["distribution"]) == out["deals"]
    assert all(set(row) >= {"value", "deals", "probability_exact"} for row in out["distribution"])


def test_cli_refuses_with_exact_only_and_on_unknown_functions():
    r = _run("distribution", "{}", "--of", "hcp(north) * hcp(south) * hcp(east)", "--exact-only")
    assert r.exit_code == 2 and "not exact" in r.output
    r = _run("distribution", "{}", "--of", "foo(north)")
    assert r.exit_code == 2 and "unknown function 'foo'" in r.output and r.output.count("\n") == 1


def test_cli_answer_prints_the_exact_average():
    r = _run("answer", 'condition hcp(north) >= 20\naction average "south" hcp(south)\n', "--json")
    assert r.exit_code == 0, r.output
    (avg,) = json.loads(r.output)["actions"]
    assert avg["exact"] is True and avg["kind"] == "average"


@pytest.mark.parametrize("expr", ["hcp(north) +", "hcp(middle)", "x given y given z"])
def test_bad_expressions_are_one_line(expr):
    r = _run("distribution", "{}", "--of", expr)
    assert r.exit_code == 2 and r.output.count("\n") == 1
