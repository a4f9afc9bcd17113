"""Tests of the ``truedeal`` command line.

Each command runs in this process through ``truedeal.cli.main`` (the console
script's entry point, with its one-line errors and exit codes), with stdin,
stdout and stderr isolated by click's test runner.  A few end-to-end tests
start a real process: the installed console script, and a broken pipe.  Expected values come
from the seeds (Pavlicek 2008 tables, article 7Z68), from the card order of
7Z68, or from the independent helpers below (a PBN/LIN/text reader, an HCP and
shape checker) -- never from the code under test.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from functools import cache
from itertools import permutations
from math import comb, factorial
from pathlib import Path

import pytest

from cli_runner import run
from truedeal.engine import MAX_DEALS
from truedeal.formats import parse_deal

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
CLI = [sys.executable, "-m", "truedeal.cli"]

D = factorial(52) // factorial(13) ** 4
C26 = comb(26, 13)
C39 = factorial(39) // factorial(13) ** 3

RANKS = "AKQJT98765432"
SUITS = "SHDC"
SEATS = "NESW"
HCP_OF = {"A": 4, "K": 3, "Q": 2, "J": 1}
#: 7Z68 card order: SA HA DA CA SK ... C2.
ORDER = [s + r for r in RANKS for s in SUITS]
#: Vulnerability of boards 1..16 (standard rotation).
VUL16 = ["None", "NS", "EW", "All", "NS", "EW", "All", "None", "EW", "All", "None", "NS", "All", "None", "NS", "EW"]

BALANCED = "any 4333 + any 4432 + any 5332"
#: Spec used for the format tests: HCP and shape on North, HCP alone on South.
GEN_SPEC = {"north": {"hcp": [11, 15], "shape": "45xx"}, "south": {"hcp": [8, 12]}}
GEN_SPEC_JSON = json.dumps(GEN_SPEC)
SEED = "cli test seed"
FORMATS = ("numbers", "pbn", "json", "text", "lin")


# ---------------------------------------------------------------------------
# Running the CLI


def ok(*args: str, **kw) -> str:
    """Run the CLI, require exit 0 and a clean stderr, return stdout as text."""
    p = run(*args, **kw)
    err = p.stderr.decode(errors="replace")
    assert p.returncode == 0, f"truedeal {' '.join(args)}: exit {p.returncode}: {err}"
    assert "Traceback" not in err
    return p.stdout.decode()


def error_line(p) -> str:
    """Check the one-line-error contract (exit 2, one stderr line, no traceback); return the line."""
    err = p.stderr.decode(errors="replace")
    assert p.returncode == 2, f"exit {p.returncode}, stderr {err!r}"
    assert "Traceback" not in err, err
    lines = err.splitlines()
    assert len(lines) == 1, f"expected exactly one stderr line, got {lines!r}"
    assert lines[0].startswith("truedeal: error:"), lines[0]
    return lines[0]


def gen_args(fmt: str, n: int, seed: str = SEED, first_board: int | None = None, spec: str = GEN_SPEC_JSON):
    args = ["generate", spec, "-n", str(n), "--format", fmt, "--seed", seed]
    if first_board is not None:
        args += ["--first-board", str(first_board)]
    return args


@cache
def gen(fmt: str, n: int, seed: str = SEED, first_board: int | None = None, spec: str = GEN_SPEC_JSON) -> bytes:
    p = run(*gen_args(fmt, n, seed, first_board, spec))
    assert p.returncode == 0, p.stderr.decode()
    assert not p.stderr, p.stderr.decode()
    return p.stdout


#: gen() calls made by the tests, started ahead.
GEN_CALLS = (
    [(fmt, 10) for fmt in ("json", "numbers", "pbn", "text", "lin")]
    + [("json", 2)]
    + [(fmt, 3) for fmt in ("numbers", "pbn", "json", "text", "lin")]
    + [("numbers", 4100), ("numbers", 4097), ("numbers", 3, "another seed")]
    + [("json", 10, SEED, 8)]
    + [(fmt, 3, SEED, 17) for fmt in ("pbn", "lin", "text")]
)


def write_spec(tmp_path: Path, spec, name: str = "spec.json") -> str:
    path = tmp_path / name
    path.write_text(spec if isinstance(spec, str) else json.dumps(spec), encoding="utf-8")
    return str(path)


# ---------------------------------------------------------------------------
# Independent readers and checkers


def hands_of(deal: str) -> dict[str, list[str]]:
    """``{"N": [spades, hearts, diamonds, clubs], ...}`` of a PBN deal string."""
    first, rest = deal.strip().split(":", 1)
    start = SEATS.index(first.upper())
    hands = rest.split()
    assert len(hands) == 4, deal
    out = {}
    for k, hand in enumerate(hands):
        suits = hand.split(".")
        assert len(suits) == 4, deal
        out[SEATS[(start + k) % 4]] = [s.upper().replace("10", "T") for s in suits]
    return out


def cards_of(hands: dict[str, list[str]]) -> dict[str, frozenset[str]]:
    return {seat: frozenset(SUITS[i] + r for i, h in enumerate(hs) for r in h) for seat, hs in hands.items()}


def check_complete(hands: dict[str, list[str]]) -> dict[str, frozenset[str]]:
    cards = cards_of(hands)
    assert set(cards) == set(SEATS)
    for seat, cs in cards.items():
        assert len(cs) == 13, (seat, sorted(cs))
        assert sum(len(h) for h in hands[seat]) == 13, (seat, hands[seat])
    assert frozenset().union(*cards.values()) == frozenset(ORDER)
    return cards


def parsed(deal: str) -> dict[str, frozenset[str]]:
    """The cards of each seat as truedeal.formats.parse_deal reads ``deal``."""
    row = parse_deal(deal)
    return {SEATS[s]: frozenset(ORDER[c] for c in range(52) if row[c] == s) for s in range(4)}


def hcp(hand: list[str]) -> int:
    return sum(HCP_OF.get(r, 0) for suit in hand for r in suit)


def shape_ok(expr: str, lengths: tuple[int, ...]) -> bool:
    """Evaluate a dealer-style shape expression (terms joined by + and -, left to right)."""
    tokens = re.findall(r"[+-]|(?:any\s*)?[0-9xX]{4}", expr)
    assert "".join(tokens).replace(" ", "") == expr.replace(" ", ""), expr

    def term(t: str) -> bool:
        anyp = t.startswith("any")
        chars = t[3:].strip() if anyp else t
        orders = set(permutations(lengths)) if anyp else {lengths}
        return any(all(c in "xX" or int(c) == n for c, n in zip(chars, o)) for o in orders)

    result, op = False, "+"
    for t in tokens:
        if t in "+-":
            op = t
            continue
        result = (result or term(t)) if op == "+" else (result and not term(t))
    return result


def in_range(value: int, rng) -> bool:
    lo, hi = (rng, rng) if isinstance(rng, int) else rng
    return lo <= value <= hi


def satisfies(spec: dict, hands: dict[str, list[str]]) -> bool:
    for key, seat_spec in spec.items():
        seat = key[0].upper()
        hand = hands[seat]
        lengths = tuple(len(s) for s in hand)
        for field, want in (seat_spec or {}).items():
            if field == "hcp":
                good = in_range(hcp(hand), want)
            elif field == "shape":
                good = shape_ok(want, lengths)
            else:
                good = in_range(lengths[("spades", "hearts", "diamonds", "clubs").index(field)], want)
            if not good:
                return False
    return True


def parse_lin_hand(text: str) -> list[str]:
    out, suit = ["", "", "", ""], None
    for ch in text:
        if ch in SUITS:
            suit = SUITS.index(ch)
        else:
            assert suit is not None and ch in RANKS, text
            out[suit] += ch
    return out


def lin_deals(text: str) -> list[tuple[int, dict[str, frozenset[str]]]]:
    out = []
    for line in text.splitlines():
        m = re.fullmatch(r"qx\|o(\d+)\|md\|([1-4])([^|]*)\|rh\|\|ah\|Board (\d+)\|sv\|([0neb])\|pg\|\|", line)
        assert m, line
        assert m.group(1) == m.group(4)
        south, west, north = (parse_lin_hand(h) for h in m.group(3).split(","))
        cards = cards_of({"S": south, "W": west, "N": north})
        cards["E"] = frozenset(ORDER) - cards["S"] - cards["W"] - cards["N"]
        out.append((int(m.group(1)), cards))
    return out


def text_blocks(text: str) -> list[tuple[str, str | None, dict[str, list[str]]]]:
    """``(title, deal number or None, hands)`` of each compass diagram."""
    out = []
    for block in text.rstrip("\n").split("\n\n"):
        lines = block.split("\n")
        title = lines.pop(0)
        number = None
        if lines[0].startswith("Deal number "):
            number = lines.pop(0)[len("Deal number "):]
        assert len(lines) == 12, block

        def holding(cell: str, suit: int) -> str:
            label, ranks = cell.split()
            assert label == SUITS[suit], cell
            return "" if ranks == "-" else ranks

        north = [holding(lines[i], i) for i in range(4)]
        west = [holding(lines[4 + i][:20], i) for i in range(4)]
        east = [holding(lines[4 + i][40:], i) for i in range(4)]
        south = [holding(lines[8 + i], i) for i in range(4)]
        out.append((title, number, {"N": north, "E": east, "S": south, "W": west}))
    return out


def pbn_games(text: str) -> list[dict[str, str]]:
    games = []
    for chunk in text.split("\n\n"):
        tags = dict(re.findall(r'^\[(\w+) "([^"]*)"\]$', chunk, flags=re.MULTILINE))
        if "Deal" in tags:
            games.append(tags)
    return games


def json_records(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


# ---------------------------------------------------------------------------
# count


SEED_TABLES = [
    # (spec, side total, unconstrained ways, cases) -- Pavlicek 2008.
    ({"west": {"spades": 9}, "east": {"diamonds": 6, "clubs": 6}}, 556_991_252_532_000, C26, 30),
    ({"north": {"hcp": 3}}, 15_636_342_960, C39, 24),
    ({"north": {"hcp": 2}, "south": {"hcp": [0, 1]}}, 122_891_799_377_692_800, C26, 38),
    ({"east": {"shape": "any 5332", "hcp": 34}}, 756, C39, 48),
]


@pytest.mark.parametrize("spec,side,free,cases", SEED_TABLES, ids=["9S-66", "N3", "N2-S01", "E34-5332"])
def test_count_json_seed_tables(spec, side, free, cases):
    info = json.loads(ok("count", json.dumps(spec), "--json"))
    assert int(str(info["deals"])) == side * free
    assert int(str(info["side_total"])) == side
    assert int(str(info["unconstrained_ways"])) == free
    assert info["cases"] == cases
    assert info["possible"] is True
    num, den = map(int, info["probability_exact"].split("/"))
    assert num * D == den * side * free
    assert info["probability"] == pytest.approx(side * free / D)


def test_count_plain_mentions_probability():
    out = ok("count", json.dumps(SEED_TABLES[0][0]))
    assert "probability" in out
    assert f"{556_991_252_532_000 * C26:,}" in out  # exact deals, grouped
    assert re.search(r"cases:\s+30\b", out)


def test_count_plain_of_an_either_or_across_seats(tmp_path):
    """Regression: the text of an either/or's count crashed (KeyError) before
    the count became a typed CountSummary.  Its deals are the inclusion-exclusion
    of the three plain specs' counts."""
    script = tmp_path / "either.dealer"
    script.write_text("condition hcp(north) >= 20 || hcp(south) >= 20\n")
    out = ok("count", str(script))
    north, south, both = (json.loads(ok("count", json.dumps(spec), "--json"))["deals"] for spec in (
        {"north": {"hcp": [20, 37]}}, {"south": {"hcp": [20, 37]}}, {"north": {"hcp": [20, 37]}, "south": {"hcp": [20, 37]}}))
    assert both > 0 and f"deals:        {north + south - both:,}\n" in out
    assert f"branches:     {north:,}, {south:,} deals" in out and "either/or of 2 exact listings" in out


