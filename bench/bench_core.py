"""Core benchmarks: graphgrad against torch eager, side by side in one process.

Prints each benchmark's median time per iteration for both and the ratio graphgrad / torch
(lower is better). Run: ``python bench/bench_core.py [--quick]``. Both run on one thread
(see shared/FACTS.md: a busy neighbour slows multi-threaded GEMM unpredictably).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
from _harness import compare  # noqa: E402

torch.set_num_threads(1)


def seed_example(m):
    x = m.tensor(2.0)
    w = m.tensor(3.0, requires_grad=True)
    b = m.tensor(1.0, requires_grad=True)
    loss = (x * w + b - 10) ** 2
    loss.backward()
    return w.grad


def make_chain(m):
    x = m.tensor(np.linspace(-1, 1, 16, dtype=np.float32), requires_grad=True)

    def run():
        y = x
        for _ in range(25):  # 4 ops per round: 100 elementwise ops
            y = y * 1.01
            y = y + 0.1
            y = y.tanh()
            y = y - 0.05
        y.sum().backward()
        x.grad = None
    return run


def make_mlp(m, part="step"):
    rng = np.random.default_rng(0)
    sizes = (784, 512, 256, 10)
    params = []
    for fan_in, fan_out in zip(sizes, sizes[1:]):
        bound = 1 / np.sqrt(fan_in)
        params.append(m.tensor(rng.uniform(-bound, bound, (fan_in, fan_out)).astype(np.float32),
                               requires_grad=True))
        params.append(m.tensor(rng.uniform(-bound, bound, fan_out).astype(np.float32),
                               requires_grad=True))
    x = m.tensor(rng.standard_normal((128, 784)).astype(np.float32))
    labels = rng.integers(0, 10, 128)
    onehot = m.tensor(np.eye(10, dtype=np.float32)[labels])

    def forward():
        h = x
        for i in range(0, len(params), 2):
            h = h @ params[i] + params[i + 1]
            if i < len(params) - 2:
                h = h.relu()
        return -(m.log_softmax(h, 1) * onehot).sum() / 128

    def step():
        loss = forward()
        loss.backward()
        with m.no_grad():
            for p in params:
                p.data = (p - 0.01 * p.grad).data
                p.grad = None

    if part == "forward":
        return forward
    return step


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = ap.parse_args()
    r = 3 if args.quick else 7
    compare("seed example (fwd+bwd)", lambda m: lambda: seed_example(m), r, 2000)
    compare("100-op chain, 16 floats (fwd+bwd)", make_chain, r, 100)
    step_g, step_t = compare("MLP 784-512-256-10 step, b=128", make_mlp, r, 10)
    fwd_g, fwd_t = compare("MLP forward only", lambda m: make_mlp(m, "forward"), r, 10)
    print(f"{'MLP backward / forward':<34} graphgrad {(step_g - fwd_g) / fwd_g:10.2f}      "
          f"torch {(step_t - fwd_t) / fwd_t:10.2f}   (backward+update time over forward time)")


if __name__ == "__main__":
    main()
