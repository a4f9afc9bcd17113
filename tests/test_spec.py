"""Tests for truedeal.spec: loading, validation messages, engine form, canonical form."""

from __future__ import annotations

import dataclasses
import json
from itertools import product
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from truedeal.patterns import PATTERNS
from truedeal.shapes import parse_shape
from truedeal.spec import FIELD_NAMES, SeatConstraint, SeatSpec, Spec, SpecError, load_spec

EXAMPLE = {
    "north": {"hcp": [15, 17], "shape": "any 4333 + any 4432 + any 5332"},
    "south": {"hcp": [0, 7], "shape": "5xxx + x5xx"},
    "west": {"spades": 9},
    "east": {"diamonds": [6, 13], "clubs": 6},
}

ALL_SHAPES = [p for p in product(range(14), repeat=4) if sum(p) == 13]

FIELDS = ("(fields are hcp, spades, hearts, diamonds, clubs, shape, controls, losers, top2, top3, top4, top5, cccc, points, holds,"
          " any_of, not)")


def mask_set(mask: np.ndarray) -> set[tuple[int, ...]]:
    return {tuple(int(x) for x in PATTERNS[i]) for i in np.flatnonzero(mask)}


def error_of(source) -> str:
    with pytest.raises(SpecError) as info:
        load_spec(source)
    msg = str(info.value)
    assert "\n" not in msg and "\r" not in msg, msg
    assert isinstance(info.value, ValueError)
    return msg


# ----------------------------------------------------------------- loading


def test_load_from_dict_json_and_path(tmp_path: Path):
    a = load_spec(EXAMPLE)
    b = load_spec(json.dumps(EXAMPLE))
    f = tmp_path / "spec.json"
    f.write_text(json.dumps(EXAMPLE, indent=2))
    c = load_spec(f)
    d = load_spec(str(f))
    e = load_spec(json.dumps(EXAMPLE).encode())
    assert a == b == c == d == e
    assert load_spec(a) is a


def test_example_values():
    s = load_spec(EXAMPLE)
    assert s.north.hcp == (15, 17)
    assert s.west.spades == (9, 9)
    assert s.east.clubs == (6, 6) and s.east.diamonds == (6, 13)
    assert s.south.shape == "5xxx + x5xx"


def test_empty_spec():
    assert load_spec({}) == Spec()
    assert load_spec({}).constraints() == []
    assert load_spec({}).canonical() == {}


# ----------------------------------------------------------------- aliases


@pytest.mark.parametrize("key, seat", [("north", 0), ("N", 0), ("n", 0), ("east", 1), ("E", 1), ("e", 1),
                                       ("south", 2), ("S", 2), ("s", 2), ("west", 3), ("W", 3), ("w", 3)])
def test_seat_aliases(key, seat):
    s = load_spec({key: {"hcp": 10}})
    (c,) = s.constraints()
    assert c.seat == seat and c.hcp == (10, 10) and c.patterns is None
    full = ("north", "east", "south", "west")[seat]
    assert s == load_spec({full: {"hcp": 10}})
    assert s.canonical() == {full: {"hcp": [10, 10]}}


def test_aliases_via_constructor():
    assert Spec(N={"hcp": 5}) == Spec(north={"hcp": 5}) == Spec(north=SeatSpec(hcp=5))


@pytest.mark.parametrize("a, b", [("north", "N"), ("N", "n"), ("w", "west"), ("S", "south")])
def test_duplicate_seat(a, b):
    msg = error_of({a: {"hcp": 1}, b: {"hcp": 2}})
    assert "twice" in msg and repr(a) in msg and repr(b) in msg


def test_literal_duplicate_key_in_json():
    msg = error_of('{"north": {"hcp": 1}, "north": {"hcp": 2}}')
    assert "'north' appears twice" in msg
    msg = error_of('{"north": {"hcp": 1, "hcp": 2}}')
    assert "'hcp' appears twice" in msg


