"""The cost of graphgrad's always-on diagnostics on the eager benchmarks: per-step live-node
counting (the retention detector's input) and the memory ledger, measured by running the same
work with them on and off, alternating, in one process.

Run: ``python bench/bench_diagnostics.py [--rounds N]``. Prints the median time of each
benchmark with diagnostics on and off and the overhead; the target is under 5%.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))

import bench_core  # noqa: E402

import graphgrad  # noqa: E402
from graphgrad.autograd.graph import OpNode  # noqa: E402
from graphgrad.diagnostics import ledger  # noqa: E402

_DEL = OpNode.__del__


def diagnostics(on: bool) -> None:
    """Off: nodes stop counting themselves out, the ledger stops tracking new arrays (the
    stamp in the dispatcher stays: it is two attribute writes)."""
    if on:
        OpNode.__del__ = _DEL
        ledger.set_min_tracked_bytes(16 * 1024)
    else:
        del OpNode.__del__
        ledger.set_min_tracked_bytes(1 << 62)


def timed(fn, n):
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    cases = [("seed example", lambda: bench_core.seed_example(graphgrad), 400),
             ("100-op chain", bench_core.make_chain(graphgrad), 40),
             ("MLP step", bench_core.make_mlp(graphgrad), 5)]
    for name, fn, n in cases:
        fn()
        times = {True: [], False: []}
        for _ in range(args.rounds):
            for on in (True, False):
                diagnostics(on)
                times[on].append(timed(fn, n))
        diagnostics(True)
        on, off = statistics.median(times[True]), statistics.median(times[False])
        print(f"{name:14s} on {on * 1e6:9.1f} us   off {off * 1e6:9.1f} us   "
              f"overhead {100 * (on / off - 1):+5.1f}%")


if __name__ == "__main__":
    main()