def test_many_branches_print_the_first_few_and_their_number():
    from truedeal.cli import _branch_list

    assert _branch_list([1_000, 2]) == "1,000, 2 deals"
    many = _branch_list(list(range(1, 65)))
    assert many.startswith("1, 2, 3, 4, ... deals") and "64 branches" in many and "5" not in many


# ---------------------------------------------------------------------------
# explain


@pytest.mark.parametrize("spec,side,free,cases", SEED_TABLES[:2], ids=["9S-66", "N3"])
def test_explain_an_exact_spec(spec, side, free, cases):
    info = json.loads(ok("explain", json.dumps(spec), "--json"))
    assert info["exact"] is True and info["method"].startswith("exact")
    assert int(str(info["deals"])) == side * free and info["cases"] == cases
    assert info["build seconds"] >= 0
    assert info["streams"].startswith("v1 and v2 deal alike")


def test_explain_says_when_stream_v2_reads_numbers_off_the_stream():
    assert "v2 and v3 read deal numbers straight off the stream" in json.loads(ok("explain", "{}", "--json"))["streams"]
    spec = '{"north": {"hcp": [0, 37], "spades": [0, 13]}}'  # restricts nothing: every deal fits
    assert "v2 and v3 read deal numbers" in json.loads(ok("explain", spec, "--json"))["streams"]


@pytest.mark.parametrize("spec", ['{"north": {"hcp": [15, 17], "shape": "any 4333 + any 4432 + any 5332"}}',
                                  '{"any_of": [{"north": {"hcp": [20, 21]}}, {"south": {"hcp": [20, 21]}}]}',
                                  '{"condition": "hcp(north) >= 12 && rnd(2) == 0"}'],
                         ids=["one listing", "either-or", "rejection"])
def test_explain_says_whether_stream_v3_deals_in_shards(spec):
    from truedeal.engine import Plan
    from truedeal.spec import load_spec

    routed = Plan.build(load_spec(spec), stream="v3").routed
    said = json.loads(ok("explain", spec, "--json"))["streams"]
    assert ("v3 deals it in 16 shards" in said) == routed
    assert said.startswith("v1 and v2 deal alike" if routed else "v1, v2 and v3 deal alike")


def test_explain_says_what_goes_to_rejection(tmp_path, no_weighing):
    """A random number is no property of the deal: the listing holds North's
    points, rejection the coin, and the acceptance is measured."""
    script = tmp_path / "coin.dlr"
    script.write_text("condition hcp(north) >= 12 && rnd(10) > 3\n")
    info = json.loads(ok("explain", str(script), "--json"))
    assert info["exact"] is False and "rejection" in info["method"]
    assert 0 < info["acceptance"] < 1 and info["deals"].startswith("about ")
    assert "hcp(north)" in info["condition"] and info["method"].endswith("(rnd(10) > 3)")
    counted = json.loads(ok("count", str(script), "--json"))  # the cases of the listing the draws come from
    assert info["cases"] is None and info["listed cases"] == counted["rejection"]["listed_cases"] > 0
    # rejection checks only what no listing reads: no limit to name
    assert "not exact" not in info and counted["rejection"]["why_not_exact"] is None