# ----------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "spec, expected",
    [
        ({"north": {"hcp": [17, 15]}}, "north.hcp: range [17, 15] is reversed"),
        ({"south": {"shape": "5xx"}}, "south.shape: bad term '5xx' (a term is 4 characters, digits or x)"),
        ({"northh": {}}, "unknown key 'northh' (keys are north, east, south, west (or N, E, S, W), condition, script and any_of)"),
        ({"west": {"spadez": 9}},
         "west.spadez: unknown field " + FIELDS),
        ({"W": {"spadez": 9}},
         "west.spadez: unknown field " + FIELDS),
        ({"north": {"hcp": 38}}, "north.hcp: 38 is out of range (0..37)"),
        ({"north": {"hcp": -1}}, "north.hcp: -1 is out of range (0..37)"),
        ({"east": {"hearts": 14}}, "east.hearts: 14 is out of range (0..13)"),
        ({"east": {"clubs": [2, 14]}}, "east.clubs: 14 in [2, 14] is out of range (0..13)"),
        ({"east": {"diamonds": [5, 4]}}, "east.diamonds: range [5, 4] is reversed"),
        ({"north": {"hcp": True}}, "north.hcp: expected an integer or [min, max], got boolean true"),
        ({"north": {"hcp": [True, 5]}}, "north.hcp: range bounds must be integers, got true in [true, 5]"),
        ({"north": {"hcp": 12.0}}, "north.hcp: expected an integer or [min, max], got number 12.0"),
        ({"north": {"hcp": "12"}}, 'north.hcp: expected an integer or [min, max], got string "12"'),
        ({"north": {"hcp": [1, 2, 3]}}, "north.hcp: expected [min, max], got an array of 3 items: [1, 2, 3]"),
        ({"north": {"hcp": [1]}}, "north.hcp: expected [min, max], got an array of 1 items: [1]"),
        ({"north": {"hcp": {"min": 1}}}, "north.hcp: expected an integer or [min, max], got object"),
        ({"north": {"shape": 4333}}, "north.shape: expected a shape expression string, got integer 4333"),
        ({"north": {"shape": "4332"}}, "north.shape: term '4332' sums to 12, not 13"),
        ({"north": {"shape": ""}}, "north.shape: empty shape expression"),
        ({"north": 5}, "north: expected an object " + FIELDS),
        ({"north": [1, 2]}, "north: expected an object"),
        ({"North": {}}, "unknown key 'North'"),
        ({"nesw": {}}, "unknown key 'nesw'"),
        ({"north": {"holds": ["SA", "AS"]}}, "north.holds: card SA is given twice"),
        ({"north": {"holds": ["SA", "HK"]}, "s": {"holds": ["HK"]}}, "card HK is held by north and by south"),
        ({"north": {"holds": ["SA"]}, "script": "predeal south SA\nhcp(north) > 10"},
         "card SA is held by north and by south (the script's predeal)"),
    ],
)
def test_error_messages(spec, expected):
    assert error_of(spec).startswith(expected)


@pytest.mark.parametrize("seat, script", [
    ({"spades": {"points": {"scale": [6, 4, 2, 1], "range": [6, 9]}}},
     "condition c13(north, spades) >= 6 && c13(north, spades) <= 9"),
    ({"hcp": [11, 15], "hearts": {"length": [5, 13], "points": {"scale": [3, 2, 1], "range": [4, 6]}}},
     "altcount 0 3 2 1\n"
     "condition hcp(north) >= 11 && hcp(north) <= 15 && hearts(north) >= 5 && pt0(north, hearts) >= 4 && pt0(north, hearts) <= 6"),
    ({"clubs": {"points": {"scale": [0, 0, 0, 0, 1], "range": [1, 1]}}, "diamonds": {"points": {"scale": [4, 3, 2, 1], "range": 0}}},
     "pointcount 0 0 0 0 1\ncondition hcp(north, clubs) == 1 && top4(north, diamonds) == 0"),  # hcp reads tens alone
], ids=["c13", "altcount", "pointcount"])
def test_points_of_a_suit_count_as_a_scripts_scale_on_that_suit(seat, script):
    """A suit's ``points`` is the seat-level ``points`` read on that suit
    alone: exactly as many deals as the dealer script with that scale
    (``north.spades.points`` was an unknown field)."""
    from truedeal.constraints.load import load_constraints
    from truedeal.engine import Plan

    spec = load_spec({"north": seat})
    assert load_spec(spec.canonical()) == spec
    deals = Plan.build_to_count(spec).summary().deals
    assert deals == Plan.build_to_count(load_constraints(script)).summary().deals
    assert 0 < deals < 53_644_737_765_488_792_839_237_440_000


