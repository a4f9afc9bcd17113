"""Tournament sets: the set file, the documented derivation, mixed sets with
exact quotas, rotation to the dealer, commit-reveal and verify.

The derivation is re-implemented here from docs/tournaments.md with hashlib
alone (a second implementation of the key, commitment, master, stream seeds
and board order).  Deals are checked with endplay's evaluators and an
independent HCP/shape count; files are read back with endplay's PBN reader.
"""

import hashlib
import json
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from cli_runner import run as cli_run
from truedeal.engine import Plan
from truedeal.spec import load_spec
from truedeal.tournament import derive
from truedeal.tournament.build import session_boards
from truedeal.tournament.run import prepare
from truedeal.tournament.setfile import SetError, parse_set

ROOT = Path(__file__).resolve().parents[1]
VUL16 = "None NS EW All NS EW All None EW All None NS All None NS EW".split()


def run(*args, cwd=None):
    """``truedeal ARGS`` in this process: exit code and text output."""
    p = cli_run(*args, cwd=cwd or Path.cwd())
    return SimpleNamespace(returncode=p.returncode, stdout=p.out, stderr=p.err)


# ------------------------------------------------- a second implementation


def lp(x):
    b = x.encode() if isinstance(x, str) else x
    return len(b).to_bytes(4, "big") + b


def doc_master(key, public, name, first, last):
    return hashlib.sha256(lp("truedeal/set/v1/session") + lp(key) + lp(public) + lp(name)
                          + lp(first.to_bytes(4, "big")) + lp(last.to_bytes(4, "big"))).digest()


def doc_stream_seed(master, purpose):
    return hashlib.sha256(lp("truedeal/set/v1/" + purpose) + master).digest()


def doc_shake_bytes(seed: bytes):
    """The seeded stream of the README: SHAKE-256 blocks of 64 KiB, chunk 0."""
    block = 0
    while True:
        prefix = b"truedeal/v1" + len(seed).to_bytes(4, "big") + seed + (0).to_bytes(8, "big")
        yield from hashlib.shake_256(prefix + block.to_bytes(8, "big")).digest(1 << 16)
        block += 1


def doc_order(master, quotas):
    stream = doc_shake_bytes(doc_stream_seed(master, "order"))

    def below(bound):
        k = (bound - 1).bit_length()
        nbytes = (k + 7) // 8
        while True:
            r = int.from_bytes(bytes(next(stream) for _ in range(nbytes)), "big") >> (8 * nbytes - k)
            if r < bound:
                return r

    order = [i for i, q in enumerate(quotas) for _ in range(q)]
    for i in range(len(order) - 1, 0, -1):
        j = below(i + 1)
        order[i], order[j] = order[j], order[i]
    return order


def test_derivation_matches_the_document():
    key = bytes(range(32))
    assert derive.commitment(key) == hashlib.sha256(key).hexdigest()
    assert derive.seeded_key("club", "1") == hashlib.sha256(lp("truedeal/set/v1/seed") + lp("club") + lp("1")).digest()
    m = derive.session_master(key, "lottery 7", "2", 28, 54)
    assert m == doc_master(key, "lottery 7", "2", 28, 54)
    assert derive.stream_seed(m, "spec/1") == doc_stream_seed(m, "spec/1")
    for quotas in ([8, 8, 8], [27], [1, 2, 3, 4]):
        assert derive.board_order(m, quotas) == doc_order(m, quotas)


def test_board_order_is_uniform():
    """P(board t comes from spec i) = q_i / n at every position (chi-square over 3,000 masters)."""
    from scipy.stats import chisquare

    quotas = [2, 3, 5]
    counts = np.zeros((10, 3))
    for s in range(3000):
        for t, i in enumerate(derive.board_order(hashlib.sha256(str(s).encode()).digest(), quotas)):
            counts[t, i] += 1
    for t in range(10):
        assert chisquare(counts[t], f_exp=np.array(quotas) / 10 * 3000).pvalue > 1e-4
    # quotas are exact in every order
    assert Counter(derive.board_order(b"x" * 32, quotas)) == {0: 2, 1: 3, 2: 5}


