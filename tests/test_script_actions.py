"""``truedeal generate SCRIPT``: a dealer script's print actions, run on every deal.

The expected values never come from the code under test:

* the deals are those of ``--format pbn`` with the same seed, read by
  endplay's PBN parser (a reference client);
* the layouts are dealer's, checked on whole deals predealt from dealer's
  own reference outputs (``Examples/Refer.*`` of the classic dealer, quoted
  below as data) and, on random deals, line by line against dealer's
  documented rules (ranks each followed by a space, 20-column hands);
* printed values are recomputed here from the parsed hands (HCP, lengths).
"""

from __future__ import annotations

import functools
import re

import pytest

from cli_runner import run

SEED = "print actions"
SEATS = "NESW"
HCP_OF = {"A": 4, "K": 3, "Q": 2, "J": 1}

#: A 1NT opener with a partner of 8+, East dealing, North-South vulnerable.
CONDITION = """# North opens 1NT, South has 8 or more
dealer east
vulnerable NS
hcp(north) >= 15 && hcp(north) <= 17 && shape(north, any 4333 + any 4432 + any 5332)
hcp(south) >= 8
"""
N = 6


def script(actions: str, counts: str = f"produce {N}\n") -> str:
    """The test script with these settings and this action line."""
    return CONDITION + counts + (f"action {actions}\n" if actions else "")


def ok(*args: str) -> str:
    """Run ``truedeal ARGS``: exit 0, nothing on stderr; the output."""
    p = run(*args)
    assert p.returncode == 0 and not p.stderr, p.err
    return p.out


@functools.cache
def reference_deals(n: int = N, first_board: int = 1) -> tuple[dict[str, str], ...]:
    """The deals ``--format pbn`` gives for SEED, as endplay reads them: ``{"N": "S.H.D.C", ...}`` each."""
    from endplay.parsers import pbn as ep_pbn
    from endplay.types import Player

    text = ok("generate", script(""), "-n", str(n), "--seed", SEED, "--format", "pbn", "--first-board", str(first_board))
    boards = ep_pbn.loads(text)
    assert [b.board_num for b in boards] == list(range(first_board, first_board + n))
    return tuple({SEATS[int(p)]: b.deal[p].to_pbn() for p in Player} for b in boards)


def generate(actions: str, *extra: str, counts: str = f"produce {N}\n") -> str:
    return ok("generate", script(actions, counts), "--seed", SEED, *extra)


def hcp(hand: str) -> int:
    return sum(HCP_OF.get(c, 0) for c in hand)


# ---------------------------------------------------------------- dealer's own output, byte for byte

#: Board 1 of dealer's Examples/Refer.you_hold (``action printall``).
YOU_HOLD = ("9.T3.AKJT854.Q93", "JT76.965.76.7654", "AQ542.KJ87.32.AK", "K83.AQ42.Q9.JT82")
YOU_HOLD_PRINTALL = (
    "   1.\n"
    "9                   J T 7 6             A Q 5 4 2           K 8 3 \n"
    "T 3                 9 6 5               K J 8 7             A Q 4 2 \n"
    "A K J T 8 5 4       7 6                 3 2                 Q 9 \n"
    "Q 9 3               7 6 5 4             A K                 J T 8 2 \n"
    "\n"
)
#: Line 1 of dealer's Examples/Refer.notrump (``printoneline``; West has a club void).
NOTRUMP = ("KT.KJ.986.Q97532", "QJ98.AT84.A72.A4", "3.63.KJT43.KJT86", "A76542.Q9752.Q5.")
NOTRUMP_ONELINE = "n KT.KJ.986.Q97532 e QJ98.AT84.A72.A4 s 3.63.KJT43.KJT86 w A76542.Q9752.Q5. \n"
#: West and East of deal 1 of dealer's Examples/Refer.blue_team (``printew``).
BLUE_TEAM_WEST, BLUE_TEAM_EAST = "Q9.AKJT976.A6.AK", "AJ2.Q2.JT94.QJ82"
BLUE_TEAM_PRINTEW = (
    "Q 9                 A J 2 \n"
    "A K J T 9 7 6       Q 2 \n"
    "A 6                 J T 9 4 \n"
    "A K                 Q J 8 2 \n"
    "\n"
)


def predeal(seat: str, hand: str) -> str:
    """A dealer ``predeal`` line giving ``hand`` ("S.H.D.C") to ``seat``."""
    holdings = [s + h for s, h in zip("SHDC", hand.split(".")) if h]
    return f"predeal {seat} {', '.join(holdings)}\n"


