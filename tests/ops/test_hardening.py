"""Issue 14's items, each against torch 2.13: empty inputs, NaN/Inf gradients, exception types.

Every test computes torch's answer in the same run and compares (values with NaN equal to NaN);
none hard-codes a graphgrad result.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import graphgrad as gg

NAN, INF = math.nan, math.inf


def _np(t):
    return t.detach().numpy(force=True) if isinstance(t, torch.Tensor) else t.detach().numpy()


def _same(a, b):
    np.testing.assert_allclose(_np(a), _np(b), rtol=1e-12, atol=0, equal_nan=True)


def _outcome(fn, m):
    """``fn(m)``'s result, or the exception class it raised."""
    try:
        return fn(m)
    except Exception as exc:  # noqa: BLE001 - the class is what is compared
        return type(exc)


def _grad(m, fn, values):
    x = m.tensor(values, dtype=m.float64, requires_grad=True)
    fn(m, x).sum().backward()
    return x.grad


# --- empty inputs -------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
@pytest.mark.parametrize("shape,dim", [((2, 0), 1), ((0, 3), 1), ((0, 3), 0), ((2, 0, 4), -1)])
def test_softmax_empty(name, shape, dim):
    outs = []
    for m in (torch, gg):
        x = m.zeros(shape, requires_grad=True)
        y = getattr(m.nn.functional, name)(x, dim)
        y.sum().backward()
        outs.append((tuple(y.shape), tuple(x.grad.shape)))
    assert outs[0] == outs[1]


@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("kw", [dict(batch_first=True), dict(num_layers=2, bidirectional=True)])
def test_rnn_batch_of_zero(cls, kw):
    shapes = []
    for m in (torch, gg):
        layer = getattr(m.nn, cls)(3, 4, **kw)
        x = m.zeros((0, 5, 3) if kw.get("batch_first") else (5, 0, 3), requires_grad=True)
        out, h = layer(x)
        hs = h if isinstance(h, tuple) else (h,)
        (out.sum() + sum(t.sum() for t in hs)).backward()
        shapes.append((tuple(out.shape), [tuple(t.shape) for t in hs], tuple(x.grad.shape)))
    assert shapes[0] == shapes[1]


_EXPANDED_WRITES = [
    "x[0, 0] = 1", "x[1] = m.tensor([1., 2, 3])", "x[0, 1:] = 4", "x[:, 0] = 1",
    "x[..., 1] = 7", "x.fill_(2)", "x.zero_()", "x[0].add_(1)", "x.add_(1)",
    "x.copy_(m.ones(2, 3))", "x[1].copy_(m.tensor([1., 2, 3]))",
]


@pytest.mark.parametrize("code", _EXPANDED_WRITES)
def test_write_into_expanded(code):
    """torch writes through an expanded tensor unless two written elements share memory."""
    results = []
    for m in (torch, gg):
        base = m.zeros(3)
        x = base.expand(2, 3)
        try:
            exec(code, {"m": m, "x": x})
            results.append(("ok", x.tolist(), base.tolist()))
        except RuntimeError as exc:
            assert "more than one element of the written-to tensor" in str(exc)
            results.append(("refused",))
    assert results[0] == results[1]


_F = "m.nn.functional"
_EMPTY_REDUCTIONS = [
    "x.sum(0)", "x.sum()", "x.mean(0)", "x.mean()", "x.prod(0)", "x.var(0)", "x.std(1)",
    "m.logsumexp(x, 0)", "m.logsumexp(x, 1)", "x.norm(dim=0)", "x.norm()",
    "m.linalg.vector_norm(x, float('inf'), dim=1)", "m.linalg.vector_norm(x, -float('inf'))",
    "x.amax(1)", "x.amax(0)", "x.max(0).values", "x.max(1).values", "x.argmax(0)", "x.argmax()",
    "x.cumsum(0)", "x.cumprod(1)", "m.logcumsumexp(x, 0)", "x.median()", "x.nanmean(0)",
    "x.nansum(1)", "m.var_mean(x, 0)[0]", "m.count_nonzero(x, 0)", "(x > 0).all(0)",
    "x.topk(0, 1).values", "x.sort(0).values", "m.quantile(x, 0.5, dim=0)",
    f"{_F}.layer_norm(x, x.shape[-1:])", f"{_F}.normalize(x, dim=0)",
    f"{_F}.group_norm(x.reshape(x.shape[0], x.shape[1], 1), 1)",
    f"{_F}.softmax(x, 0)", f"{_F}.log_softmax(x, 1)", f"{_F}.softmin(x, 0)",
    f"{_F}.cross_entropy(x, m.zeros(x.shape[0], dtype=m.long))",
    f"{_F}.mse_loss(x, x.detach())", f"{_F}.linear(x, m.ones(2, x.shape[1]))", "x.t() @ x",
]


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0, 0)])
@pytest.mark.parametrize("code", _EMPTY_REDUCTIONS)
def test_reductions_and_normalizations_on_empty(code, shape):
    """Shapes, values and gradient shapes as torch's, or torch's exception class."""
    def run(m):
        x = m.zeros(shape, requires_grad=True)
        y = eval(code, {"m": m, "x": x})
        if y.requires_grad:
            y.sum().backward()
        grad = None if x.grad is None else tuple(x.grad.shape)
        return tuple(y.shape), str(y.dtype), y.detach().tolist(), grad

    want, got = _outcome(run, torch), _outcome(run, gg)
    if isinstance(want, type):
        assert isinstance(got, type) and issubclass(got, want), f"torch {want}, got {got}"
    else:
        assert repr(got) == repr(want)


