"""Issue 10's acceptance, end to end through ``truedeal serve``.

It starts ``truedeal serve --workers 2`` (embedded Redis, real workers, the
web app) on a free port, then does what a tournament director does over
HTTP, and checks every result with a reader that is not the writer:

1. ``POST /api/sets`` with the club night (3 sessions x 27 boards, DD and
   par; no seed, so the session keys come from the OS's CSPRNG), and waits
   until it is done: the time and the boards solved per second.
2. Downloads every session's PBN, LIN, DUP, DLM, BRI, CSV, HTML and PDF, the
   manifest and the keys, all from the set's id.
3. PBN: endplay reads every board back, with its DD table and par; three
   boards are solved again by endplay's own DDS and must agree.  LIN: endplay
   reads every board back, the same deals.  DUP, DLM, BRI, CSV: their readers
   give the same deals.  HTML: every board's title.  PDF: pdftoppm renders
   page 1 with ink in all four quarters, and pdftotext finds every board.
4. ``truedeal verify manifest.json keys.json --boards DIR`` passes, and fails
   (exit 1, naming the board) after one board of a PBN file is tampered with.

It prints one line per check and exits 1 if any fails.  Run it from a clean
clone after the README's first command and ``pip install -e '.[server]'``:

    .venv/bin/python bench/acceptance_sets.py [--set examples/sets/club-night.json] [--workers 2]
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRUEDEAL = [sys.executable, "-m", "truedeal.cli"]
EXTENSIONS = ("pbn", "lin", "dup", "dlm", "bri", "csv", "html", "pdf")
FAILED: list[str] = []


def check(ok: bool, what: str) -> None:
    print(f"  {'ok  ' if ok else 'FAIL'} {what}")
    if not ok:
        FAILED.append(what)


def start_serve(workers: int, log: Path) -> tuple[subprocess.Popen, str]:
    """``truedeal serve`` on a free port; its process and web address."""
    out = log.open("w")
    proc = subprocess.Popen([*TRUEDEAL, "serve", "--port", "0", "--workers", str(workers)],
                            stdout=subprocess.PIPE, stderr=out, text=True)
    assert proc.stdout is not None
    url = None
    for line in proc.stdout:
        url = url or (m.group(1) if (m := re.search(r"web +(http://\S+/)", line)) else None)
        if "ready" in line:
            return proc, url or ""
    raise RuntimeError(f"truedeal serve did not start: {log.read_text()[-2000:]}")


def http(url: str, body: dict | None = None) -> bytes:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"} if data else {})
    with urllib.request.urlopen(req, timeout=60) as resp:
        return resp.read()


def make_set(web: str, data: dict) -> tuple[str, float]:
    """Submit the set, wait until it is done; its id and the seconds it took."""
    t0 = time.perf_counter()
    set_id = json.loads(http(web + "api/sets", {"set": data}))["id"]
    phases = []
    while (st := json.loads(http(f"{web}api/sets/{set_id}")))["state"] not in ("done", "failed", "cancelled"):
        if not phases or phases[-1] != st["phase"]:
            phases.append(st["phase"])
        time.sleep(0.2)
    took = time.perf_counter() - t0
    check(st["state"] == "done", f"set {set_id} done ({st.get('error') or 'no error'}); phases seen: "
          + ", ".join(phases[:3] + (["..."] if len(phases) > 4 else []) + phases[-1:]))
    return set_id, took


def download(web: str, set_id: str, sessions: list[str], folder: Path) -> None:
    for name in ("manifest", "keys"):
        (folder / f"{name}.json").write_bytes(http(f"{web}api/sets/{set_id}/{name}"))
    for s in sessions:
        for ext in EXTENSIONS:
            (folder / f"{s}.{ext}").write_bytes(http(f"{web}api/sets/{set_id}/files/{s}.{ext}"))
    files = sorted(p.name for p in folder.iterdir())
    check(len(files) == 2 + len(sessions) * len(EXTENSIONS), f"{len(files)} files from the set's id")


def owners_of(deal) -> tuple[int, ...]:
    """Owners row (card = 4 * rank + suit, A..2, S H D C) from an endplay Deal."""
    from endplay.types import Player

    row = [9] * 52
    for player in Player:
        for card in deal[player]:
            row[4 * (15 - int(card.rank).bit_length()) + int(card.suit)] = int(player)
    return tuple(row)


def check_pbn(folder: Path, session: str, boards: list[int]) -> dict[int, tuple[int, ...]]:
    """endplay reads the PBN back, DD and par included; three tables re-solved by endplay's DDS."""
    from endplay.dds import calc_dd_table
    from endplay.parsers import pbn as ep_pbn
    from endplay.types import Denom, Player

    read = ep_pbn.loads((folder / f"{session}.pbn").read_text())
    check([b.board_num for b in read] == boards, f"{session}.pbn: endplay reads boards {boards[0]}-{boards[-1]}")
    tagged = all({"DoubleDummyTricks", "OptimumScore", "ParContract"} <= set(b.info) for b in read)
    check(tagged, f"{session}.pbn: every board has DoubleDummyTricks, OptimumScore and ParContract")
    order = (Denom.nt, Denom.spades, Denom.hearts, Denom.diamonds, Denom.clubs)
    agree = True
    for b in read[:: max(1, len(read) // 3)][:3]:
        table = calc_dd_table(b.deal)
        agree &= b.info["DoubleDummyTricks"] == "".join(f"{table[d, Player(s)]:x}" for s in (0, 2, 1, 3) for d in order)
    check(agree, f"{session}.pbn: three boards' DD tables equal endplay's calc_dd_table")
    return {b.board_num: owners_of(b.deal) for b in read}


def check_other_files(folder: Path, session: str, first: int, want: dict[int, tuple[int, ...]]) -> None:
    """LIN by endplay; DUP, DLM, BRI and CSV by their readers; HTML and PDF by text."""
    from endplay.parsers import lin as ep_lin

    from truedeal.formats.bri import read_bri
    from truedeal.formats.csvfile import read_csv_deals
    from truedeal.formats.dlm import read_dlm
    from truedeal.formats.dup import read_dup

    lin = {b.board_num: owners_of(b.deal) for b in ep_lin.loads((folder / f"{session}.lin").read_text())}
    check(lin == want, f"{session}.lin: endplay reads the same {len(lin)} deals")
    raw = {ext: (folder / f"{session}.{ext}").read_bytes() for ext in ("dup", "dlm", "bri", "csv", "html")}
    for ext, got in (("dup", read_dup(raw["dup"])), ("dlm", read_dlm(raw["dlm"].decode("ascii"))),
                     ("bri", read_bri(raw["bri"], first)), ("csv", read_csv_deals(raw["csv"].decode()))):
        check(got == want, f"{session}.{ext}: its reader gives the same {len(got)} deals")
    rows = list(csv.reader(io.StringIO(raw["csv"].decode())))
    check(len(rows) == len(want) + 1, f"{session}.csv: a header and {len(rows) - 1} rows")
    html = raw["html"].decode()
    check(all(f"Board {b}" in html for b in want), f"{session}.html: every board's title")
    check_pdf(folder / f"{session}.pdf", want)


def check_pdf(path: Path, want: dict) -> None:
    import numpy as np
    from PIL import Image

    if not shutil.which("pdftoppm"):
        check(False, f"{path.name}: pdftoppm (poppler-utils) is not installed")
        return
    subprocess.run(["pdftoppm", "-r", "40", "-f", "1", "-l", "1", "-png", str(path), str(path.with_suffix(""))],
                   check=True)
    dark = np.asarray(Image.open(next(path.parent.glob(path.stem + "-*1.png"))).convert("L")) < 128
    h, w = dark.shape
    quarters = [dark[y, x].mean() for y in (slice(h // 10, h // 2), slice(h // 2, h))
                for x in (slice(0, w // 2), slice(w // 2, w))]
    check(0.005 < dark.mean() < 0.3 and min(quarters) > 0.003, f"{path.name}: page 1 renders, a board in each quarter")
    text = subprocess.run(["pdftotext", "-layout", str(path), "-"], check=True, capture_output=True, text=True).stdout
    check(all(f"Board {b}" in text for b in want) and "Par" in text, f"{path.name}: pdftotext finds every board and par")


def swap(first: bytes, second: bytes) -> bytes:
    """Two hands with the top cards of a suit both hold exchanged: still a deal, another one."""
    a, b = first.split(b"."), second.split(b".")
    s = next(s for s in range(4) if a[s] and b[s])
    a[s], b[s] = b[s][:1] + a[s][1:], a[s][:1] + b[s][1:]
    return b".".join(a) + b" " + b".".join(b)


def check_verify(folder: Path, session: str, board: int) -> None:
    """verify passes; after board ``board`` of SESSION.pbn is tampered with, it fails naming it."""
    def verify(boards: Path) -> subprocess.CompletedProcess:
        return subprocess.run([*TRUEDEAL, "verify", str(folder / "manifest.json"), str(folder / "keys.json"),
                               "--boards", str(boards)], capture_output=True, text=True)

    good = verify(folder)
    check(good.returncode == 0, f"truedeal verify on the published keys: exit {good.returncode}")
    tampered = folder.parent / "tampered"
    shutil.copytree(folder, tampered)
    path = tampered / f"{session}.pbn"
    games = path.read_bytes().split(b"\r\n\r\n")  # the set's PBN has CRLF line ends
    i = next(i for i, g in enumerate(games) if f'[Board "{board}"]'.encode() in g)
    games[i] = re.sub(rb'\[Deal "(.):(\S+) (\S+)', lambda m: b'[Deal "' + m[1] + b":" + swap(m[2], m[3]), games[i])
    path.write_bytes(b"\r\n\r\n".join(games))
    bad = verify(tampered)
    named = f"{session}.pbn: board {board} differs" in bad.stdout
    check(bad.returncode == 1 and named, f"truedeal verify on a tampered board: exit {bad.returncode}, "
          f"{bad.stdout.strip().splitlines()[:1]}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", default=str(ROOT / "examples" / "sets" / "club-night.json"))
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    data = json.loads(Path(args.set).read_text())
    sessions = [(s["name"], s["boards"]) for s in data["sessions"]]
    boards = sum(b - a + 1 for _, (a, b) in sessions)
    with tempfile.TemporaryDirectory(prefix="truedeal-acceptance-") as tmp:
        proc, web = start_serve(args.workers, Path(tmp) / "serve.log")
        try:
            print(f"truedeal serve --workers {args.workers}: {web}")
            set_id, took = make_set(web, data)
            print(f"  time: {took:.1f} s submit -> done for {boards} boards with DD and par "
                  f"({boards / took:.1f} boards/s on {args.workers} worker processes)")
            folder = Path(tmp) / "set"
            folder.mkdir()
            download(web, set_id, [s for s, _ in sessions], folder)
        finally:
            proc.terminate()
            proc.wait(120)
        for name, (first, last) in sessions:
            want = check_pbn(folder, name, list(range(first, last + 1)))
            check_other_files(folder, name, first, want)
        check_verify(folder, sessions[-1][0], sessions[-1][1][0] + 4)
    print(f"{'all checks hold' if not FAILED else f'{len(FAILED)} checks FAILED'}")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
