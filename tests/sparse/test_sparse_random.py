"""Random patterns against torch 2.13: duplicates, empty rows, unsorted entries, dense dims,
values and dense operands requiring grad. Each case compares the dense result and every
leaf's gradient; the seeds are fixed so a failure reproduces."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import graphgrad as gg


def _case(seed):
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    nnz = int(rng.integers(0, 12))
    dense = int(rng.integers(0, 2)) if seed % 3 else 0
    idx = np.stack([rng.integers(0, n, nnz), rng.integers(0, m, nnz)])
    vals = rng.standard_normal((nnz,) + ((2,) if dense else ()))
    x = rng.standard_normal((m, 3))
    return idx, vals, (n, m) + ((2,) if dense else ()), x, dense


def _run(lib, seed):
    idx, vals, size, x, dense = _case(seed)
    v = lib.tensor(vals, requires_grad=True)
    xt = lib.tensor(x, requires_grad=True)
    s = lib.sparse_coo_tensor(lib.tensor(idx), v, size)
    outs = [s.to_dense(), s.coalesce().to_dense() * 2, lib.sparse.sum(s, 0).to_dense(),
            lib.sparse.softmax(s, 1).to_dense(), (s + s * 0.5).to_dense()]
    if not dense:
        left = lib.tensor(np.linspace(-1, 1, 2 * size[0]).reshape(2, size[0])) * xt.sum()
        outs += [lib.sparse.mm(s, xt), s.t().to_dense(), left @ s, s.relu().to_dense(),
                 (s * lib.tensor(x[:1, :1])).to_dense()]
    w = [lib.tensor(np.cos(np.arange(o.numel())).reshape(tuple(o.shape))) for o in outs]
    loss = sum((o * wi).sum() for o, wi in zip(outs, w))
    loss.backward()
    return ([o.detach().numpy() for o in outs],
            [None if t.grad is None else t.grad.numpy() for t in (v, xt)])


@pytest.mark.parametrize("seed", range(16))
def test_random_pattern_against_torch(seed):
    (to, tg), (go, ggr) = _run(torch, seed), _run(gg, seed)
    for a, b in zip(go, to):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    for a, b in zip(ggr, tg):
        if b is None:
            assert a is None or not np.any(a)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
