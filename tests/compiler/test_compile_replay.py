"""The replay's fast paths against torch: the lowered SGD step (learning-rate changes, hooks,
momentum and the other options fall back to the real step), gradients adopted into .grad
without a copy (never sharing memory with anything else), and the generated schedule."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import graphgrad as gg


def _seed_program(m, lr=0.01, **sgd):
    w = m.tensor(3.0, requires_grad=True)
    b = m.tensor(1.0, requires_grad=True)
    opt = m.optim.SGD([w, b], lr=lr, **sgd)

    def step(x):
        opt.zero_grad()
        loss = (x * w + b - 10) ** 2
        loss.backward()
        opt.step()
        return loss
    return step, opt, (w, b)


def _run(m, compiled, steps=6, sched=None, **sgd):
    step, opt, params = _seed_program(m, **sgd)
    if compiled:
        step = gg.compile(step)
    losses = []
    for i in range(steps):
        if sched is not None:
            sched(opt, i)
        losses.append(float(step(m.tensor(2.0))))
    return losses, [float(p) for p in params], [float(p.grad) for p in params]


@pytest.mark.parametrize("sgd", [{}, {"momentum": 0.9}, {"weight_decay": 0.1},
                                 {"maximize": True}, {"momentum": 0.9, "nesterov": True}])
def test_seed_step_matches_torch(sgd):
    want = _run(torch, False, **sgd)
    got = _run(gg, True, **sgd)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_learning_rate_change_is_read_every_call():
    def sched(opt, i):
        for g in opt.param_groups:
            g["lr"] = 0.01 / (i + 1)
    want = _run(torch, False, sched=sched)
    got = _run(gg, True, sched=sched)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_step_hooks_still_run():
    calls = {"torch": 0, "gg": 0}
    for name, m, compiled in (("torch", torch, False), ("gg", gg, True)):
        step, opt, _ = _seed_program(m)
        if compiled:
            step = gg.compile(step)
        step(m.tensor(2.0))

        def hook(o, args, kwargs, name=name):
            calls[name] += 1
        opt.register_step_post_hook(hook)
        for _ in range(3):
            step(m.tensor(2.0))
    assert calls["gg"] == calls["torch"] == 3


def test_large_parameters_and_versions():
    # The kernel path of the update (>= 4096 elements) and the version bump that makes an
    # old graph's backward raise, as in eager.
    def run(m, compiled):
        m.manual_seed(0)
        w = m.nn.Parameter(m.ones(80, 80))
        opt = m.optim.SGD([w], lr=0.5)

        def step(x):
            opt.zero_grad()
            (x @ w).square().mean().backward()
            opt.step()
            return w.sum()
        step = gg.compile(step) if compiled else step
        x = m.tensor(np.linspace(-1, 1, 80 * 80, dtype=np.float32).reshape(80, 80))
        out = [float(step(x)) for _ in range(4)]
        return out, w._version
    want, tv = run(torch, False)
    got, gv = run(gg, True)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert gv == tv


def test_adopted_gradients_own_their_memory():
    init = np.random.default_rng(0)
    shapes = [(30, 20), (30,), (5, 30), (5,)]
    weights = [init.standard_normal(s).astype(np.float32) * 0.3 for s in shapes]

    def run(m, compiled):
        net = m.nn.Sequential(m.nn.Linear(20, 30), m.nn.ReLU(), m.nn.Linear(30, 5))
        with m.no_grad():
            for p, w in zip(net.parameters(), weights):
                p.copy_(m.tensor(w))
        opt = m.optim.SGD(net.parameters(), lr=0.1)

        def step(x, y):
            opt.zero_grad()
            loss = m.nn.functional.cross_entropy(net(x), y)
            loss.backward()
            opt.step()
            return loss
        step = gg.compile(step) if compiled else step
        rs = np.random.default_rng(1)
        x = m.tensor(rs.standard_normal((8, 20)).astype(np.float32))
        y = m.tensor(rs.integers(0, 5, 8))
        losses = [float(step(x, y)) for _ in range(5)]
        return losses, [p.grad for p in net.parameters()], list(net.parameters())
    want, tg, _ = run(torch, False)
    got, gg_grads, params = run(gg, True)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    for a, b in zip(gg_grads, tg):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-7)
        assert a.is_contiguous()
    arrays = [g._data for g in gg_grads] + [p._data for p in params]
    for i, a in enumerate(arrays):
        for b in arrays[i + 1:]:
            assert not np.shares_memory(a, b)


def test_passthrough_gradient_is_copied_not_shared():
    # add's backward hands the same array to both leaves: adopting it twice would make the
    # two .grad tensors one memory, so at most one may take it.
    def run(m, compiled):
        a = m.ones(4, requires_grad=True)
        b = m.ones(4, requires_grad=True)

        def step(x):
            (a * x + b).sum().backward()
            return x
        f = gg.compile(step) if compiled else step
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(2):
                a.grad, b.grad = None, None
                f(m.full((4,), 3.0))
        return a, b
    ta, tb = run(torch, False)
    ga, gb = run(gg, True)
    np.testing.assert_allclose(ga.grad.numpy(), ta.grad.numpy())
    np.testing.assert_allclose(gb.grad.numpy(), tb.grad.numpy())
    assert not np.shares_memory(ga.grad._data, gb.grad._data)
    ga.grad.add_(1.0)
    np.testing.assert_allclose(gb.grad.numpy(), tb.grad.numpy())


def test_generated_replay_equals_the_slot_executor():
    # The same program twice: one replayed by the generated function, one by the slot loop
    # (keep_all=True, verify's path); parameters and losses must agree exactly.
    runs = []
    for keep_all in (False, True):
        step, _, params = _seed_program(gg)
        c = gg.compile(step)
        x = gg.tensor(2.0)
        c(x)
        v = c.variants[0]
        assert v.runner.source.startswith("def run(tensors):")
        losses = []
        for _ in range(3):
            if keep_all:
                outs, slots = v.runner.run([x], keep_all=True)
                assert len(slots) == v.runner.nslots
            else:
                outs = v.runner.run([x])
            losses.append(float(outs[0]))
        runs.append((losses, [float(p) for p in params]))
    assert runs[0] == runs[1]
