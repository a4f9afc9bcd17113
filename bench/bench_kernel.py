"""Benchmark the compiled kernel against the numpy path and a C dealer, same run.

Run as ``.venv/bin/python bench/bench_kernel.py [n_deals] [n_cli]``.

Per item it prints the kernel's rate, the numpy path's rate and their ratio;
for whole-CLI items also the rate of ``bench/fisher_yates.c`` (compiled here
with ``cc -O2``: a Fisher-Yates shuffle with xoshiro256**, one line per
deal) and the ratio to it:

* deal-number encode and decode, ``n_deals`` random deals (default 1,000,000);
* the ``numbers`` text (decimal lines) and PBN deal strings of those deals;
* ``truedeal generate '{}' -n n_cli --stream v1|v2 --format numbers|pbn >
  /dev/null`` (default n_cli 1,000,000), with the kernel and with
  TRUEDEAL_NO_KERNEL=1, against the C baseline printing n_cli lines to
  /dev/null: seat lines (52 letters) for ``numbers``, PBN lines for ``pbn``
  (whose games, with their tags, are longer still);
* start-up: ``truedeal generate examples/strong-nt.json -n 1``, wall time.

Rates are the best of a few repeats (``time.perf_counter``); one process, one
thread.  The only assertions are correctness checks, never timings.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from truedeal import dealnumber as dn
from truedeal import kernel

ROOT = Path(__file__).resolve().parent.parent
CLI = [str(Path(sys.executable).with_name("truedeal"))]


def random_deals(n: int, seed: int = 2024) -> np.ndarray:
    rng = np.random.default_rng(seed)
    base = np.repeat(np.arange(4, dtype=np.uint8), 13)
    return rng.permuted(np.tile(base, (n, 1)), axis=1)


def best(fn, repeats: int = 3) -> float:
    """Best wall time of ``fn()`` in seconds."""
    out = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out = min(out, time.perf_counter() - t0)
    return out


def run_wall(argv: list[str], env: dict | None = None, repeats: int = 1) -> float:
    """Best wall time of a command with stdout to /dev/null (it must succeed).

    The command may cache bytecode even where this shell says not to
    (PYTHONDONTWRITEBYTECODE): an installed truedeal has its bytecode cached,
    and compiling every source at each start would add about 0.08 s."""
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

    def once():
        with open(os.devnull, "wb") as sink:  # stderr kept only for a failure
            p = subprocess.run(argv, stdout=sink, stderr=subprocess.PIPE, cwd=ROOT, env={**base, **(env or {})})
        if p.returncode:
            sys.exit(f"bench_kernel: {argv} failed: {p.stderr.decode(errors='replace')}")

    return best(once, repeats)


def row(name: str, n: int, t_kernel: float, t_numpy: float, t_c: float | None = None) -> None:
    rk, rn = n / t_kernel, n / t_numpy
    line = f"{name:<34} kernel {rk:13,.0f}/s   numpy {rn:12,.0f}/s   kernel/numpy {rk / rn:6.1f}x"
    if t_c is not None:
        rc = n / t_c
        line += f"   C {rc:11,.0f}/s   kernel/C {rk / rc:5.2f}x   numpy/C {rn / rc:5.2f}x"
    print(line, flush=True)


def compile_baseline(tmp: Path) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        sys.exit("bench_kernel: no C compiler for the baseline")
    exe = tmp / "fisher_yates"
    subprocess.run([cc, "-O2", "-o", str(exe), str(ROOT / "bench" / "fisher_yates.c")], check=True)
    return exe


def bench_functions(n: int) -> None:
    k = kernel.native()
    if k is None:
        sys.exit(f"bench_kernel: the kernel is {kernel.missing_reason()}")
    owners = random_deals(n)
    limbs = dn.encode_batch_numpy(owners)  # also builds the numpy tables, untimed
    dn.decode_batch_numpy(limbs[:10])
    out = np.empty_like(limbs)
    t_k = best(lambda: k.encode(owners, out))
    assert out.tobytes() == limbs.tobytes()
    row("deal numbers: encode", n, t_k, best(lambda: dn.encode_batch_numpy(owners), 2))
    back = np.empty_like(owners)
    t_k = best(lambda: k.decode(limbs, back))
    assert back.tobytes() == owners.tobytes()
    row("deal numbers: decode", n, t_k, best(lambda: dn.decode_batch_numpy(limbs), 2))
    m = min(n, 300_000)  # the pure paths are slow: time them on fewer deals
    text = k.format_numbers(limbs[:m])
    t_k = best(lambda: k.format_numbers(limbs[:m]))
    t_n = best(lambda: "".join([f"{x}\n" for x in dn.limbs_to_ints(limbs[:m])]).encode(), 2)
    assert text == "".join([f"{x}\n" for x in dn.limbs_to_ints(limbs[:m])]).encode()
    row("numbers text", m, t_k, t_n)
    firsts = (np.arange(m) % 4).astype(np.uint8)
    pbn = k.pbn_deal_strings(owners[:m], firsts)
    assert pbn == kernel._pbn_numpy(owners[:m], firsts).tobytes()
    t_k = best(lambda: k.pbn_deal_strings(owners[:m], firsts))
    row("PBN deal strings", m, t_k, best(lambda: kernel._pbn_numpy(owners[:m], firsts), 2))


def bench_cli(n: int, exe: Path) -> None:
    c_pbn = run_wall([str(exe), str(n), "pbn"], repeats=2)
    c_seats = run_wall([str(exe), str(n), "seats"], repeats=2)
    print(f"C baseline (Fisher-Yates, xoshiro256**): {n / c_pbn:,.0f} PBN lines/s, {n / c_seats:,.0f} seat lines/s", flush=True)
    for fmt, t_c in (("numbers", c_seats), ("pbn", c_pbn)):
        for stream in ("v1", "v2"):
            argv = [*CLI, "generate", "{}", "-n", str(n), "--stream", stream, "--format", fmt]
            t_k = run_wall(argv, {"TRUEDEAL_NO_KERNEL": ""}, repeats=2)
            t_n = run_wall(argv, {"TRUEDEAL_NO_KERNEL": "1"})
            row(f"CLI '{{}}' {stream} --format {fmt}, {n:,}", n, t_k, t_n, t_c)


def bench_startup() -> None:
    argv = [*CLI, "generate", "examples/strong-nt.json", "-n", "1"]
    t_k = run_wall(argv, {"TRUEDEAL_NO_KERNEL": ""}, repeats=3)
    t_n = run_wall(argv, {"TRUEDEAL_NO_KERNEL": "1"}, repeats=3)
    t_py = run_wall([sys.executable, "-c", "pass"], repeats=3)
    t_np = run_wall([sys.executable, "-c", "import numpy"], repeats=3)
    print(
        f"start-up (generate strong-nt -n 1): kernel {t_k:.3f} s, numpy path {t_n:.3f} s "
        f"(bare python {t_py:.3f} s, python + numpy import {t_np:.3f} s)",
        flush=True,
    )


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    n_cli = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
    bench_functions(n)
    with tempfile.TemporaryDirectory() as tmp:
        bench_cli(n_cli, compile_baseline(Path(tmp)))
    bench_startup()


if __name__ == "__main__":
    main()
