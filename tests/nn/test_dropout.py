"""Dropout in training mode, checked through its mask and statistically against torch (the
random streams differ, so values are never compared): the drop rate, the 1/(1-p) scale of kept
values, gradients equal to the mask, channel-wise masks, alpha dropout's moments, in-place
forms, seeding, and the identity outside training.
"""

import warnings

import numpy as np
import pytest
import torch

import graphgrad as gg

F = gg.nn.functional


def _rate_ok(frac, p, n):
    """The dropped fraction is within 5 standard deviations of ``p``."""
    return abs(frac - p) < 5 * np.sqrt(p * (1 - p) / n) + 1e-12


@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_dropout_mask_rate_scale_and_gradient(p):
    gg.manual_seed(0)
    x = gg.tensor(np.random.default_rng(0).uniform(1, 2, (200, 300)), requires_grad=True)
    out = F.dropout(x, p, training=True)
    o, xv = out.detach().numpy(), x.detach().numpy()
    kept = o != 0
    assert _rate_ok(1 - kept.mean(), p, kept.size)
    np.testing.assert_allclose(o[kept], xv[kept] / (1 - p), rtol=1e-12)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), kept / (1 - p), rtol=1e-12)
    assert type(out.grad_fn).__name__ == "MulBackward0"  # torch's CPU dropout is a mul too


def test_dropout_float32_keeps_dtype_and_rate_like_torch():
    gg.manual_seed(1)
    torch.manual_seed(1)
    g = F.dropout(gg.ones(100000), 0.3)
    t = torch.nn.functional.dropout(torch.ones(100000), 0.3)
    assert g.dtype == gg.float32
    rates = [float((a == 0).float().mean()) for a in (g, t)]
    assert _rate_ok(rates[0], 0.3, 100000) and _rate_ok(rates[1], 0.3, 100000)
    assert set(np.unique(g.numpy())) == set(np.unique(t.numpy()))  # {0, 1/0.7} in float32


@pytest.mark.parametrize("fn, shape, channel_dims", [
    ("dropout1d", (16, 32, 7), 2), ("dropout1d", (32, 7), 1),
    ("dropout2d", (8, 32, 3, 4), 2), ("dropout3d", (4, 16, 2, 3, 2), 2),
    ("dropout3d", (16, 2, 3, 2), 1), ("feature_alpha_dropout", (16, 32, 5), 2),
])
def test_feature_dropout_masks_whole_channels(fn, shape, channel_dims):
    gg.manual_seed(2)
    x = gg.ones(*shape, dtype=gg.float64)
    out = getattr(F, fn)(x, 0.5, training=True).numpy()
    flat = out.reshape(shape[:channel_dims] + (-1,))
    # every channel is a single value: all kept (scaled) or all dropped
    assert np.all(flat == flat[..., :1])
    values = np.unique(flat)
    assert len(values) == 2
    dropped = flat[..., 0] == values.min()
    assert _rate_ok(dropped.mean(), 0.5, dropped.size)


@pytest.mark.parametrize("p", [0.2, 0.5])
def test_alpha_dropout_keeps_moments_like_torch(p):
    gg.manual_seed(3)
    torch.manual_seed(3)
    x = np.random.default_rng(1).standard_normal(400000)
    g = F.alpha_dropout(gg.tensor(x), p, training=True).numpy()
    t = torch.nn.functional.alpha_dropout(torch.tensor(x), p, training=True).numpy()
    for out in (g, t):
        assert abs(out.mean()) < 0.01 and abs(out.std() - 1) < 0.01
    # dropped units all take one value, alpha' = -alpha * a * (1 - p), as in torch
    a = 1 / np.sqrt((1.7580993408473766 ** 2 * p + 1) * (1 - p))
    low = -1.7580993408473766 * a * (1 - p)
    for out in (g, t):
        dropped = np.isclose(out, low, rtol=0, atol=1e-12)
        assert _rate_ok(dropped.mean(), p, out.size)
    kept = ~np.isclose(g, low, rtol=0, atol=1e-12)
    np.testing.assert_allclose(g[kept], x[kept] * a + 1.7580993408473766 * a * p, rtol=1e-12)


def test_inplace_dropout_writes_into_input():
    gg.manual_seed(4)
    x = gg.ones(50, 40)
    y = x.clone()
    out = F.dropout(y, 0.5, training=True, inplace=True)
    assert out is y
    assert y._version == 1
    kept = y.numpy() != 0
    np.testing.assert_allclose(y.numpy()[kept], 2.0)
    z = gg.ones(3, 6)
    assert F.dropout1d(z, 0.5, inplace=True) is z
    w = gg.ones(3, 4, requires_grad=True).clone()
    F.dropout(w, 0.5, inplace=True).sum().backward()


def test_identity_outside_training_and_at_p0():
    x = gg.randn(2, 3, 2, 2)
    for fn in (F.dropout, F.dropout2d, F.alpha_dropout, F.feature_alpha_dropout):
        assert fn(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0, training=True) is x
    assert F.alpha_dropout(x, 0.5) is x  # its training flag defaults to False, as torch's


def test_seed_reproduces_masks():
    masks = []
    for _ in range(2):
        gg.manual_seed(123)
        masks.append(F.dropout(gg.ones(1000), 0.5).numpy())
    np.testing.assert_array_equal(masks[0], masks[1])
    assert not np.array_equal(masks[0], F.dropout(gg.ones(1000), 0.5).numpy())


def test_dropout_modules_train_and_eval():
    gg.manual_seed(5)
    drop = gg.nn.Dropout(0.25)
    x = gg.ones(400, 250)
    out = drop(x).numpy()
    assert _rate_ok((out == 0).mean(), 0.25, out.size)
    drop.eval()
    assert drop(x) is x
    for m in (torch, gg):
        with pytest.raises(ValueError, match="between 0 and 1"):
            m.nn.Dropout(1.5)


def test_errors_and_warnings_match_torch():
    for m in (torch, gg):
        with pytest.raises(RuntimeError, match="at least 2 dimensions"):
            m.nn.functional.feature_alpha_dropout(m.ones(3), 0.5, training=True)
        with pytest.raises(RuntimeError, match="can't be cast"):
            m.nn.functional.dropout(m.ones(3, dtype=m.int64), 0.5)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m.nn.functional.dropout2d(m.ones(2, 3, 4), 0.5)
        assert any("assuming that channel-wise 1D dropout" in str(w.message) for w in caught)