#: Four seats read by their points in one suit (North 5+ HCP in spades, East 3+, South 5+ in hearts,
#: West 3+): the four seats' per-suit points make 22,127,616 feature states, so West's go to rejection.
FOUR_SEATS_PAST_THE_LIMITS = ("condition hcp(north, spades) >= 5 && hcp(east, spades) >= 3 && hcp(south, hearts) >= 5"
                              " && hcp(west, hearts) >= 3\n")


@pytest.mark.memory_mb(700)  # 473 MB here (2026-11-29): the refused listings, then the plan
def test_count_and_explain_say_why_a_spec_is_not_exact(tmp_path):
    """Where rejection checks what a listing could read, count, explain and
    the API name the limit that the exact listing of the whole would pass."""
    from truedeal.constraints.load import load_constraints
    from truedeal.engine import Plan
    from truedeal.explain import explanation
    from truedeal.spec import load_spec
    from truedeal_web.api import count_result

    script = tmp_path / "suit_points.dlr"
    script.write_text(FOUR_SEATS_PAST_THE_LIMITS)
    lines = dict(line.split(":", 1) for line in ok("count", str(script)).splitlines())
    assert "rejection for the honour conditions of west" in lines["method"]
    why = lines["not exact"].strip().removeprefix("the whole is too wide to list: ")
    assert why == "feature tables too large (at least 1 suit column x 22,127,616 feature states)"
    plan = Plan.build(load_constraints(str(script)))
    assert explanation(plan)["not exact"] == why == plan.summary().rejection.why_not_exact
    api = count_result(load_spec({"condition": FOUR_SEATS_PAST_THE_LIMITS.removeprefix("condition ").strip()}),
                       plan.summary())
    assert api["rejection"]["why_not_exact"] == why and not api["exact"]


def test_explain_writes_rnd_as_the_script_does():
    """tests/scripts/52_rnd.dlr: explain printed `rnd(Linear(terms=(), const=2))`,
    the internal form's repr, where the script says `rnd(2)`."""
    script = str(ROOT / "tests" / "scripts" / "52_rnd.dlr")
    assert json.loads(ok("explain", script, "--json"))["condition"] == "hcp(north) >= 10 && rnd(2) == 0"
    assert ok("explain", script).splitlines()[0].split(None, 1)[1] == "hcp(north) >= 10 && rnd(2) == 0"


@pytest.mark.memory_mb(600)  # 507 MB in process on an AMD EPYC, with this code and the code before 2026-11-28's last session
def test_explain_cuts_a_huge_condition_in_text_and_not_in_json(tmp_path):
    """Twelve variables that each square the last expand to 4,097 IR nodes
    and a 60 KB condition: the text shows the start and the full length."""
    lines = ["v0 = hcp(north)"] + [f"v{i} = v{i - 1} * v{i - 1}" for i in range(1, 13)] + ["condition v12 > 3"]
    script = tmp_path / "squares.dlr"
    script.write_text("\n".join(lines) + "\n")
    full = json.loads(ok("explain", str(script), "--json"))["condition"]
    text = ok("explain", str(script)).splitlines()[0]
    assert len(full) > 50_000 and full.count("hcp(north)") == 2 ** 12
    assert re.match(r"condition: +", text) and text.split(None, 1)[1].startswith(full[:1000])
    assert text.endswith(f"({len(full):,} characters in all; --json prints them all)") and len(text) < 2_200


def test_spec_from_file_inline_and_stdin(tmp_path):
    spec = {"north": {"hcp": [15, 17], "shape": BALANCED}}
    path = write_spec(tmp_path, json.dumps(spec, indent=2))
    from_file = json.loads(ok("count", path, "--json"))
    inline = json.loads(ok("count", json.dumps(spec), "--json"))
    stdin = json.loads(ok("count", "-", "--json", stdin=json.dumps(spec)))
    for info in (from_file, inline, stdin):
        info.pop("build_seconds")
    assert from_file == inline == stdin
    assert from_file["side_total"] == 30_897_212_184  # balanced 15-17 hands, computed independently


def test_generate_spec_from_stdin():
    out = ok("generate", "-", "-n", "2", "--format", "json", "--seed", SEED, stdin=GEN_SPEC_JSON)
    assert out.encode() == gen("json", 2)


IMPOSSIBLE_SPECS = {
    # Every pattern allowed, no HCP fits: thirteen spades hold at most 10 HCP.
    "hcp-and-13-spades": '{"north": {"hcp": 37, "spades": 13}}',
    # No suit pattern at all: one seat contradicts itself, or two seats want 14 spades.
    "13-spades-1-heart": '{"north": {"spades": 13, "hearts": 1}}',
    "fourteen-spades": '{"north": {"spades": 7}, "south": {"spades": 7}}',
}


@pytest.mark.parametrize("spec", list(IMPOSSIBLE_SPECS.values()), ids=list(IMPOSSIBLE_SPECS))
def test_impossible_spec_counts_zero_and_generate_refuses(spec):
    """An impossible spec counts 0 deals (exit 0), and generate refuses it with one line.

    Regression: before commit d8b686d the pattern-level cases (no pattern tuple
    fits) crashed `count` and `generate` with a traceback ending in
    enumeration._columns (now listing.cells.suit_columns): "ValueError: cannot reshape array of size 0 ...".
    """
    p = run("count", spec)
    err = p.stderr.decode(errors="replace")
    assert p.returncode == 0 and "Traceback" not in err, err[-300:]
    assert re.search(r"deals:\s+0\b", p.stdout.decode())
    info = json.loads(ok("count", spec, "--json"))
    assert int(str(info["deals"])) == 0
    assert info["possible"] is False
    assert info["cases"] == 0
    line = error_line(run("generate", spec, "-n", "3"))
    assert "no deal satisfies" in line


# ---------------------------------------------------------------------------
# generate


def test_generate_every_format_same_deals():
    """All formats carry the same 10 deals for one seed; each satisfies the spec."""
    records = json_records(gen("json", 10).decode())
    assert [r["board"] for r in records] == list(range(1, 11))
    deals = [check_complete(hands_of(r["deal"])) for r in records]
    numbers = [r["number"] for r in records]
    for r in records:
        assert r["deal"].startswith("N:")
        assert satisfies(GEN_SPEC, hands_of(r["deal"])), r["deal"]
        assert r["dealer"] == SEATS[(r["board"] - 1) % 4]
        assert r["vulnerable"] == VUL16[(r["board"] - 1) % 16]
        assert parsed(r["deal"]) == cards_of(hands_of(r["deal"]))
    assert len(set(numbers)) == 10

    # numbers: one decimal per line, the same numbers as the json records
    lines = gen("numbers", 10).decode().splitlines()
    assert lines == numbers
    assert all(0 <= int(x) < D for x in lines)

    # pbn: header, 10 games, Deal starting with the dealer, DealNumber tags
    pbn = gen("pbn", 10).decode()
    assert pbn.startswith("% PBN 2.1\n% EXPORT\n")
    games = pbn_games(pbn)
    assert len(games) == 10 and pbn.count('[Board "') == 10
    for b, (g, want) in enumerate(zip(games, deals), start=1):
        assert g["Board"] == str(b)
        assert g["Dealer"] == SEATS[(b - 1) % 4] and g["Deal"][0] == g["Dealer"]
        assert g["Vulnerable"] == VUL16[(b - 1) % 16]
        assert check_complete(hands_of(g["Deal"])) == want
        assert parsed(g["Deal"]) == want
        assert g["DealNumber"] == numbers[b - 1]

    # text: diagrams with the deal numbers, no trailing spaces
    text = gen("text", 10).decode()
    assert all(line == line.rstrip() for line in text.splitlines())
    blocks = text_blocks(text)
    assert len(blocks) == 10
    for b, ((title, number, hands), want) in enumerate(zip(blocks, deals), start=1):
        assert title == f"Board {b}  Dealer {SEATS[(b - 1) % 4]}  Vul {VUL16[(b - 1) % 16]}"
        assert number == numbers[b - 1]
        assert check_complete(hands) == want

    # lin: one line per board, same deals
    lin = lin_deals(gen("lin", 10).decode())
    assert [b for b, _ in lin] == list(range(1, 11))
    assert [cards for _, cards in lin] == deals


