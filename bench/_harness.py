"""What the side-by-side benchmarks share: a median timer, and a comparison that alternates
graphgrad and torch so a change in machine load hits both alike."""

from __future__ import annotations

import statistics
import time


def timeit(fn, repeat, number, clock=time.perf_counter):
    """The median over ``repeat`` rounds of ``fn``'s time per call (``number`` calls each)."""
    fn()
    samples = []
    for _ in range(repeat):
        t = clock()
        for _ in range(number):
            fn()
        samples.append((clock() - t) / number)
    return statistics.median(samples)


def compare(name, make, repeat, number, *, unit="us", width=34, clock=time.perf_counter):
    """Times ``make(graphgrad)`` and ``make(torch)`` (best of two alternating rounds of
    medians), prints both and their ratio; returns (graphgrad time, torch time)."""
    import torch

    import graphgrad

    times = {}
    for _ in range(2):
        for m in (graphgrad, torch):
            t = timeit(make(m), repeat, number, clock)
            times[m.__name__] = min(t, times.get(m.__name__, float("inf")))
    g, t = times["graphgrad"], times["torch"]
    scale, fmt = (1e6, "10.1f") if unit == "us" else (1e3, "8.2f")
    print(f"{name:<{width}} graphgrad {g * scale:{fmt}} {unit}   torch {t * scale:{fmt}} {unit}"
          f"   ratio {g / t:5.2f}")
    return g, t
