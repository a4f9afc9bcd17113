"""End to end: a real headless Chromium (Debian's chromium + chromedriver,
through selenium) drives the page at ``/`` served on a free localhost port,
with a real Redis and a real Celery worker behind it.

Needs ``apt-get install -y chromium chromium-driver`` and ``pip install selenium``
(the test extra); skipped with the reason when they are missing.
"""

from __future__ import annotations

import json
import shutil
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from truedeal.spec import SpecError, load_spec
from truedeal.tournament.commit import verify
from web_support import (
    REDIS_URL,
    ServerThread,
    scoped_namespace,
    start_worker,
    worker_available,
)

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install selenium)")
from selenium.common.exceptions import TimeoutException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
CHROME_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1280,1600"]

NT = {"north": {"hcp": [15, 17], "shape": "any 4333 + any 4432 + any 5332"}}
N_DEALS = 20_000
HCP = {"A": 4, "K": 3, "Q": 2, "J": 1}


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def ns():
    yield from scoped_namespace("e2e")


@pytest.fixture(scope="module")
def server(ns):
    from truedeal_web import WebConfig, create_app

    app = create_app(WebConfig.from_env({}, redis_url=REDIS_URL, key_prefix=ns.prefix, queue=ns.queue,
                                        max_job_deals=100_000, preview_deals=8))
    srv = ServerThread(app)
    yield srv
    srv.stop()
    app.extensions["truedeal"].counter.close()


@pytest.fixture(scope="module")
def worker(ns, tmp_path_factory):
    if not worker_available():
        pytest.skip("the worker package (worker/truedeal_worker) is not installed: job part not run")
    w = start_worker(ns, concurrency=2, logdir=tmp_path_factory.mktemp("e2e-worker"))
    yield w
    w.stop()


@pytest.fixture(scope="module")
def downloads(tmp_path_factory):
    return tmp_path_factory.mktemp("downloads")


@pytest.fixture(scope="module")
def browser(downloads):
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        pytest.skip("needs Debian's chromium and chromium-driver (apt-get install -y chromium chromium-driver)")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in CHROME_ARGS:
        opts.add_argument(arg)
    opts.add_experimental_option("prefs", {
        "download.default_directory": str(downloads),
        "download.prompt_for_download": False,
        "safebrowsing.enabled": False,
    })
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)})
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


# --------------------------------------------------------------------------- helpers


def post_count(base: str, spec: dict) -> dict:
    req = urllib.request.Request(base + "/api/count", data=json.dumps(spec).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.load(resp)


def fetch(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=60) as resp:
        return resp.read()


def wait(driver, cond, timeout=30.0, what="condition"):
    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.05).until(lambda d: cond(d))
    except TimeoutException:
        raise AssertionError(f"timed out waiting for {what}") from None


def odds(driver) -> dict:
    p = driver.find_element(By.ID, "probability")
    return {
        "state": p.get_attribute("data-state"),
        "spec": p.get_attribute("data-spec"),
        "one_in": p.get_attribute("data-one-in"),
        "text": driver.find_element(By.ID, "one-in").text,
        "error": driver.find_element(By.ID, "spec-error").text,
    }


def settled(driver, spec: dict, state: str = "ok", timeout: float = 30.0) -> dict:
    """Wait until the page shows the count of exactly ``spec``."""
    key = json.dumps(spec, separators=(",", ":"))

    def done(d):
        o = odds(d)
        shown = json.loads(o["spec"]) if o["spec"] else None
        return o if o["state"] == state and shown == json.loads(key) else False

    return wait(driver, done, timeout, f"the page to show the count of {spec} ({state})")


def set_field(driver, field_id: str, value) -> None:
    el = driver.find_element(By.ID, field_id)
    el.send_keys(Keys.CONTROL, "a")
    el.send_keys(Keys.DELETE)
    if value not in (None, ""):
        el.send_keys(str(value))


def fill_seat(driver, seat: str, hcp=None, shape=None, **suits) -> None:
    if hcp is not None:
        set_field(driver, f"{seat}-hcp-min", hcp[0])
        set_field(driver, f"{seat}-hcp-max", hcp[1])
    for suit, (lo, hi) in suits.items():
        set_field(driver, f"{seat}-{suit}-min", lo)
        set_field(driver, f"{seat}-{suit}-max", hi)
    if shape is not None:
        set_field(driver, f"{seat}-shape", shape)


