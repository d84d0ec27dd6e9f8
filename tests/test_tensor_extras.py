"""Tensor attributes and in-place spellings against torch: layout and memory formats, new(),
H/mT/mH/adjoint, predicates, byte sizes, storage_offset, in-place comparisons, logical and
bitwise ops, cumsum_/cumprod_, aliases, apply_/map_, in-place shape changes on leaves/views."""

import numpy as np
import pytest
import torch

import graphgrad as gg


def outcome(m, f):
    try:
        r = f(m)
    except Exception as ex:  # noqa: BLE001 - the outcome is compared
        return ("raised", _builtin(type(ex)).__name__)
    return _describe(m, r)


def _builtin(cls):
    for c in cls.__mro__:
        if c.__module__ == "builtins":
            return c
    return Exception


def _describe(m, r):
    if isinstance(r, m.Tensor):
        v = np.round(r.detach().numpy().astype(np.float64), 10).tolist() if r.dtype in (
            m.float32, m.float64) else r.detach().numpy().tolist()
        return ("tensor", str(r.dtype), tuple(r.shape), v, r.requires_grad)
    if isinstance(r, (tuple, list)):
        return tuple(_describe(m, x) for x in r)
    if isinstance(r, (m.dtype, m.Size)):
        return str(r) if isinstance(r, m.dtype) else tuple(r)
    return ("ok", r if isinstance(r, (bool, int, float, str, type(None))) else repr(r))


def same(f):
    want, got = outcome(torch, f), outcome(gg, f)
    assert got == want


def _x(m):
    return m.tensor([[1.5, -2.0, 0.0], [3.0, 0.0, -1.0]])


ATTRS = [
    lambda m: m.strided, lambda m: _x(m).layout, lambda m: m.contiguous_format,
    lambda m: m.preserve_format, lambda m: m.channels_last,
    lambda m: _x(m).contiguous(memory_format=m.contiguous_format),
    lambda m: _x(m).to(memory_format=m.preserve_format),
    lambda m: _x(m).clone(memory_format=m.preserve_format),
    lambda m: _x(m).new(2, 3).shape, lambda m: _x(m).new((2, 3)), lambda m: _x(m).new([1, 2]),
    lambda m: _x(m).new(), lambda m: m.tensor([1, 2]).new([3, 4]),
    lambda m: m.tensor([1, 2]).new(m.Size([2])).shape,
    lambda m: _x(m).new_empty_strided((2, 3), (3, 1)).shape,
    lambda m: _x(m).new_empty_strided((2, 3), (1, 2)).stride(),
    lambda m: _x(m).H, lambda m: _x(m).mT, lambda m: _x(m).mH, lambda m: _x(m).adjoint(),
    lambda m: m.adjoint(_x(m)), lambda m: m.tensor([1.0, 2.0]).H,
    lambda m: m.tensor([1.0, 2.0]).mH, lambda m: m.ones(2, 2, 3).H,
    lambda m: m.ones(2, 2, 3).mH,
    lambda m: m.positive(_x(m)), lambda m: _x(m).positive() is not None,
    lambda m: m.positive(m.tensor([True])),
    lambda m: m.tensor([2.0]).is_nonzero(), lambda m: m.tensor([0]).is_nonzero(),
    lambda m: m.tensor(False).is_nonzero(), lambda m: m.is_nonzero(m.tensor([1, 2])),
    lambda m: m.is_nonzero(m.tensor([])),
    lambda m: _x(m).is_same_size(m.ones(2, 3)), lambda m: m.is_same_size(_x(m), m.ones(3, 2)),
    lambda m: _x(m).is_signed(), lambda m: m.tensor([1], dtype=m.uint8).is_signed(),
    lambda m: m.tensor([True]).is_signed(), lambda m: m.is_signed(m.tensor([1])),
    lambda m: _x(m).nbytes, lambda m: _x(m).itemsize, lambda m: m.ones(3, dtype=m.int16).nbytes,
    lambda m: _x(m).element_size(), lambda m: _x(m)[1:, 1:].storage_offset(),
    lambda m: _x(m).storage_offset(), lambda m: _x(m).t()[2].storage_offset(),
    lambda m: _x(m).is_cpu, lambda m: _x(m).is_sparse, lambda m: _x(m).is_quantized,
    lambda m: _x(m).is_meta, lambda m: _x(m).is_nested,
]


@pytest.mark.parametrize("f", ATTRS)
def test_attributes(f):
    same(f)


def _inplace(name, *args):
    def f(m):
        y = _x(m)
        out = getattr(y, name)(*(a(m) if callable(a) else a for a in args))
        return out is y, y
    return f