# ------------------------------------------------------------- set files


def base_set(**kw):
    d = {"event": "E", "site": "S", "date": "2025-03-14", "sessions": [{"name": "1", "boards": [1, 8]}],
         "spec": {}, "dealer": "rotate", "vulnerability": "rotate", "double_dummy": False}
    d.update(kw)
    return d


@pytest.mark.parametrize("change,msg", [
    ({"spec": None}, "exactly one of 'spec' and 'mix'"),
    ({"mix": [{"spec": {}, "boards": 8}]}, "exactly one of"),
    ({"spec": None, "mix": [{"spec": {}, "boards": 5}]}, "add up to 5 boards but session '1' has 8"),
    ({"sessions": [{"name": "1", "boards": [5, 2]}]}, "1 <= first <= last"),
    ({"sessions": [{"name": "../x", "boards": [1, 2]}]}, "session name"),
    ({"dealer": "middle"}, "not a seat"),
    ({"vulnerability": "some"}, "vulnerability"),
    ({"date": "14/03/2025"}, "date"),
    ({"extra": 1}, "extra"),
])
def test_bad_set_files_one_line(change, msg):
    data = base_set(**change)
    data = {k: v for k, v in data.items() if v is not None}
    with pytest.raises(SetError) as ei:
        parse_set(data)
    assert msg in str(ei.value) and "\n" not in str(ei.value)


def records_of(data, key=b"k" * 32, public=""):
    sf = parse_set(data)
    prep = prepare(sf, ROOT / "examples" / "sets")
    return [r for sp in prep.sessions for r in session_boards(sp, key, public, prep.plans)]


def hcp(owners, seat):
    return sum((4, 3, 2, 1)[c >> 2] for c in range(16) if owners[c] == seat)


def lengths(owners, seat):
    return sorted((sum(1 for c in range(52) if owners[c] == seat and c & 3 == s) for s in range(4)), reverse=True)


def test_mixed_set_exact_quotas_each_board_fits_its_spec():
    recs = records_of(base_set(
        sessions=[{"name": "a", "boards": [1, 24]}, {"name": "b", "boards": [25, 48]}], spec=None,
        mix=[{"spec": "../strong-nt.json", "boards": 8}, {"spec": "weak-twos.json", "boards": 8},
             {"spec": {}, "boards": 8}]))
    assert [r.board for r in recs] == list(range(1, 49))
    for half in (recs[:24], recs[24:]):
        assert Counter(r.spec for r in half) == {"strong-nt": 8, "weak-twos": 8, "spec3": 8}
    for r in recs:
        if r.spec == "strong-nt":
            assert 15 <= hcp(r.owners, 0) <= 17 and lengths(r.owners, 0) in ([4, 3, 3, 3], [4, 4, 3, 2], [5, 3, 3, 2])
        if r.spec == "weak-twos":
            assert 6 <= hcp(r.owners, 0) <= 10
        assert r.dealer == (r.board - 1) % 4 and r.vulnerable == VUL16[(r.board - 1) % 16]
    # the spec is not given away by the board number: orders differ between sessions
    assert [r.spec for r in recs[:24]] != [r.spec for r in recs[24:]]


def test_each_spec_draws_its_documented_stream():
    key = b"\x01" * 32
    recs = records_of(base_set(sessions=[{"name": "s", "boards": [1, 12]}], spec=None,
                               mix=[{"spec": "../strong-nt.json", "boards": 5}, {"spec": {}, "boards": 7}]), key)
    m = doc_master(key, "", "s", 1, 12)
    plan = Plan.build(load_spec((ROOT / "examples" / "strong-nt.json").read_text()))
    want = next(iter(plan.deals(5, seed=doc_stream_seed(m, "spec/0"))))
    got = [r.owners for r in recs if r.spec == "strong-nt"]
    assert got == [tuple(int(x) for x in row) for row in want]
    assert [r.spec == "strong-nt" for r in recs] == [i == 0 for i in doc_order(m, [5, 7])]


