"""The hook-based ``torch.nn.utils.weight_norm`` / ``spectral_norm`` and their removal, against
torch: parameter and buffer names, values, forward outputs, gradients of ``*_g``/``*_v`` and
``*_orig``, power-iteration updates of ``*_u``/``*_v`` in training mode, state dicts and errors.
"""

import warnings
from collections import OrderedDict

import numpy as np
import pytest
import torch

import graphgrad as gg


def _close(t, g, tol=1e-10):
    assert tuple(t.shape) == tuple(g.shape)
    np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


def _twins(make):
    torch.manual_seed(0)
    tm = make(torch).double()
    gm = make(gg).double()
    gm.load_state_dict({k: gg.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return tm, gm


def _copy_state(tm, gm):
    gm.load_state_dict({k: gg.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})


LAYERS = [
    ("linear", lambda m: m.nn.Linear(4, 3), (5, 4)),
    ("conv", lambda m: m.nn.Conv2d(2, 3, 3), (2, 2, 5, 5)),
    ("conv_transpose", lambda m: m.nn.ConvTranspose1d(3, 2, 3), (2, 3, 6)),
]


def _wn(m, mod, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return m.nn.utils.weight_norm(mod, **kw)


@pytest.mark.parametrize("dim", [0, 1, None, -2])
@pytest.mark.parametrize("layer,make,shape", LAYERS)
def test_weight_norm(layer, make, shape, dim):
    tm, gm = _twins(make)
    if dim == -2 and layer == "linear":
        dim = 1
    tm, gm = _wn(torch, tm, dim=dim), _wn(gg, gm, dim=dim)
    assert [n for n, _ in gm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    for (_, tp), (_, gp) in zip(tm.named_parameters(), gm.named_parameters()):
        _close(tp, gp)
    _close(tm.weight, gm.weight)
    x = np.random.default_rng(0).standard_normal(shape)
    outs = []
    for m, mod in ((torch, tm), (gg, gm)):
        xt = m.tensor(x, requires_grad=True)
        out = mod(xt)
        (out * out).sum().backward()
        outs.append([out, xt.grad] + [p.grad for _, p in mod.named_parameters()])
    for t, g in zip(*outs):
        _close(t, g)
    for m, mod in ((torch, tm), (gg, gm)):
        m.nn.utils.remove_weight_norm(mod)
    assert sorted(gm.state_dict()) == sorted(tm.state_dict())
    _close(tm.weight, gm.weight)


def test_weight_norm_errors_and_warning():
    for m in (torch, gg):
        mod = _wn(m, m.nn.Linear(2, 2))
        with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
            _wn(m, mod)
        with pytest.raises(ValueError, match="weight_norm of 'bias' not found in"):
            m.nn.utils.remove_weight_norm(mod, "bias")
        with pytest.warns(FutureWarning, match="weight_norm` is deprecated"):
            m.nn.utils.weight_norm(m.nn.Linear(2, 2), name="weight")
        bias_only = _wn(m, m.nn.Linear(3, 2), name="bias")
        assert bias_only.bias_g.shape == (2,)


@pytest.mark.parametrize("n_power_iterations", [1, 3])
@pytest.mark.parametrize("layer,make,shape", LAYERS)
def test_spectral_norm(layer, make, shape, n_power_iterations):
    tm, gm = _twins(make)
    tm = torch.nn.utils.spectral_norm(tm, n_power_iterations=n_power_iterations)
    gm = gg.nn.utils.spectral_norm(gm, n_power_iterations=n_power_iterations)
    assert sorted(gm.state_dict()) == sorted(tm.state_dict())
    assert [n for n, _ in gm.named_buffers()] == [n for n, _ in tm.named_buffers()]
    _copy_state(tm, gm)  # the random start of u and v comes from each library's generator
    x = np.random.default_rng(1).standard_normal(shape)
    for step in range(2):
        outs = []
        for m, mod in ((torch, tm), (gg, gm)):
            mod.train(step == 0)
            xt = m.tensor(x, requires_grad=True)
            out = mod(xt)
            (out * out).sum().backward()
            outs.append([out, xt.grad, mod.weight, mod.weight_u, mod.weight_v]
                        + [p.grad for _, p in mod.named_parameters()])
            mod.zero_grad()
        for t, g in zip(*outs):
            _close(t, g)
    for m, mod in ((torch, tm), (gg, gm)):
        m.nn.utils.remove_spectral_norm(mod)
    assert sorted(gm.state_dict()) == sorted(tm.state_dict())
    assert not gm._state_dict_hooks and not gm._load_state_dict_pre_hooks
    _close(tm.weight, gm.weight)


def test_spectral_norm_state_dict_roundtrip_and_errors():
    tm, gm = _twins(lambda m: m.nn.Linear(4, 3))
    tm = torch.nn.utils.spectral_norm(tm)
    gm = gg.nn.utils.spectral_norm(gm)
    _copy_state(tm, gm)
    sd = gm.state_dict()
    assert sd._metadata[""]["spectral_norm"] == {"weight.version": 1}
    other = gg.nn.utils.spectral_norm(gg.nn.Linear(4, 3).double())
    other.load_state_dict(sd)
    _close(tm.weight_v, other.weight_v)
    for m, mod in ((torch, tm), (gg, gm)):
        with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
            m.nn.utils.spectral_norm(mod)
        with pytest.raises(ValueError, match="spectral_norm of 'bias' not found in"):
            m.nn.utils.remove_spectral_norm(mod, "bias")
        with pytest.raises(ValueError, match="Expected n_power_iterations to be positive"):
            m.nn.utils.spectral_norm(m.nn.Linear(2, 2), n_power_iterations=0)
        with pytest.raises(ValueError, match="cannot be applied as parameter `bias` is None"):
            m.nn.utils.spectral_norm(m.nn.Linear(2, 2, bias=False), name="bias")


def test_spectral_norm_version_0_state_dict():
    """A state dict without ``weight_v`` but with ``weight`` (torch's version 0) is converted:
    ``v`` solved from ``u`` and rescaled to the saved sigma, as torch does."""
    tm, _ = _twins(lambda m: m.nn.Linear(4, 3))
    tm = torch.nn.utils.spectral_norm(tm)
    tm(torch.randn(2, 4, dtype=torch.float64))
    old = {k: v for k, v in tm.state_dict().items() if k != "weight_v"}
    old["weight"] = tm.weight.detach()
    res = []
    for m in (torch, gg):
        mod = m.nn.utils.spectral_norm(m.nn.Linear(4, 3).double())
        sd = OrderedDict((k, m.tensor(v.numpy())) for k, v in old.items())
        sd._metadata = {"": {"spectral_norm": {"weight.version": 0}}}
        mod.load_state_dict(sd)
        res.append(mod.weight_v)
    _close(res[0], res[1], 1e-8)
