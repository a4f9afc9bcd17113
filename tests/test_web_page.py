"""The page's logic (static/logic.js), run by a real JavaScript engine (node),
checked against the Python spec model and independent counts; and the markup
and stylesheet the page needs (presets, help, editable spec, print view,
sticky odds on a phone).  The browser test (test_web_e2e.py) drives the whole
page where chromium is installed."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from truedeal.formats.html import html_text
from truedeal.formats.records import HandRecord
from truedeal.spec import load_spec

ROOT = Path(__file__).resolve().parents[1]
STATIC = ROOT / "web" / "truedeal_web" / "static"
NODE = shutil.which("node") or shutil.which("nodejs")
HCP_OF = {"A": 4, "K": 3, "Q": 2, "J": 1}

needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed")


def js(calls: list[tuple[str, list]]) -> list:
    """Results of ``TruedealLogic.<name>(*args)`` for each call, in node."""
    script = (f"const L = require({json.dumps(str(STATIC / 'logic.js'))});\n"
              f"const calls = {json.dumps(calls)};\n"
              "process.stdout.write(JSON.stringify(calls.map(([f, a]) => L[f](...a))));\n")
    out = subprocess.run([NODE, "-e", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def fields(**seats) -> dict:
    out = {}
    for seat, values in seats.items():
        f = {k: ["", ""] for k in ("hcp", "spades", "hearts", "diamonds", "clubs")}
        f["shape"] = ""
        f.update(values)
        out[seat] = f
    return out


@needs_node
def test_full_ranges_are_not_sent():
    """Typing 0 in a minimum box (or 0..top) constrains nothing: no field is sent."""
    got = js([
        ("specFromFields", [fields(north={"hcp": ["0", ""]})]),
        ("specFromFields", [fields(north={"hcp": ["0", "37"], "spades": ["", "13"]})]),
        ("specFromFields", [fields(north={"hcp": ["0", "36"], "spades": ["5", ""]})]),
        ("specFromFields", [fields(east={"hcp": ["", "10"], "shape": " any 4333 "})]),
    ])
    assert got[0] == {} and got[1] == {}
    assert got[2] == {"north": {"hcp": [0, 36], "spades": [5, 13]}}
    assert got[3] == {"east": {"hcp": [0, 10], "shape": "any 4333"}}
    for spec in got:  # and each is a valid spec the server reads the same way
        assert load_spec(spec).canonical() == spec


@needs_node
@pytest.mark.parametrize("spec", [
    {"north": {"hcp": [15, 17], "shape": "any 4333 + any 4432 + any 5332"}},
    {"N": {"hcp": 12}, "s": {"spades": 5, "clubs": [0, 2]}, "west": {"shape": "any 5xxx - 5xxx"}},
    {"east": {"diamonds": [6, 13], "clubs": 6}, "west": {"spades": 9}},
])
def test_a_job_or_pasted_spec_fills_the_form(spec):
    """``?job=ID`` and the spec panel put a spec back in the form: reading the
    form again gives the spec the server would use."""
    canonical = load_spec(spec).canonical()
    back, from_canonical = js([
        ("specFromFields", [js([("fieldsFromSpec", [spec])])[0]]),
        ("specFromFields", [js([("fieldsFromSpec", [canonical])])[0]]),
    ])
    assert load_spec(back).canonical() == canonical
    assert from_canonical == canonical


@needs_node
def test_only_what_is_no_json_object_is_refused():
    script = (f"const L = require({json.dumps(str(STATIC / 'logic.js'))});\n"
              "for (const s of [[1], null, 'north', 3]) {\n"
              "  try { L.splitSpec(s); console.log('accepted'); } catch (e) { console.log(e.message); }\n}\n")
    out = subprocess.run([NODE, "-e", script], capture_output=True, text=True, timeout=60).stdout.splitlines()
    assert out == ["a spec is a JSON object"] * 4


#: Specs the API reads and the form has no box for (issue: "the form has no such field").
BEYOND_THE_FORM = [
    ({"north": {"hcp": [15, 17], "controls": [5, 12]}}, ["north.controls"]),
    ({"N": {"holds": ["SA"], "spades": {"length": [5, 6], "top3": 2}}, "s": {"hcp": 10, "losers": [0, 7]}},
     ["north.holds", "north.spades", "south.losers"]),
    ({"north": {"any_of": [{"hcp": [12, 14]}, {"hcp": [18, 19]}], "shape": "any 4333"}, "condition": "hcp(north) > 13"},
     ["north.any_of", "condition"]),
    ({"east": {"not": {"spades": 5}, "points": {"scale": [3, 2, 1], "range": [2, 6]}, "clubs": [0, 3]},
      "any_of": [{"north": {"hcp": 20}}, {"south": {"hcp": 20}}], "script": "condition hcp(west) > 3\n"},
     ["east.not", "east.points", "any_of", "script"]),
]


@needs_node
@pytest.mark.parametrize("spec, hidden", BEYOND_THE_FORM, ids=["controls", "holds and a suit object", "either-or", "the rest"])
def test_a_spec_the_form_cannot_show_is_split_not_refused(spec, hidden):
    """The form shows its part and names the rest; that rest put back beside
    the form's spec is the spec the API reads, unchanged."""
    split = js([("splitSpec", [spec])])[0]
    assert split["hidden"] == hidden
    form = js([("specFromFields", [split["fields"]])])[0]
    assert all(not set(seat) - {"hcp", "spades", "hearts", "diamonds", "clubs", "shape"} for seat in form.values())
    merged = js([("mergeSpec", [form, split["rest"]])])[0]
    assert load_spec(merged).canonical() == load_spec(spec).canonical()