# --- NaN and Inf --------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["max", "min", "amax", "amin"])
@pytest.mark.parametrize("values", [[1.0, NAN, 3.0], [NAN, 2.0, NAN], [[1.0, NAN], [NAN, 0.0]]])
def test_max_min_gradient_at_nan(name, values):
    grads = [_grad(m, lambda m, x: getattr(x, name)(), values) for m in (torch, gg)]
    _same(grads[1], grads[0])


def test_max_dim_gradient_at_nan():
    grads = [_grad(m, lambda m, x: x.max(1).values, [[1.0, NAN, 3.0], [2.0, 0.0, 1.0]])
             for m in (torch, gg)]
    _same(grads[1], grads[0])


def test_atan2_gradient_at_origin():
    out = []
    for m in (torch, gg):
        y = m.tensor([0.0, 0.0, 1.0], dtype=m.float64, requires_grad=True)
        x = m.tensor([0.0, -0.0, 0.0], dtype=m.float64, requires_grad=True)
        m.atan2(y, x).sum().backward()
        out.append((y.grad, x.grad))
    _same(out[1][0], out[0][0])
    _same(out[1][1], out[0][1])


def test_sign_of_nan():
    vals = [NAN, -0.0, 0.0, -INF, INF, 2.0]
    _same(gg.sign(gg.tensor(vals)), torch.sign(torch.tensor(vals)))


_AT_SPECIALS = [NAN, -INF, INF, 0.0, -0.0, 1.0, -1.0, 3.0, -3.0, 6.0]


@pytest.mark.parametrize("name,fn", [
    ("relu", lambda m, x: m.relu(x)),
    ("relu_", lambda m, x: m.relu_(x * 1.0)),
    ("maximum", lambda m, x: m.maximum(x, m.zeros_like(x))),
    ("minimum", lambda m, x: m.minimum(m.zeros_like(x), x)),
    ("maximum_nan_other", lambda m, x: m.maximum(m.full_like(x, NAN), x)),
    ("elu", lambda m, x: m.nn.functional.elu(x)),
    ("elu_", lambda m, x: m.nn.functional.elu(x * 1.0, inplace=True)),
    ("abs", lambda m, x: m.abs(x)),
    ("pow_half", lambda m, x: x ** 0.5),
    ("pow_minus_half", lambda m, x: x ** -0.5),
    ("hardswish", lambda m, x: m.nn.functional.hardswish(x)),
    ("logit", lambda m, x: m.logit(x)),
    ("remainder", lambda m, x: m.remainder(m.full_like(x, 5.0), x)),
])
def test_gradient_at_special_values(name, fn):
    # forward values and gradients at NaN, +-inf, +-0 and the kinks, as torch's
    fwd = [fn(m, m.tensor(_AT_SPECIALS, dtype=m.float64)) for m in (torch, gg)]
    _same(fwd[1], fwd[0])
    grads = [_grad(m, fn, _AT_SPECIALS) for m in (torch, gg)]
    _same(grads[1], grads[0])


@pytest.mark.parametrize("other", [2.0, -2.0, INF, -INF, 0.0, NAN])
def test_floor_divide_at_special_values(other):
    vals = _AT_SPECIALS + [7.0, -7.0, 1e300]
    got = gg.floor_divide(gg.tensor(vals, dtype=gg.float64), other)
    _same(got, torch.floor_divide(torch.tensor(vals, dtype=torch.float64), other))


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=2, stride=1, dilation=2)])
def test_max_pool_index_of_nan(kw):
    """torch's scan takes every NaN it meets: the window's last NaN is the index."""
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6))
    x[np.random.default_rng(1).random(x.shape) < 0.2] = NAN
    want = torch.nn.functional.max_pool2d(torch.tensor(x), return_indices=True, **kw)
    got = gg.nn.functional.max_pool2d(gg.tensor(x), return_indices=True, **kw)
    np.testing.assert_array_equal(got[1].numpy(), want[1].numpy())
    _same(got[0], want[0])