def test_generated_numbers_decode_to_the_deals():
    numbers = gen("numbers", 10).decode()
    decoded = ok("decode", "-", stdin=numbers).splitlines()
    records = json_records(gen("json", 10).decode())
    assert len(decoded) == 10
    assert [cards_of(hands_of(d)) for d in decoded] == [cards_of(hands_of(r["deal"])) for r in records]
    assert [parsed(d) for d in decoded] == [parsed(r["deal"]) for r in records]
    # and encoding the deals gives the numbers back
    assert ok("encode", *[r["deal"] for r in records]).splitlines() == numbers.splitlines()


@pytest.mark.parametrize("fmt", FORMATS)
def test_generate_reproducible_and_prefix(fmt):
    ten = gen(fmt, 10)
    again = run("generate", GEN_SPEC_JSON, "-n", "10", "--format", fmt, "--seed", SEED)
    assert again.returncode == 0
    assert again.stdout == ten  # byte-identical
    three = gen(fmt, 3)
    assert three and ten.startswith(three)
    assert len(three) < len(ten)


def test_generate_prefix_across_chunks():
    """The first deals of a seed do not depend on n, also past the first 4096-deal chunk."""
    long = gen("numbers", 4100).decode().splitlines()
    assert len(long) == 4100 and len(set(long)) == 4100
    assert long[:10] == gen("numbers", 10).decode().splitlines()
    assert gen("numbers", 4097).decode().splitlines() == long[:4097]


def test_generate_other_seed_differs():
    other = gen("numbers", 3, "another seed").decode().split()
    assert len(other) == 3 and not set(other) & set(gen("numbers", 3).decode().split())


def test_generate_unseeded():
    out = ok("generate", GEN_SPEC_JSON, "-n", "3", "--format", "json")
    records = json_records(out)
    assert len(records) == 3
    for r in records:
        assert satisfies(GEN_SPEC, hands_of(r["deal"]))


def test_generate_default_is_one_pbn_board():
    out = ok("generate", GEN_SPEC_JSON, "--seed", SEED)
    games = pbn_games(out)
    assert len(games) == 1 and games[0]["Board"] == "1"
    assert satisfies(GEN_SPEC, hands_of(games[0]["Deal"]))


def test_first_board_numbering():
    base = json_records(gen("json", 10).decode())
    recs = json_records(gen("json", 10, SEED, 8).decode())
    boards = list(range(8, 18))  # crosses the end of the 16-board cycle
    assert [r["board"] for r in recs] == boards
    assert [r["dealer"] for r in recs] == list("WNESWNESWN")
    assert [r["vulnerable"] for r in recs] == [VUL16[(b - 1) % 16] for b in boards]
    assert (recs[-1]["dealer"], recs[-1]["vulnerable"]) == ("N", "None")  # board 17 = board 1
    assert [r["deal"] for r in recs] == [r["deal"] for r in base]  # numbering does not change the deals
    assert [r["number"] for r in recs] == [r["number"] for r in base]

    games = pbn_games(gen("pbn", 3, SEED, 17).decode())
    assert [g["Board"] for g in games] == ["17", "18", "19"]
    assert [g["Dealer"] for g in games] == ["N", "E", "S"]
    assert [g["Vulnerable"] for g in games] == ["None", "NS", "EW"]
    assert [check_complete(hands_of(g["Deal"])) for g in games] == [
        cards_of(hands_of(r["deal"])) for r in base[:3]
    ]

    lin = gen("lin", 3, SEED, 17).decode()
    assert [b for b, _ in lin_deals(lin)] == [17, 18, 19]
    assert lin.splitlines()[0].startswith("qx|o17|md|3")  # dealer N is LIN digit 3
    titles = [t for t, _, _ in text_blocks(gen("text", 3, SEED, 17).decode())]
    assert titles == ["Board 17  Dealer N  Vul None", "Board 18  Dealer E  Vul NS", "Board 19  Dealer S  Vul EW"]


WEST_DEALS_NS_VUL = """# a weak two in spades by West, who deals, with North-South vulnerable
dealer west
vulnerable NS
shape(west, 6xxx) && hcp(west) >= 5 && hcp(west) <= 10
produce 4
"""


def test_a_scripts_dealer_and_vulnerable_fix_every_board(tmp_path):
    script = tmp_path / "weak2.dlr"
    script.write_text(WEST_DEALS_NS_VUL)
    games = pbn_games(ok("generate", str(script), "--seed", SEED))
    assert [(g["Dealer"], g["Vulnerable"]) for g in games] == [("W", "NS")] * 4
    assert all(g["Deal"].startswith("W:") for g in games)
    recs = json_records(ok("generate", str(script), "--seed", SEED, "--format", "json"))
    assert {(r["dealer"], r["vulnerable"]) for r in recs} == {("W", "NS")}
    assert [cards_of(hands_of(r["deal"])) for r in recs] == [cards_of(hands_of(g["Deal"])) for g in games]
    titles = [t for t, _, _ in text_blocks(ok("generate", str(script), "--seed", SEED, "--format", "text"))]
    assert titles == [f"Board {b}  Dealer W  Vul NS" for b in range(1, 5)]
    lin = ok("generate", str(script), "--seed", SEED, "--format", "lin")
    assert all(re.match(r"qx\|o\d\|md\|2.*\|sv\|n\|pg\|\|$", line) for line in lin.splitlines())  # W is digit 2


def test_dealer_and_vulnerability_options_override_the_script(tmp_path):
    script = tmp_path / "weak2.dlr"
    script.write_text(WEST_DEALS_NS_VUL)
    recs = json_records(ok("generate", str(script), "--seed", SEED, "--format", "json", "--dealer", "rotate",
                           "--vulnerability", "all"))
    assert [(r["dealer"], r["vulnerable"]) for r in recs] == [("N", "All"), ("E", "All"), ("S", "All"), ("W", "All")]
    recs = json_records(ok("generate", GEN_SPEC_JSON, "-n", "3", "--format", "json", "--dealer", "north"))
    assert [(r["dealer"], r["vulnerable"]) for r in recs] == [("N", "None"), ("N", "NS"), ("N", "EW")]


EXAMPLE_GENERATE = [("nine-spades.json", 5), ("slam-try.json", 5), ("four-seats.json", 3)]


def ok_in_a_process(*args: str) -> str:
    """:func:`ok` in a process of its own (its memory is its own, not the test process's)."""
    p = subprocess.run([sys.executable, "-m", "truedeal.cli", *args], capture_output=True, cwd=ROOT, timeout=300)
    assert p.returncode == 0 and not p.stderr, p.stderr.decode(errors="replace")
    return p.stdout.decode()


@pytest.mark.parametrize("name,n", EXAMPLE_GENERATE)
def test_example_specs_generate(name, n):
    spec = json.loads((EXAMPLES / name).read_text())
    # four seats: the sampler's split tables take ~200 MB, which would put the
    # test process past the tests' memory bound (the CLI alone peaks at ~300 MB)
    run_cli = ok_in_a_process if name == "four-seats.json" else ok
    out = run_cli("generate", str(EXAMPLES / name), "-n", str(n), "--format", "json", "--seed", SEED)
    records = json_records(out)
    assert len(records) == n
    for r in records:
        check_complete(hands_of(r["deal"]))
        assert satisfies(spec, hands_of(r["deal"])), r["deal"]


