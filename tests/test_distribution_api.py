"""POST /api/distribution against the real app (count helper processes, Redis db 14).

The law itself is checked against independent calculations in
tests/test_laws.py; here: the API gives the library's answer, through the
helpers, with problem+json for every bad input, under the count time limit
and behind the API's guard (keys), as the sets routes are.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from truedeal.analysis.laws import distribution_of
from truedeal.engine import Plan
from truedeal.spec import load_spec
from web_support import assert_problem, scoped_namespace, web_app_factory

NT = {"north": {"hcp": [15, 17], "shape": "any 4333 + any 4432 + any 5332"}}


@pytest.fixture(scope="module")
def ns():
    yield from scoped_namespace("dist")


@pytest.fixture(scope="module")
def make_app(ns):
    yield from web_app_factory(ns)


@pytest.fixture(scope="module")
def client(make_app):
    return make_app().test_client()


def _post(client, body, **kw):
    return client.post("/api/distribution", json=body, **kw)


def test_exact_law_is_the_library_s_and_sums_to_the_count(client):
    r = _post(client, {"constraints": NT, "of": "spades(north)+spades(south)"})
    assert r.status_code == 200 and r.mimetype == "application/json"
    out = r.get_json()
    want = distribution_of(load_spec(NT), "spades(north)+spades(south)").to_json()
    assert out["exact"] is True and out["distribution"] == [dict(row, deals_text=str(row["deals"])) for row in want["distribution"]]
    assert out["deals"] == Plan.build(load_spec(NT)).deals_total == sum(row["deals"] for row in out["distribution"])
    assert out["deals_text"] == str(out["deals"]) and Fraction(out["mean_exact"]) == Fraction(want["mean_exact"])


def test_a_script_is_accepted_as_constraints(client):
    script = "condition hcp(north) >= 20\n"
    r = _post(client, {"constraints": {"script": script}, "of": "controls(north) given hcp(north) >= 22"})
    assert r.status_code == 200, r.get_json()
    want = distribution_of(load_spec({"script": script}), "controls(north) given hcp(north) >= 22")
    assert {row["value"]: row["deals"] for row in r.get_json()["distribution"]} == want.counts


def test_an_estimate_is_labelled(client):
    r = _post(client, {"constraints": {}, "of": "hcp(north) * hcp(south) * hcp(east)"})  # past the exact pieces
    assert r.status_code == 200
    out = r.get_json()
    assert out["exact"] is False and "estimate" in out["method"] and out["samples"] > 0
    assert all("stderr" in row for row in out["distribution"])


@pytest.mark.parametrize(
    "body, pointer",
    [
        ({"constraints": NT, "of": "foo(north)"}, "/of"),
        ({"constraints": NT, "of": "hcp(north) +"}, "/of"),
        ({"constraints": NT, "of": ""}, "/of"),
        ({"constraints": NT, "of": 3}, "/of"),
        ({"constraints": NT, "of": "x" * 501}, "/of"),
        ({"constraints": NT}, "/of"),
        ({"of": "hcp(north)"}, "/constraints"),
        ({"constraints": NT, "of": "hcp(north)", "extra": 1}, "/extra"),
        ({"constraints": {"north": {"hcp": [17, 15]}}, "of": "hcp(north)"}, "/constraints/north/hcp"),
        ({"constraints": {"north": {"hcp": 30, "spades": 13}}, "of": "hcp(north)"}, "/constraints"),  # no deal fits
    ],
)
def test_bad_input_is_a_problem_with_a_pointer(client, body, pointer):
    problem = assert_problem(_post(client, body), 422)
    assert problem["errors"][0]["pointer"] == pointer, problem
    assert "\n" not in problem["detail"]


def test_not_json_is_refused(client):
    assert_problem(client.post("/api/distribution", data="{}", content_type="text/plain"), 415)
    assert_problem(client.post("/api/distribution", data="{", content_type="application/json"), 400)
    assert_problem(_post(client, ["hcp(north)"]), 422)


def test_a_slow_law_stops_at_the_count_time_limit(make_app):
    # south's HCP law under a 1NT opener takes several exact counts (seconds in all); 0.5 s is not enough
    client = make_app(count_timeout=0.5).test_client()
    problem = assert_problem(_post(client, {"constraints": NT, "of": "hcp(south)"}), 422, "count-timeout")
    assert "takes more than" in problem["detail"]


def test_the_api_guard_covers_distribution_and_sets(make_app):
    client = make_app(api_keys="k-one").test_client()
    assert_problem(_post(client, {"constraints": NT, "of": "hcp(north)"}), 401)
    assert_problem(client.post("/api/sets", json={"set": {}}), 401)
    ok = _post(client, {"constraints": NT, "of": "hcp(north)"}, headers={"Authorization": "Bearer k-one"})
    assert ok.status_code == 200
