"""graphgrad.compile on ops whose params come from tensor values (index plans, masks), on ops
with structured auxiliary results (max pooling) and several outputs (linalg): they replay in
the graph with the values of each call, never baked. Compared with eager graphgrad on calls
whose indices differ from the capture's."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import graphgrad as gg

CORE = {"core_only": True}


def _strict(fn):
    """Compiles ``fn``; any warning (a graph break) fails the test."""
    c = gg.compile(fn, options=CORE)

    def call(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return c(*args)
    call.compiled = c
    return call


def test_cross_entropy_training_step_has_no_graph_break():
    def run(compiled):
        gg.manual_seed(0)
        net = gg.nn.Sequential(gg.nn.Linear(6, 16), gg.nn.ReLU(), gg.nn.Linear(16, 4))
        opt = gg.optim.SGD(net.parameters(), lr=0.1)

        def step(x, y):
            opt.zero_grad()
            loss = gg.nn.functional.cross_entropy(net(x), y)
            loss.backward()
            opt.step()
            return loss
        f = _strict(step) if compiled else step
        rng = np.random.default_rng(1)
        losses = []
        for _ in range(6):  # new targets every step: the gather plan must follow them
            x = gg.tensor(rng.standard_normal((8, 6)).astype(np.float32))
            y = gg.tensor(rng.integers(0, 4, 8))
            losses.append(f(x, y).item())
        return losses, f
    eager, _ = run(False)
    compiled, f = run(True)
    c = f.compiled
    assert len(c.variants) == 1 and c.variants[0].runner is not None and not c.breaks
    text = c.variants[0].graph.format()
    assert "gather(" in text and "vjp[gather]" in text
    np.testing.assert_allclose(compiled, eager, rtol=1e-6, atol=1e-7)


def test_explain_reports_no_break_for_index_ops():
    x = gg.randn(4, 5)
    idx = gg.tensor([[0, 4, 1, 2, 3]] * 4)
    text = str(gg.compiler.explain(lambda a, i: gg.gather(a, 1, i).sum(), x, idx))
    assert "graph breaks: 0" in text and "plan=<in0>" in text


PROGRAMS = {
    "gather": lambda x, i, m: gg.gather(x, 1, i % 5),
    "index_select": lambda x, i, m: x.index_select(0, i[0] % 4),
    "scatter_add": lambda x, i, m: x.scatter_add(1, i % 5, x * 2),
    "scatter": lambda x, i, m: x.scatter(1, i[:, :1] % 5, x[:, :1] * 3),
    "take": lambda x, i, m: x.take(i * 4 + 1),
    "masked_fill": lambda x, i, m: x.masked_fill(m, -1.0),
    "advanced_index": lambda x, i, m: x[i[2] % 4],
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_index_ops_replay_with_new_values(name):
    prog = PROGRAMS[name]

    def f(x, i, m):
        out = prog(x, i, m)
        (out * out).sum().backward()
        return out

    c = _strict(f)
    rng = np.random.default_rng(2)
    for _ in range(4):
        data = rng.standard_normal((4, 5))
        ix = rng.integers(0, 4, (4, 5))
        m = rng.random((4, 5)) < 0.5
        xe, xc = (gg.tensor(data, requires_grad=True) for _ in range(2))
        want = f(xe, gg.tensor(ix), gg.tensor(m))
        got = c(xc, gg.tensor(ix), gg.tensor(m))
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)
        np.testing.assert_allclose(xc.grad.numpy(), xe.grad.numpy(), rtol=1e-12)
    assert len(c.compiled.variants) == 1 and c.compiled.variants[0].runner is not None


def test_value_shaped_output_is_a_graph_break():
    # masked_select's length is the mask's count: a replay cannot keep the captured shape.
    c = gg.compile(lambda x, m: x.masked_select(m) * 2, options=CORE)
    with pytest.warns(UserWarning, match="output shape that depends on tensor values"):
        c(gg.ones(4), gg.tensor([True, False, True, False]))
    out = c(gg.ones(4), gg.tensor([True, True, True, False]))
    np.testing.assert_allclose(out.numpy(), [2.0, 2.0, 2.0])


def test_index_out_of_bounds_at_replay_raises():
    c = _strict(lambda x, i: gg.gather(x, 1, i))
    x = gg.randn(2, 3)
    c(x, gg.tensor([[0], [2]]))
    with pytest.raises(RuntimeError, match="out of bounds"):
        c(x, gg.tensor([[0], [3]]))
    with pytest.raises(RuntimeError, match="out of bounds"):
        c(x, gg.tensor([[0], [-1]]))


def test_cnn_with_maxpool_compiles_fully():
    def run(compiled):
        gg.manual_seed(0)
        net = gg.nn.Sequential(gg.nn.Conv2d(1, 4, 3, padding=1), gg.nn.ReLU(),
                               gg.nn.MaxPool2d(2), gg.nn.Flatten(), gg.nn.Linear(4 * 4 * 4, 3))
        opt = gg.optim.Adam(net.parameters(), lr=1e-2)

        def step(x, y):
            opt.zero_grad()
            loss = gg.nn.functional.cross_entropy(net(x), y)
            loss.backward()
            opt.step()
            return loss
        f = _strict(step) if compiled else step
        rng = np.random.default_rng(3)
        out = []
        for _ in range(5):
            x = gg.tensor(rng.standard_normal((4, 1, 8, 8)).astype(np.float32))
            out.append(f(x, gg.tensor(rng.integers(0, 3, 4))).item())
        return out, f
    eager, _ = run(False)
    compiled, f = run(True)
    v = f.compiled.variants
    assert len(v) == 1 and v[0].runner is not None
    assert "max_pool2d(" in v[0].graph.format()
    np.testing.assert_allclose(compiled, eager, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", ["sort", "topk", "max_dim", "slogdet", "svd", "eigh"])
def test_multi_output_ops_replay(op):
    def f(x):
        if op == "sort":
            v, i = x.sort(1)
            out = v * 2 + i
        elif op == "topk":
            v, i = x.topk(2, 1)
            out = v + i
        elif op == "max_dim":
            v, i = x.max(1)
            out = v * i
        elif op == "slogdet":
            out = gg.linalg.slogdet(x)[1]
        elif op == "svd":
            out = gg.linalg.svdvals(x)
        else:
            out = gg.linalg.eigvalsh(x + x.mT)
        out.sum().backward()
        return out

    c = _strict(f)
    rng = np.random.default_rng(4)
    for _ in range(3):
        data = rng.standard_normal((3, 3)) + 3 * np.eye(3)
        xe, xc = (gg.tensor(data, requires_grad=True) for _ in range(2))
        want = f(xe)
        got = c(xc)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-10)
        np.testing.assert_allclose(xc.grad.numpy(), xe.grad.numpy(), rtol=1e-8, atol=1e-12)
    assert c.compiled.variants[0].runner is not None


def test_multi_output_forward_is_not_baked():
    # Regression: linalg ops with several outputs bypassed the recorder and were baked.
    c = _strict(lambda x: gg.linalg.slogdet(x)[1] * 1.0)
    with gg.no_grad():
        c(gg.eye(3, dtype=gg.float64))
        out = c(gg.eye(3, dtype=gg.float64) * 2)
    np.testing.assert_allclose(out.numpy(), 3 * np.log(2.0))