def test_an_unknown_field_of_a_suit_or_a_scale_names_the_right_fields():
    assert error_of({"north": {"spades": {"lenght": 5}}}) == (
        "north.spades.lenght: unknown field (fields of a suit are length, hcp, controls, losers, points, top2, top3, top4, top5,"
        " quality)")
    assert error_of({"north": {"points": {"scale": [1], "range": 1, "ranges": 2}}}) == (
        "north.points.ranges: unknown field (fields of points are scale, range)")


def test_error_messages_through_json_text():
    assert error_of('{"north": {"hcp": [17, 15]}}') == "north.hcp: range [17, 15] is reversed"
    assert error_of('{"n": {"hcp": true}}').startswith("north.hcp: expected an integer")


def test_top_level_not_object():
    assert error_of("[1, 2]") == "a spec must be a JSON object, got array [1, 2]"
    assert "not list" in error_of([1, 2])  # type: ignore[arg-type]
    assert "not int" in error_of(5)  # type: ignore[arg-type]


def test_several_problems_reported_on_one_line():
    msg = error_of({"north": {"hcp": [17, 15]}, "south": {"shape": "5xx"}})
    assert msg == "north.hcp: range [17, 15] is reversed (and 1 more problem)"


def test_long_values_are_shortened():
    msg = error_of({"north": {"hcp": "x" * 1000}})
    assert len(msg) < 120


def test_braces_in_values_are_harmless():
    msg = error_of({"north": {"hcp": "{message}"}})
    assert '"{message}"' in msg


def test_invalid_json_file(tmp_path: Path):
    f = tmp_path / "spec.json"
    f.write_text('{\n  "north": {"hcp": 5},\n  "south" {}\n}\n')
    msg = error_of(f)
    assert msg == f"{f}: not valid JSON at line 3 column 11: Expecting ':' delimiter"
    f.write_text('{\n  "north": {"hcp": 5}\n    "south": {}\n}\n')
    assert error_of(f) == f"{f}: not valid JSON at line 3 column 5: Expecting ',' delimiter"


def test_invalid_json_text():
    assert error_of('{"north": ').startswith("spec: not valid JSON at line 1 column 11: ")


def test_missing_file(tmp_path: Path):
    missing = tmp_path / "x.json"
    assert error_of(missing) == f"cannot read spec file {missing}: No such file or directory"
    assert error_of(str(missing)) == f"cannot read spec file {missing}: No such file or directory"


def test_directory_and_non_utf8(tmp_path: Path):
    assert error_of(tmp_path).startswith(f"cannot read spec file {tmp_path}: ")
    f = tmp_path / "bad.json"
    f.write_bytes(b"\xff\xfe{}")
    assert error_of(f) == f"cannot read spec file {f}: not UTF-8 text"


# ----------------------------------------------------------------- engine form


