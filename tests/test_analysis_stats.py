"""``truedeal stats`` catches a biased sampler, passes ours; the three commands end to end.

The biased sampler is Pavlicek's 1999 method (seed 001).  On a fixed 8=5=0=0
pattern with 4-24 HCP its only flaw is the one the article admits: it picks
the HCP from the one-hand table, ignoring the pattern.  With a fixed seed the
report must flag it, and must not flag truedeal's own deals of the same spec.

The threshold: the report flags when min p < 0.01 / k for k tests
(Bonferroni), and for our deals we ask min p > 1e-4 -- with about 50 tests a
uniform sampler falls below that with probability under 0.5 %, and the seed is
fixed, so the test is deterministic.
"""

from __future__ import annotations

import json
from functools import cache

import numpy as np
import pytest

from cli_runner import run
from truedeal.analysis.case_law import case_weights
from truedeal.analysis.pavlicek1999 import CannotExpress, Pavlicek1999
from truedeal.analysis.stats import StatsReport, case_test, run_stats
from truedeal.engine import Plan
from truedeal.evaluate import satisfies, valid
from truedeal.spec import load_spec

BIASED = {"north": {"hcp": [4, 24], "spades": 8, "hearts": 5, "diamonds": 0}}


@cache
def _biased_report(method: str) -> StatsReport:
    """The report on 3,000 deals of BIASED by ``method`` (seed "fixed"): two tests read it."""
    return run_stats(load_spec(BIASED), 3000, "fixed", method)


@cache
def _free_seats_report() -> StatsReport:
    """The report on 2,000 exact deals of North with 20-21 HCP (seed "c"): two tests read it."""
    return run_stats(load_spec({"north": {"hcp": [20, 21]}}), 2000, "c", "exact")


def test_pavlicek1999_is_flagged_and_exact_passes():
    biased = _biased_report("pavlicek1999")
    exact = _biased_report("exact")
    assert biased.flagged and biased.min_p_value < 1e-10
    hcp_test = next(t for t in biased.tests if t.name == "hcp(north)")
    assert hcp_test.p_value < 1e-10  # the HCP-by-pattern bias itself
    assert not exact.flagged and exact.min_p_value > 1e-4
    assert [t.name for t in exact.tests] == [t.name for t in biased.tests]
    # the plot data: exact P(HCP | 8500) sums to 1 and differs from the 1999 frequencies
    plot = biased.hcp_by_class[0]
    assert sum(plot.exact["8500"]) == pytest.approx(1)
    assert max(abs(a - b) for a, b in zip(plot.exact["8500"], plot.observed["8500"])) > 0.01


@pytest.mark.parametrize(
    "spec",
    [
        BIASED,
        {"west": {"hcp": [11, 15], "spades": [5, 6], "hearts": 4}, "east": {"hcp": 10, "diamonds": [4, 13]}},
        {"north": {"spades": [5, 13]}, "south": {"hcp": [6, 9]}, "east": {"clubs": [0, 2]}},
    ],
)
def test_pavlicek1999_deals_meet_the_spec(spec):
    spec = load_spec(spec)
    owners = Pavlicek1999(spec).deals(300, "s")
    assert valid(owners).all() and satisfies(owners, spec.constraints()).all()
    again = Pavlicek1999(spec).deals(300, "s")
    assert np.array_equal(owners, again)


def test_pavlicek1999_refuses_shapes_it_cannot_express():
    with pytest.raises(CannotExpress):
        Pavlicek1999(load_spec({"north": {"shape": "any 4333 + any 5332"}}))  # 5422 is in the box


def test_card_placement_among_free_seats_is_tested():
    report = _free_seats_report()
    cards = [t for t in report.tests if t.name.startswith("card ")]
    assert len(cards) == 52 and all(t.dof == 2 for t in cards)


def test_case_weights_are_pavlicek_s_cases_and_total():
    # closed form (analysis/case_law.py) against the listing's own case count and deal total
    for raw in (BIASED, {"east": {"hcp": [29, 37]}}, {"south": {"hcp": [0, 2], "shape": "any 4333"}}):
        spec = load_spec(raw)
        plan = Plan.build(spec)
        weights = case_weights(spec, spec.seats()[0][0])
        assert weights is not None and len(weights) == plan.summary().to_json()["cases"] and sum(weights.values()) == plan.deals_total


def test_case_test_passes_exact_deals_and_flags_the_1999_method():
    exact = next(t for t in _biased_report("exact").tests if t.name.startswith("cases of"))
    biased = next(t for t in _biased_report("pavlicek1999").tests if t.name.startswith("cases of"))
    assert exact.p_value > 1e-4 and biased.p_value < 1e-10
    assert exact.name == "cases of north (244)"


def test_free_seats_hcp_are_tested_against_one_exact_law():
    report = _free_seats_report()
    free = [t for t in report.tests if t.name.endswith(", free")]
    assert [t.name for t in free] == ["hcp(east), free", "hcp(south), free", "hcp(west), free"]
    assert min(t.p_value for t in free) > 1e-4