@pytest.mark.parametrize("shape,out", [((2, 3, 7, 5), (3, 2)), ((2, 3, 9, 4), (4, 3))])
def test_adaptive_max_pool_index_of_nan(shape, out):
    x = np.random.default_rng(2).standard_normal(shape)
    x[np.random.default_rng(3).random(shape) < 0.2] = NAN
    want = torch.nn.functional.adaptive_max_pool2d(torch.tensor(x), out, return_indices=True)
    got = gg.nn.functional.adaptive_max_pool2d(gg.tensor(x), out, return_indices=True)
    np.testing.assert_array_equal(got[1].numpy(), want[1].numpy())
    _same(got[0], want[0])


# --- exception types ----------------------------------------------------------------------

def _same_exception(fn):
    want, got = _outcome(fn, torch), _outcome(fn, gg)
    assert isinstance(want, type) and issubclass(want, Exception), f"torch did not raise: {want}"
    assert isinstance(got, type) and issubclass(got, want), f"torch {want}, graphgrad {got}"


@pytest.mark.parametrize("make", [
    lambda m: m.empty(2 ** 40), lambda m: m.zeros(2 ** 38, 16), lambda m: m.randn(2 ** 40),
    lambda m: m.rand(2 ** 40), lambda m: m.arange(2 ** 40),
    lambda m: m.full((2 ** 40,), 1.0), lambda m: m.zeros(1).expand(2 ** 40).contiguous(),
])
def test_huge_allocation_is_runtime_error(make):
    _same_exception(make)
    with pytest.raises(RuntimeError, match=r"can't allocate memory: you tried to allocate \d+ "
                                           r"bytes"):
        make(gg)


@pytest.mark.parametrize("shape,dim,index", [
    ((3,), 0, [5]), ((3,), 0, [-1]), ((3, 4), 0, [5]), ((4, 3), 1, [5]), ((2, 3, 4), 1, [9]),
    ((2, 3, 4), 2, [-1]), ((3, 4), -1, [4]),
])
def test_index_select_out_of_range(shape, dim, index):
    _same_exception(lambda m: m.zeros(shape).index_select(dim, m.tensor(index)))


@pytest.mark.parametrize("shape,dim", [((3,), 0), ((3, 4), 0), ((4, 3), 1), ((2, 3, 4), 1),
                                       ((2, 3, 4), 2), ((3, 4, 5, 2), 2)])
def test_index_add_out_of_range(shape, dim):
    src = [1 if i == dim else s for i, s in enumerate(shape)]
    _same_exception(lambda m: m.zeros(shape).index_add(dim, m.tensor([9]), m.ones(src)))
    _same_exception(lambda m: m.zeros(shape).index_add_(dim, m.tensor([-9]), m.ones(src)))


@pytest.mark.parametrize("call", [
    lambda m: m.nn.functional.embedding_bag(m.tensor([5]), m.zeros(3, 2), m.tensor([0])),
    lambda m: m.nn.functional.embedding_bag(m.tensor([-1, 0]), m.zeros(3, 2), m.tensor([0])),
    lambda m: m.nn.functional.embedding_bag(m.tensor([[0, 3]]), m.zeros(3, 2)),
    lambda m: m.nn.functional.embedding(m.tensor([3]), m.zeros(3, 2)),
    lambda m: m.zeros(3).index_copy(0, m.tensor([5]), m.ones(1)),
    lambda m: m.zeros(3).index_fill(0, m.tensor([5]), 1.0),
    lambda m: m.zeros(3).gather(0, m.tensor([5])),
    lambda m: m.zeros(3).scatter(0, m.tensor([5]), m.ones(1)),
    lambda m: m.zeros(3).take(m.tensor([5])),
])
def test_index_errors(call):
    _same_exception(call)


@pytest.mark.parametrize("call", [
    lambda m: m.zeros(3, 3).sum(1.0), lambda m: m.zeros(3, 3).mean(1.0),
    lambda m: m.zeros(3, 3).amax(1.0), lambda m: m.zeros(3, 3).max(1.0),
    lambda m: m.zeros(3, 3).std(1.0), lambda m: m.zeros(3, 3).argmax(1.0),
    lambda m: m.zeros(3, 3).softmax(1.0), lambda m: m.zeros(3, 3).cumsum(1.0),
    lambda m: m.zeros(3, 3).sum("a"),
])
def test_float_dim_is_type_error(call):
    _same_exception(call)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "Adagrad", "RMSprop", "Adamax",
                                  "NAdam", "RAdam", "Adadelta", "Rprop", "ASGD"])
def test_optimizer_state_of_wrong_shape(name):
    def run(m):
        p = m.nn.Parameter(m.zeros(3))
        kw = dict(momentum=0.9) if name in ("SGD", "RMSprop") else {}
        opt = getattr(m.optim, name)([p], lr=0.1, **kw)
        p.grad = m.ones(3)
        opt.step()
        sd = opt.state_dict()
        for k, v in sd["state"][0].items():
            if hasattr(v, "dim") and v.dim():
                sd["state"][0][k] = m.zeros(5)
        opt.load_state_dict(sd)
        p.grad = m.ones(3)
        opt.step()

    _same_exception(run)
