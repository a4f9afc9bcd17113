"""This tree's compiled sampler against another build's, interleaved in one process.

Run as ``.venv/bin/python bench/bench_sampler_ab.py OTHER_SHARED [spec ...]``,
where ``OTHER_SHARED`` is the ``shared`` folder of another checkout with its
kernel built (``git worktree add /tmp/base HEAD~1 && cd /tmp/base &&
python setup.py build_ext --inplace``).  Default specs: ``examples/*.json``
and ``bench/specs/*.json`` whose listing takes the one-call draw.

On a shared 2-core machine two runs of ``bench_sampler.py`` differ by 15-25%,
more than a kernel change gains.  Here both builds' ``draw`` run on the same
plan, the same arrays and the same seeds, alternately (which goes first
alternates too), and each call's CPU time is summed per build; the deals of
the two must be the same, byte for byte.  The ratio is other / this, in CPU
time: above 1, this tree is faster.  No assertion is about time.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import time
from pathlib import Path
from types import ModuleType

import numpy as np

from truedeal import kernel
from truedeal.engine import Plan
from truedeal.randomness import Rng, SeededBits
from truedeal.spec import load_spec

ROOT = Path(__file__).resolve().parent.parent
ROWS, CALLS = 4096, 150  # a chunk a call; alternated calls a build


def load_sampler(shared: Path) -> ModuleType:
    """The ``_sampler`` extension built in ``shared/truedeal``, under another name."""
    path = next((shared / "truedeal").glob("_sampler*.so"), None)
    if path is None:
        raise SystemExit(f"no _sampler*.so in {shared / 'truedeal'}: build that checkout's kernel first")
    loader = importlib.machinery.ExtensionFileLoader("other._sampler", str(path))
    spec = importlib.util.spec_from_file_location("other._sampler", path, loader=loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def compare(path: str, this: ModuleType, other: ModuleType) -> None:
    plan = Plan.build(load_spec(path))
    args = getattr(plan.sampler, "one_call_args", lambda: ())()
    if not args:
        print(f"{Path(path).stem:<22} (not the one-call draw: a paired listing or a lazy one)", flush=True)
        return
    seconds = {"this": 0.0, "other": 0.0}
    out = {"this": np.empty((ROWS, 52), np.uint8), "other": np.empty((ROWS, 52), np.uint8)}
    for call in range(CALLS):
        order = [("this", this), ("other", other)]
        for name, module in order if call % 2 else order[::-1]:
            rng = Rng(SeededBits(f"ab{call}"))
            t0 = time.process_time()
            module.draw(rng.bits, *args, out[name])
            seconds[name] += time.process_time() - t0
        assert out["this"].tobytes() == out["other"].tobytes(), f"{path}: the two builds deal differently"
    this_rate, other_rate = CALLS * ROWS / seconds["this"], CALLS * ROWS / seconds["other"]
    print(f"{Path(path).stem:<22} this {this_rate:11,.0f}/s  other {other_rate:11,.0f}/s  "
          f"other/this time {seconds['other'] / seconds['this']:5.3f}", flush=True)


def main() -> None:
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    this = kernel.sampler()
    if this is None:
        raise SystemExit("this tree's kernel is not built")
    other = load_sampler(Path(sys.argv[1]))
    specs = sys.argv[2:] or [str(p) for p in sorted(ROOT.glob("examples/*.json")) + sorted(ROOT.glob("bench/specs/*.json"))]
    print(f"draw() of {ROWS:,} deals, {CALLS} calls a build, alternated; CPU time", flush=True)
    for path in specs:
        compare(path, this, other)


if __name__ == "__main__":
    main()