def wait_download(folder: Path, suffix: str, timeout: float = 60.0) -> Path:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done = [p for p in folder.iterdir() if p.name.endswith(suffix)]
        busy = [p for p in folder.iterdir() if p.name.endswith(".crdownload")]
        if done and not busy:
            return done[0]
        time.sleep(0.1)
    raise AssertionError(f"no *{suffix} download in {folder}: {[p.name for p in folder.iterdir()]}")


def hand_cards(hand_el) -> list[tuple[str, str]]:
    cards = []
    for i, line in enumerate(hand_el.find_elements(By.CLASS_NAME, "holding")):
        ranks = line.text.split()[1:]  # first token is the suit symbol
        if ranks == ["\u2014"]:
            continue
        cards += [("SHDC"[i], r) for r in ranks]
    return cards


# --------------------------------------------------------------------------- tests


def test_live_probability_matches_api_count(browser, server):
    d = browser
    d.get(server.url + "/")
    o = settled(d, {})  # nothing constrained: every deal
    assert o["text"] == "1 in 1 (100%)"

    fill_seat(d, "north", hcp=(15, 17), shape="any 4333 + any 4432 + any 5332")
    o = settled(d, NT)
    api = post_count(server.url, NT)
    assert o["text"] == api["odds"] == "1 in 21 (4.87%)"
    assert float(o["one_in"]) == api["one_in"]
    assert json.loads(d.find_element(By.ID, "spec-json").get_attribute("value")) == NT
    assert d.find_element(By.ID, "submit").is_enabled()

    # a second seat: still the API's number
    fill_seat(d, "west", spades=(6, 13))
    spec2 = {**NT, "west": {"spades": [6, 13]}}
    o = settled(d, spec2)
    api2 = post_count(server.url, spec2)
    assert o["text"] == api2["odds"]
    assert float(o["one_in"]) == api2["one_in"]

    # an impossible spec is flagged before submission
    fill_seat(d, "south", hcp=(30, 37))
    impossible = {**spec2, "south": {"hcp": [30, 37]}}
    impossible = {k: impossible[k] for k in ("north", "south", "west")}
    o = settled(d, impossible, state="impossible")
    assert o["text"] == "No deal fits"
    assert post_count(server.url, impossible)["possible"] is False
    assert not d.find_element(By.ID, "submit").is_enabled()

    # an invalid spec shows the server's one-line error and cannot be submitted
    fill_seat(d, "south", hcp=("", ""))
    set_field(d, "east-shape", "44")
    bad = {"north": NT["north"], "east": {"shape": "44"}, "west": {"spades": [6, 13]}}
    o = settled(d, bad, state="invalid")
    with pytest.raises(SpecError) as e:
        load_spec(bad)
    assert o["error"] == str(e.value)
    assert not d.find_element(By.ID, "submit").is_enabled()

    # back to a valid spec
    set_field(d, "east-shape", "")
    fill_seat(d, "west", spades=("", ""))
    o = settled(d, NT)
    assert o["text"] == "1 in 21 (4.87%)"