def test_rotation_puts_the_opener_in_the_dealer_seat():
    recs = records_of(base_set(spec="../strong-nt.json", rotate_to_dealer=True))
    for r in recs:
        assert r.dealer == (r.board - 1) % 4
        assert 15 <= hcp(r.owners, r.dealer) <= 17
        assert lengths(r.owners, r.dealer) in ([4, 3, 3, 3], [4, 4, 3, 2], [5, 3, 3, 2])


def test_rotation_needs_one_constrained_seat():
    two = {"north": {"hcp": [15, 17]}, "south": {"hcp": [8, 9]}}
    with pytest.raises(SetError, match="constrains exactly one seat"):
        records_of(base_set(spec=two, rotate_to_dealer=True))
    recs = records_of(base_set(spec=two, rotate_to_dealer="north"))  # named: well defined
    assert all(15 <= hcp(r.owners, r.dealer) <= 17 for r in recs)


def test_fixed_dealer_and_vulnerability():
    recs = records_of(base_set(dealer="north", vulnerability="ew"))
    assert {(r.dealer, r.vulnerable) for r in recs} == {(0, "EW")}


def test_public_value_and_key_change_the_deals():
    a = records_of(base_set(), public="")
    assert records_of(base_set(), public="") == a
    assert [r.owners for r in records_of(base_set(), public="7 11")] != [r.owners for r in a]
    assert [r.owners for r in records_of(base_set(), key=b"j" * 32)] != [r.owners for r in a]


# ------------------------------------------------------- CLI, commit, verify


@pytest.fixture(scope="module")
def committed(tmp_path_factory):
    """A committed 2-session set of 5 boards each, with DD, made by the CLI."""
    folder = tmp_path_factory.mktemp("set")
    setfile = folder / "set.json"
    setfile.write_text(json.dumps(base_set(
        sessions=[{"name": "1", "boards": [1, 5]}, {"name": "2", "boards": [6, 10]}], double_dummy=True)))
    out = folder / "out"
    p = run("set", setfile, "--out", out, "--commit", "--public-value", "DJI 39,000.12")
    assert p.returncode == 0, p.stderr
    assert "solving 10 / 10 boards" in p.stderr
    return setfile, out


def test_commit_writes_every_file_and_a_public_manifest(committed):
    from endplay.parsers import pbn as ep_pbn

    _, out = committed
    for name in ("1", "2"):
        for ext in ("pbn", "lin", "dup", "dlm", "bri", "csv", "html", "pdf"):
            assert (out / f"{name}.{ext}").stat().st_size > 0
    man = json.loads((out / "manifest.json").read_text())
    keys = json.loads((out / "keys.json").read_text())["keys"]
    assert man["public_value"] == "DJI 39,000.12"
    assert [s["boards"] for s in man["sessions"]] == [[1, 5], [6, 10]]
    for s in man["sessions"]:
        key = bytes.fromhex(keys[s["name"]])
        assert len(key) == 32 and hashlib.sha256(key).hexdigest() == s["commitment"]
        assert keys[s["name"]] not in (out / "manifest.json").read_text()
    boards = ep_pbn.loads((out / "2.pbn").read_bytes().decode())
    assert [b.board_num for b in boards] == [6, 7, 8, 9, 10]
    assert all("OptimumScore" in b.info for b in boards)


def test_verify_passes_on_the_published_keys(committed):
    _, out = committed
    p = run("verify", out / "manifest.json", out / "keys.json", "--boards", out)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout == ""


def tamper_copy(out, tmp_path):
    import shutil

    dst = tmp_path / "copy"
    shutil.copytree(out, dst)
    return dst