def whole_deal(hands: tuple[str, ...], actions: str) -> str:
    """A script whose only deal is ``hands`` (N E S W): three seats predealt, the fourth follows."""
    return "".join(predeal(name, hand) for name, hand in zip(("north", "east", "south"), hands)) + f"action {actions}\n"


def test_printall_is_dealers_reference_output():
    assert ok("generate", whole_deal(YOU_HOLD, "printall"), "--seed", SEED) == YOU_HOLD_PRINTALL


def test_printoneline_is_dealers_reference_output():
    assert ok("generate", whole_deal(NOTRUMP, "printoneline"), "--seed", SEED) == NOTRUMP_ONELINE


def test_printew_is_dealers_reference_output():
    text = predeal("west", BLUE_TEAM_WEST) + predeal("east", BLUE_TEAM_EAST) + "action printew\n"
    assert ok("generate", text, "--seed", SEED, "-n", "2") == BLUE_TEAM_PRINTEW * 2


def test_printcompact_of_a_known_deal():
    out = ok("generate", whole_deal(NOTRUMP, "printcompact(hcp(west))"), "--seed", SEED)
    assert out == ("n KT.KJ.986.Q97532\ne QJ98.AT84.A72.A4\ns 3.63.KJT43.KJT86\nw A76542.Q9752.Q5.\n"
                   f"{hcp(NOTRUMP[3])}\n")


# ---------------------------------------------------------------- random deals: the deals of --format pbn

COLUMN = 20
CELL = re.compile(r"(?:[AKQJT2-9] )+|- ")  # a suit in a column: each rank and a space, or "- "


def column_hands(lines: list[str], seats: int) -> list[str]:
    """The hands ("S.H.D.C") of ``seats`` hands side by side in four suit lines,
    checking dealer's rules: each hand but the last padded to 20 columns."""
    suits: list[list[str]] = [[] for _ in range(seats)]
    for line in lines:
        cells = [line[COLUMN * i : COLUMN * (i + 1)] for i in range(seats - 1)] + [line[COLUMN * (seats - 1) :]]
        for i, cell in enumerate(cells):
            assert CELL.fullmatch(cell.rstrip(" ") + " "), (line, cell)
            assert i == seats - 1 or len(cell) == COLUMN, line
            assert i < seats - 1 or CELL.fullmatch(cell), line  # the last keeps its trailing space, no padding
            suits[i].append("" if cell.strip() == "-" else cell.replace(" ", ""))
    return [".".join(s) for s in suits]


def test_printall_prints_the_pbn_deals_numbered_by_board():
    out = generate("printall", "--first-board", "9")
    blocks = out.split("\n\n")
    assert blocks[-1] == "" and len(blocks) == N + 1, out
    for k, (block, deal) in enumerate(zip(blocks, reference_deals(N, 9))):
        head, *suits = block.split("\n")
        assert head == f"{9 + k:4d}."
        assert column_hands(suits, 4) == [deal[s] for s in SEATS]


def test_printew_prints_west_then_east_of_the_pbn_deals():
    blocks = generate("printew").split("\n\n")
    assert blocks[-1] == "" and len(blocks) == N + 1
    for block, deal in zip(blocks, reference_deals()):
        assert column_hands(block.split("\n"), 2) == [deal["W"], deal["E"]]


def test_printcompact_prints_four_lines_and_the_value():
    lines = generate("printcompact(hcp(north) + hcp(south))").split("\n")
    assert lines[-1] == "" and len(lines) == 5 * N + 1
    for k, deal in enumerate(reference_deals()):
        assert lines[5 * k : 5 * k + 4] == [f"{s.lower()} {deal[s]}" for s in SEATS]
        assert lines[5 * k + 4] == str(hcp(deal["N"]) + hcp(deal["S"]))


def test_printcompact_without_a_value_prints_four_lines():
    assert generate("printcompact").split("\n")[:-1] == [f"{s.lower()} {d[s]}" for d in reference_deals() for s in SEATS]


ONELINE = re.compile(r"n (\S*) e (\S*) s (\S*) w (\S*) (-?\d*)")


def test_printoneline_prints_the_deal_and_the_value_on_one_line():
    lines = generate("printoneline(hcp(south) - hcp(north))").split("\n")
    assert lines[-1] == "" and len(lines) == N + 1
    for line, deal in zip(lines, reference_deals()):
        m = ONELINE.fullmatch(line)
        assert m, line
        assert list(m.groups()[:4]) == [deal[s] for s in SEATS]
        assert int(m.group(5)) == hcp(deal["S"]) - hcp(deal["N"])


