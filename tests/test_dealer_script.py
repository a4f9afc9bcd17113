"""The dealer-script parser: the corpus parses, constructs map onto the IR as
documented, and errors are one line naming the line and column."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cli_runner import run
from truedeal.cards import card
from truedeal.constraints import fold, ir
from truedeal.constraints.dealer import (
    MAX_NODES,
    ScriptError,
    is_script,
    load_program,
    parse_condition,
    parse_program,
    parse_script,
)
from truedeal.patterns import PATTERNS

SCRIPTS = sorted((Path(__file__).parent / "scripts").glob("*.dlr"))


def lin(*terms, const=0) -> ir.Linear:
    return ir.Linear(tuple(terms), const)


def hcp(seat, suits=ir.ALL_SUITS, coef=1):
    return (coef, ir.Feature(seat, suits, ir.HCP))


def length(seat, suit, coef=1):
    return (coef, ir.Feature(seat, (suit,), ir.LENGTH))


def cond(text: str) -> ir.Cond:
    return parse_program("condition " + text).condition


# ------------------------------------------------------------------- corpus


def test_corpus_is_large_and_commented():
    assert len(SCRIPTS) >= 40
    for path in SCRIPTS:
        first = path.read_text().splitlines()[0]
        assert first.startswith(("# ", "// ")) and len(first) > 30, path.name


def test_the_docs_count_the_corpus():
    """docs/dealer-scripts.md says how many scripts the corpus holds: the
    number of files, not a number left over from an earlier corpus."""
    docs = (Path(__file__).parents[1] / "docs" / "dealer-scripts.md").read_text(encoding="utf-8")
    said = re.findall(r"The (\d+) scripts in `tests/scripts/`", docs)
    assert said == [str(len(SCRIPTS))], said


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.stem)
def test_corpus_parses(path):
    script = parse_script(path.read_text())
    assert script.program.condition != ir.TRUE
    assert script.condition_at is not None


def test_corpus_covers_every_construct():
    text = "\n".join(p.read_text() for p in SCRIPTS)
    constructs = ["condition ", "predeal ", "produce ", "generate ", "dealer ", "vulnerable ", "pointcount ",
                  "altcount ", "action ", "printall", "printpbn", "printoneline", "printew", "printcompact",
                  "printes", "print(", "average ", "frequency ", "&&", "||", "!", " and ", " or ", "not ", "?", "/",
                  "%", "*", "hcp(", "controls(", "losers(", "loser(", "top2(", "top3(", "top4(", "top5(", "aces(",
                  "kings(", "queens(", "jacks(", "tens(", "c13(", "pt4(", "spades(", "club(", "hascard(", "shape(",
                  "any ", "cccc(", "quality(", "tricks(", "score(", "imps(", "rnd(", "//", "/*", "),\n"]  # fmt: skip
    missing = [c for c in constructs if c not in text]
    assert not missing
    assert any(parse_script(p.read_text()).bare for p in SCRIPTS)


# ---------------------------------------------------------- mapping to the IR


def test_hcp_maps_to_one_feature():
    assert cond("hcp(north) >= 15") == ir.Compare(">=", lin(hcp(0)), lin(const=15))
    assert cond("hcp(east, spades) <= 3") == ir.Compare("<=", lin(hcp(1, (0,))), lin(const=3))


def test_linear_sums_stay_linear_and_merge():
    assert cond("hcp(north) + hcp(south) >= 25") == ir.Compare(">=", lin(hcp(0), hcp(2)), lin(const=25))
    got = cond("hcp(north) + 2 * hcp(north) - hcp(south) * 3 + 1 > 4")
    assert got == ir.Compare(">", lin(hcp(0, coef=3), hcp(2, coef=-3), const=1), lin(const=4))
    assert cond("spades(north) - spades(north) + 2 == 2") == ir.Truth(True)


def test_functions_map_to_their_local_functions():
    f = lambda text: parse_program("condition " + text + " > 0").condition.left.terms[0][1]  # noqa: E731
    assert f("controls(west)") == ir.Feature(3, ir.ALL_SUITS, ir.CONTROLS)
    assert f("loser(west, hearts)") == ir.Feature(3, (1,), ir.LOSERS)
    assert f("losers(west)") == ir.Feature(3, ir.ALL_SUITS, ir.LOSERS)
    assert f("top3(south, diamonds)") == ir.Feature(2, (2,), ir.top(3))
    assert f("top5(south, clubs)") == ir.Feature(2, (3,), ir.top(5))
    assert f("aces(north)") == ir.Feature(0, ir.ALL_SUITS, ir.weights(1))
    assert f("tens(north)").fn == ir.weights(0, 0, 0, 0, 1)
    assert f("c13(north)").fn == ir.weights(6, 4, 2, 1)
    assert f("pt7(north, spades)") == ir.Feature(0, (0,), ir.top(4))
    assert f("club(east)") == ir.Feature(1, (3,), ir.LENGTH)
    assert f("diamonds(east)") == ir.Feature(1, (2,), ir.LENGTH)


def test_hascard_is_a_condition_and_a_number():
    ace = ir.Feature(3, (0,), ir.one_rank(0))
    assert cond("hascard(west, AS)") == ir.Compare("==", lin((1, ace)), lin(const=1))
    two_c = ir.Feature(1, (3,), ir.one_rank(12))
    assert cond("hascard(east, 2C) + hascard(west, AS) >= 1") == ir.Compare(
        ">=", lin((1, two_c), (1, ace)), lin(const=1)
    )
    assert cond("hascard(east, TD)").left.terms[0][1] == ir.Feature(1, (2,), ir.one_rank(4))


def test_ternary_on_numbers_is_ifelse():
    got = cond("(hascard(west, 2C) ? hcp(north) : hcp(south)) >= 12")
    flag = ir.Compare("==", lin((1, ir.Feature(3, (3,), ir.one_rank(12)))), lin(const=1))
    assert got == ir.Compare(">=", ir.IfElse(flag, lin(hcp(0)), lin(hcp(2))), lin(const=12))


def test_ternary_on_conditions_is_a_boolean_formula():
    got = cond("hcp(north) > 10 ? spades(north) >= 5 : hearts(north) >= 5")
    c = ir.Compare(">", lin(hcp(0)), lin(const=10))
    s = ir.Compare(">=", lin(length(0, 0)), lin(const=5))
    h = ir.Compare(">=", lin(length(0, 1)), lin(const=5))
    assert got == ir.Or((ir.And((c, s)), ir.And((ir.Not(c), h))))


def test_booleans_as_numbers_and_numbers_as_booleans():
    a = ir.Compare(">=", lin(hcp(0)), lin(const=12))
    b = ir.Compare(">=", lin(hcp(2)), lin(const=12))
    one, zero = lin(const=1), lin(const=0)
    got = cond("(hcp(north) >= 12) + (hcp(south) >= 12) == 1")
    assert got == ir.Compare("==", ir.Arith("+", ir.IfElse(a, one, zero), ir.IfElse(b, one, zero)), one)
    assert cond("spades(north)") == ir.Compare("!=", lin(length(0, 0)), zero)
    assert cond("!spades(north)") == ir.Not(ir.Compare("!=", lin(length(0, 0)), zero))


def test_constants_fold():
    assert cond("3 > 2") == ir.TRUE
    assert cond("hcp(north) > 3 && 1") == ir.Compare(">", lin(hcp(0)), lin(const=3))
    assert cond("hcp(north) > 3 || 0 == 0") == ir.TRUE
    assert cond("1 ? hcp(north) > 3 : hcp(south) > 3") == ir.Compare(">", lin(hcp(0)), lin(const=3))
    assert cond("hcp(north) > 14 / 4 * 2") == ir.Compare(">", lin(hcp(0)), lin(const=6))


def test_and_or_flatten_and_words_equal_symbols():
    assert cond("hcp(north) > 1 && hcp(north) > 2 && hcp(north) > 3") == ir.And(
        tuple(ir.Compare(">", lin(hcp(0)), lin(const=k)) for k in (1, 2, 3))
    )
    assert cond("hcp(north) > 1 and not shape(south, 4333) or spades(east) == 3") == cond(
        "hcp(north) > 1 && !shape(south, 4333) || spades(east) == 3"
    )


def test_a_variable_before_a_parenthesis_ends_its_statement():
    """BBO scripts end a definition with a variable and start the bare
    condition with '(' on the next line (the library's Grand Slam Force):
    dealer's function names are keywords, so the variable is not called."""
    script = "a = hcp(north) >= 12\nb = spades(north) >= 5 or a\n\n(b and hcp(south) >= 6)\n"
    plain = "(spades(north) >= 5 or hcp(north) >= 12) and hcp(south) >= 6"
    assert parse_program(script).condition == cond(plain)
    with pytest.raises(ScriptError, match="unknown function 'c'"):
        parse_program("a = hcp(north) >= 12\nc(a)\n")  # an undefined name is still a call


def test_precedence_follows_c_where_dealer_does():
    # '!' binds tighter than a comparison, as in C and dealer: !hcp(south) > 2 is (!hcp(south)) > 2
    not_s = ir.Not(ir.Compare("!=", lin(hcp(2)), lin(const=0)))
    assert cond("!hcp(south) > 2") == ir.Compare(">", ir.IfElse(not_s, lin(const=1), lin(const=0)), lin(const=2))
    assert cond("hcp(north) + 2 * 3 > 1 + 1 == 1") == cond("((hcp(north) + (2 * 3)) > (1 + 1)) == 1")
    assert cond("hcp(north) > 1 || hcp(south) > 1 && hcp(east) > 1") == cond(
        "hcp(north) > 1 || (hcp(south) > 1 && hcp(east) > 1)"
    )
    assert cond("hcp(north) - 3 - 2 > 0") == cond("(hcp(north) - 3) - 2 > 0")
    assert cond("hcp(north) ? 1 : 2 || 0") == cond("hcp(north) ? 1 : (2 || 0)")
    assert cond("hcp(north) ? hcp(south) ? 1 : 2 : 3") == cond("hcp(north) ? (hcp(south) ? 1 : 2) : 3")


def _const(text: str) -> int:
    value = fold.as_num(dict(parse_script(f"x = {text}").variables)["x"])
    assert value.terms == ()
    return value.const


def test_precedence_of_dealers_grammar_where_it_is_not_c():
    """dealer's defs.y gives each operator its own %left level, in the order
    || && == != < <= > >= + - * / %, and ?: the loosest: a higher operator on
    the right groups first, and ?: chains to the left."""
    assert _const("3 * 5 / 2") == 3 * (5 // 2)  # C would give 7
    assert _const("7 / 5 % 3") == 7 // (5 % 3)  # C would give 1
    assert _const("7 % 5 * 3") == (7 % 5) * 3  # % is highest: as in C
    assert _const("1 == 2 != 3") == int(1 == int(2 != 3))  # C: (1 == 2) != 3, i.e. 1
    assert _const("3 < 2 <= 1") == int(3 < int(2 <= 1))  # C: (3 < 2) <= 1, i.e. 1
    assert _const("0 ? 3 : 1 ? 2 : 0") == 2  # (0 ? 3 : 1) ? 2 : 0; C gives 2 as well
    assert _const("1 ? 3 : 1 ? 2 : 0") == 2  # (1 ? 3 : 1) ? 2 : 0; C would give 3
    assert _const("1 ? 0 : 1 ? 2 : 5") == 5  # (1 ? 0 : 1) ? 2 : 5; C would give 0


def test_nonlinear_arithmetic_is_arith():
    got = cond("hcp(north) * hcp(south) >= 100")
    assert got == ir.Compare(">=", ir.Arith("*", lin(hcp(0)), lin(hcp(2))), lin(const=100))
    got = cond("(hcp(north) + hcp(south)) / 2 == 13")
    assert got.left == ir.Arith("/", lin(hcp(0), hcp(2)), lin(const=2))


def test_shapes():
    balanced = {p for p in map(tuple, PATTERNS.tolist()) if sorted(p) in ([3, 3, 3, 4], [2, 3, 4, 4], [2, 3, 3, 5])}
    assert cond("shape(north, any 4333 + any 4432 + any 5332)") == ir.ShapeIn(0, frozenset(balanced))
    assert cond("shape(north, any 4333, any 4432, any 5332)") == ir.ShapeIn(0, frozenset(balanced))
    got = cond("shape(south, any 5xxx - 5xxx)")
    assert got.seat == 2 and all(p[0] != 5 and 5 in p for p in got.patterns)
    assert cond("shape(west, 4333)") == ir.ShapeIn(3, frozenset({(4, 3, 3, 3)}))


def test_variables_substitute_numbers_and_conditions():
    program = parse_program("tot = hcp(north) + hcp(south)\nok = tot >= 25\ncondition ok && tot <= 30")
    tot = lin(hcp(0), hcp(2))
    assert program.condition == ir.And((ir.Compare(">=", tot, lin(const=25)), ir.Compare("<=", tot, lin(const=30))))


def test_a_name_defined_again_reads_as_written_above_each_use():
    """BBO's dialect (dealer refuses it): each use reads the definition written
    before it, as the library's Major Suit Fit needs (sTP for North, then South)."""
    program = parse_program(
        "tp = hcp(north)\nopens = tp >= 12\ntp = hcp(south)\ntp = tp + 1\ncondition opens && tp >= 7"
    )
    assert program == parse_program("condition hcp(north) >= 12 && hcp(south) + 1 >= 7")
    script = parse_script("x = 1\nx = hcp(east)\ncondition x > 3")
    assert dict(script.variables)["x"] == lin(hcp(1))


def test_pointcount_and_altcount_apply_to_the_whole_script():
    """dealer fills tblPointcount while parsing and reads it while dealing:
    the last pointcount is the scale of every hcp(), even one written before it."""
    c13 = ir.Feature(0, ir.ALL_SUITS, ir.weights(6, 4, 2, 1))
    program = parse_program("a = hcp(north)\npointcount 6 4 2 1\nb = hcp(north)\ncondition a + b > 0")
    assert program.condition.left == lin((2, c13))
    program = parse_program("pointcount 1\ncondition hcp(north) > 0\npointcount 6 4 2 1")
    assert program.condition.left == lin((1, c13))
    program = parse_program("condition top2(north, hearts) + hcp(south) > 0\naltcount 5 1")
    assert [f.fn for _, f in program.condition.left.terms] == [ir.weights(1), ir.HCP]
    program = parse_program("pointcount 4, 3, 2, 1, 1\ncondition hcp(north) > 0")
    assert program.condition.left.terms[0][1].fn == ir.weights(4, 3, 2, 1, 1)
    program = parse_program("altcount 5 3 2 1\ncondition top2(north, hearts) + pt5(south) > 0")
    fns = [f.fn for _, f in program.condition.left.terms]
    assert fns == [ir.weights(3, 2, 1), ir.weights(3, 2, 1)]


def test_last_condition_wins_as_in_dealer():
    script = parse_script("condition hcp(west) >= 10\nhcp(east) >= 15")
    assert script.program.condition == ir.Compare(">=", lin(hcp(1)), lin(const=15))
    assert script.bare and script.condition_at == (2, 1, 26)


def test_settings_predeal_and_actions():
    program = parse_program(
        "generate 5000\nproduce 12\ndealer west\nvulnerable EW\n"
        "predeal north SAK, HQJ2, south D5\npredeal east CT\n"
        'condition hcp(north) > 10\naction printall, print(north, south), average "hn" hcp(north),\n'
        '   frequency "s" (spades(north), 0, 13), frequency (hcp(north), 0, 37, hcp(south), -1, 37),\n'
        '   printes "a", hcp(north), \\n, printcompact(hcp(south)), printoneline,\n'
    )
    assert (program.generate, program.produce, program.dealer, program.vulnerable) == (5000, 12, 3, "ew")
    north = sorted([card(0, 0), card(1, 0), card(2, 1), card(3, 1), card(12, 1)])
    assert program.predeal == ((0, tuple(north)), (1, (card(4, 3),)), (2, (card(9, 2),)))
    kinds = [(a.kind, a.style) for a in program.actions]
    assert kinds == [("print", "printall"), ("print", "print"), ("average", ""), ("frequency", ""),
                     ("frequency", ""), ("print", "printes"), ("print", "printcompact"),
                     ("print", "printoneline")]  # fmt: skip
    assert program.actions[1].seats == (0, 2)
    assert program.actions[2].label == "hn" and program.actions[2].expr == lin(hcp(0))
    assert program.actions[3].bounds == (0, 13) and program.actions[3].label == "s"
    assert program.actions[4].bounds == (0, 37, -1, 37) and program.actions[4].expr2 == lin(hcp(2))
    assert program.actions[5].items == ("a", lin(hcp(0)), "\n")
    assert program.actions[6].expr == lin(hcp(2))
    assert program.actions[7].expr is None


def test_trailing_comma_then_bare_condition():
    script = parse_script("action printpbn, average hcp(north),\nhcp(north) >= 12\n")
    assert len(script.program.actions) == 2
    assert script.bare and script.program.condition == ir.Compare(">=", lin(hcp(0)), lin(const=12))


def test_comments_everywhere():
    text = "# top\ncondition /* a */ hcp(north) // b\n  >= /* c\n d */ 12 # e\n# f"
    assert parse_program(text).condition == ir.Compare(">=", lin(hcp(0)), lin(const=12))


def test_opaque_functions():
    got = cond("tricks(south, notrump) >= 9")
    assert got.left == ir.OpaqueNum("tricks", (2, 4))
    got = cond("imps(score(vul, x3N, tricks(south, notrump)) - 400) > 0")
    assert got.left == ir.OpaqueNum(
        "imps", (ir.Arith("-", ir.OpaqueNum("score", (True, (3, 4), ir.OpaqueNum("tricks", (2, 4)))), lin(const=400)),)
    )
    assert cond("rnd(10) < 3").left == ir.OpaqueNum("rnd", (lin(const=10),))


@pytest.mark.parametrize("text, value", [
    ("score(vul, x4S, 10)", 620),  # 120 tricks + 500 game bonus
    ("score(nv, x3N, 9)", 400),  # 100 + 300
    ("score(nv, x3N, 7)", -100),  # two down, 50 each
    ("score(vul, x7N, 13)", 2220),  # 220 + 500 + 1500
    ("score(vul, x4S, 20)", 710),  # past 13 tricks, 13: 120 + 3 overtricks of 30 + 500
    ("imps(score(vul, x4S, 10) - score(nv, x3N, 9))", 6),  # 220: 220-260 is 6 IMPs
    ("imps(-4000)", -24),
    ("imps(10)", 0),
])
def test_scores_and_imps_of_constants_fold_to_their_value(text, value):
    """A function of constants is a constant (the values from the laws of
    duplicate scoring and the IMP table), so no rejection checks it."""
    assert cond(f"{text} == {value}") == ir.TRUE
    assert not ir.opaque_names(cond(f"hcp(north) >= 12 && {text} > 0"))


@pytest.mark.parametrize("text, shown", [
    ("rnd(2) == 0", None),
    ("tricks(south, notrump) >= 9", None),
    ("tricks(west, hearts) < 7", None),
    ("imps(score(vul, x3N, tricks(south, notrump)) - 400) > 0",
     "imps((score(vul, x3N, tricks(south, notrump)) - 400)) > 0"),  # a non-linear difference is bracketed
])
def test_functions_of_a_real_deal_are_described_as_written(text, shown):
    """`truedeal explain` writes tricks, score, imps and rnd back in the
    script's words (it printed rnd(Linear(terms=(), const=2)))."""
    from truedeal.constraints.describe import cond as describe

    said = describe(parse_condition(text))
    assert said == (shown or text)
    assert parse_condition(said) == parse_condition(text)


def test_parse_condition_for_json_specs():
    assert parse_condition("hcp(north) + hcp(south) >= 25") == ir.Compare(">=", lin(hcp(0), hcp(2)), lin(const=25))
    with pytest.raises(ScriptError, match="column 16"):
        parse_condition("hcp(north) > 3 produce 5")


# ----------------------------------------------------------------- errors

ERRORS = [
    ("condition hcp(nort) > 3", 1, 15, "bad seat 'nort'"),
    ("condition hcp(south) > 5\naction frequency (hcp(south), 10, 5)", 2, 35, "the upper bound 5 is below the lower bound 10"),
    ("condition hcp(n) > 3", 1, 15, "bad seat 'n'"),
    ("\n\ncondition foo(north) > 3", 3, 11, "unknown function 'foo'"),
    ("condition x > 3", 1, 11, "undefined variable 'x'"),
    ("condition hcp(north) >", 1, 23, "expected an expression"),
    ("condition (hcp(north) > 3", 1, 26, "expected ')'"),
    ("condition hcp(north) > 3)", 1, 25, "unexpected ')'"),
    ("condition hcp(north, spade) > 3 && hcp(north, spudes) > 1", 1, 47, "bad suit 'spudes'"),
    ("condition shape(north, 4333 +)", 1, 24, "bad shape"),
    ("condition shape(north, 4332)", 1, 24, "sums to 12"),
    ("condition hascard(north, AX)", 1, 26, "bad card 'AX'"),
    ("predeal north SAK, HZ", 1, 20, "bad holding 'HZ'"),
    ("predeal north SA\npredeal south SA", 2, 15, "predealt twice"),
    ("dealer nowhere", 1, 8, "bad seat 'nowhere'"),
    ("vulnerable both", 1, 12, "bad vulnerability 'both'"),
    ("action flurb", 1, 8, "unknown action 'flurb'"),
    ("action printpbn, flurb", 1, 18, "undefined variable 'flurb'"),  # after a trailing comma
    ("produce many", 1, 9, "expected a number"),
    ("altcount 12 1 2", 1, 10, "numbered 0 to 9"),
    ("condition hcp(north) > 3 / 0", 1, 26, "division by zero"),
    ("condition hcp > 3", 1, 11, "needs its arguments"),
    ("/* never closed\ncondition hcp(north) > 3", 1, 1, "never closed"),
    ('action average "oops hcp(north)\n', 1, 16, "string is not closed"),
    ("condition hcp(north) > 3 @", 1, 26, "unexpected character '@'"),
    ("condition tricks(south, nt) > 3", 1, 25, "bad strain 'nt'"),
    ("condition = 3", 1, 11, "expected an expression"),
    ("dealer = 3", 1, 8, "bad seat '='"),
    ("hcp = 3", 1, 1, "is a function"),
    ("condition hcp(north) > 1234567890", 1, 24, "too large"),
    ("condition hcp(north) > 99999 * 99999 * 99999", 1, 38, "constant too large"),
    ("evalcontract", 1, 1, "not supported"),
    ("condition " + "(" * 50 + "1" + ")" * 50, 1, 51, "nested too deeply"),
    ("condition " + "!" * 60 + "hcp(north)", 1, 51, "nested too deeply"),
    ("a0 = hcp(north) * hcp(south)\n" + "".join(f"a{i + 1} = a{i} * a{i} + 1\n" for i in range(30))
     + "condition a30 > 0", 32, 11, "too large once its variables are expanded"),
    ("north = 3", 1, 1, "is a keyword"),
    # as in dealer, printoneline takes an argument only in parentheses: here the list ends and
    # 'hcp(north)' starts a bare condition, which the comma cannot follow
    ("action printoneline hcp(north), printall", 1, 31, "unexpected ','"),
]


@pytest.mark.parametrize("text,line,col,fragment", ERRORS, ids=[e[3] for e in ERRORS])
def test_errors_name_line_and_column(text, line, col, fragment):
    with pytest.raises(ScriptError) as info:
        parse_program(text)
    message = str(info.value)
    assert isinstance(info.value, ValueError)
    assert message.startswith(f"line {line}, column {col}: "), message
    assert fragment in message and "\n" not in message
    assert (info.value.line, info.value.col) == (line, col)


def test_no_code_is_evaluated():
    with pytest.raises(ScriptError, match="unknown function '__import__'"):
        parse_program("condition __import__(north) > 0")
    with pytest.raises(ScriptError, match="undefined variable 'os'"):
        parse_program("condition os > 0")


# ------------------------------------------------------- loading and sniffing


def test_shared_variables_stay_cheap():
    text = "a0 = hcp(north) * hcp(south)\n" + "".join(f"a{i + 1} = a{i} * a{i} + 1\n" for i in range(10))
    text += "condition a10 > 0"
    assert fold.tree_size(parse_program(text).condition) > 2**10  # many uses, one parse


def test_a_condition_used_many_times_is_listed_once():
    """Each variable used twice by the next: 2**15 uses of one comparison once
    expanded (practice scripts reach a few hundred thousand nodes).  The listing
    compiles the distinct nodes once and counts what the plain condition counts."""
    from truedeal.engine import Plan

    text = "b0 = hcp(north) >= 15\n" + "".join(f"b{i + 1} = b{i} and (b{i} or spades(north) >= 5)\n" for i in range(15))
    program = parse_program(text + "condition b15")
    assert fold.tree_size(program.condition) > 2**15
    plain = parse_program("condition hcp(north) >= 15")
    assert Plan.build(program).deals_total == Plan.build(plain).deals_total


def test_a_script_past_a_million_nodes_expanded_is_read():
    """The practice library's Fourth Suit Forcing expands to 1,030,987 nodes
    (refused until 2026-11-28): a chain of 18 such variables expands to more."""
    from truedeal.engine import Plan

    text = "b0 = hcp(north) >= 15\n" + "".join(f"b{i + 1} = b{i} and (b{i} or spades(north) >= 5)\n" for i in range(18))
    program = parse_program(text + "condition b18")
    assert 1_000_000 < fold.tree_size(program.condition) < MAX_NODES
    assert Plan.build(program).deals_total == Plan.build(parse_program("condition hcp(north) >= 15")).deals_total


def test_load_program_from_path_and_text(tmp_path):
    path = tmp_path / "one.dlr"
    path.write_text("condition hcp(north) >= 12\n")
    expected = ir.Compare(">=", lin(hcp(0)), lin(const=12))
    assert load_program(path).condition == expected
    assert load_program(str(path)).condition == expected
    assert load_program("condition hcp(north) >= 12").condition == expected
    assert load_program(SCRIPTS[0]) == parse_program(SCRIPTS[0].read_text())
    with pytest.raises(FileNotFoundError, match="no such script"):
        load_program(str(tmp_path / "missing.dlr"))


def test_a_missing_script_file_is_named_once(tmp_path):
    missing = str(tmp_path / "missing.dlr")
    p = run("count", missing)
    assert p.returncode == 2 and p.err == f"truedeal: error: cannot read {missing}: no such script\n"


def test_is_script(tmp_path):
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"north": {"hcp": [15, 17]}}))
    script = tmp_path / "s.dlr"
    script.write_text("hcp(north) > 3")
    unnamed = tmp_path / "plain"
    unnamed.write_text("  \n condition hcp(north) > 3")
    unnamed_json = tmp_path / "plain_json"
    unnamed_json.write_text('\n  {"north": {"hcp": [15, 17]}}')
    assert is_script(script) and is_script(str(script)) and is_script(unnamed)
    assert not is_script(spec) and not is_script(str(spec)) and not is_script(unnamed_json)
    assert is_script("hcp(north) >= 12 && shape(north, any 4333)")
    assert not is_script('{"north": {"hcp": [15, 17]}}')
    assert is_script(SCRIPTS[0])