@needs_node
def test_an_edit_of_the_form_goes_beside_the_rest_and_wins_where_both_say():
    rest = {"north": {"controls": [5, 12], "spades": {"length": 5}}, "condition": "hcp(south) > 3"}
    form = {"north": {"hcp": [15, 16], "spades": [6, 13]}, "west": {"hcp": [0, 5]}}
    merged = js([("mergeSpec", [form, rest])])[0]
    assert merged == {"north": {"controls": [5, 12], "spades": [6, 13], "hcp": [15, 16]},
                      "condition": "hcp(south) > 3", "west": {"hcp": [0, 5]}}


@needs_node
def test_what_the_api_refuses_is_left_for_it_to_name():
    """A field or seat nobody knows goes to the API as typed, whose one line names it."""
    from truedeal.spec import SpecError

    for spec, name in (({"nort": {"hcp": 3}}, "nort"), ({"north": {"hcpp": 3}}, "north.hcpp")):
        split = js([("splitSpec", [spec])])[0]
        assert split["hidden"] == [name]
        merged = js([("mergeSpec", [js([("specFromFields", [split["fields"]])])[0], split["rest"]])])[0]
        with pytest.raises(SpecError, match=name.split(".")[-1]):
            load_spec(merged)


@needs_node
def test_progress_names_the_phase():
    def status(state, e=(0, 0), d=(0, 0), deals=(0, 20_000), note=None):
        return {"state": state, "note": note, "error": None,
                "progress": {"done": deals[0], "total": deals[1],
                             "enumeration": {"done": e[0], "total": e[1]},
                             "drawing": {"done": d[0], "total": d[1], "deals_done": deals[0], "deals_total": deals[1]}}}

    got = js([("progressText", [s]) for s in (
        status("queued", note="no worker has been seen"),
        status("enumerating", e=(3, 8)),
        status("drawing", e=(8, 8), d=(1, 5), deals=(4096, 20_000)),
        status("done", e=(8, 8), d=(5, 5), deals=(20_000, 20_000)),
    )])
    assert got[0].startswith("Queued") and "no worker has been seen" in got[0]
    assert got[1] == "Listing the cases: 3 of 8 parts" and "deals" not in got[1]
    assert got[2] == "Dealing: 4,096 of 20,000 deals"
    assert got[3] == "Done: 20,000 of 20,000 deals"


SET_PANEL = {"event": " Club pairs ", "site": "", "date": "2026-12-05", "sessions": "3", "boards": "27",
             "dealer": "rotate", "vulnerability": "rotate", "rotateToDealer": False, "doubleDummy": True}
NT = {"north": {"hcp": [15, 17], "shape": "any 4333 + any 4432 + any 5332"}}


@needs_node
def test_set_panel_builds_a_set_file_the_server_reads():
    from truedeal.tournament.setfile import parse_set

    practice = {**SET_PANEL, "sessions": "1", "boards": "16", "dealer": "north", "vulnerability": "none",
                "rotateToDealer": True, "doubleDummy": False}
    club, lesson = js([("setFromForm", [SET_PANEL, NT]), ("setFromForm", [practice, {"script": "condition 1\n"}])])
    assert club == {"event": "Club pairs", "site": "?", "date": "2026-12-05",
                    "sessions": [{"name": str(i), "boards": [1, 27]} for i in (1, 2, 3)], "spec": NT,
                    "dealer": "rotate", "vulnerability": "rotate", "double_dummy": True}
    assert lesson["rotate_to_dealer"] is True and lesson["sessions"] == [{"name": "1", "boards": [1, 16]}]
    sf = parse_set(lesson)
    assert (sf.dealer, sf.vulnerability, sf.double_dummy) == ("north", "none", False)
    assert [s.count for s in parse_set(club).sessions] == [27, 27, 27]