def test_printoneline_without_a_value_ends_with_a_space():
    lines = generate("printoneline").split("\n")
    assert lines[:-1] == [" ".join(f"{s.lower()} {d[s]}" for s in SEATS) + " " for d in reference_deals()]


def test_printes_prints_its_strings_and_values():
    out = generate('printes "N=", hcp(north), " NS=", hcp(north) + hcp(south), " W4=", spades(west) >= 4, \\n')
    expected = "".join(f"N={hcp(d['N'])} NS={hcp(d['N']) + hcp(d['S'])} W4={int(len(d['W'].split('.')[0]) >= 4)}\n"
                       for d in reference_deals())
    assert out == expected


def test_actions_run_in_the_scripts_order_on_each_deal():
    lines = generate('printes "deal ", hcp(north), \\n, printoneline, printes "--", \\n').split("\n")
    assert len(lines) == 3 * N + 1
    for k, deal in enumerate(reference_deals()):
        assert lines[3 * k] == f"deal {hcp(deal['N'])}"
        assert ONELINE.fullmatch(lines[3 * k + 1]).groups()[:4] == tuple(deal[s] for s in SEATS)  # type: ignore[union-attr]
        assert lines[3 * k + 2] == "--"


def test_printpbn_is_the_pbn_format():
    """``action printpbn`` alone is ``--format pbn`` byte for byte: the
    script's dealer and vulnerable, deal numbers, the header once."""
    out = generate("printpbn")
    assert out == ok("generate", script(""), "-n", str(N), "--seed", SEED, "--format", "pbn")
    assert out.count('[Dealer "E"]') == out.count('[Vulnerable "NS"]') == N


def test_printpbn_among_other_actions_puts_the_header_first():
    from endplay.parsers import pbn as ep_pbn

    out = generate("printoneline, printpbn")
    assert out.startswith('% PBN 2.1\n% EXPORT\n%\n[Generator "truedeal ') and out.count("% PBN 2.1") == 1
    games = out.split("\n\n")
    assert games[-1] == "" and len(games) == N + 1
    for game, deal in zip(games, reference_deals()):
        oneline, *tags = game.split("\n")[-17:]  # each deal: its printoneline, then its game's 16 tags
        assert ONELINE.fullmatch(oneline).group(1) == deal["N"]  # type: ignore[union-attr]
        (board,) = ep_pbn.loads("\n".join(tags) + "\n")
        assert board.deal.to_pbn() == "N:" + " ".join(deal[s] for s in SEATS)


def test_print_pages_each_seat_after_the_last_deal():
    """print(west, east): East's pages then West's (dealer's seat order),
    rows of four deals numbered by board, each seat's pages ending in a form feed."""
    n = 6
    out = generate("print(west, east)", "--first-board", "3")
    deals = reference_deals(n, 3)
    sections = out.split("\f")
    assert sections[-1] == "" and len(sections) == 3, out
    for section, seat, name in zip(sections, "EW", ("East", "West")):
        assert section.startswith(f"\n\n{name} hands:\n\n\n\n")
        rows = section[len(f"\n\n{name} hands:\n\n\n\n") :].split("\n\n")
        assert rows[-1] == "" and len(rows) == 3
        assert rows[0].split("\n")[0] == "   3." + " " * 15 + "   4." + " " * 15 + "   5." + " " * 15 + "   6." + " " * 15
        assert rows[1].split("\n")[0] == "   7." + " " * 15 + "   8." + " " * 15
        assert column_hands(rows[0].split("\n")[1:], 4) == [d[seat] for d in deals[:4]]
        assert column_hands(rows[1].split("\n")[1:], 2) == [d[seat] for d in deals[4:]]


def test_print_pages_follow_the_per_deal_output():
    out = generate("print(north), printoneline")
    lines, pages = out.split("\n\n\nNorth hands:", 1)
    assert [ONELINE.fullmatch(x).group(1) for x in lines.split("\n")] == [d["N"] for d in reference_deals()]  # type: ignore[union-attr]
    assert pages.endswith("\f")


# ---------------------------------------------------------------- counts, --format, notes


def oneline_count(out: str) -> int:
    lines = out.split("\n")
    assert lines[-1] == "" and all(ONELINE.fullmatch(x) for x in lines[:-1])
    return len(lines) - 1


