"""Tensor protocol methods compared with torch: in-place bitwise and shift operators,
reversed, ``in``, ``del``, the Python 2 aliases, NumPy ufuncs on tensors, DLPack; and
nn.Module's legacy register_backward_hook (with its FutureWarnings) and to_empty."""

import importlib.util
import pathlib
import warnings

import numpy as np
import pytest
import torch

import graphgrad as gg

_spec = importlib.util.spec_from_file_location(
    "_gg_test_helpers", pathlib.Path(__file__).parent / "autograd" / "_helpers.py")
h = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(h)
same = h.same


@pytest.mark.parametrize("dunder,arg", [
    ("__ilshift__", 2), ("__irshift__", 1), ("__iand__", 6), ("__ior__", 4), ("__ixor__", 5),
    ("__ilshift__", "t"), ("__iand__", "t")])
def test_inplace_bitwise_operators(dunder, arg):
    def prog(m):
        a = m.tensor([1, -8, 3, 12])
        other = m.tensor([1, 2, 0, 3]) if arg == "t" else arg
        r = getattr(a, dunder)(other)
        return r, a, r is a, a._version
    same(prog)


def test_augmented_assignment_keeps_identity():
    def prog(m):
        a = m.tensor([5, 6, 7], dtype=m.int32)
        ident = id(a)
        a <<= 1
        a >>= 2
        a &= 3
        a |= 8
        a ^= 1
        return a, id(a) == ident
    same(prog)


def test_shift_operators_reflected_and_inplace_errors():
    same(lambda m: (3 << m.tensor([0, 1, 4]), 100 >> m.tensor([0, 1, 4]),
                    m.tensor([1, 2]).bitwise_left_shift_(3)))
    h.raises_like(lambda m: m.tensor([1.0]).__ilshift__(1), "not implemented")
    h.raises_like(lambda m: m.tensor([1.0]).__iand__(1))


@pytest.mark.parametrize("shape", [(), (4,), (3, 2)])
def test_reversed(shape):
    same(lambda m: reversed(m.arange(float(np.prod(shape))).reshape(shape)))


def test_reversed_differentiable():
    def prog(m):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = reversed(x)
        (y * m.tensor([1.0, 10.0, 100.0])).sum().backward()
        return y, x.grad, type(y.grad_fn).__name__
    same(prog)


def test_contains():
    same(lambda m: (2 in m.tensor([1, -8, 3]), 3 in m.tensor([1, -8, 3]),
                    m.tensor(3) in m.tensor([[1, 3]]), 2.5 in m.tensor([2.5]),
                    np.float32(1.0) in m.tensor([1.0]), m.tensor([1, 9]) in m.tensor([1, 2])))
    h.raises_like(lambda m: "x" in m.tensor([1]), "only supports Tensor or scalar")
    h.raises_like(lambda m: [1] in m.tensor([1]), "only supports Tensor or scalar")


def test_delitem_refused():
    def prog(m):
        a = m.tensor([1, 2])
        del a[0]
    h.raises_like(prog, "does not support deleting items")


def test_python2_aliases():
    def prog(m):
        x = m.tensor([4.0, 6.0])
        y = x.__idiv__(2)
        return (m.tensor(2.0).__nonzero__(), m.tensor([0]).__nonzero__(),
                m.tensor(2.7).__long__(), x.__div__(4), x.__rdiv__(3), y is x, x)
    same(prog)
    h.raises_like(lambda m: m.tensor([1, 2]).__nonzero__(), "ambiguous")


def test_numpy_ufunc_returns_tensor():
    def prog(m):
        t = m.tensor([1.0, 4.0])
        return (np.sin(t), np.sqrt(t), np.add(t, 1), np.isnan(t), np.maximum(t, 2.0),
                type(np.exp(t)).__name__)
    same(prog)
    h.raises_like(lambda m: np.sin(m.tensor([1.0], requires_grad=True)), "requires grad")


def test_dlpack():
    for m in (torch, gg):
        t = m.tensor([1, -8, 3])
        assert tuple(t.__dlpack_device__()) == (1, 0)
        np.testing.assert_array_equal(np.from_dlpack(t), [1, -8, 3])
        with pytest.raises(BufferError, match="require gradient"):
            m.ones(2, requires_grad=True).__dlpack__()


def test_pickle_roundtrip():
    import pickle

    def prog(m):
        t = m.tensor([[1.0, 2.0]], requires_grad=True)
        u = pickle.loads(pickle.dumps(t))
        return u, u.requires_grad, u.is_leaf
    same(prog)


# -- nn.Module legacy backward hook and to_empty ------------------------------------------------
def _record_legacy(m, make_module, make_input):
    m.manual_seed(0)
    mod = make_module(m)
    seen = []
    mod.register_backward_hook(lambda mo, gi, go: seen.append(
        ([None if g is None else tuple(g.shape) for g in gi],
         [tuple(g.shape) for g in go])))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = mod(make_input(m))
    y.sum().backward()
    return seen, sorted(str(w.message)[:60] for w in caught
                        if issubclass(w.category, FutureWarning))


@pytest.mark.parametrize("case", ["single_node", "several_nodes", "no_input_grad"])
def test_register_backward_hook_matches_torch(case):
    def make_module(m):
        if case == "several_nodes":
            return m.nn.Sequential(m.nn.Linear(3, 4), m.nn.Tanh())
        return m.nn.Tanh() if case != "no_input_grad" else m.nn.Linear(3, 4)

    def make_input(m):
        return m.ones(2, 3, requires_grad=case != "no_input_grad")

    assert (_record_legacy(gg, make_module, make_input)
            == _record_legacy(torch, make_module, make_input))


def test_register_backward_hook_replaces_grad_input_and_removes():
    def prog(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        mod = m.nn.Sigmoid()
        handle = mod.register_backward_hook(lambda mo, gi, go: (gi[0] * 10,))
        mod(x).sum().backward()
        first = x.grad.clone()
        handle.remove()
        x.grad = None
        mod(x).sum().backward()
        return first, x.grad
    same(prog)


def test_backward_hook_kinds_cannot_mix():
    def prog(m):
        mod = m.nn.Tanh()
        mod.register_backward_hook(lambda *a: None)
        mod.register_full_backward_hook(lambda *a: None)
    h.raises_like(prog, "Cannot use both regular backward hooks and full backward hooks")

    def prog2(m):
        mod = m.nn.Tanh()
        mod.register_full_backward_hook(lambda *a: None)
        mod.register_backward_hook(lambda *a: None)
    h.raises_like(prog2, "Cannot use both regular backward hooks and full backward hooks")


def test_to_empty():
    def prog(m):
        model = m.nn.Sequential(m.nn.Linear(2, 3), m.nn.BatchNorm1d(3))
        w = model[0].weight
        out = model.to_empty(device="cpu")
        top = m.nn.Linear(2, 2)
        inner = top.to_empty(device="cpu", recurse=False)
        return (out is model, model[0].weight is w, tuple(model[0].weight.shape),
                model[0].weight.requires_grad, model[1].running_mean.shape,
                model[1].num_batches_tracked.dtype, inner is top)
    same(prog)
    h.raises_like(lambda m: m.nn.Linear(1, 1).to_empty("cpu"))
