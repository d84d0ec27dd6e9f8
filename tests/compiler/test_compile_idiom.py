"""graphgrad.compile in PyTorch's idiom: compiled regions whose outputs carry one
CompiledFunctionBackward node, with ``backward()`` outside. Every check compares with eager
graphgrad on the same program (float64), which test_compile_ops compares with torch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import graphgrad as gg
import graphgrad.nn as nn
import graphgrad.nn.functional as F


def _f(x, w):
    return (gg.tanh(x * w) + x.sin() * 2.0).sum()


def _leaves(seed, *shapes, rg=True):
    rng = np.random.default_rng(seed)
    return [gg.tensor(rng.standard_normal(s), requires_grad=rg) for s in shapes]


def _grads(ts):
    return [None if t.grad is None else t.grad.numpy().copy() for t in ts]


def _close(a, b):
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.fixture(autouse=True)
def _strict():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a graph break or an eager fallback is a failure here
        yield


def test_values_grads_and_node_on_capture_and_replays():
    cf = gg.compile(_f)
    for call in range(3):
        x, w = _leaves(call, (5,), (5,))
        y = cf(x, w)
        assert y.requires_grad and type(y.grad_fn).__name__ == "CompiledFunctionBackward"
        assert y.grad_fn.name() == "CompiledFunctionBackward"
        y.backward()
        x2, w2 = _leaves(call, (5,), (5,))
        y2 = _f(x2, w2)
        y2.backward()
        _close(y.detach().numpy(), y2.detach().numpy())
        for a, b in zip(_grads([x, w]), _grads([x2, w2])):
            _close(a, b)
    assert cf.variants[0].region is not None and cf.variants[0].reason is None


def test_module_forms_match_eager():
    def make():
        gg.manual_seed(0)
        return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3)).double()

    ref, m1, m2 = make(), make(), make()
    c1 = gg.compile(m1)
    m2.compile()
    x = gg.tensor(np.random.default_rng(1).standard_normal((6, 4)))
    y = gg.tensor([0, 1, 2, 0, 1, 2])
    for _ in range(3):
        for m in (ref, m1, m2):
            m.zero_grad()
        F.cross_entropy(ref(x), y).backward()
        for m, c in ((m1, c1), (m2, m2)):
            out = c(x)
            assert type(out.grad_fn).__name__ == "CompiledFunctionBackward"
            F.cross_entropy(out, y).backward()
            for p, q in zip(ref.parameters(), m.parameters()):
                _close(p.grad.numpy(), q.grad.numpy())


def test_decorator_and_mixing_with_eager():
    @gg.compile
    def region(x, w):
        return gg.sigmoid(x @ w) * x.sum()

    for call in range(2):
        a, w = _leaves(call, (3, 4), (4, 2))
        a2, w2 = _leaves(call, (3, 4), (4, 2))
        x = a * 2.0 + 1.0  # eager before: the region's input is not a leaf
        out = (region(x, w) * 3.0 + a.sum()).sum()  # and eager after
        out.backward()
        x2 = a2 * 2.0 + 1.0
        (gg.sigmoid(x2 @ w2) * x2.sum() * 3.0 + a2.sum()).sum().backward()
        for g, h in zip(_grads([a, w]), _grads([a2, w2])):
            _close(g, h)


def test_hooks_accumulation_and_autograd_grad():
    lin = nn.Linear(3, 2).double()
    seen, post = [], []
    lin.weight.register_hook(lambda g: seen.append(g.numpy().copy()))
    lin.bias.register_post_accumulate_grad_hook(lambda p: post.append(p.grad.numpy().copy()))
    c = gg.compile(lin)
    x = gg.tensor(np.random.default_rng(2).standard_normal((4, 3)), requires_grad=True)
    for _ in range(3):
        c(x).pow(2).sum().backward()  # .grad accumulates across calls
    ref = nn.Linear(3, 2).double()
    ref.load_state_dict(lin.state_dict())
    xr = x.detach().requires_grad_()
    for _ in range(3):
        ref(xr).pow(2).sum().backward()
    _close(lin.weight.grad.numpy(), ref.weight.grad.numpy())
    _close(x.grad.numpy(), xr.grad.numpy())
    assert len(seen) == 3 and len(post) == 3
    _close(post[-1], ref.bias.grad.numpy())
    gx, gw = gg.autograd.grad(c(x).sum(), (x, lin.weight))
    gxr, gwr = gg.autograd.grad(ref(xr).sum(), (xr, ref.weight))
    _close(gx.numpy(), gxr.numpy())
    _close(gw.numpy(), gwr.numpy())


def test_retain_graph_and_second_backward():
    cf = gg.compile(_f)
    for _ in range(2):
        x, w = _leaves(3, (4,), (4,))
        y = cf(x, w)
        y.backward(retain_graph=True)
        y.backward()
        x2, w2 = _leaves(3, (4,), (4,))
        y2 = _f(x2, w2)
        y2.backward(retain_graph=True)
        y2.backward()
        _close(x.grad.numpy(), x2.grad.numpy())
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            y.backward()


def test_several_outputs_and_unused_output():
    @gg.compile
    def two(x, w):
        h = x * w
        return h.exp(), (h * h).sum()

    for call in range(2):
        x, w = _leaves(call, (5,), (5,))
        a, b = two(x, w)
        (a.sum() * 2.0).backward()  # only one output gets a gradient
        x2, w2 = _leaves(call, (5,), (5,))
        ((x2 * w2).exp().sum() * 2.0).backward()
        _close(x.grad.numpy(), x2.grad.numpy())
        x.grad = w.grad = None
        a, b = two(x, w)
        (a.sum() + b).backward()
        x2.grad = w2.grad = None
        h = x2 * w2
        (h.exp().sum() + (h * h).sum()).backward()
        for g, r in zip(_grads([x, w]), _grads([x2, w2])):
            _close(g, r)


def test_inplace_change_of_a_saved_input_raises():
    cf = gg.compile(lambda x, w: (x * w).sum())
    for _ in range(2):
        x, w = _leaves(4, (3,), (3,))
        y = cf(x, w)
        with gg.no_grad():
            w.mul_(2.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.backward()


def test_create_graph_falls_back_with_a_warning():
    cf = gg.compile(lambda x: (x ** 3).sum())
    for _ in range(2):
        (x,) = _leaves(5, (4,))
        with pytest.warns(UserWarning, match="create_graph=True"):
            (g,) = gg.autograd.grad(cf(x), x, create_graph=True)
        (h,) = gg.autograd.grad(g.sum(), x)
        _close(g.detach().numpy(), 3 * x.detach().numpy() ** 2)
        _close(h.numpy(), 6 * x.detach().numpy())


def test_whole_step_outputs_same_kind_on_every_call():
    w = gg.tensor([1.0, 2.0], requires_grad=True)
    opt = gg.optim.SGD([w], lr=0.1)

    @gg.compile
    def step(x):
        opt.zero_grad()
        loss = (x * w).sum() ** 2
        loss.backward()
        opt.step()
        return loss

    w_ref = gg.tensor([1.0, 2.0], requires_grad=True)
    opt_ref = gg.optim.SGD([w_ref], lr=0.1)
    x = gg.tensor([0.5, -1.0])
    for _ in range(3):
        loss = step(x)
        assert loss.requires_grad and type(loss.grad_fn).__name__ == "CompiledFunctionBackward"
        with pytest.raises(RuntimeError, match="second time"):
            loss.backward()
        opt_ref.zero_grad()
        ref = (x * w_ref).sum() ** 2
        ref.backward()
        opt_ref.step()
        _close(loss.detach().numpy(), ref.detach().numpy())
        _close(w.detach().numpy(), w_ref.detach().numpy())


def test_grad_none_inside_a_whole_step_is_no_graph_break():
    w = gg.tensor([1.0, -2.0, 0.5], requires_grad=True)

    @gg.compile
    def step(x):
        w.grad = None
        loss = (x * w).tanh().sum()
        loss.backward()
        with gg.no_grad():
            w.sub_(0.1 * w.grad)
        return loss.detach()

    w_ref = gg.tensor([1.0, -2.0, 0.5], requires_grad=True)
    x = gg.tensor([0.3, 0.1, -0.7])
    for _ in range(3):
        got = step(x)
        w_ref.grad = None
        ref = (x * w_ref).tanh().sum()
        ref.backward()
        with gg.no_grad():
            w_ref.sub_(0.1 * w_ref.grad)
        _close(got.numpy(), ref.detach().numpy())
        _close(w.detach().numpy(), w_ref.detach().numpy())
    assert not step.breaks and step.variants[0].runner is not None


def test_no_memory_kept_after_capture_and_backward():
    lin = nn.Linear(128, 128).double()
    c = gg.compile(nn.Sequential(lin, nn.Tanh(), nn.Linear(128, 128).double()))
    x = gg.tensor(np.random.default_rng(6).standard_normal((64, 128)))
    base = gg.memory.allocated()
    for _ in range(2):  # the capture call, then a replay
        c(x).sum().backward()
    for p in c.parameters():
        p.grad = None
    # neither the capture (its activations, the derivation's gradients) nor a region node
    # keeps arrays once the outputs are gone: less than one 64x128 activation is left
    assert gg.memory.allocated() - base < 64 * 128 * 8
    assert c._compiled.variants[0].region is not None


def test_aliased_arguments_never_replay_wrong():
    def f(a, b):
        return a * 2.0 + b

    x, y = gg.tensor([1.0, 2.0]), gg.tensor([10.0, 20.0])
    first_dup = gg.compile(f)
    with pytest.warns(UserWarning, match="two argument positions"):
        first_dup(x, x)  # captured with one tensor twice: that key runs eagerly
    _close(first_dup(x, y).numpy(), f(x, y).numpy())
    first_apart = gg.compile(f)
    first_apart(x, y)
    _close(first_apart(x, x).numpy(), f(x, x).numpy())