def test_no_case_test_for_two_seats_or_wide_listings():
    deals = np.zeros((0, 52), dtype=np.int8)  # the decision is made before any deal is looked at
    assert case_test(load_spec({"north": {"hcp": [20, 21]}, "south": {"hcp": [0, 1]}}), deals) is None
    assert case_test(load_spec({"north": {"hcp": [10, 12], "shape": "any 5xxx"}}), deals) is None  # > 5,000 cases


# ----------------------------------------------------------------- CLI
# Each command runs in this process through truedeal.cli.main, the console
# script's entry point (tests/cli_runner.py); tests/test_cli.py starts the
# installed script as a real process.


def test_cli_shapes_json_totals():
    out = json.loads(run("shapes", "--json").out)
    assert out["total"] == 635_013_559_600 and len(out["classes"]) == 39
    assert sum(r["count"] for r in out["classes"]) == out["total"]
    assert out["ordered_patterns"] == 560
    cond = json.loads(run("shapes", "--spec", '{"east": {"spades": 8, "hearts": 5, "diamonds": 0}}', "--seat", "E", "--json").out)
    seen = [r for r in cond["classes"] if r["count"]]
    assert len(cond["classes"]) == 39  # every class, the impossible ones with 0
    assert [r["class"] for r in seen] == ["8500"] and seen[0]["probability_exact"] == "1/1"


def test_cli_distribution_json_and_plot(tmp_path):
    png = tmp_path / "d.png"
    r = run("distribution", "-", "--of", "spades(north)", "--json", "--plot", str(png), stdin='{"north": {"spades": [7, 8]}}')
    assert r.returncode == 0, r.err
    out = json.loads(r.out)
    assert [row["value"] for row in out["distribution"]] == [7, 8]
    assert set(out["distribution"][0]) >= {"value", "deals", "probability_exact"}
    # P(7 | 7 or 8 spades) = C(13,7)C(39,6) / (C(13,7)C(39,6) + C(13,8)C(39,5))
    from math import comb

    a, b = comb(13, 7) * comb(39, 6), comb(13, 8) * comb(39, 5)
    from fractions import Fraction

    assert Fraction(out["distribution"][0]["probability_exact"]) == Fraction(a, a + b)
    assert Fraction(out["mean_exact"]) == Fraction(7 * a + 8 * b, a + b)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "args",
    [
        ("distribution", "{}", "--of", "hcp(north)+"),
        ("distribution", '{"north": {"hcp": 40}}', "--of", "hcp(north)"),
        ("distribution", '{"north": {"spades": 9, "hearts": 5}}', "--of", "hcp(north)"),
        ("stats", '{"north": {"shape": "any 4333 + any 5332"}}', "-n", "10", "--method", "pavlicek1999"),
        ("stats", "{}", "-n", "0"),
        ("shapes", "--seat", "middle"),
    ],
)
def test_cli_bad_input_is_one_line_exit_2(args):
    r = run(*args)
    assert r.returncode == 2, (r.out, r.err)
    assert r.err.count("\n") == 1 and r.err.startswith("truedeal: error:")


def test_cli_stats_json_and_html(tmp_path):
    html = tmp_path / "r.html"
    r = run("stats", json.dumps(BIASED), "-n", "1500", "--seed", "x", "--method", "pavlicek1999", "--json", "--html", str(html))
    assert r.returncode == 0, r.err
    out = json.loads(r.out)
    assert out["min_p_value"] == min(t["p_value"] for t in out["tests"]) and out["flagged"]
    assert {"name", "statistic", "dof", "p_value"} <= set(out["tests"][0])
    page = html.read_text()
    assert "data:image/png;base64," in page and "pavlicek1999" in page


def test_the_seats_a_condition_reads_are_not_free():
    """A JSON spec's condition reads its seats as seat fields do: the card
    tests run among the seats it does not read.  They ran among all four
    against 1/4 each, and flagged every deal of this spec (p < 1e-100)."""
    from truedeal.analysis.stats import free_seats

    spec = load_spec({"condition": "losers(north) <= 7 && losers(south) <= 8"})
    assert free_seats(spec) == [1, 3]
    report = run_stats(spec, 4000, seed="condition")
    assert any(t.name == "card SA among EW" for t in report.tests) and report.min_p_value > 1e-4
    assert free_seats(load_spec({"condition": "tricks(north, notrump) >= 9"})) == []  # double dummy reads every hand
    assert free_seats(load_spec({"condition": "hcp(north) >= 10 && rnd(2) == 0"})) == [1, 2, 3]  # rnd reads none
    assert free_seats(load_spec({"north": {"hcp": [15, 17]}, "condition": "spades(south) >= 5"})) == [1, 3]


def test_a_spec_with_no_law_to_test_says_so():
    """Three seats read in a condition, one free: no test applies, and the
    report says so instead of "ok" over no test at all."""
    spec = {"condition": "hcp(north) >= 10 && spades(east) >= 5 && hearts(south) >= 5"}
    report = run_stats(load_spec(spec), 500, seed="none")
    assert not report.tests and report.notes[0].startswith("no test applies")
    out = run("stats", "-n", "500", "--seed", "none", json.dumps(spec))
    assert out.returncode == 0 and "no test: nothing to compare the deals with" in out.out and "ok:" not in out.out
