"""Session files of a tournament set, read back by real readers.

PBN and LIN are read by endplay's parsers and the double dummy and par are
checked against endplay's own DDS (calc_dd_table, par) on the deals endplay
read.  DUP, DLM and BRI are checked byte for byte against fixtures written
by hand from the format descriptions in shared/notes (section 4), for the
BigDeal board quoted there.  The PDF is rendered with pdftoppm and its text
extracted with pdftotext.
"""

import csv
import io
import shutil
import subprocess
from html.parser import HTMLParser

import numpy as np
import pytest

from truedeal.formats.bri import bri_bytes, read_bri
from truedeal.formats.csvfile import csv_text
from truedeal.formats.dlm import dlm_text, read_dlm
from truedeal.formats.dup import dup_bytes, read_dup
from truedeal.formats.html import html_text
from truedeal.formats.linset import lin_set
from truedeal.formats.pbnset import pbn_set
from truedeal.formats.pdf import pdf_bytes
from truedeal.formats.records import FormatLimit, HandRecord
from truedeal.tournament.solve import solve_boards

RANKS = "AKQJT98765432"
SEATS = "NESW"
VUL16 = "None NS EW All NS EW All None EW All None NS All None NS EW".split()
NOTES_DEAL = "N:AT3.K8654.AT6.93 Q65.A9732.3.KJ42 J974.QJT.K752.A7 K82..QJ984.QT865"


def owners_of(deal: str) -> tuple:
    """Owners row of a PBN deal starting with N, built without truedeal."""
    row = [None] * 52
    for seat, hand in enumerate(deal[2:].split()):
        for suit, holding in enumerate(hand.split(".")):
            for ch in holding:
                row[4 * RANKS.index(ch) + suit] = seat
    assert None not in row
    return tuple(row)


def random_records(k: int, seed: int, first: int = 1) -> list[HandRecord]:
    rng = np.random.default_rng(seed)
    base = np.repeat(np.arange(4), 13)
    return [HandRecord(b, (b - 1) % 4, VUL16[(b - 1) % 16], tuple(int(x) for x in rng.permutation(base)),
                       int(rng.integers(1 << 62)) * 7, "spec1")
            for b in range(first, first + k)]


def endplay_owners(deal) -> tuple:
    from endplay.types import Player

    row = [None] * 52
    for p in Player:
        for card in deal[p]:
            row[4 * (15 - int(card.rank).bit_length()) + int(card.suit)] = int(p)
    return tuple(row)


@pytest.fixture(scope="module")
def solved():
    """Six random boards (7-12: every dealer and four vulnerabilities), solved."""
    return solve_boards(random_records(6, 42, first=7))


# --------------------------------------------------------------------- PBN


@pytest.mark.parametrize("crlf", [True, False])
def test_endplay_reads_pbn_with_dd_and_par(solved, crlf):
    from endplay.dds import calc_dd_table, par
    from endplay.parsers import pbn as ep_pbn
    from endplay.types import Denom, Player, Vul

    text = pbn_set(solved, event="Club Pairs", site="Club", date="2025.03.14", crlf=crlf)
    lines = text.split("\n")[:-1]
    assert all(ln.endswith("\r") for ln in lines) == crlf
    boards = ep_pbn.load(io.StringIO(text, newline=""))
    assert len(boards) == len(solved)
    names = {Vul.none: "None", Vul.ns: "NS", Vul.ew: "EW", Vul.both: "All"}
    for r, bd in zip(solved, boards):
        assert bd.board_num == r.board
        assert endplay_owners(bd.deal) == r.owners
        assert names[bd.vul] == r.vulnerable
        assert (bd.info["Event"], bd.info["Site"], bd.info["Date"]) == ("Club Pairs", "Club", "2025.03.14")
        # DD digits: declarers N S E W, strains NT S H D C (the notes' order), from endplay's own DDS.
        table = calc_dd_table(bd.deal)
        order = (Denom.nt, Denom.spades, Denom.hearts, Denom.diamonds, Denom.clubs)
        want = "".join(f"{table[d, Player(s)]:x}" for s in (0, 2, 1, 3) for d in order)
        assert bd.info["DoubleDummyTricks"] == want
        rows = bd.info["OptimumResultTable"]["rows"]
        assert [(row[0], row[1], int(row[2])) for row in rows] == [
            ("NESW"[s], n, table[d, Player(s)]) for s in (0, 2, 1, 3) for n, d in zip(("NT", "S", "H", "D", "C"), order)]
        p = par(table, getattr(Vul, {"None": "none", "NS": "ns", "EW": "ew", "All": "both"}[r.vulnerable]),
                Player("NESW".index(SEATS[r.dealer])))
        assert bd.info["OptimumScore"] == f"NS {p.score}"
        assert len(bd.info["ParContract"].split("; ")) == len(list(p))


