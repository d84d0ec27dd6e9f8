"""graphgrad.compile never bakes a value computed behind the dispatcher: tensors wrapped from
NumPy results inside the function (nonzero, matrix_rank, ...) are graph breaks naming the line,
views of recorded values (max's indices) replay, in-place random fills and writes made outside
grad mode replay, and shape-only index params (reflect padding, resampling) stay in the graph.
Compared with torch on calls whose data differ from the capture's."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import graphgrad as gg

CORE = {"core_only": True}


def _strict(fn):
    c = gg.compile(fn, options=CORE)

    def call(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return c(*args)
    return c, call


def _data(seed, shape=(6,), sparse=True):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    if sparse:
        a[a < 0.3] = 0.0
    return a


def test_nonzero_output_is_a_graph_break_not_the_capture_value():
    c = gg.compile(lambda x: x.nonzero(), options=CORE)
    with pytest.warns(UserWarning, match="outside the recorded ops.*test_compile_bakes.py"):
        c(gg.tensor(_data(0)))
    for seed in (1, 2, 3):
        a = _data(seed)
        np.testing.assert_array_equal(c(gg.tensor(a)).numpy(), torch.tensor(a).nonzero().numpy())


def test_nonzero_used_in_ops_is_a_graph_break():
    def f(x):
        idx = x.nonzero().squeeze(1)
        return x.index_select(0, idx) * 2.0

    c = gg.compile(f, options=CORE)
    with pytest.warns(UserWarning, match="outside the recorded ops"):
        c(gg.tensor(_data(0)))
    for seed in (4, 5):
        a = _data(seed)
        want = f(torch.tensor(a)).numpy()
        np.testing.assert_allclose(c(gg.tensor(a)).numpy(), want)


def test_fullgraph_raises_on_a_baked_tensor():
    c = gg.compile(lambda x: x.nonzero().float().sum(), fullgraph=True, options=CORE)
    with pytest.raises(Exception, match="outside the recorded ops"):
        c(gg.tensor(_data(0)))


@pytest.mark.parametrize("name", ["max", "min", "sort", "argsort", "topk", "cummax"])
def test_index_results_replay_with_new_values(name):
    def prog(m, x):
        if name in ("max", "min"):
            return getattr(x, name)(1).indices * 1
        if name == "sort":
            return x.sort(1).indices + 0
        if name == "argsort":
            return x.argsort(1) + 0
        if name == "topk":
            return x.topk(2, 1).indices + 0
        return x.cummax(1).indices + 0

    c, call = _strict(lambda x: prog(gg, x))
    for seed in range(3):
        a = _data(seed, (3, 5), sparse=False)
        np.testing.assert_array_equal(call(gg.tensor(a)).numpy(),
                                      prog(torch, torch.tensor(a)).numpy())
    assert c.variants[0].runner is not None


def test_inplace_on_a_non_leaf_replays_with_new_data():
    def prog(m, x):
        h = x * 2.0
        h.mul_(3.0)
        h.sum().backward()
        return h

    c, call = _strict(lambda x: prog(gg, x))
    for seed in range(3):
        a = _data(seed, sparse=False)
        xg, xt = gg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        np.testing.assert_allclose(call(xg).detach().numpy(), prog(torch, xt).detach().numpy())
        np.testing.assert_allclose(xg.grad.numpy(), xt.grad.numpy())


def test_zero_and_fill_without_grad_replay():
    buf = gg.ones(4)

    def step(x):
        with gg.no_grad():
            buf.zero_()
            buf.add_(x)
            return buf * 1.0

    c, call = _strict(step)
    for seed in range(3):
        a = _data(seed, (4,), sparse=False)
        np.testing.assert_allclose(call(gg.tensor(a)).numpy(), a)
        np.testing.assert_allclose(buf.numpy(), a)


@pytest.mark.parametrize("method,args", [("uniform_", (-1.0, 2.0)), ("normal_", (0.5, 2.0)),
                                         ("bernoulli_", (0.3,)), ("exponential_", (2.0,)),
                                         ("random_", (0, 7))])
def test_inplace_random_fills_draw_fresh_values(method, args):
    w = gg.zeros(64)

    def step():
        with gg.no_grad():
            getattr(w, method)(*args)
        return w * 1.0

    c, call = _strict(step)
    gg.manual_seed(7)
    eager = [step().numpy().copy() for _ in range(3)]
    gg.manual_seed(7)
    got = [call().numpy().copy() for _ in range(3)]
    for e, g in zip(eager, got):
        np.testing.assert_array_equal(g, e)
    assert not np.array_equal(got[1], got[2])
    assert c.variants[0].runner is not None


@pytest.mark.parametrize("name", ["randint", "randperm", "normal", "normal_tensor", "bernoulli",
                                  "bernoulli_p"])
def test_random_ops_are_fresh_draws_in_the_graph(name):
    def step(x):
        if name == "randint":
            return gg.randint(0, 10, (8,)) + 0
        if name == "randperm":
            return gg.randperm(8) + 0
        if name == "normal":
            return gg.normal(1.0, 2.0, (8,)) * 1.0
        if name == "normal_tensor":
            return gg.normal(x, x.abs() + 0.5) * 1.0
        if name == "bernoulli":
            return gg.bernoulli(x.sigmoid()) * 1.0
        return gg.bernoulli(x, 0.5) * 1.0

    c, call = _strict(step)
    xs = [gg.tensor(_data(s, (8,), sparse=False)) for s in range(4)]
    gg.manual_seed(3)
    eager = [step(x).numpy().copy() for x in xs]
    gg.manual_seed(3)
    got = [call(x).numpy().copy() for x in xs]
    for e, g in zip(eager, got):
        np.testing.assert_array_equal(g, e)
    assert c.variants[0].runner is not None
    assert any(i.op == "random" for i in c.variants[0].graph.instrs)


def test_reseeding_between_replays_matches_eager():
    c, call = _strict(lambda: gg.rand(5) * 1.0)
    call()
    gg.manual_seed(11)
    got = call().numpy()
    gg.manual_seed(11)
    np.testing.assert_array_equal(got, gg.rand(5).numpy())


def test_clip_grad_norm_in_a_step_breaks_the_graph_and_stays_right():
    def make(m):
        w = m.tensor([3.0, 4.0], requires_grad=True)
        opt = m.optim.SGD([w], lr=0.0)

        def step(x):
            opt.zero_grad()
            (w * x).sum().backward()
            m.nn.utils.clip_grad_norm_([w], 1.0)
            return w.grad * 1.0
        return step

    c = gg.compile(make(gg), options=CORE)
    ref = make(torch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for s in range(3):
            a = _data(s, (2,), sparse=False) * 10
            np.testing.assert_allclose(c(gg.tensor(a)).numpy(), ref(torch.tensor(a)).numpy(),
                                       rtol=1e-6)
    assert c.breaks and "torch.nn.utils.get_total_norm" in str(c.breaks[0])


@pytest.mark.parametrize("prog", [
    lambda m, x: m.nn.functional.pad(x, (2, 1), mode="reflect"),
    lambda m, x: m.nn.functional.pad(x, (1, 2), mode="replicate"),
    lambda m, x: m.nn.functional.pad(x, (2, 2), mode="circular"),
    lambda m, x: m.nn.functional.adaptive_avg_pool1d(x, 3),
    lambda m, x: m.nn.functional.interpolate(x, scale_factor=2, mode="nearest"),
    lambda m, x: m.nn.functional.interpolate(x, size=9, mode="linear", align_corners=False),
], ids=["reflect", "replicate", "circular", "adaptive_avg", "nearest", "linear"])
def test_shape_only_params_replay_in_the_graph(prog):
    def step(m, x):
        y = prog(m, x)
        (y * y).sum().backward()
        return y

    c, call = _strict(lambda x: step(gg, x))
    for seed in range(3):
        a = _data(seed, (2, 3, 7), sparse=False).astype(np.float64)
        xg, xt = gg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        np.testing.assert_allclose(call(xg).detach().numpy(), step(torch, xt).detach().numpy(),
                                   rtol=1e-12)
        np.testing.assert_allclose(xg.grad.numpy(), xt.grad.numpy(), rtol=1e-12)
    assert c.variants[0].runner is not None