def test_examples_are_valid_and_possible():
    files = sorted(EXAMPLES.glob("*.json"))
    names = {f.name for f in files}
    assert {"strong-nt.json", "nt-and-major.json", "nine-spades.json", "slam-try.json", "four-seats.json"} <= names
    for f in files:
        spec = json.loads(f.read_text())
        if f.name == "four-seats.json":  # possible: test_example_specs_generate deals from it
            assert len(spec) == 4 and all(spec.values())
            continue
        info = json.loads(ok("count", str(f), "--json"))
        assert info["possible"] is True, f.name
        if f.name == "nine-spades.json":
            assert (info["side_total"], info["cases"]) == (556_991_252_532_000, 30)
        if f.name == "slam-try.json":
            assert (info["side_total"], info["cases"]) == (122_891_799_377_692_800, 38)


@pytest.mark.parametrize("extra", [[], ["--format", "text"]], ids=["pbn", "text"])
def test_readme_example_strong_nt(extra):
    """`truedeal generate examples/strong-nt.json -n 5 [--format text]`, as the README shows it."""
    out = ok("generate", "examples/strong-nt.json", "-n", "5", *extra, cwd=ROOT)
    if extra:
        blocks = text_blocks(out)
        assert [t.split()[1] for t, _, _ in blocks] == ["1", "2", "3", "4", "5"]
        all_hands = [hands for _, _, hands in blocks]
    else:
        games = pbn_games(out)
        assert [g["Board"] for g in games] == ["1", "2", "3", "4", "5"]
        all_hands = [hands_of(g["Deal"]) for g in games]
    spec = json.loads((EXAMPLES / "strong-nt.json").read_text())
    for hands in all_hands:
        check_complete(hands)
        assert satisfies(spec, hands), hands
        assert 15 <= hcp(hands["N"]) <= 17
        assert sorted(len(s) for s in hands["N"]) in ([3, 3, 3, 4], [2, 3, 4, 4], [2, 3, 3, 5])


# ---------------------------------------------------------------------------
# encode / decode


def deal_of(owner_of_index) -> dict[str, frozenset[str]]:
    return {seat: frozenset(c for i, c in enumerate(ORDER) if owner_of_index(i) == seat) for seat in SEATS}