def test_repeated_settings_and_actions_as_dealer_keeps_them():
    """dealer's defs.y: ``if (!maxproduce) maxproduce = $2`` keeps the first
    ``produce``/``generate``; ``actionlist = $2`` keeps the last ``action``;
    ``dealer`` and ``vulnerable`` are plain assignments (the last wins)."""
    p = parse_program(
        "produce 10\ngenerate 100\nproduce 20\ngenerate 200\ndealer north\ndealer west\n"
        "vulnerable NS\nvulnerable all\naction printall\naction printpbn, average hcp(north)\n"
    )
    assert (p.produce, p.generate, p.dealer, p.vulnerable) == (10, 100, 3, "all")
    assert [a.style or a.kind for a in p.actions] == ["printpbn", "average"]


def test_pointcount_without_weights_clears_and_weights_may_be_negative():
    """dealer's grammar: ``POINTCOUNT {clearpointcount()} pointcountargs`` with
    possibly no numbers, and a number may be ``- NUMBER``."""
    variables = dict(parse_script("pointcount\nx = hcp(north)\naltcount 3 4, -1 2\ny = pt3(south)").variables)
    assert variables["x"] == lin((1, ir.Feature(0, ir.ALL_SUITS, ir.weights())))
    assert variables["y"] == lin((1, ir.Feature(2, ir.ALL_SUITS, ir.weights(4, -1, 2))))


def test_a_script_on_one_line_too_long_for_a_file_name_is_read_as_text():
    """A one-line script longer than a file name may be (255 bytes) is text, not an OSError."""
    text = "condition " + " && ".join(f"hcp(north) >= {k}" for k in range(40))
    assert len(text) > 255
    assert load_program(text).condition is not None
