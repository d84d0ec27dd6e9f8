"""F.grid_sample, F.affine_grid and F.gumbel_softmax against torch.

grid_sample and affine_grid: outputs and the gradients reaching the input, the grid and theta,
for every mode, padding mode and align_corners, 4-d and 5-d, float64 and float32, plus
finite-difference gradchecks and torch's errors. gumbel_softmax is random: its argmax follows
softmax(logits) (the Gumbel-max trick), the hard sample is one-hot and its gradient is the soft
sample's (straight-through), checked by drawing both from the same seed.
"""

import itertools
import warnings

import numpy as np
import pytest
import torch

import graphgrad as gg

F_T, F_G = torch.nn.functional, gg.nn.functional

CASES = [(d, mode, pad, ac)
         for d in (2, 3)
         for mode, pad, ac in itertools.product(["bilinear", "nearest", "bicubic"],
                                                ["zeros", "border", "reflection"],
                                                [False, True])
         if not (d == 3 and mode == "bicubic")]


def _arrays(d, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 3, 5, 4) if d == 2 else (2, 3, 4, 5, 3)).astype(dtype)
    # A range past [-1, 1] so that every padding mode matters.
    g = rng.uniform(-1.4, 1.4, (2, 3, 4, 2) if d == 2 else (2, 3, 2, 4, 3)).astype(dtype)
    return x, g


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("d, mode, pad, ac", CASES,
                         ids=[f"{d}d-{m}-{p}-{'ac' if a else 'noac'}" for d, m, p, a in CASES])
def test_grid_sample_matches_torch(d, mode, pad, ac, dtype):
    x, g = _arrays(d, dtype)
    tx, tg = torch.tensor(x, requires_grad=True), torch.tensor(g, requires_grad=True)
    gx, gg_ = gg.tensor(x, requires_grad=True), gg.tensor(g, requires_grad=True)
    kw = {"mode": mode, "padding_mode": pad, "align_corners": ac}
    expected, actual = F_T.grid_sample(tx, tg, **kw), F_G.grid_sample(gx, gg_, **kw)
    assert tuple(actual.shape) == tuple(expected.shape) and str(actual.dtype) == str(
        expected.dtype)
    rtol, atol = (1e-10, 1e-10) if dtype == np.float64 else (1e-4, 1e-5)
    np.testing.assert_allclose(actual.detach().numpy(), expected.detach().numpy(), rtol=rtol,
                               atol=atol)
    up = np.random.default_rng(1).standard_normal(tuple(expected.shape)).astype(dtype)
    expected.backward(torch.tensor(up))
    actual.backward(gg.tensor(up))
    np.testing.assert_allclose(gx.grad.numpy(), tx.grad.numpy(), rtol=rtol, atol=atol)
    # The grid's gradient scales with the input size: float32 differs more.
    gtol = (rtol, atol) if dtype == np.float64 else (1e-3, 1e-4)
    np.testing.assert_allclose(gg_.grad.numpy(), tg.grad.numpy(), rtol=gtol[0], atol=gtol[1])


@pytest.mark.parametrize("d, mode, pad, ac",
                         [(2, "bilinear", "reflection", False), (2, "bicubic", "border", True),
                          (3, "bilinear", "zeros", True), (2, "nearest", "zeros", False)])
def test_grid_sample_gradcheck(d, mode, pad, ac):
    x, g = _arrays(d, np.float64, seed=3)
    x = gg.tensor(x[:1, :2], requires_grad=True)
    g = gg.tensor(g[:1], requires_grad=mode != "nearest")
    assert gg.autograd.gradcheck(
        lambda a, b: F_G.grid_sample(a, b, mode=mode, padding_mode=pad, align_corners=ac),
        (x, g))


ERRORS = [
    ("mode", lambda m: m.nn.functional.grid_sample(m.ones(1, 1, 2, 2), m.zeros(1, 1, 1, 2),
                                                   mode="area", align_corners=False), ValueError),
    ("padding", lambda m: m.nn.functional.grid_sample(
        m.ones(1, 1, 2, 2), m.zeros(1, 1, 1, 2), padding_mode="circular", align_corners=False),
     ValueError),
    ("batch", lambda m: m.nn.functional.grid_sample(m.ones(1, 1, 2, 2), m.zeros(2, 1, 1, 2),
                                                    align_corners=False), RuntimeError),
    ("last_dim", lambda m: m.nn.functional.grid_sample(m.ones(1, 1, 2, 2), m.zeros(1, 1, 1, 3),
                                                       align_corners=False), RuntimeError),
    ("bicubic_5d", lambda m: m.nn.functional.grid_sample(
        m.ones(1, 1, 2, 2, 2), m.zeros(1, 1, 1, 1, 3), mode="bicubic", align_corners=False),
     RuntimeError),
    ("dtype", lambda m: m.nn.functional.grid_sample(
        m.ones(1, 1, 2, 2), m.zeros(1, 1, 1, 2, dtype=m.float64), align_corners=False),
     RuntimeError),
    ("theta_shape", lambda m: m.nn.functional.affine_grid(m.ones(1, 3, 3), [1, 1, 2, 2],
                                                          align_corners=False), ValueError),
    ("theta_int", lambda m: m.nn.functional.affine_grid(m.ones(1, 2, 3, dtype=m.int64),
                                                        [1, 1, 2, 2], align_corners=False),
     ValueError),
    ("size_len", lambda m: m.nn.functional.affine_grid(m.ones(1, 2, 3), [1, 2, 2],
                                                       align_corners=False), NotImplementedError),
    ("size_zero", lambda m: m.nn.functional.affine_grid(m.ones(1, 2, 3), [1, 1, 0, 2],
                                                        align_corners=False), ValueError),
]