@needs_node
def test_set_panel_names_the_field_out_of_range():
    bad = [{**SET_PANEL, "sessions": "0"}, {**SET_PANEL, "sessions": "21"}, {**SET_PANEL, "boards": "2.5"},
           {**SET_PANEL, "boards": "100"}, {**SET_PANEL, "boards": ""}]
    script = (f"const L = require({json.dumps(str(STATIC / 'logic.js'))});\n"
              f"for (const f of {json.dumps(bad)}) {{\n"
              "  try { L.setFromForm(f, {}); console.log('accepted'); } catch (e) { console.log(e.message); }\n}\n")
    out = subprocess.run([NODE, "-e", script], capture_output=True, text=True, timeout=60).stdout.splitlines()
    assert out == ["Sessions: a whole number from 1 to 20."] * 2 + ["Boards per session: a whole number from 1 to 99."] * 3


@needs_node
def test_set_phase_wording():
    got = js([("setPhaseText", [s]) for s in (
        {"id": "x", "state": "queued"},
        {"state": "solving", "phase": "solving 1,200 / 3,000 boards", "boards": 3000},
        {"state": "done", "phase": "done", "boards": 81},
        {"state": "failed", "phase": "failed", "error": "spec spec1: no deal fits"},
    )])
    assert got == ["Queued", "Solving 1,200 / 3,000 boards", "Done: 81 boards", "Failed: spec spec1: no deal fits"]


@needs_node
def test_hand_points_match_an_independent_count():
    out = subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "-m", "truedeal.cli", "generate", "{}", "-n", "25",
                          "--seed", "page hcp", "--format", "json"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    hands = [h for line in out.stdout.splitlines() for h in json.loads(line)["deal"][2:].split()]
    want = [sum(HCP_OF.get(c, 0) for c in hand) for hand in hands]
    assert js([("handHcp", [h]) for h in hands]) == want
    assert sum(want) == 40 * 25


def test_page_markup_for_new_users():
    from truedeal_web import WebConfig, create_app

    app = create_app(WebConfig.from_env({}, redis_url="redis://127.0.0.1:1/0"))
    try:
        resp = app.test_client().get("/")
        html = resp.get_data(as_text=True)
    finally:
        app.extensions["truedeal"].counter.close()
    assert html.index("logic.js") < html.index("app.js")
    assert re.search(r'<textarea id="spec-json"', html) and 'id="spec-apply"' in html and 'id="spec-file"' in html
    assert html.count('class="balanced preset"') == 4 and 'id="shape-help"' in html
    assert 'placeholder="any 4333 + any 5332"' not in html  # a placeholder that looked like a value
    assert 'id="print"' in html
    # the hand record shown in the set panel's frame keeps its one style block
    record = html_text([HandRecord(1, 0, "None", tuple(i % 4 for i in range(52)), 1)], title="t")
    style = record[record.index("<style>") + 7:record.index("</style>")]
    digest = base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()
    assert f"style-src 'self' 'sha256-{digest}';" in resp.headers["Content-Security-Policy"]
    assert html.index("app.js") < html.index("sets.js") and 'id="set-panel"' in html and 'id="set-preview"' in html
    css = (STATIC / "app.css").read_text()
    phone = css[css.index("@media (max-width: 720px)"):]
    assert "position: sticky" in phone.split("}\n}")[0] and '"center" "north"' in phone
    assert "@media print" in css
    # the shape box has a row of its own: the balanced pattern (30 characters) fits in it
    assert re.search(r"\.row input\.shape \{[^}]*flex: 1 1 100%", css)


def test_the_page_links_the_language_reference_the_cli_prints():
    """The page's language links (header, JSON panel, script panel) lead to
    /language: the text of `truedeal help`, JSON specs and dealer scripts."""
    from truedeal.help_text import language_help
    from truedeal_web import WebConfig, create_app

    app = create_app(WebConfig.from_env({}, redis_url="redis://127.0.0.1:1/0"))
    try:
        client = app.test_client()
        html = client.get("/").get_data(as_text=True)
        resp = client.get("/language")
    finally:
        app.extensions["truedeal"].counter.close()
    assert html.count('<a href="/language" class="language-link">') == 3
    assert 'id="spec-partial"' in html and 'role="status"' in html
    assert resp.status_code == 200 and resp.headers["Content-Type"] == "text/plain; charset=utf-8"
    text = resp.get_data(as_text=True)
    assert text == language_help()
    assert "controls" in text and "Dealer scripts" in text and "docs/dealer-scripts.md" in text