def test_submit_job_progress_diagrams_and_downloads(browser, server, worker, downloads):
    d = browser
    d.get(server.url + "/")
    settled(d, {})
    fill_seat(d, "north", hcp=(15, 17), shape="any 4333 + any 4432 + any 5332")
    settled(d, NT)
    set_field(d, "deal-count", N_DEALS)
    set_field(d, "seed", "e2e")
    d.find_element(By.ID, "submit").click()

    # the progress bar: follow it until the job is done
    wait(d, lambda d: d.find_element(By.ID, "job").is_displayed(), 10, "the job panel")
    seen: list[float] = []
    deadline = time.monotonic() + 120
    while True:
        bar = d.find_element(By.ID, "job-progress")
        seen.append(float(bar.get_attribute("value")))
        state = d.find_element(By.ID, "job-state").get_attribute("data-state")
        if state in ("done", "failed", "cancelled"):
            break
        assert time.monotonic() < deadline, f"job still {state}; worker log:\n{worker.tail()}"
        time.sleep(0.05)
    assert state == "done", d.find_element(By.ID, "job-error").text + "\n" + worker.tail()
    assert float(d.find_element(By.ID, "job-progress").get_attribute("value")) == 1.0
    assert seen == sorted(seen), "the progress bar never goes back"
    assert f"{N_DEALS:,} of {N_DEALS:,} deals" in d.find_element(By.ID, "job-progress-text").text
    job_id = d.find_element(By.ID, "job-id").text
    assert len(job_id) == 32
    assert d.current_url.endswith(f"?job={job_id}")

    # the first deals as bridge diagrams (compass layout)
    diagrams = wait(d, lambda d: (lambda els: els if len(els) == 8 else False)(
        d.find_elements(By.CSS_SELECTOR, "#diagrams .diagram")), 30, "8 diagrams")
    first = [json.loads(x) for x in fetch(f"{server.url}/api/jobs/{job_id}/deals?format=json&limit=8").decode().splitlines()]
    for n, (box, deal) in enumerate(zip(diagrams, first), start=1):
        assert box.get_attribute("data-board") == str(n)
        assert box.get_attribute("data-number") == deal["number"]
        assert f"Board {n}" in box.find_element(By.CLASS_NAME, "table-center").text
        seen_cards = set()
        hands = {}
        for seat in ("north", "east", "south", "west"):
            hand = box.find_element(By.CLASS_NAME, f"hand-{seat}")
            cards = hand_cards(hand)
            assert len(cards) == 13, (seat, cards)
            seen_cards |= set(cards)
            hands[seat] = cards
        assert len(seen_cards) == 52
        # the diagram is the deal, and North fits the spec
        pbn_north = deal["deal"][2:].split()[0].split(".")
        assert [[r for s, r in hands["north"] if s == suit] for suit in "SHDC"] == [
            [("10" if c == "T" else c) for c in holding] for holding in pbn_north]
        assert 15 <= sum(HCP.get(r, 0) for _, r in hands["north"]) <= 17
        assert sorted((len(h) for h in pbn_north), reverse=True) in ([4, 3, 3, 3], [4, 4, 3, 2], [5, 3, 3, 2])
    # layout: North above, South below, West left of East
    north, south, west, east = (diagrams[0].find_element(By.CLASS_NAME, f"hand-{s}").rect
                                for s in ("north", "south", "west", "east"))
    assert north["y"] < west["y"] < south["y"] and west["x"] < north["x"] < east["x"]

    # downloads through the page's links
    d.find_element(By.ID, "download-pbn").click()
    pbn = wait_download(downloads, ".pbn").read_text()
    assert pbn.startswith("% PBN 2.1")
    assert pbn.count('[Board "') == N_DEALS
    assert pbn.count('[Deal "') == N_DEALS
    d.find_element(By.ID, "download-numbers").click()
    numbers = wait_download(downloads, ".txt").read_text().split()
    assert len(numbers) == N_DEALS
    assert numbers[:8] == [x["number"] for x in first]

    # the stream goes with the job: v2 deals a constrained spec as v1 does, so the same seed gives the same deals
    Select(d.find_element(By.ID, "stream")).select_by_value("v2")
    d.find_element(By.ID, "submit").click()
    wait(d, lambda d: d.find_element(By.ID, "job-id").text not in ("", job_id), 30, "a second job")
    second = d.find_element(By.ID, "job-id").text
    wait(d, lambda d: d.find_element(By.ID, "job-state").get_attribute("data-state") == "done", 120, "the second job")
    assert json.loads(fetch(f"{server.url}/api/jobs/{second}"))["stream"] == "v2"
    assert fetch(f"{server.url}/api/jobs/{second}/deals?format=numbers").decode().split() == numbers