@pytest.mark.parametrize("name, prog, exc", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, prog, exc):
    for m in (torch, gg):
        with pytest.raises(exc):
            prog(m)


def test_align_corners_none_warns_and_means_false():
    x, g = _arrays(2, np.float64)
    for m in (torch, gg):
        with pytest.warns(UserWarning, match="align_corners=False"):
            out = m.nn.functional.grid_sample(m.tensor(x), m.tensor(g))
        np.testing.assert_allclose(out.numpy(), F_T.grid_sample(
            torch.tensor(x), torch.tensor(g), align_corners=False).numpy(), rtol=1e-10)


@pytest.mark.parametrize("size", [[2, 3, 4, 5], [2, 1, 3, 1], [2, 3, 2, 4, 3], [1, 1, 1, 2, 1]])
@pytest.mark.parametrize("ac", [False, True])
def test_affine_grid_matches_torch(size, ac):
    d = len(size) - 2
    theta = np.random.default_rng(2).standard_normal((size[0], d, d + 1))
    t_theta, g_theta = torch.tensor(theta, requires_grad=True), gg.tensor(theta,
                                                                          requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the unit-size warning, raised by both
        expected = F_T.affine_grid(t_theta, size, align_corners=ac)
        actual = F_G.affine_grid(g_theta, size, align_corners=ac)
    assert tuple(actual.shape) == tuple(expected.shape)
    np.testing.assert_allclose(actual.detach().numpy(), expected.detach().numpy(), rtol=1e-12,
                               atol=1e-12)
    up = np.random.default_rng(3).standard_normal(tuple(expected.shape))
    expected.backward(torch.tensor(up))
    actual.backward(gg.tensor(up))
    np.testing.assert_allclose(g_theta.grad.numpy(), t_theta.grad.numpy(), rtol=1e-10)


def test_affine_grid_then_grid_sample_float32():
    theta = np.array([[[0.8, -0.3, 0.1], [0.2, 1.1, -0.2]]], dtype=np.float32)
    img = np.random.default_rng(4).standard_normal((1, 2, 6, 5)).astype(np.float32)
    outs = []
    for m in (torch, gg):
        grid = m.nn.functional.affine_grid(m.tensor(theta), [1, 2, 4, 3], align_corners=False)
        assert str(grid.dtype) == "torch.float32"
        outs.append(m.nn.functional.grid_sample(m.tensor(img), grid, align_corners=False))
    np.testing.assert_allclose(outs[1].numpy(), outs[0].numpy(), rtol=1e-5, atol=1e-6)


def test_gumbel_softmax_argmax_follows_softmax():
    gg.manual_seed(0)
    logits = gg.tensor([[1.0, 0.0, -1.0, 2.0]]).expand(20000, 4)
    y = F_G.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(y.sum(-1).numpy(), 1.0, rtol=1e-6)
    freq = np.bincount(y.numpy().argmax(-1), minlength=4) / 20000
    expected = torch.softmax(torch.tensor([1.0, 0.0, -1.0, 2.0]), 0).numpy()
    np.testing.assert_allclose(freq, expected, atol=0.015)


@pytest.mark.parametrize("dim", [-1, 0])
def test_gumbel_softmax_hard_is_one_hot_with_the_soft_gradient(dim):
    logits = np.random.default_rng(5).standard_normal((6, 5))
    w = gg.tensor(np.random.default_rng(6).standard_normal((6, 5)))
    grads = []
    for hard in (True, False):
        gg.manual_seed(7)
        x = gg.tensor(logits, requires_grad=True)
        y = F_G.gumbel_softmax(x, tau=0.7, hard=hard, dim=dim)
        (y * w).sum().backward()
        grads.append((y.detach().numpy(), x.grad.numpy()))
    (hard_y, hard_g), (soft_y, soft_g) = grads
    assert set(np.unique(hard_y)) <= {0.0, 1.0}
    np.testing.assert_array_equal(hard_y.sum(dim), 1.0)
    np.testing.assert_array_equal(hard_y.argmax(dim), soft_y.argmax(dim))
    np.testing.assert_allclose(hard_g, soft_g, rtol=1e-12, atol=1e-15)


def test_gumbel_softmax_eps_warns_like_torch():
    for m in (torch, gg):
        with pytest.warns(UserWarning, match="deprecated"):
            m.nn.functional.gumbel_softmax(m.zeros(2, 3), eps=1e-5)
