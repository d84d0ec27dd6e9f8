"""Sparse benchmarks: graphgrad against torch eager, side by side in one process.

A GCN-sized sparse x dense product (forward and backward), to_dense, coalesce, and one
2-layer GCN training step. Run: ``python bench/bench_sparse.py [--quick]``; one thread, as
bench_core.py.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
from _harness import compare  # noqa: E402

torch.set_num_threads(1)
warnings.filterwarnings("ignore", message="Sparse invariant checks")

RNG = np.random.default_rng(0)
N, NNZ, K = 2000, 20000, 64
IDX = np.unique(np.stack([RNG.integers(0, N, NNZ), RNG.integers(0, N, NNZ)]), axis=1)
VALS = RNG.random(IDX.shape[1]).astype(np.float32)
FEATS = RNG.standard_normal((N, K)).astype(np.float32)


def _adj(m, coalesce=True):
    a = m.sparse_coo_tensor(m.tensor(IDX), m.tensor(VALS), (N, N))
    return a.coalesce() if coalesce else a


def spmm_forward(m):
    a, x = _adj(m), m.tensor(FEATS)
    return lambda: m.sparse.mm(a, x)


def spmm_backward(m):
    a, x = _adj(m), m.tensor(FEATS, requires_grad=True)

    def run():
        m.sparse.mm(a, x).sum().backward()
    return run


def to_dense(m):
    a = _adj(m)
    return lambda: a.to_dense()


def coalesce(m):
    shuffled = RNG.permutation(IDX.shape[1])
    a = m.sparse_coo_tensor(m.tensor(IDX[:, shuffled]), m.tensor(VALS[shuffled]), (N, N))
    return lambda: a.coalesce()


def gcn_step(m):
    a = _adj(m)
    x = m.tensor(FEATS)
    w1 = m.tensor(RNG.standard_normal((K, 32)).astype(np.float32) * 0.1, requires_grad=True)
    w2 = m.tensor(RNG.standard_normal((32, 8)).astype(np.float32) * 0.1, requires_grad=True)
    y = m.tensor(RNG.integers(0, 8, N))
    opt = m.optim.SGD([w1, w2], lr=0.1)

    def run():
        opt.zero_grad()
        h = m.relu(m.sparse.mm(a, x @ w1))
        loss = m.nn.functional.cross_entropy(m.sparse.mm(a, h @ w2), y)
        loss.backward()
        opt.step()
    return run


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true")
    q = p.parse_args().quick
    r = 3 if q else 7
    print(f"sparse {N}x{N}, nnz {IDX.shape[1]}, dense operand {N}x{K}")
    compare("sparse.mm forward", spmm_forward, r, 5, unit="ms")
    compare("sparse.mm forward+backward (dense)", spmm_backward, r, 5, unit="ms")
    compare("to_dense", to_dense, r, 5, unit="ms")
    compare("coalesce (shuffled)", coalesce, r, 5, unit="ms")
    compare("GCN step (2 layers, SGD)", gcn_step, r, 3, unit="ms")


if __name__ == "__main__":
    main()