def test_pbn_has_the_15_mandatory_tags_in_order(solved):
    text = pbn_set(solved[:1], event="E", site="S", date="2025.01.02")
    tags = [ln.split(" ", 1)[0][1:] for ln in text.split("\r\n") if ln.startswith("[")]
    mts = ["Event", "Site", "Date", "Board", "West", "North", "East", "South", "Dealer",
           "Vulnerable", "Deal", "Scoring", "Declarer", "Contract", "Result"]
    assert tags[0] == "Generator"
    assert tags[1:16] == mts
    supplemental = tags[16:]
    assert supplemental == sorted(supplemental)  # export: supplemental tags sorted
    assert supplemental == ["DealNumber", "DoubleDummyTricks", "OptimumResultTable", "OptimumScore", "ParContract"]


# --------------------------------------------------------------------- LIN


def test_endplay_reads_every_lin_board():
    from endplay.parsers import lin as ep_lin
    from endplay.types import Vul

    recs = random_records(20, 5)
    text = lin_set(recs)
    assert text.splitlines()[0].startswith("pn|,,,|st||md|3")  # board 1: dealer N is digit 3
    boards = ep_lin.loads(text)
    assert len(boards) == 20
    names = {Vul.none: "None", Vul.ns: "NS", Vul.ew: "EW", Vul.both: "All"}
    for r, bd in zip(recs, boards):
        assert bd.board_num == r.board
        assert endplay_owners(bd.deal) == r.owners
        assert int(bd.dealer) == r.dealer
        assert names[bd.vul] == r.vulnerable


# --------------------------------------------------- dealing machines (notes)

# The notes' BigDeal board 1, hand-translated from the descriptions:
# machine numbers 01=SA .. 13=S2, 14=HA .. 52=C2, hands N, E, S, ascending.
BRI_N = "01" "05" "12" "15" "20" "22" "23" "24" "27" "31" "35" "45" "51"
BRI_E = "03" "09" "10" "14" "19" "21" "25" "26" "38" "41" "43" "50" "52"
BRI_S = "04" "06" "08" "11" "16" "17" "18" "28" "34" "36" "39" "40" "47"
# DGE: glyph 0x06 S, 0x03 H, 0x04 D, 0x05 C, each followed by the ranks; N E S W.
DGE = (b"\x06AT3\x03K8654\x04AT6\x0593" b"\x06Q65\x03A9732\x043\x05KJ42"
       b"\x06J974\x03QJT\x04K752\x05A7" b"\x06K82\x03\x04QJ984\x05QT865")
# DLM: one letter per card pair SA-SK, SQ-SJ, ..., C3-C2: 'a' + 4*owner + owner.
DLM_LETTERS = "dgcofi" "n" "ckeeaf" "cpdocnk" "hhdlnb"


def notes_record(board=1) -> HandRecord:
    return HandRecord(board, (board - 1) % 4, VUL16[(board - 1) % 16], owners_of(NOTES_DEAL), 1)


def test_dup_bytes_match_the_description():
    data = dup_bytes([notes_record()])
    assert len(data) == 156
    assert data == (BRI_N + BRI_E + BRI_S).encode() + DGE + b"YN1  0 1  "
    two = dup_bytes([notes_record(1), notes_record(2)])
    assert two[146:156] == two[302:312] == b"YN1  0 2  "
    assert read_dup(two) == {1: owners_of(NOTES_DEAL), 2: owners_of(NOTES_DEAL)}


def test_bri_bytes_match_the_description():
    data = bri_bytes([notes_record()])
    assert data == (BRI_N + BRI_E + BRI_S).encode() + b" " * 18 + b"\0" * 32
    assert read_bri(data, 1) == {1: owners_of(NOTES_DEAL)}


