"""torch.nn.utils.parametrize and parametrizations (orthogonal, weight_norm, spectral_norm)
against torch: the same program runs on both, with graphgrad's modules loaded from torch's
state_dict where registration draws random numbers (spectral_norm's u/v, orthogonal's base).
"""

import importlib.util
import pathlib
import warnings

import numpy as np
import pytest
import torch

import graphgrad as gg

_spec = importlib.util.spec_from_file_location(
    "_gg_test_helpers", pathlib.Path(__file__).parents[1] / "autograd" / "_helpers.py")
h = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(h)


def _data(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _set(m, module, name, shape, seed=0):
    with m.no_grad():
        getattr(module, name).copy_(m.tensor(_data(shape, seed)))


def twin(build, prog, rtol=None, atol=None):
    """``build(m)`` makes a module; graphgrad's takes torch's state_dict, then ``prog(m, mod)``
    runs on both and the results are compared."""
    tm, gm = build(torch), build(gg)
    gm.load_state_dict({k: gg.tensor(v.detach().numpy().copy())
                        for k, v in tm.state_dict().items()})
    h.assert_same(h.outcome(lambda m: prog(m, tm), torch), h.outcome(lambda m: prog(m, gm), gg),
                  rtol, atol)


class Sym:
    """A parametrization X -> triu(X) + triu(X, 1)^T, defined for either library."""

    @staticmethod
    def make(m):
        class Symmetric(m.nn.Module):
            def forward(self, X):
                return X.triu() + X.triu(1).mT

            def right_inverse(self, A):
                return A.triu()

        return Symmetric()


def _halves(m):
    class Halves(m.nn.Module):
        def forward(self, a, b):
            return a + 2 * b

        def right_inverse(self, X):
            return X * 0.5, X * 0.25

    return Halves()


def _linear(m, n_in=3, n_out=3):
    lin = m.nn.Linear(n_in, n_out)
    _set(m, lin, "weight", (n_out, n_in), 1)
    _set(m, lin, "bias", (n_out,), 2)
    return lin


def _forward_and_grads(m, mod, x_shape=(2, 3)):
    x = m.tensor(_data(x_shape, 5))
    y = mod(x)
    (y * y).sum().backward()
    grads = {k: p.grad for k, p in mod.named_parameters()}
    return y, grads, list(mod.state_dict()), type(mod).__name__


def test_register_custom_parametrization_forward_grads_keys():
    def prog(m):
        P = m.nn.utils.parametrize
        lin = P.register_parametrization(_linear(m), "weight", Sym.make(m))
        out = _forward_and_grads(m, lin)
        return (out, P.is_parametrized(lin), P.is_parametrized(lin, "weight"),
                P.is_parametrized(lin, "bias"), P.type_before_parametrizations(lin).__name__,
                lin.weight, lin.parametrizations.weight.original, repr(lin),
                type(lin.parametrizations.weight).__name__, isinstance(lin, m.nn.Linear))
    h.same(prog)


def test_assignment_goes_through_right_inverse():
    def prog(m):
        lin = m.nn.utils.parametrize.register_parametrization(_linear(m), "weight",
                                                              Sym.make(m))
        orig = lin.parametrizations.weight.original
        lin.weight = m.tensor(_data((3, 3), 7))
        return lin.weight, orig, lin.parametrizations.weight.original is orig
    h.same(prog)


def test_right_inverse_returning_a_tuple():
    def prog(m):
        P = m.nn.utils.parametrize
        lin = P.register_parametrization(_linear(m), "weight", _halves(m))
        keys = list(lin.state_dict())
        pl = lin.parametrizations.weight
        first = (pl.original0, pl.original1, lin.weight, pl.is_tensor, pl.ntensors,
                 type(pl.original0).__name__)
        res = _forward_and_grads(m, lin)
        lin.weight = m.ones(3, 3)
        return keys, first, res, pl.original0, pl.original1
    h.same(prog)


def test_chained_parametrizations_and_unsafe():
    class Double:
        @staticmethod
        def make(m):
            class D(m.nn.Module):
                def forward(self, X):
                    return X * 2

            return D()

    def prog(m):
        P = m.nn.utils.parametrize
        lin = _linear(m)
        P.register_parametrization(lin, "weight", Sym.make(m))
        P.register_parametrization(lin, "weight", Double.make(m))
        out = _forward_and_grads(m, lin)
        return out, len(lin.parametrizations.weight), repr(lin)
    h.same(prog)

    def grow(m):
        class Grow(m.nn.Module):
            def forward(self, X):
                return m.cat([X, X])

        lin = _linear(m)
        m.nn.utils.parametrize.register_parametrization(lin, "weight", Grow(), unsafe=True)
        return lin.weight, lin.parametrizations.weight.unsafe
    h.same(grow)


@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations(leave):
    def identity_bias(m):
        P = m.nn.utils.parametrize

        class Id(m.nn.Module):
            def forward(self, X):
                return X

        lin = P.register_parametrization(_linear(m), "weight", Sym.make(m))
        P.register_parametrization(lin, "bias", Id())
        param = lin.parametrizations.weight.original
        P.remove_parametrizations(lin, "weight", leave_parametrized=leave)
        mid = (type(lin).__name__, list(lin.state_dict()), lin.weight is param)
        P.remove_parametrizations(lin, "bias")
        return (mid, type(lin).__name__, hasattr(lin, "parametrizations"), lin.weight,
                isinstance(lin.weight, m.nn.Parameter), list(lin.state_dict()))
    h.same(identity_bias)


def test_remove_tuple_parametrization():
    def prog(m):
        P = m.nn.utils.parametrize
        lin = P.register_parametrization(_linear(m), "weight", _halves(m))
        w = lin.weight
        P.remove_parametrizations(lin, "weight")
        return lin.weight, w, isinstance(lin.weight, m.nn.Parameter), type(lin).__name__
    h.same(prog)

    def refuses(m):
        P = m.nn.utils.parametrize
        lin = P.register_parametrization(_linear(m), "weight", _halves(m))
        P.remove_parametrizations(lin, "weight", leave_parametrized=False)
    h.raises_like(refuses, "leave_parametrized=False")


def test_cached():
    def prog(m):
        P = m.nn.utils.parametrize
        lin = P.register_parametrization(_linear(m), "weight", Sym.make(m))
        with P.cached():
            a, b = lin.weight, lin.weight
            with P.cached():
                c = lin.weight
        d = lin.weight
        return a is b, a is c, a is d
    h.same(prog)


def test_errors():
    h.raises_like(lambda m: m.nn.utils.parametrize.register_parametrization(
        _linear(m), "nope", Sym.make(m)), "does not have a parameter")

    def shape_change(m):
        class Grow(m.nn.Module):
            def forward(self, X):
                return m.cat([X, X])

        m.nn.utils.parametrize.register_parametrization(_linear(m), "weight", Grow())
    h.raises_like(shape_change, "may not change the shape")
    h.raises_like(lambda m: m.nn.utils.parametrize.remove_parametrizations(_linear(m), "weight"),
                  "does not have a parametrization on weight")

    def no_inverse(m):
        class NoInv(m.nn.Module):
            def forward(self, X):
                return X * 2

        lin = m.nn.utils.parametrize.register_parametrization(_linear(m), "weight", NoInv())
        lin.weight = m.ones(3, 3)
    h.raises_like(no_inverse, "does not implement right_inverse")


def test_buffer_parametrization_and_train_mode_propagation():
    # A buffer's parametrization stores its original as a buffer; the parametrization module
    # takes the host's training flag.
    def ident(m):
        class Id(m.nn.Module):
            def forward(self, X):
                return X * 1

        bn = m.nn.BatchNorm1d(3)
        bn.eval()
        m.nn.utils.parametrize.register_parametrization(bn, "running_var", Id())
        return (list(bn.state_dict()), bn.parametrizations.running_var[0].training,
                [k for k, _ in bn.named_buffers()], bn.running_var)
    h.same(ident)


# -- weight_norm --------------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [0, 1, None, -1])
def test_weight_norm(dim):
    def build(m):
        lin = _linear(m, 3, 4)
        return m.nn.utils.parametrizations.weight_norm(lin, dim=dim)

    def prog(m, lin):
        pl = lin.parametrizations.weight
        return (_forward_and_grads(m, lin), pl.original0, pl.original1, lin.weight)
    twin(build, prog)


def test_weight_norm_loads_old_checkpoint_keys():
    def prog(m):
        lin = m.nn.utils.parametrizations.weight_norm(_linear(m, 3, 4))
        sd = {"weight_g": m.ones(4, 1) * 2, "weight_v": m.tensor(_data((4, 3), 3)),
              "bias": m.zeros(4)}
        res = lin.load_state_dict(sd)
        return tuple(res), lin.weight
    h.same(prog)


# -- spectral_norm ------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["linear", "conv", "conv_t", "power3"])
def test_spectral_norm_train_and_eval(kind):
    def build(m):
        if kind == "conv":
            mod = m.nn.Conv2d(2, 3, 3)
            _set(m, mod, "weight", (3, 2, 3, 3), 1)
        elif kind == "conv_t":
            mod = m.nn.ConvTranspose2d(2, 3, 3)
            _set(m, mod, "weight", (2, 3, 3, 3), 1)
        else:
            mod = _linear(m, 3, 4)
        n = 3 if kind == "power3" else 1
        return m.nn.utils.parametrizations.spectral_norm(mod, n_power_iterations=n)

    def prog(m, mod):
        x = m.tensor(_data((1, 2, 5, 5) if kind.startswith("conv") else (2, 3), 4))
        sn = mod.parametrizations.weight[0]
        u_obj = sn._u
        y1 = mod(x)
        (y1 * y1).sum().backward()
        g1 = mod.parametrizations.weight.original.grad.clone()
        u1, v1 = sn._u.clone(), sn._v.clone()
        y2 = mod(x)
        mod.eval()
        y3 = mod(x)
        u3 = sn._u.clone()
        w_eval = mod.weight
        return (y1, g1, u1, v1, y2, y3, u3, w_eval, sn._u is u_obj, sn.dim,
                list(mod.state_dict()))
    twin(build, prog, rtol=1e-4, atol=1e-5)


def test_spectral_norm_of_a_vector_and_errors():
    def prog(m):
        mod = m.nn.Module()
        mod.w = m.nn.Parameter(m.tensor([3.0, 4.0]))
        m.nn.utils.parametrizations.spectral_norm(mod, "w")
        return mod.w, list(mod.state_dict())
    h.same(prog)
    h.raises_like(lambda m: m.nn.utils.parametrizations.spectral_norm(
        _linear(m), n_power_iterations=0), "n_power_iterations")
    h.raises_like(lambda m: m.nn.utils.parametrizations.spectral_norm(_linear(m), dim=2),
                  "Dimension out of range")
    h.raises_like(lambda m: m.nn.utils.parametrizations.spectral_norm(_linear(m), "nope"),
                  "has no parameter or buffer")


# -- orthogonal ---------------------------------------------------------------------------------
@pytest.mark.parametrize("orth_map", ["matrix_exp", "cayley", "householder", None])
@pytest.mark.parametrize("shape", [(3, 3), (5, 3), (3, 5)])
def test_orthogonal(orth_map, shape):
    n_out, n_in = shape

    def build(m):
        m.manual_seed(0)
        lin = _linear(m, n_in, n_out)
        return m.nn.utils.parametrizations.orthogonal(lin, orthogonal_map=orth_map)

    def prog(m, lin):
        w = lin.weight
        gram = w.T @ w if n_out >= n_in else w @ w.T
        return (_forward_and_grads(m, lin, (2, n_in)), w, gram,
                type(lin.parametrizations.weight[0]).__name__)
    twin(build, prog, rtol=1e-4, atol=1e-5)


def test_orthogonal_assignment_and_no_trivialization():
    def prog(m):
        lin = _linear(m, 4, 4)
        m.nn.utils.parametrizations.orthogonal(lin, orthogonal_map="householder",
                                               use_trivialization=False)
        w0 = lin.weight
        q, _ = m.linalg.qr(m.tensor(_data((4, 4), 9)))
        lin.weight = q
        return w0, lin.weight, list(lin.state_dict())
    h.same(prog, rtol=1e-4, atol=1e-5)

    def square(m):
        lin = m.nn.utils.parametrizations.orthogonal(_linear(m, 3, 3), orthogonal_map="cayley")
        q, _ = m.linalg.qr(m.tensor(_data((3, 3), 9)))
        lin.weight = q
        return lin.weight, lin.parametrizations.weight.original
    h.same(square, rtol=1e-4, atol=1e-5)

    h.raises_like(lambda m: m.nn.utils.parametrizations.orthogonal(
        m.nn.Linear(3, 3), orthogonal_map="bad"), "orthogonal_map has to be one of")
    def vector(m):
        mod = m.nn.Module()
        mod.w = m.nn.Parameter(m.ones(3))
        m.nn.utils.parametrizations.orthogonal(mod, "w")
    h.raises_like(vector, "Expected a matrix or batch of matrices")
    h.raises_like(lambda m: m.nn.utils.parametrizations.orthogonal(m.nn.Linear(3, 3), "w"),
                  "has no parameter or buffer")

    def cayley_no_triv(m):
        lin = m.nn.utils.parametrizations.orthogonal(_linear(m), orthogonal_map="cayley",
                                                     use_trivialization=False)
        lin.weight = m.eye(3)
    h.raises_like(cayley_no_triv, "use_trivialization=False")


def test_matrix_exp_matches_torch():
    for scale in (0.1, 1.0, 7.0):
        a = _data((2, 4, 4), 11).astype(np.float64) * scale
        ta = torch.tensor(a, requires_grad=True)
        ga = gg.tensor(a, requires_grad=True)
        te, ge = torch.matrix_exp(ta), gg.linalg.matrix_exp(ga)
        np.testing.assert_allclose(ge.detach().numpy(), te.detach().numpy(), rtol=1e-10,
                                   atol=1e-10)
        w = _data((2, 4, 4), 12).astype(np.float64)
        (te * torch.tensor(w)).sum().backward()
        (ge * gg.tensor(w)).sum().backward()
        np.testing.assert_allclose(ga.grad.numpy(), ta.grad.numpy(), rtol=1e-8, atol=1e-9)


def test_householder_product_composite_matches_torch():
    from graphgrad.nn.utils.parametrizations import _householder_product

    a = _data((5, 3), 13).astype(np.float64)
    t = _data((3,), 14).astype(np.float64)
    ta, tt = torch.tensor(a, requires_grad=True), torch.tensor(t, requires_grad=True)
    ga, gt = gg.tensor(a, requires_grad=True), gg.tensor(t, requires_grad=True)
    tq, gq = torch.linalg.householder_product(ta, tt), _householder_product(ga, gt)
    np.testing.assert_allclose(gq.detach().numpy(), tq.detach().numpy(), rtol=1e-10, atol=1e-12)
    tq.sum().backward()
    gq.sum().backward()
    np.testing.assert_allclose(ga.grad.numpy(), ta.grad.numpy(), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(gt.grad.numpy(), tt.grad.numpy(), rtol=1e-8, atol=1e-10)


def test_transfer_parametrizations_and_params():
    def prog(m):
        P = m.nn.utils.parametrize
        a = P.register_parametrization(_linear(m), "weight", Sym.make(m))
        b = _linear(m)
        P.transfer_parametrizations_and_params(a, b)
        return (type(b).__name__, b.weight, b.parametrizations.weight.original
                is a.parametrizations.weight.original)
    h.same(prog)


# -- small utilities ----------------------------------------------------------------------------
def test_skip_init_and_memory_format_and_clip_grad_norm():
    def prog(m):
        lin = m.nn.utils.skip_init(m.nn.Linear, 3, 2, bias=False)
        conv = m.nn.Conv2d(2, 2, 1)
        same_conv = m.nn.utils.convert_conv2d_weight_memory_format(conv, m.channels_last
                                                                   if hasattr(m,
                                                                              "channels_last")
                                                                   else None) is conv
        return type(lin).__name__, tuple(lin.weight.shape), lin.bias, same_conv
    h.same(prog)
    h.raises_like(lambda m: m.nn.utils.skip_init(int), "Expected a Module")

    def clip(m):
        w = m.nn.Parameter(m.tensor([3.0, 4.0]))
        w.grad = m.tensor([3.0, 4.0])
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            total = m.nn.utils.clip_grad_norm([w], 1.0)
        return total, w.grad, [r.category.__name__ for r in rec]
    h.same(clip)


def test_deepcopy_functional_call_and_pickling_of_parametrized_modules():
    def prog(m):
        import copy
        import pickle

        lin = m.nn.utils.parametrizations.weight_norm(_linear(m, 2, 2))
        c = copy.deepcopy(lin)
        sd = {"parametrizations.weight.original0": m.ones(2, 1),
              "parametrizations.weight.original1": m.ones(2, 2), "bias": m.zeros(2)}
        y = m.func.functional_call(lin, sd, (m.ones(1, 2),))
        lin.eval()
        try:
            pickle.dumps(lin)
            pickled = "pickled"
        except RuntimeError as e:
            pickled = str(e).split("\n")[0]
        return (type(c).__name__, type(c) is type(lin), c.weight, y, lin.weight,
                lin.parametrizations.weight[0].training, pickled)
    h.same(prog)
