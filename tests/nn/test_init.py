"""nn.init against torch: gains, fan formulas (linear and conv weights) and errors are compared
exactly; random initialisers are compared by their bounds and moments (graphgrad draws its own
numbers), with tolerances wide enough for 40,000 samples.
"""

import importlib.util
import math
import pathlib

import numpy as np
import pytest
import torch

import graphgrad as gg

_spec = importlib.util.spec_from_file_location(
    "_gg_test_helpers", pathlib.Path(__file__).parents[1] / "autograd" / "_helpers.py")
h = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(h)

SHAPES = [(200, 200), (100, 50, 3), (40, 10, 3, 3), (8, 4, 2, 3, 5)]


@pytest.mark.parametrize("args", [("linear",), ("conv2d",), ("sigmoid",), ("tanh",), ("relu",),
                                  ("leaky_relu",), ("leaky_relu", 0.2), ("leaky_relu", 3),
                                  ("selu",), ("conv_transpose3d",)])
def test_calculate_gain(args):
    h.same(lambda m: m.nn.init.calculate_gain(*args))


def test_calculate_gain_errors():
    h.raises_like(lambda m: m.nn.init.calculate_gain("softmax"), "Unsupported nonlinearity")
    h.raises_like(lambda m: m.nn.init.calculate_gain("leaky_relu", True), "not a valid number")


@pytest.mark.parametrize("shape", SHAPES + [(3, 7)])
def test_fan_in_and_fan_out(shape):
    h.same(lambda m: m.nn.init._calculate_fan_in_and_fan_out(m.empty(shape)))
    for mode in ("fan_in", "fan_out", "FAN_OUT"):
        h.same(lambda m: m.nn.init._calculate_correct_fan(m.empty(shape), mode))


def test_fan_errors():
    h.raises_like(lambda m: m.nn.init._calculate_fan_in_and_fan_out(m.empty(3)),
                  "fewer than 2 dimensions")
    h.raises_like(lambda m: m.nn.init.kaiming_uniform_(m.empty(3, 3), mode="fan"),
                  "Mode fan not supported")
    h.raises_like(lambda m: m.nn.init.xavier_normal_(m.empty(3)), "fewer than 2 dimensions")


def _stats(m, fill, shape, dtype="float32"):
    t = m.empty(shape, dtype=getattr(m, dtype))
    out = fill(m, t)
    assert out is t
    a = t.numpy().astype(np.float64)
    return a.min(), a.max(), a.mean(), a.std()


INITS = {
    "uniform": lambda m, t: m.nn.init.uniform_(t, -0.5, 2.0),
    "normal": lambda m, t: m.nn.init.normal_(t, 1.0, 0.3),
    "xavier_uniform": lambda m, t: m.nn.init.xavier_uniform_(t, gain=2.0),
    "xavier_normal": lambda m, t: m.nn.init.xavier_normal_(t),
    "kaiming_uniform": lambda m, t: m.nn.init.kaiming_uniform_(t, a=math.sqrt(5)),
    "kaiming_uniform_relu_out": lambda m, t: m.nn.init.kaiming_uniform_(
        t, mode="fan_out", nonlinearity="relu"),
    "kaiming_normal": lambda m, t: m.nn.init.kaiming_normal_(t, nonlinearity="relu"),
    "kaiming_normal_leaky": lambda m, t: m.nn.init.kaiming_normal_(t, a=0.1, mode="fan_out"),
    "trunc_normal": lambda m, t: m.nn.init.trunc_normal_(t, 0.5, 1.0, -1.0, 1.5),
    "trunc_normal_narrow": lambda m, t: m.nn.init.trunc_normal_(t, 0.0, 1.0, 2.0, 3.0),
    "orthogonal": lambda m, t: m.nn.init.orthogonal_(t, gain=1.5),
}


@pytest.mark.parametrize("name", list(INITS))
@pytest.mark.parametrize("shape", [(200, 200), (40, 10, 10, 10)], ids=["linear", "conv"])
def test_random_init_distribution(name, shape):
    t_min, t_max, t_mean, t_std = _stats(torch, INITS[name], shape)
    g_min, g_max, g_mean, g_std = _stats(gg, INITS[name], shape)
    spread = t_max - t_min
    # Bounds of bounded laws agree closely; moments within a few standard errors.
    assert abs(g_mean - t_mean) <= 0.02 * max(t_std, 1e-3) * 5 + 1e-6
    assert abs(g_std - t_std) <= 0.03 * t_std + 1e-6
    if name.startswith(("uniform", "xavier_uniform", "kaiming_uniform", "trunc")):
        assert g_min >= t_min - 0.01 * spread and g_max <= t_max + 0.01 * spread
        assert g_min <= t_min + 0.01 * spread and g_max >= t_max - 0.01 * spread


