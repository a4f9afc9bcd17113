"""Tests for truedeal.formats.

Expected values come from the PBN 2.1 / BigDeal / LIN material in
shared/notes/celery-redis-flask-formats.md section 4 (transcribed below), from
independent construction in this file, or from endplay's own readers -- never
from the code under test.
"""

import io
import itertools
import json
import re

import numpy as np
import pytest

from truedeal import formats as F
from truedeal.dealnumber import encode_batch

# ---------------------------------------------------------------------------
# Independent helpers and spec data

RANKS = "AKQJT98765432"
SUITS = "SHDC"
SEATS = "NESW"

# Board rotation table from the notes (BigDeal dealerstr / vuln_index), boards 1..16.
NOTES_DEALER = "N E S W N E S W N E S W N E S W".split()
NOTES_VUL = (
    "None NS EW All NS EW All None EW All None NS All None NS EW".split()
)

# BigDeal 2.0 board 1 (Buenos Aires/FIN1.pbn) quoted in the notes, and the LIN
# line the notes give for the same board.
NOTES_DEAL = "N:AT3.K8654.AT6.93 Q65.A9732.3.KJ42 J974.QJT.K752.A7 K82..QJ984.QT865"
NOTES_LIN = (
    "qx|o1|md|3SJ974HQJTDK752CA7,SK82HDQJ984CQT865,SAT3HK8654DAT6C93"
    "|rh||ah|Board 1|sv|0|pg||"
)
NOTES_PBN_BOARD1 = """[Event "?"]
[Site "?"]
[Date "?"]
[Board "1"]
[West "?"]
[North "?"]
[East "?"]
[South "?"]
[Dealer "N"]
[Vulnerable "None"]
[Deal "N:AT3.K8654.AT6.93 Q65.A9732.3.KJ42 J974.QJT.K752.A7 K82..QJ984.QT865"]
[Scoring "?"]
[Declarer "?"]
[Contract "?"]
[Result "?"]
"""


def owners_from_hands(hands: dict[str, str]) -> np.ndarray:
    """Build an owners row from {'N': 'S.H.D.C', ...} without using truedeal."""
    row = np.full(52, 99, dtype=np.uint8)
    for seat, hand in hands.items():
        for suit, holding in enumerate(hand.split(".")):
            for ch in holding:
                card = 4 * RANKS.index(ch) + suit
                assert row[card] == 99
                row[card] = SEATS.index(seat)
    assert (row != 99).all()
    return row


NOTES_OWNERS = owners_from_hands(
    dict(zip("NESW", NOTES_DEAL[2:].split()))
)