def test_dlm_matches_the_description():
    text = dlm_text([notes_record(1)])
    lines = text.split("\r\n")
    assert lines[-1] == ""
    head = lines[:10]
    assert head[0] == "[Document]" and head[2] == "Status=Show"
    assert head[4:6] == ["From board=1", "To board=1"]
    assert head[9] == f"Checksum={0 ^ 1 ^ 1 ^ 1}"
    check = 1
    for ch in DLM_LETTERS:
        check ^= ord(ch)
    assert lines[10:12] == ["Duplicates 01=0", f"Board 01={DLM_LETTERS}{check:03d}"]
    # filler boards 2..99, each "aaaaaabffffffkkkkkklpppppp" with checksum board ^ 14
    assert len(lines) == 10 + 2 * 99 + 1
    assert lines[12:14] == ["Duplicates 02=0", f"Board 02=aaaaaabffffffkkkkkklpppppp{2 ^ 14:03d}"]
    assert lines[-2] == f"Board 99=aaaaaabffffffkkkkkklpppppp{99 ^ 14:03d}"
    assert read_dlm(text) == {1: owners_of(NOTES_DEAL)}


def test_machine_formats_round_trip_random_boards():
    recs = random_records(27, 9, first=28)
    want = {r.board: r.owners for r in recs}
    assert read_dup(dup_bytes(recs)) == want
    assert read_dlm(dlm_text(recs)) == want
    assert read_bri(bri_bytes(recs), 28) == want


def test_machine_formats_stop_at_board_99():
    recs = random_records(3, 1, first=98)
    for write in (dup_bytes, dlm_text, bri_bytes):
        with pytest.raises(FormatLimit, match="99"):
            write(recs)


# ------------------------------------------------------------------ CSV/HTML


def test_csv_one_row_per_board(solved):
    from endplay.evaluate import hcp
    from endplay.types import Deal, Player

    rows = list(csv.DictReader(io.StringIO(csv_text(solved))))
    assert len(rows) == len(solved)
    for r, row in zip(solved, rows):
        deal = Deal(row["deal"])
        assert endplay_owners(deal) == r.owners
        assert int(row["board"]) == r.board and row["vulnerable"] == r.vulnerable
        assert [int(row[f"hcp_{s}"]) for s in "nesw"] == [hcp(deal[Player(i)]) for i in range(4)]
        assert int(row["par_score"]) == r.dd.par_score
        assert int(row["dd_s_nt"]) == r.dd.tricks[2][0]


class _Boards(HTMLParser):
    def __init__(self):
        super().__init__()
        self.pages, self.tables, self.text = [], 0, []

    def handle_starttag(self, tag, attrs):
        cls = dict(attrs).get("class", "")
        if cls == "page":
            self.pages.append(0)
        elif cls == "board":
            self.pages[-1] += 1
        elif cls == "dd":
            self.tables += 1

    def handle_data(self, data):
        self.text.append(data)


def test_html_hand_record(solved):
    p = _Boards()
    p.feed(html_text(solved, title="Club Pairs - session 1"))
    assert p.pages == [4, 2] and p.tables == 6
    text = " ".join(p.text)
    for r in solved:
        assert f"Board {r.board}" in text
        assert f"Par NS {r.dd.par_score}" in text
    assert "Dealer W" in text and "HCP" in text


# ---------------------------------------------------------------------- PDF


@pytest.mark.skipif(not shutil.which("pdftoppm") or not shutil.which("pdftotext"), reason="poppler-utils missing")
def test_pdf_renders_and_holds_the_hand_record(solved, tmp_path):
    from PIL import Image

    path = tmp_path / "1.pdf"
    path.write_bytes(pdf_bytes(solved, title="Club Pairs - session 1"))
    subprocess.run(["pdftoppm", "-r", "40", "-png", str(path), str(tmp_path / "page")], check=True)
    pages = sorted(tmp_path.glob("page*.png"))
    assert len(pages) == 2  # 6 boards, 4 to a page
    img = np.asarray(Image.open(pages[0]).convert("L"))
    assert abs(img.shape[0] / img.shape[1] - 297 / 210) < 0.02  # A4 portrait
    dark = img < 128
    assert 0.005 < dark.mean() < 0.3  # ink on the page, not a blank or black sheet
    h, w = dark.shape  # every quarter of the first page holds a board
    for qy in (slice(h // 10, h // 2), slice(h // 2, h)):
        for qx in (slice(0, w // 2), slice(w // 2, w)):
            assert dark[qy, qx].mean() > 0.003
    text = subprocess.run(["pdftotext", "-layout", str(path), "-"], check=True, capture_output=True, text=True).stdout
    for r in solved:
        assert f"Board {r.board}" in text
        assert f"Par NS {r.dd.par_score}" in text
        for seat, pts in zip(("North", "East", "South", "West"), r.hcp()):
            assert f"{seat} {pts}" in text
    assert text.count("NT") >= 6
