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


def _without_sparse_hook(module, name):
    """``module.name`` recompiled with its sparse ``try``/``except`` replaced by the ``try``
    body: the entry point as it was before the sparse hook, for a same-run comparison."""
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(getattr(module, name)))
    fn = tree.body[0]
    body = []
    for stmt in fn.body:
        body.extend(stmt.body if isinstance(stmt, ast.Try) else [stmt])
    fn.body = body
    scope = dict(vars(module))
    exec(compile(ast.fix_missing_locations(tree), module.__file__, "exec"), scope)
    return scope[name]


def hook_cost(rounds=40, number=3000):
    """Dense 8x8 matmul/mm through the entry points with and without the sparse hook."""
    import timeit

    import graphgrad as gg
    from graphgrad.ops import linalg

    a = gg.tensor(RNG.random((8, 8)).astype(np.float32), requires_grad=True)
    b = gg.tensor(RNG.random((8, 8)).astype(np.float32))
    for name in ("matmul", "mm"):
        new, old = getattr(linalg, name), _without_sparse_hook(linalg, name)
        tn, to = [], []
        for i in range(rounds):  # alternating (and which goes first), so load hits both alike
            for f, out in ((new, tn), (old, to))[::1 if i % 2 else -1]:
                out.append(timeit.timeit(lambda f=f: f(a, b), number=number) / number)
        print(f"dense {name} 8x8, with the sparse hook {np.median(tn) * 1e6:6.2f} us, without "
              f"{np.median(to) * 1e6:6.2f} us (medians), ratio {np.median(tn) / np.median(to):.3f}")


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
    hook_cost(10 if q else 40)


if __name__ == "__main__":
    main()
