"""The memory plan: buffers are reused only between values whose live ranges do not overlap
(the checker re-derives liveness and rejects a corrupted plan), escaping values are never
planned, and replaying with reused buffers across calls gives torch's numbers."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import graphgrad
from graphgrad.compiler.passes.memory_plan import check, liveness, peak_bytes

pytest.importorskip("numba", reason="fused kernels need numba (graphgrad[compile])")


def _chain(m, x):
    # three elementwise groups split by matmuls: kernel outputs die early and can share buffers
    a = m.tanh(x * 2.0 + 1.0)
    b = a @ a
    c = m.sigmoid(b * 0.5 - 1.0)
    d = c @ c
    e = m.exp(-d) + d * 0.25
    return (e @ e).sum()


def _compiled():
    cf = graphgrad.compile(lambda x: _chain(graphgrad, x))
    return cf


def test_plan_reuses_buffers_and_matches_torch():
    cf = _compiled()
    rng = np.random.default_rng(0)
    for _ in range(3):  # buffers are reused across calls
        x = rng.standard_normal((24, 24)).astype(np.float64) * 0.1
        got = cf(graphgrad.tensor(x))
        np.testing.assert_allclose(got.numpy(), _chain(torch, torch.tensor(x)).numpy(),
                                   rtol=1e-10)
    g = cf.variants[-1].graph
    plan = g.memory_plan
    check(plan, g)
    assert len(plan.assign) >= 2 and len(plan.sizes) < len(plan.assign)
    assert plan.planned_peak <= plan.eager_peak


def test_checker_rejects_two_live_values_in_one_buffer():
    cf = _compiled()
    cf(graphgrad.tensor(np.ones((4, 4))))
    g = cf.variants[-1].graph
    plan = g.memory_plan
    live, _ = liveness(g)
    temps = sorted((v for v in live if v.nbytes), key=lambda v: live[v][0])
    overlapping = next((a, b) for a in temps for b in temps
                       if a is not b and live[a][0] <= live[b][0] <= live[a][1])
    plan.assign = {overlapping[0]: 0, overlapping[1]: 0}
    plan.sizes = [max(v.nbytes for v in overlapping)]
    with pytest.raises(AssertionError, match="two live values"):
        check(plan, g)


def test_outputs_and_gradients_are_never_planned():
    def f(m, x, w):
        y = m.tanh(x * w) * 3.0
        loss = (y * y).sum()
        loss.backward()
        return y
    cf = graphgrad.compile(lambda x, w: f(graphgrad, x, w))
    w = graphgrad.ones(8, requires_grad=True)
    y1 = cf(graphgrad.ones(4, 8), w)
    y2 = cf(graphgrad.ones(4, 8) * 2, w)
    assert not np.shares_memory(y1.detach().numpy(), y2.detach().numpy())
    g = cf.variants[-1].graph
    check(g.memory_plan, g)
    assert peak_bytes(g) > 0