def _ints(m):
    return m.tensor([[6, -3, 0], [5, 12, 1]])


def _int_inplace(name, *args):
    def f(m):
        y = _ints(m)
        out = getattr(y, name)(*(a(m) if callable(a) else a for a in args))
        return out is y, y
    return f


INPLACE = [
    _inplace(n, 0.0) for n in ("eq_", "ne_", "lt_", "le_", "gt_", "ge_", "greater_",
                               "greater_equal_", "less_", "less_equal_", "not_equal_")
] + [
    _inplace("eq_", lambda m: m.tensor([1.5, 0.0, 0.0])),
    _inplace("logical_and_", lambda m: m.tensor([True, False, True])),
    _inplace("logical_or_", lambda m: m.zeros(3)),
    _inplace("logical_xor_", lambda m: m.ones(2, 3)), _inplace("logical_not_"),
    _int_inplace("bitwise_and_", 3), _int_inplace("bitwise_or_", lambda m: m.tensor([1, 2, 4])),
    _int_inplace("bitwise_xor_", 5), _int_inplace("bitwise_not_"),
    _inplace("bitwise_and_", 1),
    _inplace("cumsum_", 1), _inplace("cumprod_", 0), _int_inplace("cumsum_", 0),
    _inplace("divide_", 2.0), _inplace("true_divide_", lambda m: m.tensor([2.0, 4.0, 8.0])),
    _inplace("multiply_", 3), _inplace("subtract_", 1.5), _inplace("negative_"),
    _int_inplace("divide_", 2),
    _inplace("apply_", lambda m: (lambda v: v * 2 + 1)),
    _int_inplace("apply_", lambda m: (lambda v: v // 2)),
    _inplace("map_", lambda m: m.tensor([1.0, 2.0, 3.0]), lambda m: (lambda a, b: a * b)),
]


@pytest.mark.parametrize("f", INPLACE)
def test_inplace(f):
    same(f)


def test_inplace_divide_rounding_mode():
    same(lambda m: _ints(m).divide_(4, rounding_mode="floor"))
    same(lambda m: _x(m).div_(2.0, rounding_mode="trunc"))


def test_inplace_comparison_in_a_graph_gives_zero_gradient():
    def f(m):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        y.gt_(3.0)
        (y * x).sum().backward()
        return y, x.grad
    same(f)


def test_inplace_cumsum_gradient():
    def f(m):
        x = m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        y = x * 1
        y.cumsum_(0)
        y.cumprod_(1)
        (y * m.tensor([[1.0, 2.0], [3.0, -1.0]])).sum().backward()
        return y, x.grad
    same(f)


# -- in-place shape changes ------------------------------------------------------------------

SHAPE_INPLACE = [
    lambda m: m.ones(2, 3, requires_grad=True).t_(),
    lambda m: m.ones(2, 3, requires_grad=True).unsqueeze_(0),
    lambda m: m.ones(2, 3).t_().shape,
    lambda m: m.ones(2, 1, 3).squeeze_().shape,
    lambda m: m.ones(2, 1, 3).squeeze_(1).shape,
    lambda m: m.ones(2, 3).transpose_(0, 1).stride(),
    lambda m: m.ones(2, 3).swapaxes_(0, 1).shape,
    lambda m: m.ones(2, 3).swapdims_(1, 0).shape,
    lambda m: m.ones(2, 3).unsqueeze_(-1).shape,
    lambda m: m.ones(2, 3, requires_grad=True)[0:1].t_(),
    lambda m: m.ones(2, requires_grad=True).apply_(lambda v: v + 1),
    lambda m: m.ones(2).map_(m.ones(2, requires_grad=True), lambda a, b: a),
]


def test_shape_inplace_on_a_leaf_under_no_grad():
    def f(m):
        a = m.ones(2, 3, requires_grad=True)
        with m.no_grad():
            a.t_()
        return a.shape, a.requires_grad, a.is_leaf
    same(f)


@pytest.mark.parametrize("f", SHAPE_INPLACE)
def test_shape_inplace(f):
    same(f)


def test_shape_inplace_on_a_view_keeps_the_base():
    def f(m):
        b = m.arange(6.0).reshape(2, 3)
        v = b[0:1]
        v.t_()
        v.mul_(10)  # still a view of b: the write reaches it
        return v, b
    same(f)


def test_shape_inplace_records_the_op():
    def f(m):
        x = m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        y = x * 2
        y.t_()
        (y * m.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])).sum().backward()
        return y.grad_fn is not None, y, x.grad
    same(f)