def test_what_a_new_user_trips_over(browser, server, worker):
    """Issue 12 on the page: a 0 minimum sends nothing, the balanced preset
    fits its box, the odds stay in view on a phone, the spec panel fills the
    form, diagrams show HCP and deal numbers, and ?job=ID restores the form."""
    d = browser
    d.set_window_size(1200, 900)
    d.get(server.url + "/")
    settled(d, {})
    set_field(d, "north-hcp-min", 0)
    o = settled(d, {})  # [0, 37] constrains nothing: not sent, still exact
    assert o["text"] == "1 in 1 (100%)"
    set_field(d, "north-hcp-min", "")

    d.find_element(By.CSS_SELECTOR, 'button.balanced[data-seat="north"]').click()
    shape = d.find_element(By.ID, "north-shape")
    assert shape.get_attribute("value") == "any 4333 + any 4432 + any 5332"
    assert d.execute_script("return arguments[0].scrollWidth <= arguments[0].clientWidth", shape)
    settled(d, {"north": {"shape": "any 4333 + any 4432 + any 5332"}})

    # the spec panel: paste a spec, use it
    d.find_element(By.CSS_SELECTOR, "details.spec-json summary").click()
    box = d.find_element(By.ID, "spec-json")
    d.execute_script("arguments[0].value = arguments[1]", box, json.dumps({"N": {"hcp": [15, 17]}, "west": {"spades": 6}}))
    d.find_element(By.ID, "spec-apply").click()
    settled(d, {"north": {"hcp": [15, 17]}, "west": {"spades": [6, 6]}})  # the pasted spec replaces the form
    assert d.find_element(By.ID, "north-shape").get_attribute("value") == ""

    # a job, then the page opened again on ?job=ID
    d.get(server.url + "/")
    settled(d, {})
    fill_seat(d, "north", hcp=(15, 17), shape="any 4333 + any 4432 + any 5332")
    settled(d, NT)
    set_field(d, "deal-count", 40)
    set_field(d, "seed", "restore me")
    d.find_element(By.ID, "submit").click()
    wait(d, lambda d: d.find_element(By.ID, "job-state").get_attribute("data-state") == "done", 120, "the job")
    diagram = wait(d, lambda d: (lambda els: els[0] if els else False)(
        d.find_elements(By.CSS_SELECTOR, "#diagrams .diagram")), 30, "a diagram")
    number = diagram.get_attribute("data-number")
    assert number and f"Deal {number}" in diagram.find_element(By.CLASS_NAME, "table-center").text
    for seat in ("north", "east", "south", "west"):
        hand = diagram.find_element(By.CLASS_NAME, f"hand-{seat}")
        points = sum(HCP.get(r, 0) for _, r in hand_cards(hand))
        assert hand.find_element(By.CLASS_NAME, "hcp").text == f"{points} HCP"
    job_id = d.find_element(By.ID, "job-id").text
    d.get(f"{server.url}/?job={job_id}")
    settled(d, NT)
    assert d.find_element(By.ID, "north-hcp-min").get_attribute("value") == "15"
    assert d.find_element(By.ID, "north-hcp-max").get_attribute("value") == "17"
    assert d.find_element(By.ID, "deal-count").get_attribute("value") == "40"
    assert d.find_element(By.ID, "seed").get_attribute("value") == "restore me"
    assert d.find_element(By.ID, "job-progress-text").text.startswith("Done: 40 of 40 deals")

    # a phone: the odds stay in view while the seats scroll under them
    d.set_window_size(390, 844)
    for seat in ("north", "east", "south", "west"):  # editing each seat in turn
        d.execute_script(f"document.getElementById('{seat}-shape').scrollIntoView({{block: 'center'}})")
        rect = d.execute_script("var r = document.getElementById('odds').getBoundingClientRect(); return [r.top, r.bottom];")
        assert 0 <= rect[0] and rect[1] <= d.execute_script("return window.innerHeight"), (seat, rect)
    d.set_window_size(1200, 900)


def paste_spec(driver, spec: dict) -> None:
    """Put ``spec`` in the JSON panel (opened if closed) and press "Use this spec"."""
    panel = driver.find_element(By.CSS_SELECTOR, "details.spec-json")
    if panel.get_attribute("open") is None:
        panel.find_element(By.TAG_NAME, "summary").click()
    driver.execute_script("arguments[0].value = arguments[1]", driver.find_element(By.ID, "spec-json"), json.dumps(spec))
    driver.find_element(By.ID, "spec-apply").click()