def test_orthogonal_is_orthogonal():
    for shape in [(6, 10), (10, 6), (4, 3, 2)]:
        t = gg.nn.init.orthogonal_(gg.empty(shape, dtype=gg.float64), gain=2.0)
        a = t.numpy().reshape(shape[0], -1)
        small = a @ a.T if a.shape[0] <= a.shape[1] else a.T @ a
        np.testing.assert_allclose(small, 4.0 * np.eye(small.shape[0]), atol=1e-10)


@pytest.mark.parametrize("name", ["constant", "ones", "zeros", "eye", "dirac", "dirac_groups"])
def test_deterministic_inits_equal_torch(name):
    def prog(m):
        init = m.nn.init
        with m.no_grad():
            p = m.nn.Parameter(m.empty(4, 2, 3, 3))
        if name == "constant":
            return init.constant_(p, 0.3), p.requires_grad, p.is_leaf
        if name == "ones":
            return init.ones_(m.empty(2, 3))
        if name == "zeros":
            return init.zeros_(p)
        if name == "eye":
            return init.eye_(m.nn.Parameter(m.empty(3, 5))), init.eye_(m.empty(4, 2))
        if name == "dirac":
            return init.dirac_(m.empty(3, 2, 3)), init.dirac_(m.empty(2, 3, 3, 3, 3))
        return init.dirac_(p, groups=2)

    h.same(prog)


def test_deterministic_init_errors():
    h.raises_like(lambda m: m.nn.init.eye_(m.empty(2, 2, 2)), "Only tensors with 2 dimensions")
    h.raises_like(lambda m: m.nn.init.dirac_(m.empty(2, 2)), "Only tensors with 3, 4, or 5")
    h.raises_like(lambda m: m.nn.init.dirac_(m.empty(3, 2, 3), groups=2),
                  "dim 0 must be divisible by groups")
    h.raises_like(lambda m: m.nn.init.orthogonal_(m.empty(3)), "Only tensors with 2 or more")
    h.raises_like(lambda m: m.nn.init.sparse_(m.empty(3), 0.1), "Only tensors with 2 dimensions")


def test_sparse_zeros_per_column():
    t = gg.nn.init.sparse_(gg.empty(10, 6), sparsity=0.3, std=0.5)
    zeros = (t.numpy() == 0).sum(axis=0)
    ref = torch.nn.init.sparse_(torch.empty(10, 6), sparsity=0.3, std=0.5)
    np.testing.assert_array_equal(zeros, (ref.numpy() == 0).sum(axis=0))


def test_init_on_parameter_outside_graph():
    """Initialisers write a requires-grad leaf in place without recording (no_grad)."""
    def prog(m):
        p = m.nn.Parameter(m.empty(3, 3))
        m.nn.init.kaiming_uniform_(p)
        m.nn.init.trunc_normal_(p)
        m.nn.init.orthogonal_(p)
        return p.is_leaf, p.grad_fn is None, p.requires_grad, p._version > 0

    h.same(prog)


def test_zero_element_warns():
    def prog(m):
        return h.warnings_of(lambda: m.nn.init.kaiming_uniform_(m.empty(0, 3)).shape)

    h.same(prog)


def test_linear_default_init_bounds():
    """Linear's weight and bias lie on +-1/sqrt(in_features), spread as torch's."""
    t_lin, g_lin = torch.nn.Linear(400, 300), gg.nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    for name in ("weight", "bias"):
        t, g = getattr(t_lin, name).detach().numpy(), getattr(g_lin, name).detach().numpy()
        assert np.abs(g).max() <= bound
        # both follow U(-bound, bound), whose std is bound/sqrt(3); a sample std of n draws
        # has a relative spread of about sqrt(0.8 / (4n)): allow five of those
        n = g.size
        assert abs(g.std() - bound / math.sqrt(3)) < 5 * math.sqrt(0.8 / (4 * n)) * bound
        assert abs(t.std() - bound / math.sqrt(3)) < 5 * math.sqrt(0.8 / (4 * n)) * bound
    b = gg.nn.Bilinear(9, 4, 100)
    assert np.abs(b.weight.detach().numpy()).max() <= 1 / 3
    assert np.abs(b.bias.detach().numpy()).max() <= 1 / 3
    h.raises_like(lambda m: m.nn.Bilinear(0, 3, 2), "in1_features must be > 0")


def test_deprecated_aliases_warn():
    def prog(m):
        return h.warnings_of(lambda: m.nn.init.normal(m.empty(2, 2)).shape)

    h.same(prog)