@pytest.mark.parametrize("counts,extra,expected", [
    ("generate 4\n", (), 4),               # generate is the default count when produce is absent
    ("produce 3\ngenerate 5\n", (), 3),    # produce wins over generate
    ("generate 5\nproduce 2\n", (), 2),    # in any order
    ("", (), 1),                           # neither: one deal
    ("produce 3\ngenerate 5\n", ("-n", "2"), 2),  # -n wins over both
])
def test_the_default_count_is_produce_else_generate_else_one(counts, extra, expected):
    out = generate("printoneline", *extra, counts=counts)
    assert oneline_count(out) == expected
    assert [ONELINE.fullmatch(x).group(1) for x in out.split("\n")[:-1]] == [d["N"] for d in reference_deals()[:expected]]  # type: ignore[union-attr]


def test_a_count_of_zero_in_the_script_is_one_line():
    p = run("generate", script("printoneline", counts="generate 0\n"))
    assert p.returncode == 2 and not p.stdout
    assert p.err == "truedeal: error: the script's generate 0: the number of deals must be at least 1, got 0\n"


@pytest.mark.parametrize("fmt", ["pbn", "json", "text"])
def test_format_given_wins_over_the_actions(fmt):
    with_actions = generate("printall, printoneline(hcp(north))", "--format", fmt)
    assert with_actions == ok("generate", script(""), "-n", str(N), "--seed", SEED, "--format", fmt)


def test_a_script_without_print_actions_writes_pbn():
    assert generate("") == ok("generate", script(""), "-n", str(N), "--seed", SEED, "--format", "pbn")


def test_average_and_frequency_get_one_note_on_stderr(tmp_path):
    path = tmp_path / "nt.dlr"
    path.write_text(script('printoneline, average "south" hcp(south), frequency (hcp(south), 8, 20)'))
    p = run("generate", str(path), "--seed", SEED)
    assert p.returncode == 0
    assert oneline_count(p.out) == N  # the print actions still run; the estimates print nothing
    assert p.err == (f"truedeal: note: the script's average/frequency actions are not estimated here; "
                     f"`truedeal answer {path}` gives their exact values\n")
    assert run("answer", "--help").returncode == 0  # the command the note names
    path.write_text(script("printoneline"))
    assert not run("generate", str(path), "--seed", SEED).stderr


def test_an_action_with_an_unknown_function_is_one_line_with_its_place():
    p = run("generate", script("printoneline, printes c4(north), \\n"), "--seed", SEED)
    assert p.returncode == 2 and not p.stdout and p.err.count("\n") == 1
    assert f"line {CONDITION.count(chr(10)) + 2}, column 30: unknown function 'c4'" in p.err


def test_rnd_in_a_printed_expression_follows_the_seed():
    first = generate("printes rnd(1000), \\n", "-n", "20")
    assert first == generate("printes rnd(1000), \\n", "-n", "20")
    assert len(set(first.split())) > 10 and all(0 <= int(x) < 1000 for x in first.split())


def test_many_deals_stream_in_chunks_and_pages_spill_to_disk(monkeypatch):
    """600 deals: more than one chunk of text (256 deals), and print's pages
    past their memory budget, written to a temporary file and read back."""
    from truedeal.formats import dealer_actions

    monkeypatch.setattr(dealer_actions, "SPOOL_BYTES", 1_000)
    n = 600
    deals = reference_deals(n)
    out = generate("printoneline, print(south)", "-n", str(n))
    lines, pages = out.split("\n\n\nSouth hands:\n\n\n\n")
    assert [ONELINE.fullmatch(x).groups()[:4] for x in lines.split("\n")] == [  # type: ignore[union-attr]
        tuple(d[s] for s in SEATS) for d in deals]
    rows = pages.split("\n\n")
    assert rows[-1] == "\f" and len(rows) == n // 4 + 1
    assert [h for row in rows[:-1] for h in column_hands(row.split("\n")[1:], 4)] == [d["S"] for d in deals]



def test_answers_report_each_exact_count_for_a_progress_bar():
    """``truedeal answer`` shows a bar of exact counts on a terminal: each
    law's counts step it, the average's and the frequency's."""
    from truedeal.analysis.actions import answer_script
    from truedeal.constraints.dealer import load_program

    def steps(actions: str) -> int:
        done: list[int] = []
        answer_script(load_program("condition hcp(north) >= 20\n" + actions), on_count=lambda: done.append(1))
        return len(done)

    alone = steps("")
    average = steps('action average "n" hcp(north)\n')
    both = steps('action average "n" hcp(north), frequency "s" (spades(north), 0, 13)\n')
    assert alone == 1 and average > alone + 10 and both > average + 5