def test_constraints_of_example():
    cs = load_spec(EXAMPLE).constraints()
    assert [c.seat for c in cs] == [0, 1, 2, 3]
    north, east, south, west = cs
    assert north.hcp == (15, 17)
    assert mask_set(north.patterns) == {
        p for p in ALL_SHAPES if sorted(p, reverse=True) in ([4, 3, 3, 3], [4, 4, 3, 2], [5, 3, 3, 2])
    }
    assert east.hcp is None
    assert mask_set(east.patterns) == {p for p in ALL_SHAPES if p[3] == 6 and 6 <= p[2] <= 13}
    assert south.hcp == (0, 7)
    assert mask_set(south.patterns) == {p for p in ALL_SHAPES if p[0] == 5 or p[1] == 5}
    assert west.hcp is None and west.patterns.sum() == 15


def test_constraints_shape_intersected_with_suit_ranges():
    (c,) = load_spec({"s": {"shape": "any 5332", "hearts": [3, 5], "clubs": 2}}).constraints()
    assert c.seat == 2
    assert mask_set(c.patterns) == {(3, 5, 3, 2), (5, 3, 3, 2), (3, 3, 5, 2)}


def test_constraints_only_constrained_seats_in_order():
    s = load_spec({"W": {"hcp": 3}, "north": {}, "east": None, "S": {"hearts": 0}})
    cs = s.constraints()
    assert [c.seat for c in cs] == [2, 3]
    assert cs[0].hcp is None and mask_set(cs[0].patterns) == {p for p in ALL_SHAPES if p[1] == 0}
    assert cs[1].patterns is None and cs[1].hcp == (3, 3)


def test_empty_mask_is_allowed():
    (c,) = load_spec({"north": {"spades": 7, "hearts": 7}}).constraints()
    assert c.patterns is not None and not c.patterns.any()
    (c,) = load_spec({"north": {"shape": "5xxx - 5xxx"}}).constraints()
    assert not c.patterns.any()


def test_seat_constraint_contract():
    (c,) = load_spec({"north": {"shape": "any 4333"}}).constraints()
    assert c.patterns.dtype == np.bool_ and c.patterns.shape == (560,)
    with pytest.raises(ValueError):
        c.patterns[0] = True  # read-only
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.seat = 1  # frozen
    same = SeatConstraint(0, c.patterns.copy(), None)
    assert same == c and hash(same) == hash(c)
    assert SeatConstraint(0, None, (1, 2)) != c
    with pytest.raises(ValueError):
        SeatConstraint(4, None, None)
    with pytest.raises(ValueError):
        SeatConstraint(0, np.ones(10, dtype=bool), None)


# ----------------------------------------------------------------- canonical form


def test_canonical_of_example():
    canon = load_spec(EXAMPLE).canonical()
    assert canon == {
        "north": {"hcp": [15, 17], "shape": "any 4333 + any 4432 + any 5332"},
        "east": {"diamonds": [6, 13], "clubs": [6, 6]},
        "south": {"hcp": [0, 7], "shape": "5xxx + x5xx"},
        "west": {"spades": [9, 9]},
    }
    assert list(canon) == ["north", "east", "south", "west"]
    assert list(canon["east"]) == ["diamonds", "clubs"]
    assert json.loads(json.dumps(canon)) == canon


def test_canonical_ignores_spelling():
    a = load_spec({"S": {"shape": "any4333+ANY 4432", "clubs": 3, "hcp": [12, 14]}, "n": {"hcp": [1, 1]}})
    b = load_spec({"north": {"hcp": 1}, "south": {"hcp": [12, 14], "clubs": [3, 3], "shape": "any 4333 + any 4432"}})
    assert a == b
    assert json.dumps(a.canonical()) == json.dumps(b.canonical())
    assert a.canonical_json() == b.canonical_json()
    assert a.canonical()["south"]["shape"] == "any 4333 + any 4432"
    assert list(a.canonical()["south"]) == ["hcp", "clubs", "shape"]


def test_empty_seats_do_not_change_key():
    assert load_spec({"north": {}, "E": None, "w": {"hcp": None}}).canonical() == {}
    assert load_spec({"north": {}, "south": {"hcp": 3}}) == load_spec({"south": {"hcp": 3}})