def test_a_pasted_spec_the_form_cannot_show_is_counted_as_given(browser, server):
    """The JSON panel takes every spec the API takes (it threw "the form has
    no such field" for controls): the form shows its part, one calm line says
    so, and the page counts the JSON as given, exactly, with no error; an
    edit of the form goes beside the rest of the JSON."""
    d = browser
    d.get(server.url + "/")
    settled(d, {})
    spec = {"north": {"hcp": [15, 17], "controls": [5, 12]}}
    paste_spec(d, spec)
    o = settled(d, spec)
    api = post_count(server.url, spec)
    assert api["exact"] and o["text"] == api["odds"] and float(o["one_in"]) == api["one_in"]
    assert o["error"] == "" and d.find_element(By.ID, "spec-json-error").text == ""
    assert "deals fit exactly" in d.find_element(By.ID, "count-detail").text
    note = d.find_element(By.ID, "spec-partial")
    assert note.is_displayed() and note.text == ("The form shows only part of this spec (it has no box for "
                                                 "north.controls): the JSON spec is what is counted and dealt.")
    assert note.value_of_css_property("color") != d.find_element(By.ID, "spec-error").value_of_css_property("color")
    assert d.find_element(By.ID, "north-hcp-min").get_attribute("value") == "15"
    assert d.find_element(By.ID, "submit").is_enabled()

    set_field(d, "north-hcp-max", 16)  # the form's edit, beside the controls it cannot show
    edited = {"north": {"hcp": [15, 16], "controls": [5, 12]}}
    assert settled(d, edited)["text"] == _count_when_free(server.url, edited)["odds"]

    # An either/or of one seat, counted exactly in 0.2 s (North's or West's took 2 to 5 s); each
    # part changes the odds (without the condition 1 in 53,289, without the second branch 1 in 60,196)
    richer = {"south": {"holds": ["SA"], "hearts": {"length": [5, 6], "top3": 2}},
              "any_of": [{"north": {"hcp": [20, 21]}}, {"north": {"hcp": [23, 24]}}],
              "condition": "hcp(north) + hcp(south) >= 30"}
    paste_spec(d, richer)
    o = settled(d, richer)
    assert o["text"] == _count_when_free(server.url, richer)["odds"] and o["error"] == ""
    assert "south.holds, south.hearts, any_of, condition" in note.text

    paste_spec(d, {"north": {"hcp": 12}})  # all of it in the form: the note goes
    settled(d, {"north": {"hcp": [12, 12]}})
    assert not note.is_displayed()

    link = d.find_element(By.CSS_SELECTOR, "header a.language-link")
    assert fetch(link.get_attribute("href")).decode().startswith("JSON specs\n")


def test_distribution_panel_shows_the_exact_law(browser, server):
    """The panel asks POST /api/distribution for the spec in the form and draws
    one bar per value with the exact share; Enter in the box does not deal."""
    from truedeal.analysis.laws import distribution_of

    d = browser
    d.get(server.url + "/")
    fill_seat(d, "north", hcp=(15, 17), shape="any 4333 + any 4432 + any 5332")
    settled(d, NT)
    d.find_element(By.CSS_SELECTOR, "#distribution-panel summary").click()
    set_field(d, "dist-expr", "controls(north)")
    d.find_element(By.ID, "dist-expr").send_keys(Keys.ENTER)
    rows = wait(d, lambda drv: drv.find_elements(By.CSS_SELECTOR, "#dist-result tr"), what="the distribution table")
    law = distribution_of(load_spec(NT), "controls(north)", sample=False)
    shown = [(r.find_element(By.TAG_NAME, "th").text, r.find_element(By.CLASS_NAME, "pct").text) for r in rows]
    def pct(p: float) -> str:  # the page's rounding: 2 decimals, or 2 significant digits below 0.01%
        return f"{100 * p:.2f}%" if p >= 1e-4 else f"{100 * p:.2g}%"

    assert shown == [(str(v), pct(float(law.probability(v)))) for v in law.counts]
    assert d.find_element(By.ID, "dist-result").get_attribute("data-exact") == "true"
    assert "Mean " + f"{float(law.mean):.3f}" in d.find_element(By.CSS_SELECTOR, "#dist-result .mean").text
    assert d.find_element(By.ID, "job").get_attribute("hidden") is not None  # Enter did not submit a job

    set_field(d, "dist-expr", "foo(north)")
    d.find_element(By.ID, "dist-run").click()
    wait(d, lambda drv: "unknown function 'foo'" in drv.find_element(By.ID, "dist-error").text, what="the error line")