def test_decode_0_and_last_per_7z68():
    out = ok("decode", "0", str(D - 1)).splitlines()
    assert len(out) == 2
    # 0: the first 13 cards (7Z68 order) to North, the next 13 to East, then South.
    assert cards_of(hands_of(out[0])) == deal_of(lambda i: "NESW"[i // 13])
    # D-1: the first 13 to West, the next 13 to South, then East, North last.
    assert cards_of(hands_of(out[1])) == deal_of(lambda i: "WSEN"[i // 13])
    assert out[0] == "N:AKQJ.AKQ.AKQ.AKQ T98.JT98.JT9.JT9 765.765.8765.876 432.432.432.5432"
    assert ok("encode", *out).split() == ["0", str(D - 1)]


def test_encode_decode_round_trip():
    numbers = ["1", "12345678901234567890", str(D // 2), str(D // 3 + 7), str(D - 2)]
    deals = ok("decode", *numbers).splitlines()
    assert len(deals) == len(numbers) and len(set(deals)) == len(numbers)
    for d in deals:
        check_complete(hands_of(d))
    assert ok("encode", *deals).split() == numbers
    # through standard input, both ways
    assert ok("decode", "-", stdin="\n".join(numbers) + "\n").splitlines() == deals
    assert ok("encode", "-", stdin="\n".join(deals) + "\n").split() == numbers


def test_encode_stdin_accepts_pbn_forms():
    """Blank lines are skipped; a Deal tag and any first seat give the same number."""
    deal = ok("decode", "987654321987654321").strip()
    hands = hands_of(deal)
    east_first = "E:" + " ".join(".".join(hands[s]) for s in "ESWN")
    lines = [deal, "", f'[Deal "{deal}"]', east_first.lower(), "  " + deal + "  "]
    assert ok("encode", "-", stdin="\n".join(lines) + "\n").split() == ["987654321987654321"] * 4


def test_decode_validates_all_before_printing():
    p = run("decode", "0", "x")
    error_line(p)
    assert p.stdout == b""


# ---------------------------------------------------------------------------
# errors: exit 2, one line on stderr, no traceback

GOOD = '{"north": {"hcp": 3}}'
BAD_DEALS = {
    "too-short": "N:AKQ",
    "duplicate": "N:AKQJ.AKQ.AKQ.AKQ AT98.JT98.JT9.JT9 765.765.8765.876 432.432.432.5432",
    "twelve-cards": "N:AKQJ.AKQ.AKQ.AK T98.JT98.JT9.JT9 765.765.8765.876 432.432.432.5432",
}

ERROR_CASES = [
    # id, args, stdin, substring the message must contain (case-insensitive) or None
    ("missing-file", ["count", "/nonexistent/dir/spec.json"], None, "spec.json"),
    ("invalid-json", ["count", '{"north": '], None, "json"),
    ("invalid-json-stdin", ["count", "-"], '{"north": {"hcp": 3}', "json"),
    ("unknown-seat", ["count", '{"nort": {"hcp": 3}}'], None, "nort"),
    ("unknown-field", ["count", '{"north": {"hcpp": 3}}'], None, "hcpp"),
    ("reversed-range", ["count", '{"north": {"hcp": [17, 15]}}'], None, "reversed"),
    ("malformed-shape", ["count", '{"north": {"shape": "44x"}}'], None, "shape"),
    ("n-zero", ["generate", GOOD, "-n", "0"], None, None),
    ("n-negative", ["generate", GOOD, "-n", "-5"], None, None),
    ("n-too-large", ["generate", GOOD, "-n", str(MAX_DEALS + 1)], None, None),
    ("n-abc", ["generate", GOOD, "-n", "abc"], None, "abc"),
    ("first-board-zero", ["generate", GOOD, "--first-board", "0"], None, "first-board"),
    ("unknown-format", ["generate", GOOD, "--format", "xml"], None, "xml"),
    ("dealer-not-a-seat", ["generate", GOOD, "--dealer", "x"], None, "--dealer: not a seat: 'x'"),
    ("vulnerability-unknown", ["generate", GOOD, "--vulnerability", "red"], None, "--vulnerability: not a vul"),
    ("decode-x", ["decode", "x"], None, "x"),
    ("decode-D", ["decode", str(D)], None, str(D)),
    ("decode-minus-1", ["decode", "-1"], None, "out of range"),
    ("decode-minus-big", ["decode", "-123456"], None, "out of range"),
    ("seed-not-utf8", ["generate", GOOD, "--seed", "\udcff\udcfe"], None, "seed"),
    ("decode-minus-1-after-dashdash", ["decode", "--", "-1"], None, "-1"),
    ("decode-stdin-bad", ["decode", "-"], "5\nnope\n", "nope"),
    ("count-missing", ["count"], None, None),
    ("unknown-command", ["frobnicate"], None, "frobnicate"),
    ("unknown-option", ["count", GOOD, "--frob"], None, "frob"),
] + [(f"encode-{k}", ["encode", v], None, None) for k, v in BAD_DEALS.items()] + [
    ("encode-stdin-bad", ["encode", "-"], "N:AKQ\n", None),
]


@pytest.mark.parametrize("args,stdin,needle", [c[1:] for c in ERROR_CASES], ids=[c[0] for c in ERROR_CASES])
def test_errors_one_line_exit_2(args, stdin, needle):
    p = run(*args, stdin=stdin)
    line = error_line(p)
    if needle is not None:
        assert needle.lower() in line.lower(), line
    assert p.stdout == b""


def test_error_invalid_json_file(tmp_path):
    path = write_spec(tmp_path, '{"north": {"hcp": 3},}')
    line = error_line(run("count", path))
    assert "json" in line.lower() and "line 1" in line


def test_error_unreadable_spec_file(tmp_path):
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"north": {"hcp": 3}} \xe9')
    error_line(run("count", str(path)))


def test_a_broken_dlr_file_says_only_where_the_script_goes_wrong(tmp_path):
    """A .dlr file is a script beyond doubt: its one line is the script's
    error, named by the file (it started "neither a JSON spec nor a valid
    dealer script", as if the file might have been JSON)."""
    path = tmp_path / "opening.dlr"
    path.write_text("# a 1NT opener\ncondition hcp(north) >= 15 &&\n  hcp(north <= 17\n")
    for command in ("count", "explain", "generate"):
        line = error_line(run(command, str(path)))
        assert line == f"truedeal: error: {path}: line 3, column 13: expected ')' to close 'hcp(' but found '<='", line


@pytest.mark.parametrize("how", ["argument", "stdin"])
def test_script_text_that_is_no_json_gets_the_script_error_alone(how):
    text = "condition hcp(north) >= 15 &&\nhcp(north <= 17\n"
    line = error_line(run("count", text) if how == "argument" else run("count", "-", stdin=text))
    assert line == "truedeal: error: script line 2, column 11: expected ')' to close 'hcp(' but found '<='", line


@pytest.mark.parametrize("given, start", [
    ("spec.jsn", "no file named 'spec.jsn', nor a valid dealer script: script line 1, column 5:"),
    ("[1, 2]", "neither a JSON spec nor a valid dealer script: script line 1, column 1:"),
], ids=["a word that names no file", "JSON that is no spec"])
def test_what_may_not_be_a_script_says_so(given, start):
    assert error_line(run("count", given)).startswith(f"truedeal: error: {start}")


@pytest.mark.parametrize("where", ["stdin-empty", "stdin-text", "arg-empty"])
def test_error_spec_not_json_text(where):
    """Standard input is the spec's JSON text: it is never taken as a file name.

    Reproduction of the bug: `truedeal count - </dev/null` prints
    "truedeal: error: cannot read spec file .: Is a directory", and
    `echo hello | truedeal count -` prints "cannot read spec file hello: No such
    file or directory" (the stdin text goes through load_spec's path-or-JSON
    guess, and Path("") is "."); `truedeal count ''` says the same about ".".
    """
    if where == "arg-empty":
        line = error_line(run("count", ""))
        assert "spec file .:" not in line, line
        return
    line = error_line(run("count", "-", stdin="" if where == "stdin-empty" else "hello\n"))
    assert "spec file" not in line, line
    assert "json" in line.lower() or "empty" in line.lower(), line


def test_no_arguments_shows_usage_not_an_error():
    """Bare `truedeal` shows the usage; it must not be labelled as an error line.

    Reproduction of the bug (click 8.2+ raises NoArgsIsHelpError, a UsageError
    whose message is the whole help): `truedeal` prints
    "truedeal: error: Usage: truedeal [OPTIONS] COMMAND [ARGS]..." followed by
    the rest of the help text on stderr.
    """
    p = run()
    out = (p.stdout + p.stderr).decode()
    assert "Usage:" in out
    assert "Traceback" not in out
    assert "error: Usage" not in out, out[:200]


def test_help_and_version():
    out = ok("--help")
    for cmd in ("count", "generate", "encode", "decode"):
        assert cmd in out
    assert "--format" in ok("generate", "--help")
    assert re.search(r"\d+\.\d+", ok("--version"))


def test_broken_pipe_is_quiet_and_successful():
    """`truedeal generate ... | head -1`: no traceback and exit 0 (as main() intends).

    Reproduction of the bug: click's Command.main catches the EPIPE OSError
    itself and calls sys.exit(1), so main()'s `except BrokenPipeError: return 0`
    is never reached and the process exits with 1:
        truedeal generate '{"north":{"hcp":3}}' -n 100000 --format numbers | head -1
        echo ${PIPESTATUS[0]}   # 1
    """
    proc = subprocess.Popen(
        [*CLI, "generate", GOOD, "-n", "100000", "--format", "numbers", "--seed", SEED],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    rc = proc.wait(timeout=120)
    proc.stderr.close()
    assert 0 <= int(first) < D
    assert b"Traceback" not in err and b"Exception ignored" not in err, err
    assert rc == 0, f"exit {rc}, stderr {err!r}"


# ---------------------------------------------------------------------------
# installed console script and the external conformance check


def console_script() -> str | None:
    """The installed `truedeal` script of this interpreter's environment, if any."""
    names = ["truedeal.exe", "truedeal"] if os.name == "nt" else ["truedeal"]
    dirs = [sysconfig.get_path("scripts"), str(Path(sys.executable).parent)]
    for d in dirs:
        for name in names:
            path = Path(d) / name
            if path.is_file() and os.access(path, os.X_OK):
                return str(path)
    return None


def test_console_script_matches_module():
    exe = console_script()
    if exe is None:
        pytest.skip("no installed truedeal console script next to this interpreter")
    p = subprocess.run([exe, "decode", "0"], check=False, capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.decode() == ok("decode", "0")


def test_console_script_leaves_quickly_with_its_whole_output():
    """The executable skips the interpreter's teardown after generate (see
    cli.run): what it writes must still all arrive, through a pipe, in order,
    with exit 0; its errors keep exit 2; and a reader that goes away early
    (``| head``) still ends it with exit 0 and nothing on stderr."""
    exe = console_script()
    if exe is None:
        pytest.skip("no installed truedeal console script next to this interpreter")
    args = ["generate", str(EXAMPLES / "strong-nt.json"), "-n", "3000", "--seed", "quick", "--format", "pbn"]
    p = subprocess.run([exe, *args], check=False, capture_output=True, timeout=120)
    assert (p.returncode, p.stderr) == (0, b"")
    assert p.stdout.decode() == ok(*args)
    assert error_line(subprocess.run([exe, "generate", "no-such-spec.json"], check=False, capture_output=True, timeout=120))
    head = subprocess.Popen([exe, *args[:3], "200000", "--format", "numbers"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert head.stdout is not None and head.stdout.readline()
    head.stdout.close()  # the reader goes away
    assert head.wait(timeout=120) == 0
    assert head.stderr is not None and head.stderr.read() == b""


def test_output_is_whole_when_the_process_is_stopped_and_continued_mid_write():
    """Ctrl-Z then ``fg`` (SIGSTOP, SIGCONT) every few ms while generate
    writes into a slowly read pipe cuts its writes short: every byte still
    arrives, in order.  (CPython's buffered writer dropped the rest of a
    cut-short write: 0.6 MB of 1.5 MB arrived.)"""
    import signal
    import threading
    import time

    args = ["generate", "{}", "-n", "3000", "--seed", "stopped", "--format", "pbn"]
    proc = subprocess.Popen([sys.executable, "-m", "truedeal.cli", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    done = threading.Event()

    def stop_and_continue() -> None:
        while not done.is_set() and proc.poll() is None:
            os.kill(proc.pid, signal.SIGSTOP)
            time.sleep(0.001)
            os.kill(proc.pid, signal.SIGCONT)
            time.sleep(0.003)

    poker = threading.Thread(target=stop_and_continue)
    poker.start()
    got = []
    try:
        assert proc.stdout is not None
        while chunk := proc.stdout.read(4096):
            got.append(chunk)
            time.sleep(0.0005)  # a slow reader: the pipe fills, and writes block
    finally:
        done.set()
        poker.join()
        if proc.poll() is None:
            proc.kill()
    assert proc.wait(timeout=60) == 0
    assert b"".join(got).decode() == ok(*args)


# The project's conformance script (outside this repository, so it skipped for
# every user) checks the four tables of the 2008 study (deals and cases), the
# 7Z68 decode vectors of 0 and D-1, and exit 2 for `decode D`, `decode x` and
# a missing spec file.  The same figures are inline here instead:
# test_count_json_seed_tables (SEED_TABLES), test_decode_0_and_last_per_7z68
# and ERROR_CASES ("decode-D", "decode-x", "missing-file").


# ---------------------------------------------------------------------------
# What a new user trips over (issue 12)


def test_odds_text_reads_like_a_player():
    from fractions import Fraction

    from truedeal.odds import odds_text

    # the two figures of the issue, and edges
    assert odds_text(Fraction(1000, 291407)) == "1 in 291 (0.343%)"
    assert odds_text(Fraction(10, 84740204)) == "1 in 8,474,020 (0.0000118%)"
    assert odds_text(Fraction(1)) == "1 in 1 (100%)"
    assert odds_text(Fraction(1, 2)) == "1 in 2 (50%)"
    assert odds_text(Fraction(0)) == "none (0%)"
    assert odds_text(0.25, estimate=True) == "about 1 in 4 (25%)"


def _expected_odds(deals: int) -> str:
    """"1 in N (p%)" computed here with integers and Decimal, not with truedeal."""
    from decimal import Decimal, getcontext

    getcontext().prec = 60
    one_in = (2 * D + deals) // (2 * deals)  # D/deals rounded half up
    pct = Decimal(deals) * 100 / Decimal(D)
    exp = pct.adjusted()  # power of ten of the first figure
    text = f"{pct.quantize(Decimal(1).scaleb(exp - 2)):f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return f"1 in {one_in:,} ({text}%)"


@pytest.mark.parametrize("spec,side,free,cases", SEED_TABLES, ids=["9S-66", "N3", "N2-S01", "E34-5332"])
def test_count_prints_odds_for_players(spec, side, free, cases):
    want = _expected_odds(side * free)
    out = ok("count", json.dumps(spec))
    assert f"probability:  {want}" in out, out
    assert "e+" not in out and "deal in" not in out
    info = json.loads(ok("count", json.dumps(spec), "--json"))
    assert info["odds"] == want
    num, den = map(int, info["probability_exact"].split("/"))
    assert num * D == den * side * free


def test_encode_reads_a_pbn_file():
    pbn = gen("pbn", 3)
    numbers = gen("numbers", 3).decode().split()
    commented = "{ a comment\n [Deal \"not a tag\"] }\n; a note\n" + pbn.decode()
    for text in (pbn.decode(), commented):
        assert text.lstrip().startswith(("%", "{"))
        assert ok("encode", "-", stdin=text).split() == numbers


def test_help_lists_whole_summaries_and_the_spec_fields():
    out = ok("--help")
    commands = out[out.index("Commands:"):]
    summaries, current = [], None
    for line in commands.splitlines()[1:]:
        if re.match(r"^  \S", line):
            current = line.split(None, 1)[1]
            summaries.append(current)
        elif line.strip():
            summaries[-1] += " " + line.strip()
    assert summaries and all(s.endswith((".", ")")) for s in summaries), summaries
    assert "..." not in commands
    for field in ("hcp", "spades", "hearts", "diamonds", "clubs", "shape"):
        assert field in out
    gen_help = ok("generate", "--help")
    assert re.search(r"--format \[[^\]]*\]\s+\S", gen_help), gen_help  # a description, not just choices


def _on_a_terminal(*args: str) -> tuple[str, list[str]]:
    """Run the CLI with stdout and stderr on a real terminal (pty, 80 columns):
    what it wrote, and the non-blank lines of the screen it leaves (the bytes
    replayed on a minimal terminal: \r returns to column 0, text overwrites)."""
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))  # a new pty is 0x0
    proc = subprocess.Popen([*CLI, *args], stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, cwd=ROOT)
    os.close(slave)
    raw = b""
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        raw += data
    os.close(master)
    assert proc.wait(120) == 0, raw
    screen, line, col = [], [], 0
    for ch in raw.decode(errors="replace"):
        if ch == "\n":
            screen.append("".join(line))
            line, col = [], 0
        elif ch == "\r":
            col = 0
        elif ch == "\x1b":
            continue
        else:
            if col < len(line):
                line[col] = ch
            else:
                line.append(ch)
            col += 1
    screen.append("".join(line))
    return raw.decode(errors="replace"), [ln.rstrip() for ln in screen if ln.strip()]


def test_progress_bar_is_erased_before_the_next_output(tmp_path):
    """A listing slow enough to show its bar (~1.5 s) on a real terminal (pty):
    once the bar ends, its line is cleared, so nothing is glued onto it."""
    # ~1-2 s of listing, by machine (the bar shows after 0.5 s), in ~450 MB
    spec = json.dumps({"north": {"hcp": [10, 16]}, "south": {"hcp": [6, 12]}, "east": {"hcp": [4, 10]}})
    raw, text = _on_a_terminal("generate", spec, "-n", "1", "--seed", "s", "--format", "numbers")
    assert "listing" in raw, raw  # the bar was shown
    assert not any("listing" in ln or "dealing" in ln for ln in text), text
    assert re.fullmatch(r"\d+", text[-1]), text  # the deal number on a line of its own
    assert all(ln.startswith("truedeal: note:") for ln in text[:-1]), text


def test_dealing_bar_is_erased_before_the_last_deals_are_written():
    """Deals that take seconds (rnd() keeps 0.011% of the listed deals: some
    two million draws for 200 deals) show the dealing bar; it is cleared
    before the deals are written (on a loaded machine a deal was once glued
    onto it).  A double-dummy condition showed it too, after a pilot of 256
    solves (8 to 12 s)."""
    raw, text = _on_a_terminal("generate", "rnd(100000) < hcp(north)", "-n", "200", "--seed", "s", "--format", "numbers")
    assert "dealing" in raw, raw  # the bar was shown
    assert not any("dealing" in ln for ln in text), text
    deals = [ln for ln in text if not ln.startswith("truedeal: note:")]
    assert len(deals) == 200 and all(re.fullmatch(r"\d+", ln) for ln in deals), text
    assert text[-1] == deals[-1]


# ---------------------------------------------------------------------------
# help: the spec language, every example of it checked


@dataclass
class HelpExamples:
    """The examples of a help text, as the help's module docstring defines them."""

    json: list[str]  # lines that start with "{"
    scripts: dict[str, str]  # NAME.dlr -> the lines indented under "Example (NAME.dlr):"
    commands: list[str]  # lines that start with "$ truedeal", without the "$ truedeal"


def help_examples(text: str) -> HelpExamples:
    found = HelpExamples([], {}, [])
    name = None
    for line in text.splitlines():
        if name is not None and line.startswith("    "):
            found.scripts[name] += line[4:] + "\n"
            continue
        name = None
        if m := re.fullmatch(r"Example \((\w+\.dlr)\):", line):
            name = m[1]
            found.scripts[name] = ""
        elif line.lstrip().startswith("{"):
            found.json.append(line.strip())
        elif line.lstrip().startswith("$ truedeal "):
            found.commands.append(line.lstrip()[len("$ truedeal "):])
    return found


def _names(text: str) -> set[str]:
    """The words of a help text, a range such as top2..top5 read as all its names."""
    words = set(re.findall(r"\w+", text))
    for stem, a, b in re.findall(r"\b([a-z]+)(\d)\.\.\1(\d)\b", text):
        words |= {f"{stem}{i}" for i in range(int(a), int(b) + 1)}
    return words


def _keys(spec: dict) -> set[str]:
    """The keys of a JSON example by where they stand: "spec.condition", "seat.hcp", "suit.top3"."""
    from truedeal.cards import SEAT_NAMES

    out = set()
    for key, value in spec.items():
        out |= _seat_keys(value) if key in SEAT_NAMES else {f"spec.{key}"}
        if key == "any_of":
            out |= set().union(*map(_keys, value))
    return out


def _seat_keys(seat: dict) -> set[str]:
    from truedeal.cards import SUIT_NAMES

    out = {f"seat.{key}" for key in seat}
    for key, value in seat.items():
        if key in SUIT_NAMES and isinstance(value, dict):
            out |= {f"suit.{field}" for field in value}
        elif key in ("any_of", "not"):
            out |= set().union(*map(_seat_keys, value if key == "any_of" else [value]))
    return out


def test_help_lists_the_language_topics_and_falls_back_to_a_commands_help():
    both = ok("help")
    assert both == ok("help", "spec") + "\n" + ok("help", "script")
    assert "truedeal help spec" in ok("--help") and "docs/dealer-scripts.md" in ok("--help")
    assert ok("help", "count") == ok("count", "--help")
    line = error_line(run("help", "nope"))
    assert line == "truedeal: error: no help topic or command 'nope' (topics: spec, script)"


def _rows(text: str, heading: str) -> list[str]:
    """The names a table of the help lists under ``heading``, up to a blank line."""
    table = text[text.index(heading + "\n") + len(heading) + 1:].split("\n\n")[0]
    return [name for m in re.finditer(r"^  ([a-z_0-9]+(?:, [a-z_0-9]+)*)(?: {2,}|$)", table, re.M) for name in m[1].split(", ")]


def test_help_names_every_field_the_spec_accepts_each_with_an_example():
    from truedeal.spec import FIELD_NAMES, SPEC_KEYS, SUIT_FIELDS

    text = ok("help", "spec")
    assert _rows(text, "Fields of a seat:") == list(FIELD_NAMES)  # the names spec.py reads, in its order
    assert sorted(_rows(text, "Besides the seats:")) == sorted(SPEC_KEYS)
    assert set(SUIT_FIELDS) <= _names(text)
    used = set().union(*(_keys(json.loads(example)) for example in help_examples(text).json))
    assert {f"seat.{f}" for f in FIELD_NAMES} | {f"spec.{k}" for k in SPEC_KEYS} <= used
    assert {"suit.length", "suit.points"} <= used


def test_every_json_example_of_the_help_loads_and_counts():
    from truedeal.spec import load_spec

    examples = help_examples(ok("help")).json
    group_help = re.findall(r"'(\{.*?\})'", ok("--help").replace("\n  ", " "))  # wrapped by click
    assert len(examples) >= 15 and len(group_help) == 1
    for example in examples + group_help:
        load_spec(example)
        counted = json.loads(ok("count", example, "--json"))
        assert counted["possible"] and counted["method"].startswith("exact"), (example, counted)


def test_every_script_example_and_command_of_the_help_runs(tmp_path):
    from truedeal.constraints.dealer import load_program

    found = help_examples(ok("help"))
    assert set(found.scripts) == {"weak2.dlr", "slam.dlr"} and len(found.commands) >= 3
    for name, text in found.scripts.items():
        (tmp_path / name).write_text(text)
        load_program(tmp_path / name)
        counted = json.loads(ok("count", str(tmp_path / name), "--json"))
        assert counted["possible"] and counted["method"].startswith("exact"), (name, counted)
    for command in found.commands:
        p = run(*shlex.split(command), cwd=tmp_path)
        assert p.returncode == 0 and p.stdout and not p.stderr, (command, p.err)
    script = re.search(r" or '(.*?)'\.", ok("--help").replace("\n  ", " "))[1]  # the group help's script example
    load_program(script)
    assert json.loads(ok("count", script, "--json"))["possible"]


def test_help_names_every_statement_action_and_function_of_scripts():
    from truedeal.constraints.dealer import ACTIONS, STATEMENTS
    from truedeal.constraints.dealer_expr import FUNCTIONS

    # aliases: a singular beside its plural (ace, spade, loser ...), and hcps beside hcp
    aliases = {f for f in FUNCTIONS if f + "s" in FUNCTIONS} - {"hcp"} | {"hcps"}
    named = _names(ok("help", "script"))
    assert STATEMENTS | ACTIONS | (FUNCTIONS - aliases) <= named, (STATEMENTS | ACTIONS | FUNCTIONS) - aliases - named


def test_a_plan_past_the_table_bound_deals_and_its_count_stands(monkeypatch):
    """The library's 1NT with a six-card minor opposite counted exactly in
    1.8 GB, then asked 11 GB of tables to deal and was killed at 24 GB: past
    the sampler's bound, an exact plan makes its tables as draws need them
    (tests/test_lazy_prefix.py checks their law)."""
    from truedeal import sampling

    spec = '{"north": {"hcp": [15, 17], "shape": "any 4333 + any 4432 + any 5332"}, "south": {"hcp": [8, 9]}}'
    counted = run("count", "--json", spec)
    monkeypatch.setattr(sampling, "MAX_PREFIX_BYTES", 1000)
    dealt = run("generate", spec, "-n", "3", "--format", "pbn")
    assert dealt.returncode == 0 and dealt.out.count("[Deal ") == 3 and not dealt.err
    again = json.loads(run("count", "--json", spec).out)
    assert again["deals"] == json.loads(counted.out)["deals"] > 0
    # a plan by rejection measures its acceptance by dealing: past the bound it takes a
    # narrower relaxation, whose pilot can deal
    script = "condition hcp(north) >= 15 && hcp(south) >= 8 && rnd(40) < hcp(west)"  # (rnd beside a feature: rejection)
    pilot = run("count", script)
    assert pilot.returncode == 0 and "rejection for the honour conditions of north, south" in pilot.out
    monkeypatch.undo()
    assert "rejection for the honour conditions" not in run("count", script).out


@pytest.mark.memory_mb(800)
def test_count_exact_lists_coin_classes_harder_or_says_why_not(monkeypatch):
    """``count --exact`` lets a split by coin-card classes take PATIENT_SCALE
    times its usual work; a plan that is still not exact is one line, exit 2."""
    from truedeal import class_split

    leveled = str(ROOT / "tests" / "scripts" / "66_leveled_2nt_raise.dlr")
    exact = json.loads(run("count", "--json", leveled).out)["deals"]
    monkeypatch.setattr(class_split, "MAX_CLASS_WORK", 1)
    assert json.loads(run("count", "--json", leveled).out)["deals"] is None  # estimated: past the bound
    monkeypatch.setattr(class_split, "PATIENT_SCALE", 10**12)
    assert json.loads(run("count", "--exact", "--json", leveled).out)["deals"] == exact > 0
    refused = run("count", "--exact", "condition hcp(north) >= 12 && rnd(10) < hcp(south)")  # rnd beside a feature
    assert refused.returncode == 2 and not refused.stdout and refused.err.count("\n") == 1
    assert "no exact plan within the bounds (exact listing, rejection" in refused.err
