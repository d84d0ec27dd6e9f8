"""A 2-layer GCN (Kipf & Welling's propagation rule, as the GCN tutorials write it) trained a
few steps on a small random graph: the same losses and weights as torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import graphgrad as gg


def _graph(n=30, edges=80, features=8, classes=3, seed=0):
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, edges), rng.integers(0, n, edges)
    a = np.zeros((n, n))
    a[src, dst] = a[dst, src] = 1.0
    a += np.eye(n)
    d = 1.0 / np.sqrt(a.sum(1))
    norm = a * d[:, None] * d[None, :]
    idx = np.stack(np.nonzero(norm))
    return (idx, norm[tuple(idx)].astype(np.float32),
            rng.standard_normal((n, features)).astype(np.float32),
            rng.integers(0, classes, n), classes)


def _train(m, steps, spelling, data, init):
    idx, vals, feats, labels, classes = data
    n = feats.shape[0]
    adj = m.sparse_coo_tensor(m.tensor(idx), m.tensor(vals), (n, n))
    if spelling == "legacy":
        adj = m.sparse.FloatTensor(m.tensor(idx), m.tensor(vals), m.Size([n, n]))
    if spelling == "csr":
        adj = adj.to_sparse_csr()

    class GCN(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = m.nn.Linear(feats.shape[1], 16)
            self.l2 = m.nn.Linear(16, classes)

        def forward(self, x, a):
            if spelling == "spmm":
                h = m.relu(m.spmm(a, self.l1(x)))
                return m.spmm(a, self.l2(h))
            if spelling in ("at", "csr"):
                h = m.relu(a @ self.l1(x))
                return a @ self.l2(h)
            h = m.relu(m.sparse.mm(a, self.l1(x)))
            return m.sparse.mm(a, self.l2(h))

    model = GCN()
    with m.no_grad():
        for p, w in zip(model.parameters(), init):
            p.copy_(m.tensor(w))
    opt = m.optim.Adam(model.parameters(), lr=0.05)
    x, y = m.tensor(feats), m.tensor(labels)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = m.nn.functional.cross_entropy(model(x, adj), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().numpy().copy() for p in model.parameters()]


@pytest.mark.parametrize("spelling", ["sparse_mm", "spmm", "at", "legacy", "csr"])
def test_gcn_trains_as_torch(spelling):
    data = _graph()
    rng = np.random.default_rng(1)
    shapes = [(16, 8), (16,), (3, 16), (3,)]
    init = [(rng.standard_normal(s) * 0.3).astype(np.float32) for s in shapes]
    want, want_w = _train(torch, 8, spelling, data, init)
    got, got_w = _train(gg, 8, spelling, data, init)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)
    for a, b in zip(got_w, want_w):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    assert want[-1] < want[0]