def test_verify_reports_a_changed_board(committed, tmp_path):
    _, out = committed
    dst = tamper_copy(out, tmp_path)
    text = (dst / "1.pbn").read_bytes().decode()
    games = text.split("\r\n\r\n")
    # board 3: swap North's and South's hands in the Deal tag
    i = next(k for k, g in enumerate(games) if '[Board "3"]' in g)
    line = next(ln for ln in games[i].split("\r\n") if ln.startswith("[Deal "))
    first, hands = line[7:-2].split(":")
    h = hands.split()
    swapped = f'[Deal "{first}:{h[2]} {h[1]} {h[0]} {h[3]}"]'
    games[i] = games[i].replace(line, swapped)
    (dst / "1.pbn").write_bytes("\r\n\r\n".join(games).encode())
    data = bytearray((dst / "2.dup").read_bytes())
    data[0:2], data[78 - 2:78] = data[78 - 2:78], data[0:2]  # swap a North and a South card of board 6
    (dst / "2.dup").write_bytes(bytes(data))
    (dst / "2.lin").unlink()
    p = run("verify", dst / "manifest.json", dst / "keys.json", "--boards", dst)
    assert p.returncode == 1
    assert p.stdout.splitlines() == ["1.pbn: board 3 differs from the keys", "2.lin: missing",
                                     "2.dup: board 6 differs from the keys"]


def test_verify_reports_wrong_and_missing_keys(committed, tmp_path):
    _, out = committed
    keys = json.loads((out / "keys.json").read_text())
    keys["keys"]["1"] = "00" * 32
    del keys["keys"]["2"]
    keys["keys"]["9"] = "11" * 32
    bad = tmp_path / "keys.json"
    bad.write_text(json.dumps(keys))
    p = run("verify", out / "manifest.json", bad, "--boards", out)
    assert p.returncode == 1
    assert p.stdout.splitlines() == ["keys.json: session '9' is not in the manifest",
                                     "session 1: key does not match its commitment",
                                     "session 2: no key in keys.json"]


TWO_SESSIONS = [{"name": "1", "boards": [1, 3]}, {"name": "2", "boards": [4, 6]}]


@pytest.fixture
def announced(tmp_path):
    """Step 1 of a commitment to a public value to come: a set file, and the
    folder with the early manifest and the keys (no boards yet)."""
    setfile = tmp_path / "set.json"
    setfile.write_text(json.dumps(base_set(sessions=TWO_SESSIONS)))
    out = tmp_path / "out"
    p = run("set", setfile, "--out", out, "--public-value-to-come", "Lotto of 5 Dec")
    assert p.returncode == 0, p.stderr
    return setfile, out


def test_a_public_value_to_come_is_committed_before_any_board(announced):
    _, out = announced
    assert sorted(f.name for f in out.iterdir()) == ["keys.json", "manifest.json"]
    man = json.loads((out / "manifest.json").read_text())
    keys = json.loads((out / "keys.json").read_text())["keys"]
    assert man["public_value"] is None and man["public_value_to_come"] == "Lotto of 5 Dec"
    assert [hashlib.sha256(bytes.fromhex(keys[s["name"]])).hexdigest() for s in man["sessions"]] == \
        [s["commitment"] for s in man["sessions"]]