def random_deals(k: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    base = np.repeat(np.arange(4, dtype=np.uint8), 13)
    return np.stack([rng.permutation(base) for _ in range(k)])


def random_numbers(k: int, seed: int) -> list[int]:
    # Stand-ins for deal numbers: arbitrary big ints below D (~2**95.4).
    rng = np.random.default_rng(seed)
    return [int.from_bytes(rng.bytes(12), "big") % (53644737765488792839237440000) for _ in range(k)]


def join(gen) -> str:
    return "".join(gen)


# ---------------------------------------------------------------------------
# Rotation


def test_rotation_table_matches_notes_boards_1_to_32():
    for b in range(1, 33):
        assert SEATS[F.dealer_of_board(b)] == NOTES_DEALER[(b - 1) % 16], b
        assert F.vulnerability_of_board(b) == NOTES_VUL[(b - 1) % 16], b


def test_rotation_matches_endplay_board_rules():
    from endplay.types import Player, Vul

    names = {Vul.none: "None", Vul.ns: "NS", Vul.ew: "EW", Vul.both: "All"}
    for b in range(1, 200):
        assert F.dealer_of_board(b) == int(Player.from_board(b))
        assert F.vulnerability_of_board(b) == names[Vul.from_board(b)]


@pytest.mark.parametrize("bad", [0, -1, -16])
def test_rotation_rejects_non_positive_boards(bad):
    with pytest.raises(ValueError, match="board number"):
        F.dealer_of_board(bad)
    with pytest.raises(ValueError, match="board number"):
        F.vulnerability_of_board(bad)


# ---------------------------------------------------------------------------
# deal_string / parse_deal


def test_deal_string_matches_notes_example():
    assert F.deal_string(NOTES_OWNERS) == NOTES_DEAL
    # Same hands, listed clockwise from West.
    hands = NOTES_DEAL[2:].split()
    assert F.deal_string(NOTES_OWNERS, 3) == "W:" + " ".join(hands[3:] + hands[:3])


def test_deal_string_all_aces_style_hand():
    # North holds A K Q J of spades, AKQ of each other suit; independent layout.
    hands = {
        "N": "AKQJ.AKQ.AKQ.AKQ",
        "E": "T98.JT98.JT9.JT9",
        "S": "765.765.8765.876",
        "W": "432.432.432.5432",
    }
    row = owners_from_hands(hands)
    assert F.deal_string(row) == "N:" + " ".join(hands[s] for s in "NESW")
    assert F.deal_string(row, 2) == "S:" + " ".join(hands[s] for s in "SWNE")


@pytest.mark.parametrize("first", [0, 1, 2, 3])
def test_parse_deal_round_trip_random(first):
    deals = random_deals(200, seed=1234 + first)
    for row in deals:
        s = F.deal_string(row, first)
        assert s[0] == SEATS[first] and s[1] == ":"
        got = F.parse_deal(s)
        assert got.dtype == np.uint8 and got.shape == (52,)
        np.testing.assert_array_equal(got, row)


def test_deal_string_rotation_relation():
    for row in random_deals(20, seed=7):
        base = F.deal_string(row, 0)[2:].split()
        for f in range(4):
            assert F.deal_string(row, f)[2:].split() == base[f:] + base[:f]


def test_deal_string_agrees_with_endplay():
    from endplay.types import Deal

    for row in random_deals(30, seed=99):
        for f in range(4):
            assert endplay_owners(Deal(F.deal_string(row, f))).tolist() == row.tolist()


def test_parse_deal_lenient_forms():
    hands = NOTES_DEAL[2:].split()
    east_first = "e:" + " ".join(hands[1:] + hands[:1])
    assert F.parse_deal(east_first).tolist() == NOTES_OWNERS.tolist()
    assert F.parse_deal(f'[Deal "{NOTES_DEAL}"]').tolist() == NOTES_OWNERS.tolist()
    assert F.parse_deal(f'  [deal   "{east_first}"]  \n').tolist() == NOTES_OWNERS.tolist()
    lower_10 = NOTES_DEAL.lower().replace("t", "10")
    assert F.parse_deal(lower_10).tolist() == NOTES_OWNERS.tolist()
    spaced = "N:  " + "   ".join(hands)
    assert F.parse_deal(spaced).tolist() == NOTES_OWNERS.tolist()
    # Ranks in any order (PBN import format).
    scrambled = "N:3TA.4568K.6TA.39 " + " ".join(hands[1:])
    assert F.parse_deal(scrambled).tolist() == NOTES_OWNERS.tolist()
    # One unknown hand '-' is completed from the remaining cards.
    for i in range(4):
        partial = "N:" + " ".join("-" if j == i else h for j, h in enumerate(hands))
        assert F.parse_deal(partial).tolist() == NOTES_OWNERS.tolist()


def _without_card(hand: str, suit: int, rank_ch: str) -> str:
    suits = hand.split(".")
    suits[suit] = suits[suit].replace(rank_ch, "")
    return ".".join(suits)


def _with_card(hand: str, suit: int, rank_ch: str) -> str:
    suits = hand.split(".")
    suits[suit] = rank_ch + suits[suit]
    return ".".join(suits)


N_H, E_H, S_H, W_H = NOTES_DEAL[2:].split()

MALFORMED = [
    # (input, regex the message must match)
    ("", r"start with a seat"),
    ("X:" + " ".join([N_H, E_H, S_H, W_H]), r"start with a seat"),
    (" ".join([N_H, E_H, S_H, W_H]), r"start with a seat"),
    ('[Deal "' + NOTES_DEAL, r"start with a seat"),
    ("N:" + " ".join([N_H, E_H, S_H]), r"4 hands.*got 3"),
    ("N:", r"4 hands.*got 0"),
    ("N:" + " ".join([N_H, E_H, S_H, W_H, N_H]), r"4 hands.*got 5"),
    ("N:" + " ".join(["AT3.K8654.AT693", E_H, S_H, W_H]), r"north hand .* 3 suit"),
    ("N:" + " ".join([N_H, E_H, S_H, W_H + "."]), r"west hand .* 5 suit"),
    ("N:" + " ".join([N_H, E_H.replace("Q", "X", 1), S_H, W_H]), r"unknown character 'X' in east spades"),
    ("N:" + " ".join([N_H, E_H, S_H.replace("7", "*", 1), W_H]), r"unknown character '\*' in south"),
    ("N:" + " ".join([N_H.replace("T", "1", 1), E_H, S_H, W_H]), r"unknown character '1' in north"),
    # duplicate: north's SA also given to east (east drops its SQ)
    ("N:" + " ".join([N_H, _with_card(_without_card(E_H, 0, "Q"), 0, "A"), S_H, W_H]),
     r"duplicate card SA \(in both north and east\)"),
    ("N:" + " ".join(["AAT3.K8654.AT6.9", E_H, S_H, W_H]), r"duplicate card SA \(twice in north\)"),
    # a card moved from south to west: south 12, west 14
    ("N:" + " ".join([N_H, E_H, _without_card(S_H, 3, "7"), _with_card(W_H, 3, "7")]),
     r"^south has 12 cards, west has 14 cards \(expected 13 each\)$"),
    # a card missing altogether (north lacks C3)
    ("N:" + " ".join([_without_card(N_H, 3, "3"), E_H, S_H, W_H]),
     r"^north has 12 cards \(expected 13 each\); cards not dealt: C3$"),
    # north takes west's CQ: north 14 (reported first), west 12
    ("N:" + " ".join([_with_card(N_H, 3, "Q"), E_H, S_H, _without_card(W_H, 3, "Q")]),
     r"^north has 14 cards, west has 12 cards \(expected 13 each\)$"),
    ("N:" + " ".join(["-", "-", S_H, W_H]), r"at most one hand may be unknown"),
    # an unknown hand does not excuse a short known hand
    ("N:" + " ".join(["-", E_H, _without_card(S_H, 0, "J"), W_H]), r"^south has 12 cards \(expected 13 each\)$"),
]


@pytest.mark.parametrize("text,pattern", MALFORMED)
def test_parse_deal_malformed(text, pattern):
    with pytest.raises(ValueError) as ei:
        F.parse_deal(text)
    msg = str(ei.value)
    assert "\n" not in msg and "\r" not in msg
    assert re.search(pattern, msg), msg


def test_parse_deal_malformed_fixtures_are_what_they_claim():
    # The "14 cards" fixture really gives north 14 cards and west 12.
    hands = next(t for t, p in MALFORMED if p.startswith("^north has 14"))[2:].split()
    assert [len(h.replace(".", "")) for h in hands] == [14, 13, 13, 12]


def test_parse_deal_non_string():
    with pytest.raises(ValueError, match="string"):
        F.parse_deal(NOTES_OWNERS)


def test_deal_string_rejects_bad_rows():
    with pytest.raises(ValueError, match="shape"):
        F.deal_string(np.zeros(51, np.uint8))
    with pytest.raises(ValueError, match="13 cards"):
        F.deal_string(np.zeros(52, np.uint8))
    bad = NOTES_OWNERS.copy()
    bad[0] = 7
    with pytest.raises(ValueError, match="0..3"):
        F.deal_string(bad)
    with pytest.raises(ValueError, match="first seat"):
        F.deal_string(NOTES_OWNERS, 4)


# ---------------------------------------------------------------------------
# Writers: spec conformance


def test_registry():
    assert F.FORMATS == ("numbers", "pbn", "json", "text", "lin")
    assert tuple(F.WRITERS) == F.FORMATS  # FORMATS is named apart (truedeal.choices), for the CLI's help


def test_pbn_matches_bigdeal_board_from_notes():
    out = join(F.pbn([(NOTES_OWNERS[None, :], [42])]))
    assert out.startswith("% PBN 2.1\n% EXPORT\n%\n")
    body = out.split("%\n", 1)[1]
    assert body.startswith('[Generator "truedeal ')
    game = body.split("\n", 1)[1]
    assert game == NOTES_PBN_BOARD1 + '[DealNumber "42"]\n\n'


def test_pbn_export_structure_and_rotation():
    k = 40
    deals, nums = random_deals(k, 5), random_numbers(k, 5)
    out = join(F.pbn([(deals[:17], nums[:17]), (deals[17:], nums[17:])], first_board=3, generator=False))
    head, rest = out[: len("% PBN 2.1\n% EXPORT\n%\n")], out[len("% PBN 2.1\n% EXPORT\n%\n"):]
    assert head == "% PBN 2.1\n% EXPORT\n%\n"
    assert rest.endswith("\n\n")
    games = rest[:-2].split("\n\n")
    assert len(games) == k
    mts = ["Event", "Site", "Date", "Board", "West", "North", "East", "South", "Dealer",
           "Vulnerable", "Deal", "Scoring", "Declarer", "Contract", "Result"]
    for i, game in enumerate(games):
        b = 3 + i
        lines = game.split("\n")
        tags = [re.fullmatch(r'\[(\w+) "([^"]*)"\]', ln).groups() for ln in lines]
        assert [t for t, _ in tags] == mts + ["DealNumber"]
        v = dict(tags)
        assert v["Board"] == str(b)
        assert v["Dealer"] == NOTES_DEALER[(b - 1) % 16]
        assert v["Vulnerable"] == NOTES_VUL[(b - 1) % 16]
        assert v["Deal"][0] == v["Dealer"]  # export format: first = dealer
        assert v["DealNumber"] == str(nums[i])
        for t in ["Event", "Site", "Date", "West", "North", "East", "South",
                  "Scoring", "Declarer", "Contract", "Result"]:
            assert v[t] == "?"
        assert F.parse_deal(v["Deal"]).tolist() == deals[i].tolist()


def test_pbn_crlf():
    out = join(F.pbn([(random_deals(3, 1), [1, 2, 3])], crlf=True))
    assert "\r\n" in out
    assert "\n" not in out.replace("\r\n", "")
    assert out.replace("\r\n", "\n") == join(F.pbn([(random_deals(3, 1), [1, 2, 3])]))


def test_lin_matches_notes_line():
    assert join(F.lin([(NOTES_OWNERS[None, :], [0])])) == NOTES_LIN + "\n"
    assert F.lin_line(NOTES_OWNERS, 1) == NOTES_LIN


def test_lin_fields_and_rotation():
    # Dealer digit per the notes: 1=S 2=W 3=N 4=E; vul 0/n/e/b.
    digit = {"S": "1", "W": "2", "N": "3", "E": "4"}
    sv = {"None": "0", "NS": "n", "EW": "e", "All": "b"}
    deals = random_deals(32, 11)
    lines = join(F.lin([(deals, None)])).split("\n")
    assert lines[-1] == "" and len(lines) == 33
    for i, line in enumerate(lines[:-1]):
        b = i + 1
        m = re.fullmatch(r"qx\|o(\d+)\|md\|(\d)([^|]*)\|rh\|\|ah\|Board (\d+)\|sv\|(.)\|pg\|\|", line)
        assert m, line
        assert m.group(1) == m.group(4) == str(b)
        assert m.group(2) == digit[NOTES_DEALER[i % 16]]
        assert m.group(5) == sv[NOTES_VUL[i % 16]]
        hands = m.group(3).split(",")
        assert len(hands) == 3
        for hand, seat in zip(hands, "SWN"):
            assert re.fullmatch(r"S[AKQJT2-9]*H[AKQJT2-9]*D[AKQJT2-9]*C[AKQJT2-9]*", hand)
            pbn_hand = ".".join(re.split(r"[HDC]", hand[1:]))
            exp = F.deal_string(deals[i], SEATS.index(seat))[2:].split()[0]
            assert pbn_hand == exp


def test_lin_options():
    line = F.lin_line(NOTES_OWNERS, 1, none_vul="o", names=("s", "w", "n", "e"))
    assert line == NOTES_LIN.replace("qx|o1|", "qx|o1|pn|s,w,n,e|").replace("sv|0|", "sv|o|")
    with pytest.raises(ValueError):
        F.lin_line(NOTES_OWNERS, 1, none_vul="x")
    with pytest.raises(ValueError):
        F.lin([], names=("a|b", "", "", ""))


def test_json_lines():
    k = 20
    deals, nums = random_deals(k, 3), random_numbers(k, 3)
    nums[0] = 53644737765488792839237440000 - 1  # far beyond 2**53
    out = join(F.json([(deals[:5], nums[:5]), (deals[5:], nums[5:])], first_board=9))
    lines = out.split("\n")
    assert lines[-1] == ""
    for i, line in enumerate(lines[:-1]):
        obj = json.loads(line)
        b = 9 + i
        assert list(obj) == ["board", "number", "deal", "dealer", "vulnerable"]
        assert obj["board"] == b
        assert obj["number"] == str(nums[i]) and int(obj["number"]) == nums[i]
        assert obj["deal"].startswith("N:")
        assert obj["dealer"] == NOTES_DEALER[(b - 1) % 16]
        assert obj["vulnerable"] == NOTES_VUL[(b - 1) % 16]
        assert F.parse_deal(obj["deal"]).tolist() == deals[i].tolist()


def test_numbers_writer():
    nums = random_numbers(10, 4) + [0, 53644737765488792839237440000 - 1]
    deals = random_deals(12, 4)
    out = join(F.numbers([(deals[:4], nums[:4]), (deals[4:4], []), (deals[4:], nums[4:])]))
    assert out == "".join(f"{n}\n" for n in nums)
    with pytest.raises(ValueError, match="needs deal numbers"):
        join(F.numbers([(deals, None)]))


def test_text_diagram_for_notes_deal():
    # Layout: West at column 0, North/South at column 20, East at column 40,
    # compass letters N/S at column 27 and "W   E" at column 25.
    def row(west, mid_col, mid, east):
        left = west.ljust(mid_col) + mid if mid else west
        return left.ljust(40) + east

    expected = "\n".join([
        "Board 1  Dealer N  Vul None",
        "Deal number 42",
        " " * 20 + "S AT3",
        " " * 20 + "H K8654",
        " " * 20 + "D AT6",
        " " * 20 + "C 93",
        row("S K82", 0, "", "S Q65"),
        row("H -", 27, "N", "H A9732"),
        row("D QJ984", 25, "W   E", "D 3"),
        row("C QT865", 27, "S", "C KJ42"),
        " " * 20 + "S J974",
        " " * 20 + "H QJT",
        " " * 20 + "D K752",
        " " * 20 + "C A7",
    ]) + "\n"
    assert join(F.text([(NOTES_OWNERS[None, :], [42])])) == expected


def test_text_blocks_and_symbols():
    deals = random_deals(5, 8)
    out = join(F.text([(deals, None)], first_board=14, symbols=True))
    blocks = out.rstrip("\n").split("\n\n")
    assert len(blocks) == 5
    for i, block in enumerate(blocks):
        b = 14 + i
        lines = block.split("\n")
        assert lines[0] == f"Board {b}  Dealer {NOTES_DEALER[(b - 1) % 16]}  Vul {NOTES_VUL[(b - 1) % 16]}"
        assert len(lines) == 13  # no number line when numbers is None
        assert all(ln == ln.rstrip() for ln in lines)
        assert [ln.strip()[0] for ln in lines[1:5]] == list("\u2660\u2665\u2666\u2663")
        assert [ln[0] for ln in lines[5:9]] == list("\u2660\u2665\u2666\u2663")


# ---------------------------------------------------------------------------
# Writers: streaming and validation


def test_writers_are_lazy_on_infinite_input():
    def endless():
        seed = 0
        while True:
            seed += 1
            yield random_deals(100, seed), random_numbers(100, seed)

    for name, writer in F.WRITERS.items():
        chunks = list(itertools.islice(writer(endless()), 5))
        assert len(chunks) == 5 and all(isinstance(c, str) and c for c in chunks), name


def test_writers_chunk_size_bounded():
    from truedeal.formats.numbersfile import NUMBER_LINES

    deals = random_deals(2 * NUMBER_LINES + 7, 21)
    chunks = list(F.numbers([(deals, list(range(len(deals))))]))
    assert [c.count("\n") for c in chunks] == [NUMBER_LINES] * 2 + [7]
    chunks = list(F.WRITERS["json"]([(deals[: 3 * F.CHUNK_BOARDS + 7], None)]))
    assert [c.count("\n") for c in chunks] == [F.CHUNK_BOARDS] * 3 + [7]


@pytest.mark.parametrize("name", list(F.WRITERS))
def test_batches_of_numbers_alone_go_to_the_numbers_writer_only(name):
    deals = random_deals(5, 8)
    limbs = encode_batch(deals)
    if name == "numbers":
        assert join(F.numbers([(None, limbs)])) == join(F.numbers([(deals, limbs)]))
    else:
        with pytest.raises(ValueError, match="needs the deals' cards"):
            join(F.WRITERS[name]([(None, limbs)]))


@pytest.mark.parametrize("name", list(F.WRITERS))
def test_writers_split_invariance(name):
    """Output does not depend on how deals are split into batches."""
    deals, nums = random_deals(30, 31), random_numbers(30, 31)
    whole = join(F.WRITERS[name]([(deals, nums)], first_board=5))
    parts = join(F.WRITERS[name]([(deals[:1], nums[:1]), (deals[1:1], []),
                                  (deals[1:29], nums[1:29]), (deals[29:], nums[29:])], first_board=5))
    assert whole == parts


@pytest.mark.parametrize("name", list(F.WRITERS))
def test_writers_validate(name):
    w = F.WRITERS[name]
    deals = random_deals(3, 2)
    with pytest.raises(ValueError, match="numbers"):
        join(w([(deals, [1, 2])]))
    with pytest.raises(ValueError, match="shape"):
        join(w([(deals[:, :51], [1, 2, 3])]))
    bad = deals.copy()
    bad[1] = 0  # north holds all 52 cards
    with pytest.raises(ValueError, match="deal 1 .board 2.*13 cards"):
        join(w([(bad, [1, 2, 3])]))
    with pytest.raises(ValueError, match="board number"):
        w([(deals, [1, 2, 3])], first_board=0)


# ---------------------------------------------------------------------------
# Real-client checks with endplay


def endplay_owners(deal) -> np.ndarray:
    """Owners row from an endplay Deal (endplay: N E S W = 0..3, S H D C = 0..3,
    Rank.RA = 1 << 14 ... Rank.R2 = 1 << 2)."""
    from endplay.types import Player

    row = np.full(52, 99, dtype=np.uint8)
    for player in Player:
        for card in deal[player]:
            rank = 15 - int(card.rank).bit_length()  # A -> 0 ... 2 -> 12
            c = 4 * rank + int(card.suit)
            assert row[c] == 99
            row[c] = int(player)
    assert (row != 99).all()
    return row


def endplay_vul_name(v) -> str:
    from endplay.types import Vul

    return {Vul.none: "None", Vul.ns: "NS", Vul.ew: "EW", Vul.both: "All"}[v]


@pytest.mark.parametrize("crlf", [False, True])
def test_endplay_reads_our_pbn(crlf):
    from endplay.parsers import pbn as ep_pbn

    k = 50
    deals, nums = random_deals(k, 2024), random_numbers(k, 2024)
    text = join(F.pbn([(deals[:20], nums[:20]), (deals[20:], nums[20:])], first_board=1, crlf=crlf))
    boards = ep_pbn.load(io.StringIO(text, newline=""))
    assert len(boards) == k
    for i, bd in enumerate(boards):
        b = i + 1
        assert bd.board_num == b
        assert endplay_owners(bd.deal).tolist() == deals[i].tolist()
        assert endplay_vul_name(bd.vul) == NOTES_VUL[(b - 1) % 16]
        # endplay keeps the Dealer tag only when a contract is present and
        # otherwise derives the dealer from the board number.
        assert SEATS[int(bd.dealer)] == NOTES_DEALER[(b - 1) % 16]
        assert bd.info["DealNumber"] == str(nums[i])
        for tag in ("Event", "Site", "Date", "West", "North", "East", "South", "Scoring"):
            assert bd.info[tag] == "?"
        assert bd.contract is None
    assert boards[0].info["Generator"].startswith("truedeal ")


def test_endplay_reads_our_pbn_from_later_board():
    from endplay.parsers import pbn as ep_pbn

    deals, nums = random_deals(20, 77), random_numbers(20, 77)
    boards = ep_pbn.loads(join(F.pbn([(deals, nums)], first_board=13)))
    assert [bd.board_num for bd in boards] == list(range(13, 33))
    for i, bd in enumerate(boards):
        assert endplay_owners(bd.deal).tolist() == deals[i].tolist()
        assert endplay_vul_name(bd.vul) == NOTES_VUL[(12 + i) % 16]


def test_endplay_reads_a_fixed_dealer_and_vulnerability():
    """West deals every board, all vulnerable: endplay reads the vulnerability of
    the PBN and LIN files, the dealer of the LIN, and every deal; the PBN
    Deal values start with the dealer (export rule), in the compiled and the Python writer."""
    from endplay.parsers import lin as ep_lin
    from endplay.parsers import pbn as ep_pbn

    deals, nums = random_deals(20, 91), random_numbers(20, 91)
    west_all = F.Rotation(dealer=3, vulnerability="All")
    pbn_text = join(F.pbn([(deals, nums)], first_board=5, rotation=west_all))
    lin_text = join(F.lin([(deals, None)], first_board=5, rotation=west_all, none_vul="o", names=("",) * 4))
    for boards in (ep_pbn.loads(pbn_text), ep_lin.loads(lin_text)):
        assert [endplay_owners(bd.deal).tolist() for bd in boards] == deals.tolist()
        assert {endplay_vul_name(bd.vul) for bd in boards} == {"All"}
    assert {SEATS[int(bd.dealer)] for bd in ep_lin.loads(lin_text)} == {"W"}
    assert re.findall(r'\[Dealer "(\w)"\]', pbn_text) == ["W"] * 20
    assert all(d.startswith("W:") for d in re.findall(r'\[Deal "([^"]+)"\]', pbn_text))


def test_rotation_words():
    assert F.Rotation.from_words("south", "BOTH") == F.Rotation(2, "All")
    assert F.Rotation.from_words(None, "rotate", F.Rotation(1, "NS")) == F.Rotation(1, None)
    assert F.Rotation(1, "NS").words() == ("E", "ns") and F.STANDARD.words() == ("rotate", "rotate")
    assert F.Rotation.from_words(*F.Rotation(0, "None").words()) == F.Rotation(0, "None")
    with pytest.raises(ValueError, match="not a vulnerability") as e:
        F.Rotation.from_words("N", "red")
    assert e.value.field == "vulnerability"


def test_endplay_reads_our_lin():
    """endplay's LIN reader splits a file into boards at 'pn|' and accepts only
    'o' for "no one vulnerable", so use the pn/none_vul options for it."""
    from endplay.parsers import lin as ep_lin

    k = 50
    deals = random_deals(k, 4242)
    text = join(F.lin([(deals[:30], None), (deals[30:], None)], none_vul="o", names=("", "", "", "")))
    boards = ep_lin.load(io.StringIO(text))
    assert len(boards) == k
    for i, bd in enumerate(boards):
        b = i + 1
        assert bd.board_num == b
        assert endplay_owners(bd.deal).tolist() == deals[i].tolist()
        assert SEATS[int(bd.dealer)] == NOTES_DEALER[(b - 1) % 16]
        assert endplay_vul_name(bd.vul) == NOTES_VUL[(b - 1) % 16]


def test_endplay_reads_default_lin_md_field():
    """Default (BigDeal) output: check the md field with endplay's own LIN deal
    and dealer decoders, line by line."""
    from endplay.types import Deal, Player

    deals = random_deals(50, 4343)
    for i, line in enumerate(join(F.lin([(deals, None)], first_board=1)).splitlines()):
        fields = line.split("|")
        md = fields[fields.index("md") + 1]
        assert SEATS[int(Player.from_lin(int(md[0])))] == NOTES_DEALER[i % 16]
        assert endplay_owners(Deal.from_lin(md, complete_deal=True)).tolist() == deals[i].tolist()
