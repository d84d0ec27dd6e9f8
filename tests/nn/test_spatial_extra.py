"""The spatial composites and 3-d layers where the OpInfo and ModuleInfo tables cannot reach:
deprecation warnings of ``F.upsample*``, max_pool3d's indices fed to max_unpool3d, pdist at
repeated rows, torch's tuple-returning top-level pools, and interpolate's 5-d 'area' mode.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import graphgrad as gg


def _both(fn):
    """``fn(m)`` for torch and graphgrad, each result as NumPy."""
    out = []
    for m in (torch, gg):
        r = fn(m)
        out.append([t.detach().numpy() for t in (r if isinstance(r, tuple) else (r,))])
    return out


@pytest.mark.parametrize("name,kwargs", [("upsample", {"scale_factor": 2}),
                                         ("upsample_nearest", {"size": 5}),
                                         ("upsample_bilinear", {"size": (5, 6)})])
def test_upsample_warns_as_torch(name, kwargs):
    x = np.random.default_rng(0).standard_normal((1, 2, 3, 4))
    caught = {}
    for m in (torch, gg):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            getattr(m.nn.functional, name)(m.tensor(x), **kwargs)
        caught[m] = [(type(i.message), str(i.message)) for i in w
                     if "deprecated" in str(i.message)]
    assert caught[gg] == caught[torch] and caught[gg]


def test_max_pool3d_indices_unpool_round_trip():
    x = np.random.default_rng(1).standard_normal((2, 3, 4, 6, 5))

    def prog(m):
        t = m.tensor(x, requires_grad=True)
        y, idx = m.nn.functional.max_pool3d(t, 2, return_indices=True, ceil_mode=True)
        up = m.nn.functional.max_unpool3d(y, idx, 2, output_size=x.shape[-3:])
        (up * m.arange(up.numel(), dtype=up.dtype).reshape(up.shape)).sum().backward()
        return up, idx, t.grad

    want, got = _both(prog)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_pdist_repeated_rows_gradient():
    x = np.array([[1.0, 2.0, 0.5], [1.0, 2.0, 0.5], [0.0, 1.0, -1.0], [3.0, 1.0, 2.0]])

    def prog(m):
        t = m.tensor(x, requires_grad=True)
        d = m.pdist(t)
        (d * m.arange(1.0, d.numel() + 1, dtype=d.dtype)).sum().backward()
        return d, t.grad

    want, got = _both(prog)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_top_level_adaptive_max_pool1d_returns_values_and_indices():
    x = np.random.default_rng(2).standard_normal((2, 3, 7))
    want, got = _both(lambda m: m.adaptive_max_pool1d(m.tensor(x), 3))
    assert len(got) == len(want) == 2
    for a, b in zip(got, want):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("size", [(3, 4, 2), (1, 1, 1), (6, 2, 7)])
def test_interpolate_area_5d(size):
    x = np.random.default_rng(3).standard_normal((2, 2, 5, 4, 6))

    def prog(m):
        t = m.tensor(x, requires_grad=True)
        y = m.nn.functional.interpolate(t, size=size, mode="area")
        (y * y).sum().backward()
        return y, t.grad

    want, got = _both(prog)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_conv3d_module_in_a_network_trains_like_torch():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 2, 4, 6, 6))

    def prog(m):
        m.manual_seed(0)
        net = m.nn.Sequential(m.nn.Conv3d(2, 4, 3, padding=1), m.nn.ReLU(), m.nn.MaxPool3d(2),
                              m.nn.ConvTranspose3d(4, 2, 2, stride=2))
        return net

    t_net, g_net = prog(torch).double(), prog(gg).double()
    g_net.load_state_dict({k: gg.tensor(v.detach().numpy()) for k, v in
                           t_net.state_dict().items()})
    outs = []
    for m, net in ((torch, t_net), (gg, g_net)):
        t = m.tensor(x, requires_grad=True)
        y = net(t)
        (y * y).mean().backward()
        outs.append([y.detach().numpy(), t.grad.numpy(), net[0].weight.grad.numpy(),
                     net[3].weight.grad.numpy()])
    for a, b in zip(outs[1], outs[0]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("d", [2, 3])
def test_fractional_max_pool_draws_valid_windows(d):
    # without _random_samples the placements come from graphgrad's generator (not torch's
    # stream): each output must be the maximum of a kernel window and its index must point at it
    x = gg.randn(*(2, 3) + (9,) * d, dtype=gg.float64, requires_grad=True)
    fn = getattr(gg.nn.functional, f"fractional_max_pool{d}d")
    y, idx = fn(x, 2, output_size=5, return_indices=True)
    assert tuple(y.shape) == (2, 3) + (5,) * d
    assert tuple(idx.shape) == tuple(y.shape) and idx.dtype == gg.int64
    flat = x.detach().numpy().reshape(6, -1)
    got = np.take_along_axis(flat, idx.numpy().reshape(6, -1), 1)
    np.testing.assert_array_equal(got.reshape(y.shape), y.detach().numpy())
    y.sum().backward()
    assert x.grad.sum().item() == y.numel()
    t_shape = tuple(getattr(torch.nn.functional, f"fractional_max_pool{d}d")(
        torch.tensor(x.detach().numpy()), 2, output_size=5).shape)
    assert t_shape == tuple(y.shape)
