"""Fusion through graphgrad.compile, against torch eager: elementwise chains with broadcasting,
a trailing reduction and the backward fused; values used outside a group become extra kernel
outputs; unsupported ops stay unfused; every compiled graph's memory plan is checked."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import graphgrad
from graphgrad.compiler.passes.memory_plan import check

pytest.importorskip("numba", reason="fused kernels need numba (graphgrad[compile])")


def _step(m):
    def f(x, w, b):
        y = m.tanh(x * w + b) * 2.0 + 1.0
        loss = (y * y).sum()
        loss.backward()
        return loss, y
    return f


def _inputs(m, seed=0):
    rng = np.random.default_rng(seed)
    x = m.tensor(rng.standard_normal((16, 8)).astype(np.float32))
    w = m.tensor(rng.standard_normal(8).astype(np.float32), requires_grad=True)
    b = m.tensor(rng.standard_normal((16, 1)).astype(np.float32), requires_grad=True)
    return x, w, b


def _graph(cf):
    return cf.variants[-1].graph


def test_chain_forward_backward_matches_torch():
    cf = graphgrad.compile(_step(graphgrad))
    for seed in range(3):  # the first call captures, later ones replay the kernels
        gx, gw, gb = _inputs(graphgrad, seed)
        tx, tw, tb = _inputs(torch, seed)
        loss, y = cf(gx, gw, gb)
        tloss, ty = _step(torch)(tx, tw, tb)
        np.testing.assert_allclose(loss.detach().numpy(), tloss.detach().numpy(), rtol=1e-5)
        np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(gw.grad.numpy(), tw.grad.numpy(), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(gb.grad.numpy(), tb.grad.numpy(), rtol=1e-4, atol=1e-5)
    g = _graph(cf)
    fused = [i for i in g.instrs if i.op == "fused"]
    assert fused and len(g.fusion_groups) == len(fused)
    # y is returned and used by the loss: the forward kernel writes it as an extra output
    assert any(len(i.outs) >= 2 for i in fused)
    check(g.memory_plan, g)


def test_trailing_reduction_is_fused():
    def f(m, x):
        return (m.exp(x) * 0.5).sum(-1)
    cf = graphgrad.compile(lambda x: f(graphgrad, x))
    x = np.random.default_rng(4).standard_normal((32, 64)).astype(np.float32)
    out = cf(graphgrad.tensor(x))
    np.testing.assert_allclose(out.numpy(), f(torch, torch.tensor(x)).numpy(), rtol=1e-5)
    g = _graph(cf)
    assert [i.op for i in g.instrs] == ["fused"]
    assert "sum over 1 trailing axes" in g.fusion_groups[0]
    check(g.memory_plan, g)


def test_unsupported_op_stays_unfused_and_splits_groups():
    def f(m, x):
        a = m.sin(x) * 3.0 + 1.0
        c = m.cumsum(a, 0)  # not elementwise: a group boundary
        return m.cos(c) * m.sigmoid(c)
    cf = graphgrad.compile(lambda x: f(graphgrad, x))
    x = np.random.default_rng(5).standard_normal((8, 8)).astype(np.float64)
    out = cf(graphgrad.tensor(x))
    np.testing.assert_allclose(out.numpy(), f(torch, torch.tensor(x)).numpy(), rtol=1e-12)
    g = _graph(cf)
    assert [i.op for i in g.instrs if i.op == "fused"] == ["fused", "fused"]
    check(g.memory_plan, g)


def test_numpy_backend_gives_the_same_results():
    cf = graphgrad.compile(_step(graphgrad), backend="numpy")
    gx, gw, gb = _inputs(graphgrad)
    tx, tw, tb = _inputs(torch)
    loss, _ = cf(gx, gw, gb)
    tloss, _ = _step(torch)(tx, tw, tb)
    np.testing.assert_allclose(loss.detach().numpy(), tloss.detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(gw.grad.numpy(), tw.grad.numpy(), rtol=1e-4, atol=1e-5)