def _count_when_free(base: str, spec: dict) -> dict:
    """POST /api/count, waiting while this client's (the page's) own count runs (429)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            return post_count(base, spec)
        except urllib.error.HTTPError as exc:
            if exc.code != 429 or time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_script_editor_presets_live_odds_errors_and_dealing(browser, server, worker):
    """The dealer-script panel: each preset counts exactly as the API says,
    an error names its line and column, and a script deals as a job whose
    deals fit it (checked here in Python, independently of the engine)."""
    d = browser
    d.get(server.url + "/")
    d.find_element(By.CSS_SELECTOR, "#script-panel summary").click()
    select = d.find_element(By.ID, "script-preset")
    options = [o for o in select.find_elements(By.TAG_NAME, "option") if o.get_attribute("value")]
    assert [o.text for o in options] == ["1NT (15-17 balanced)", "Weak two (\u2660)", "Strong 2\u2663", "Flannery 2\u2666",
                                         "1\u2660 by Kaplan-Rubens"]
    for option in options:
        script = option.get_attribute("data-script")
        option.click()
        api = _count_when_free(server.url, {"script": script})
        assert api["exact"] and api["possible"], api
        wait(d, lambda drv, api=api, script=script: drv.find_element(By.ID, "script-one-in").text == api["odds"]
             and drv.find_element(By.ID, "script").get_attribute("value") == script, what=f"the odds of {option.text}")
        assert d.find_element(By.ID, "script-deal").is_enabled()

    set_field(d, "script", "condition hcp(north) >= 15 &&\nhcp(north <= 17")
    error = wait(d, lambda drv: drv.find_element(By.ID, "script-error").text, what="the script's error")
    assert "line 2, column" in error and not d.find_element(By.ID, "script-deal").is_enabled()

    options[3].click()  # Flannery: 11-15 with exactly 4 spades and 5 hearts
    wait(d, lambda drv: drv.find_element(By.ID, "script-deal").is_enabled(), what="Deal enabled")
    set_field(d, "deal-count", 12)
    set_field(d, "seed", "script e2e")
    d.find_element(By.ID, "script-deal").click()
    deadline = time.monotonic() + 120
    while d.find_element(By.ID, "job-state").get_attribute("data-state") not in ("done", "failed", "cancelled"):
        assert time.monotonic() < deadline, worker.tail()
        time.sleep(0.05)
    assert d.find_element(By.ID, "job-state").get_attribute("data-state") == "done", worker.tail()
    job_id = d.find_element(By.ID, "job-id").text
    deals = [json.loads(x) for x in fetch(f"{server.url}/api/jobs/{job_id}/deals?format=json").decode().splitlines()]
    assert len(deals) == 12
    for deal in deals:
        north = deal["deal"][2:].split()[0].split(".")
        assert [len(north[0]), len(north[1])] == [4, 5]
        assert 11 <= sum(HCP.get(c, 0) for c in "".join(north)) <= 15


def test_tournament_set_mode_makes_a_set_and_previews_its_hand_record(browser, server, worker, tmp_path):
    """The page's set mode: the spec above, 2 sessions of 4 boards, North
    dealing, DD; the workers make it, the page links every file and shows
    the hand record; the boards read back by endplay fit the spec."""
    from endplay.parsers import pbn as ep_pbn
    from selenium.webdriver.support.ui import Select

    d = browser
    d.get(server.url + "/")
    settled(d, {})
    fill_seat(d, "north", hcp=(15, 17), shape="any 4333 + any 4432 + any 5332")
    settled(d, NT)
    d.find_element(By.CSS_SELECTOR, "#set-panel summary").click()
    set_field(d, "set-event", "Page set")
    set_field(d, "set-sessions", 2)
    set_field(d, "set-boards", 4)
    Select(d.find_element(By.ID, "set-dealer")).select_by_value("north")
    set_field(d, "set-seed", "page")
    d.find_element(By.ID, "set-make").click()
    wait(d, lambda d: d.find_element(By.ID, "set-phase").get_attribute("data-state") in ("done", "failed"),
         180, "the set")
    assert d.find_element(By.ID, "set-phase").text == "Done: 8 boards", d.find_element(By.ID, "set-error").text
    set_id = d.find_element(By.ID, "set-id").text
    assert len(set_id) == 16 and d.current_url.endswith(f"?set={set_id}")

    # the set the page asked for, as its public manifest states it
    man = json.loads(fetch(f"{server.url}/api/sets/{set_id}/manifest"))
    assert (man["event"], man["dealer"], man["double_dummy"]) == ("Page set", "north", True)
    assert [s["boards"] for s in man["sessions"]] == [[1, 4], [1, 4]]
    assert load_spec(json.loads(man["specs"][0]["text"])).canonical() == NT

    # everything `truedeal verify` needs comes from the set's id, and it passes
    folder = tmp_path / "set"
    folder.mkdir()
    for name in ["manifest", "keys"]:
        (folder / f"{name}.json").write_bytes(fetch(f"{server.url}/api/sets/{set_id}/{name}"))
    for session in ("1", "2"):
        for ext in ("pbn", "lin", "dup", "dlm", "bri", "csv"):
            (folder / f"{session}.{ext}").write_bytes(fetch(f"{server.url}/api/sets/{set_id}/files/{session}.{ext}"))
    assert verify(folder / "manifest.json", folder / "keys.json", folder) == []

    # one link per session file, each serving that file
    links = d.find_elements(By.CSS_SELECTOR, "#set-files a.set-file")
    assert len(links) == 2 * 8
    pdf = next(a for a in links if a.get_attribute("href").endswith("/2.pdf"))
    assert fetch(pdf.get_attribute("href")).startswith(b"%PDF")
    pbn = fetch(f"{server.url}/api/sets/{set_id}/files/2.pbn").decode()
    assert pbn.count('[Dealer "N"]') == 4  # endplay's reader gives the rotation's dealer, not the tag's
    boards = ep_pbn.loads(pbn)
    assert [b.board_num for b in boards] == [1, 2, 3, 4]
    for b in boards:
        north = b.deal.north
        assert 15 <= sum(HCP.get(c.rank.abbr, 0) for c in north) <= 17
        assert sorted((len(h) for h in north.to_pbn().split(".")), reverse=True) in (
            [4, 3, 3, 3], [4, 4, 3, 2], [5, 3, 3, 2])
        assert "OptimumScore" in b.info

    # the preview: session 1's hand record, then session 2's when chosen
    def frame_html():
        return d.execute_script("return document.getElementById('set-preview').srcdoc")

    wait(d, lambda d: frame_html(), 30, "the hand-record preview")
    assert frame_html() == fetch(f"{server.url}/api/sets/{set_id}/files/1.html").decode()
    Select(d.find_element(By.ID, "set-preview-session")).select_by_value(
        f"/api/sets/{set_id}/files/2.html")
    want = fetch(f"{server.url}/api/sets/{set_id}/files/2.html").decode()
    wait(d, lambda d: frame_html() == want, 30, "session 2's hand record")
    d.switch_to.frame(d.find_element(By.ID, "set-preview"))
    text = d.find_element(By.TAG_NAME, "body").text
    # its own style applies (the page's policy allows that one block by its hash)
    border = d.execute_script("return getComputedStyle(document.querySelector('.board')).borderTopStyle")
    d.switch_to.default_content()
    assert border == "solid"
    assert "Page set" in text and "Board 4" in text

    # the set is reachable from its id alone
    d.get(f"{server.url}/?set={set_id}")
    wait(d, lambda d: d.find_element(By.ID, "set-phase").get_attribute("data-state") == "done", 30, "the resumed set")
    wait(d, lambda d: frame_html() == fetch(f"{server.url}/api/sets/{set_id}/files/1.html").decode(), 30,
         "the resumed preview")
