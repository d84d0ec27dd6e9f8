"""nn.Parameter / nn.Buffer and nn.utils (gradient clipping, parameters <-> vector), compared
with torch.
"""

import copy
import importlib.util
import pathlib
import pickle

import numpy as np
import pytest

_spec = importlib.util.spec_from_file_location(
    "_gg_test_helpers", pathlib.Path(__file__).parents[1] / "autograd" / "_helpers.py")
h = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(h)

same = h.same
raises_like = h.raises_like


# -- Parameter ---------------------------------------------------------------------------------
def test_parameter_basics():
    def prog(m):
        base = m.tensor([1.0, 2.0])
        p = m.nn.Parameter(base)
        q = m.nn.Parameter(m.ones(2), requires_grad=False)
        e = m.nn.Parameter()
        with m.no_grad():
            p.mul_(3)  # shares storage with base
        return (repr(p), str(q), p.requires_grad, p.is_leaf, q.requires_grad, base,
                isinstance(p, m.Tensor), repr(e), e.shape, type(p * 2).__name__,
                type(p.detach()).__name__, type(p.data).__name__, p._version == base._version)

    same(prog)


def test_parameter_from_non_leaf_and_int():
    def prog(m):
        x = m.ones(2, requires_grad=True)
        p = m.nn.Parameter(x * 2)
        return p.is_leaf, p.grad_fn is None, p.requires_grad

    same(prog)
    raises_like(lambda m: m.nn.Parameter(m.tensor([1, 2])), "floating point")


def test_parameter_gradient_and_repr_after_backward():
    def prog(m):
        p = m.nn.Parameter(m.tensor([[1.0, -2.0]]))
        (p * p).sum().backward()
        return p.grad, repr(p), repr(p.double())

    same(prog)


def test_parameter_deepcopy_pickle():
    def prog(m):
        p = m.nn.Parameter(m.tensor([1.0, 2.0]))
        p.grad = m.ones(2)
        c = copy.deepcopy(p)
        u = pickle.loads(pickle.dumps(p))
        f = copy.deepcopy(m.nn.Parameter(m.ones(1), requires_grad=False))
        return (type(c).__name__, c, c.requires_grad, c is not p, type(u).__name__, u,
                f.requires_grad)

    same(prog)


def test_buffer_assignment_registers():
    def prog(m):
        mod = m.nn.Module()
        mod.stat = m.nn.Buffer(m.ones(2))
        mod.tmp = m.nn.Buffer(m.zeros(1), persistent=False)
        return ([k for k, _ in mod.named_buffers()], list(mod.state_dict()),
                list(mod.parameters()))

    same(prog)


# -- clip_grad -------------------------------------------------------------------------------
def _params(m, dtype="float32"):
    rng = np.random.default_rng(0)
    ps = []
    for shape in [(3, 4), (5,), (2, 2, 2)]:
        p = m.nn.Parameter(m.tensor(rng.standard_normal(shape), dtype=getattr(m, dtype)))
        p.grad = m.tensor(rng.standard_normal(shape) * 3, dtype=getattr(m, dtype))
        ps.append(p)
    ps.append(m.nn.Parameter(m.ones(2, dtype=getattr(m, dtype))))  # no grad
    return ps


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, float("inf"), 0])
@pytest.mark.parametrize("max_norm", [0.5, 1e4])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_clip_grad_norm(norm_type, max_norm, dtype):
    def prog(m):
        ps = _params(m, dtype)
        total = m.nn.utils.clip_grad_norm_(ps, max_norm, norm_type=norm_type)
        return total, [p.grad for p in ps]

    same(prog, rtol=1e-5 if dtype == "float32" else 1e-7)


def test_clip_grad_norm_single_tensor_empty_and_nonfinite():
    def prog(m):
        p = m.nn.Parameter(m.tensor([3.0, 4.0]))
        p.grad = m.tensor([3.0, 4.0])
        total = m.nn.utils.clip_grad_norm_(p, 1.0)
        empty = m.nn.utils.clip_grad_norm_([], 1.0)
        _, warned = h.warnings_of(lambda: m.nn.utils.clip_grad_norm_((q for q in []), 1.0))
        return total, p.grad, empty, warned

    same(prog)

    def nonfinite(m):
        p = m.nn.Parameter(m.ones(2))
        p.grad = m.tensor([float("inf"), 1.0])
        m.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)

    raises_like(nonfinite, "is non-finite, so it cannot be clipped")


def test_clip_grad_norm_keeps_grad_identity():
    def prog(m):
        p = m.nn.Parameter(m.ones(3))
        p.grad = m.full((3,), 10.0)
        g = p.grad
        m.nn.utils.clip_grad_norm_([p], 1.0)
        return g is p.grad, g

    same(prog)


def test_clip_grad_value():
    def prog(m):
        ps = _params(m)
        out = m.nn.utils.clip_grad_value_(ps, 1.5)
        q = m.nn.Parameter(m.ones(2))
        q.grad = m.tensor([-3.0, 0.5])
        m.nn.utils.clip_grad_value_(q, 1)
        return out, [p.grad for p in ps], q.grad

    same(prog)


# -- parameters <-> vector -----------------------------------------------------------------------
def test_parameters_to_vector_and_back():
    def prog(m):
        lin = m.nn.Bilinear(2, 3, 2)
        v = m.nn.utils.parameters_to_vector(lin.parameters())
        new = m.arange(v.numel(), dtype=m.float32)
        m.nn.utils.vector_to_parameters(new, lin.parameters())
        return (v.shape, v.grad_fn is not None, v.requires_grad, lin.weight, lin.bias,
                type(lin.weight).__name__, lin.weight.requires_grad)

    same(prog)
    raises_like(lambda m: m.nn.utils.vector_to_parameters([1.0], []), "expected torch.Tensor")


def test_parameters_to_vector_is_differentiable():
    def prog(m):
        a = m.nn.Parameter(m.tensor([[1.0, 2.0]]))
        b = m.nn.Parameter(m.tensor([3.0]))
        v = m.nn.utils.parameters_to_vector([a, b])
        (v * m.tensor([1.0, 2.0, 3.0])).sum().backward()
        return a.grad, b.grad

    same(prog)
