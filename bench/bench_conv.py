"""Convolution benchmarks: graphgrad against torch eager, side by side in one process.

An MNIST-size CNN step (batch 32 of 1x28x28: conv 1->16 3x3 pad 1, relu, maxpool 2, conv 16->32
3x3, relu, maxpool 2, linear to 10, forward + backward) and its parts. Prints medians and the
ratio graphgrad / torch (lower is better). Run: ``python bench/bench_conv.py [--quick]``. BLAS is
held to one thread for both (threadpoolctl when installed, else the environment variables).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import contextlib  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
from _harness import compare as _compare  # noqa: E402

import graphgrad  # noqa: E402
import graphgrad.nn.functional  # noqa: E402, F401

torch.set_num_threads(1)


def _one_thread():
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(1)


def make_cnn(m, part="step"):
    F = m.nn.functional
    rng = np.random.default_rng(0)

    def param(*shape):
        bound = 1 / np.sqrt(np.prod(shape[1:]) if len(shape) > 1 else shape[0])
        return m.tensor(rng.uniform(-bound, bound, shape).astype(np.float32), requires_grad=True)

    w1, b1 = param(16, 1, 3, 3), param(16)
    w2, b2 = param(32, 16, 3, 3), param(32)
    w3, b3 = param(10, 32 * 6 * 6), param(10)
    x = m.tensor(rng.standard_normal((32, 1, 28, 28)).astype(np.float32))
    target = m.tensor(np.eye(10, dtype=np.float32)[rng.integers(0, 10, 32)])

    def forward():
        h = F.max_pool2d(F.relu(F.conv2d(x, w1, b1, padding=1)), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, w2, b2)), 2)
        logits = h.reshape(32, -1) @ w3.t() + b3
        return -(F.log_softmax(logits, 1) * target).sum() / 32

    def step():
        forward().backward()
        for p in (w1, b1, w2, b2, w3, b3):
            p.grad = None

    return forward if part == "forward" else step


def make_conv(m, backward):
    F = m.nn.functional
    rng = np.random.default_rng(1)
    x = m.tensor(rng.standard_normal((32, 16, 14, 14)).astype(np.float32), requires_grad=True)
    w = m.tensor(rng.standard_normal((32, 16, 3, 3)).astype(np.float32), requires_grad=True)

    def run():
        y = F.conv2d(x, w)
        if backward:
            y.sum().backward()
            x.grad = w.grad = None
    return run


def make_pool(m, backward):
    F = m.nn.functional
    rng = np.random.default_rng(2)
    x = m.tensor(rng.standard_normal((32, 16, 28, 28)).astype(np.float32), requires_grad=True)

    def run():
        y = F.max_pool2d(x, 2)
        if backward:
            y.sum().backward()
            x.grad = None
    return run


def compare(name, make, repeat, number):
    return _compare(name, make, repeat, number, unit="ms")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = ap.parse_args()
    r = 3 if args.quick else 7
    with _one_thread():
        compare("CNN step (fwd+bwd), b=32 28x28", make_cnn, r, 5)
        compare("CNN forward only", lambda m: make_cnn(m, "forward"), r, 5)
        compare("conv2d 16->32 3x3 forward", lambda m: make_conv(m, False), r, 10)
        compare("conv2d 16->32 3x3 fwd+bwd", lambda m: make_conv(m, True), r, 10)
        compare("max_pool2d 2 on 32x16x28x28 fwd", lambda m: make_pool(m, False), r, 10)
        compare("max_pool2d fwd+bwd", lambda m: make_pool(m, True), r, 10)


if __name__ == "__main__":
    main()
