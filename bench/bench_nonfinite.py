"""The cost of ``graphgrad.autograd.detect_nonfinite`` while it is on: an MLP training step
(fwd+bwd) and the 100-op chain, with and without it, alternating in one process (it costs
nothing when off: it installs itself only inside the context).

Run: ``python bench/bench_nonfinite.py``. Prints each median and the ratio on/off.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import statistics  # noqa: E402
import sys  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))

from _harness import timeit  # noqa: E402

import graphgrad as torch  # noqa: E402


def mlp_step():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 10))
    x, y = torch.randn(64, 784), torch.randint(0, 10, (64,))

    def step():
        model.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
    return step


def chain():
    x = torch.randn(16, requires_grad=True)

    def run():
        y = x
        for i in range(100):
            y = y * 1.0001 if i % 2 else y.tanh()
        y.sum().backward()
    return run


def main():
    for name, make, number in (("MLP 784-256-10 step, batch 64", mlp_step, 20),
                               ("100-op chain fwd+bwd, 16 floats", chain, 20)):
        fn = make()
        off, on = [], []
        for _ in range(5):
            off.append(timeit(fn, 3, number))
            with torch.autograd.detect_nonfinite():
                on.append(timeit(fn, 3, number))
        a, b = statistics.median(off), statistics.median(on)
        print(f"{name:<34} off {a * 1e6:9.1f} us   on {b * 1e6:9.1f} us   ratio {b / a:5.2f}")


if __name__ == "__main__":
    main()