def test_boards_are_dealt_from_the_committed_keys_once_the_value_is_known(announced, tmp_path):
    from truedeal.formats.pbnset import read_pbn_deals

    setfile, out = announced
    early = json.loads((out / "manifest.json").read_text())
    (tmp_path / "early.json").write_text(json.dumps(early))
    keys = json.loads((out / "keys.json").read_text())["keys"]
    p = run("set", setfile, "--out", out, "--keys", out / "keys.json", "--public-value", "4 8 15 16 23 42")
    assert p.returncode == 0, p.stderr
    final = json.loads((out / "manifest.json").read_text())
    assert final == {**early, "public_value": "4 8 15 16 23 42", "generator": final["generator"]}
    # session 1's boards are the derivation's for its committed key and the value
    want = records_of(base_set(sessions=TWO_SESSIONS[:1]), bytes.fromhex(keys["1"]), "4 8 15 16 23 42")
    assert read_pbn_deals((out / "1.pbn").read_bytes().decode()) == {r.board: r.owners for r in want}
    # anyone holding the early manifest verifies with the value announced later
    early_path = tmp_path / "early.json"
    assert run("verify", early_path, out / "keys.json", "--boards", out,
               "--public-value", "4 8 15 16 23 42").returncode == 0
    wrong = run("verify", early_path, out / "keys.json", "--boards", out, "--public-value", "4 8 15 16 23 43")
    assert wrong.returncode == 1 and "1.pbn: board 1 differs from the keys" in wrong.stdout.splitlines()
    unknown = run("verify", early_path, out / "keys.json", "--boards", out)
    assert unknown.returncode == 2 and "still to come (Lotto of 5 Dec)" in unknown.stderr
    stated = run("verify", out / "manifest.json", out / "keys.json", "--boards", out, "--public-value", "x")
    assert stated.returncode == 1
    assert stated.stdout.splitlines() == ["manifest: the public value is '4 8 15 16 23 42', not the given 'x'"]


@pytest.mark.parametrize("args,change,msg", [
    (["--keys", "KEYS"], None, "announces a public value to come (Lotto of 5 Dec): give it with --public-value"),
    (["--commit", "--public-value", "7"], None, "deal from its keys with --keys"),
    (["--keys", "KEYS", "--public-value", "7"], {"event": "Other"}, "event changed since the manifest was announced"),
    (["--keys", "KEYS", "--public-value", "7"], {"sessions": TWO_SESSIONS[:1]}, "'2' is in the keys only"),
    (["--public-value-to-come", "a", "--public-value", "7"], None, "excludes --public-value and --keys"),
])
def test_dealing_an_announced_set_differently_is_refused(announced, args, change, msg):
    setfile, out = announced
    if change:
        setfile.write_text(json.dumps(base_set(**{"sessions": TWO_SESSIONS, **change})))
    p = run("set", setfile, "--out", out, *[out / "keys.json" if a == "KEYS" else a for a in args])
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and msg in p.stderr, p.stderr
    assert sorted(f.name for f in out.iterdir()) == ["keys.json", "manifest.json"]


def test_seeded_sets_are_reproducible_and_unseeded_differ(tmp_path):
    setfile = tmp_path / "s.json"
    setfile.write_text(json.dumps(base_set()))
    outs = []
    for i, extra in enumerate((["--seed", "x"], ["--seed", "x"], [], [])):
        p = run("set", setfile, "--out", tmp_path / str(i), *extra)
        assert p.returncode == 0, p.stderr
        outs.append((tmp_path / str(i) / "1.lin").read_text())
    assert outs[0] == outs[1]
    assert len({outs[0], outs[2], outs[3]}) == 3


@pytest.mark.parametrize("args,msg", [
    (["set", "missing.json", "--out", "o"], "cannot read"),
    (["set", "SET", "--out", "o", "--seed", "1", "--commit"], "--seed excludes --commit"),
    (["set", "SET", "--out", "o", "--seed", "1", "--keys", "k.json"], "--seed excludes --commit, --keys"),
    (["set", "BADSPEC", "--out", "o"], "spec spec1"),
    (["verify", "nothing.json", "k.json", "--boards", "."], "cannot read"),
])
def test_cli_errors_are_one_line_exit_2(tmp_path, args, msg):
    (tmp_path / "SET").write_text(json.dumps(base_set()))
    (tmp_path / "BADSPEC").write_text(json.dumps(base_set(spec={"north": {"hcp": [17, 15]}})))
    p = run(*args, cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    assert p.stderr.count("\n") == 1 and msg in p.stderr
