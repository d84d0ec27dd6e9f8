"""LSTM benchmark: graphgrad against torch eager, side by side in one process, one BLAS thread.

An LSTM (input 40, hidden 128) over a sequence of 50 with batch 32: the forward+backward step
and the forward alone, median time per iteration and the ratio graphgrad / torch (target: the
step at most 1.5x torch). Run: ``python bench/bench_lstm.py [--quick] [--cpu-time]``; on a
shared machine ``--cpu-time`` (this thread's CPU time: both run on one thread) ignores the time
other processes take the core away.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
from _harness import compare as _compare  # noqa: E402

torch.set_num_threads(1)

T, B, IN, H = 50, 32, 40, 128


def make_lstm(m, part="step", layers=1, bidirectional=False):
    rng = np.random.default_rng(0)
    lstm = m.nn.LSTM(IN, H, num_layers=layers, bidirectional=bidirectional)
    for p in lstm.parameters():  # the same weights in both frameworks
        p.data = m.tensor(rng.uniform(-0.1, 0.1, tuple(p.shape)).astype(np.float32))
    x = m.tensor(rng.standard_normal((T, B, IN)).astype(np.float32))

    def forward():
        out, (h, c) = lstm(x)
        return out

    def step():
        out = forward()
        out.sum().backward()
        for p in lstm.parameters():
            p.grad = None

    return step if part == "step" else forward


CLOCK = time.perf_counter


def compare(name, make, repeat, number):
    g, t = _compare(name, make, repeat, number, unit="ms", width=40, clock=CLOCK)
    return g / t


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--cpu-time", action="store_true", help="time this thread's CPU time")
    args = ap.parse_args()
    if args.cpu_time:
        global CLOCK
        CLOCK = time.thread_time
    r = 3 if args.quick else 7
    compare(f"LSTM {IN}->{H}, T={T}, B={B} fwd+bwd", make_lstm, r, 5)
    compare("LSTM forward only", lambda m: make_lstm(m, "forward"), r, 5)
    compare("LSTM 2 layers, bidirectional fwd+bwd",
            lambda m: make_lstm(m, layers=2, bidirectional=True), r, 2)


if __name__ == "__main__":
    main()