def test_json_schema_has_descriptions():
    schema = Spec.model_json_schema()
    root = schema["$defs"]["Spec"] if "$ref" in schema else schema  # recursive through any_of
    assert root["additionalProperties"] is False
    assert set(root["properties"]) == {"north", "east", "south", "west", "condition", "script", "any_of"}
    seat = schema["$defs"]["SeatSpec"]
    assert set(seat["properties"]) == set(FIELD_NAMES)
    assert all("description" in v for v in seat["properties"].values())
    assert "examples" in seat["properties"]["shape"]


ranges13 = st.one_of(
    st.integers(0, 13),
    st.tuples(st.integers(0, 13), st.integers(0, 13)).map(lambda t: [min(t), max(t)]),
)
ranges37 = st.one_of(
    st.integers(0, 37),
    st.tuples(st.integers(0, 37), st.integers(0, 37)).map(lambda t: [min(t), max(t)]),
)
digit_terms = st.sampled_from(["".join(map(str, p)) for p in ALL_SHAPES if max(p) <= 9])
x_terms = st.sampled_from(["5xxx", "x5xx", "xx6x", "xxx4", "4x4x", "xxxx", "7xx0", "6X7x"])
shape_exprs = st.lists(
    st.tuples(st.sampled_from(["+", "-", " + ", " - "]), st.booleans(), st.one_of(digit_terms, x_terms)),
    min_size=1,
    max_size=4,
).map(lambda parts: "".join((op if i else "") + ("any " if a else "") + t for i, (op, a, t) in enumerate(parts)))

seat_specs = st.fixed_dictionaries(
    {},
    optional={
        "hcp": ranges37,
        "spades": ranges13,
        "hearts": ranges13,
        "diamonds": ranges13,
        "clubs": ranges13,
        "shape": shape_exprs,
    },
)


@st.composite
def specs(draw):
    out = {}
    for full, letter in zip(("north", "east", "south", "west"), "NESW"):
        if draw(st.booleans()):
            key = draw(st.sampled_from([full, letter, letter.lower()]))
            out[key] = draw(seat_specs)
    keys = list(out)
    order = draw(st.permutations(keys))
    return {k: out[k] for k in order}


@settings(max_examples=200, deadline=None)
@given(specs())
def test_round_trip_through_canonical(raw):
    spec = load_spec(raw)
    canon = spec.canonical()
    again = load_spec(canon)
    assert again == spec
    assert again.canonical() == canon
    assert json.dumps(again.canonical()) == json.dumps(canon)
    assert load_spec(json.dumps(canon)) == spec
    # the engine form is the same either way
    assert spec.constraints() == again.constraints()
    # canonical keys are full names in N E S W order, fields in fixed order
    order = ["north", "east", "south", "west"]
    assert list(canon) == [s for s in order if s in canon]
    fields = ["hcp", "spades", "hearts", "diamonds", "clubs", "shape"]
    for seat in canon.values():
        assert list(seat) == [f for f in fields if f in seat]
        for f, v in seat.items():
            if f != "shape":
                assert isinstance(v, list) and len(v) == 2 and v[0] <= v[1]


@settings(max_examples=100, deadline=None)
@given(specs())
def test_constraints_match_brute_force(raw):
    spec = load_spec(raw)
    for c in spec.constraints():
        name = ("north", "east", "south", "west")[c.seat]
        seat = getattr(spec, name)
        if c.patterns is None:
            assert seat.shape is None and all(getattr(seat, s) is None for s in ("spades", "hearts", "diamonds", "clubs"))
            continue
        expected = set(ALL_SHAPES)
        for i, s in enumerate(("spades", "hearts", "diamonds", "clubs")):
            r = getattr(seat, s)
            if r is not None:
                expected = {p for p in expected if r[0] <= p[i] <= r[1]}
        if seat.shape is not None:  # parse_shape itself is checked by brute force in test_shapes
            expected &= mask_set(parse_shape(seat.shape))
        assert mask_set(c.patterns) == expected
        assert c.hcp == seat.hcp
