"""nn.utils.fusion against torch: torch's conv/linear and BatchNorm (with trained running
statistics) copied into graphgrad, fused by each library, fused outputs and parameters compared.
"""

import numpy as np
import pytest
import torch

import graphgrad as gg


def _copy(t_mod, g_mod):
    g_mod.load_state_dict({k: gg.tensor(v.detach().numpy().copy())
                           for k, v in t_mod.state_dict().items()})
    return g_mod


def _pair(build, train_input):
    torch.manual_seed(0)
    t_mods = build(torch)
    with torch.no_grad():  # running statistics away from their initial values
        for mod in t_mods:
            if isinstance(mod, torch.nn.modules.batchnorm._BatchNorm):
                mod.running_mean.normal_()
                mod.running_var.uniform_(0.5, 2.0)
                if mod.affine:
                    mod.weight.normal_()
                    mod.bias.normal_()
    g_mods = [_copy(t, g) for t, g in zip(t_mods, build(gg))]
    for mod in (*t_mods, *g_mods):
        mod.eval()
    return t_mods, g_mods


CASES = [
    ("conv2d", lambda m: (m.nn.Conv2d(3, 4, 3), m.nn.BatchNorm2d(4)), (2, 3, 6, 6), {}),
    ("conv1d_no_bias", lambda m: (m.nn.Conv1d(3, 4, 3, bias=False), m.nn.BatchNorm1d(4)),
     (2, 3, 7), {}),
    ("conv2d_bn_no_affine", lambda m: (m.nn.Conv2d(3, 4, 1), m.nn.BatchNorm2d(4, affine=False)),
     (2, 3, 5, 5), {}),
    ("conv_transpose2d", lambda m: (m.nn.ConvTranspose2d(3, 4, 2, groups=1),
                                    m.nn.BatchNorm2d(4)), (2, 3, 4, 4), {"transpose": True}),
]


@pytest.mark.parametrize("name, build, shape, kw", CASES, ids=[c[0] for c in CASES])
def test_fuse_conv_bn_eval(name, build, shape, kw):
    (t_conv, t_bn), (g_conv, g_bn) = _pair(build, shape)
    t_fused = torch.nn.utils.fuse_conv_bn_eval(t_conv, t_bn, **kw)
    g_fused = gg.nn.utils.fuse_conv_bn_eval(g_conv, g_bn, **kw)
    assert type(g_fused).__name__ == type(t_fused).__name__ and g_fused is not g_conv
    assert isinstance(g_fused.weight, gg.nn.Parameter)
    for k, v in t_fused.state_dict().items():
        np.testing.assert_allclose(g_fused.state_dict()[k].numpy(), v.numpy(), rtol=1e-6,
                                   atol=1e-6, err_msg=k)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    expected = t_bn(t_conv(torch.tensor(x))).detach().numpy()
    np.testing.assert_allclose(g_fused(gg.tensor(x)).detach().numpy(), expected, rtol=1e-4,
                               atol=1e-5)


@pytest.mark.parametrize("features, bias", [(4, True), (1, False)])
def test_fuse_linear_bn_eval(features, bias):
    def build(m):
        return m.nn.Linear(3, 4, bias=bias), m.nn.BatchNorm1d(features)

    (t_lin, t_bn), (g_lin, g_bn) = _pair(build, (5, 3))
    t_fused = torch.nn.utils.fuse_linear_bn_eval(t_lin, t_bn)
    g_fused = gg.nn.utils.fuse_linear_bn_eval(g_lin, g_bn)
    for k, v in t_fused.state_dict().items():
        np.testing.assert_allclose(g_fused.state_dict()[k].numpy(), v.numpy(), rtol=1e-6,
                                   atol=1e-6, err_msg=k)
    assert [p.requires_grad for p in g_fused.parameters()] == [
        p.requires_grad for p in t_fused.parameters()]


def test_fuse_weights_functions():
    rng = np.random.default_rng(1)
    w, b = rng.standard_normal((4, 3, 2)), rng.standard_normal(4)
    rm, rv = rng.standard_normal(4), rng.uniform(0.5, 2, 4)
    bw, bb = rng.standard_normal(4), rng.standard_normal(4)
    for fn, args in [("fuse_conv_bn_weights", (w, b, rm, rv, 1e-3, bw, bb)),
                     ("fuse_conv_bn_weights", (w, None, rm, rv, 1e-5, None, None)),
                     ("fuse_linear_bn_weights", (w[:, :, 0], b, rm, rv, 1e-5, bw, bb))]:
        t_args = [torch.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        g_args = [gg.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        expected = getattr(torch.nn.utils, fn)(*t_args)
        actual = getattr(gg.nn.utils, fn)(*g_args)
        for a, e in zip(actual, expected):
            assert isinstance(a, gg.nn.Parameter) and a.requires_grad == e.requires_grad
            np.testing.assert_allclose(a.detach().numpy(), e.detach().numpy(), rtol=1e-12)


def test_fusion_errors():
    for m in (torch, gg):
        with pytest.raises(AssertionError, match="Fusion only for eval"):
            m.nn.utils.fuse_conv_bn_eval(m.nn.Conv2d(1, 2, 1), m.nn.BatchNorm2d(2))
        with pytest.raises(AssertionError, match="out_features"):
            m.nn.utils.fuse_linear_bn_eval(m.nn.Linear(2, 3).eval(), m.nn.BatchNorm1d(2).eval())
        with pytest.raises(AssertionError, match="running_mean"):
            m.nn.utils.fuse_conv_bn_eval(m.nn.Conv2d(1, 2, 1).eval(),
                                         m.nn.BatchNorm2d(2, track_running_stats=False).eval())
