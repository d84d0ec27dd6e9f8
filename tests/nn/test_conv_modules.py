"""Convolution, pooling, padding and resampling layers beyond the ModuleInfo table: torch's
constructor and forward errors (type and message), the default initialisation's distribution,
and a small CNN trained five SGD steps in torch and graphgrad from the same state.
"""

import math
import re

import numpy as np
import pytest
import torch

import graphgrad as gg


def _raises_like_torch(make):
    """``make(m)`` raises the same exception type and message under torch and graphgrad."""
    with pytest.raises(Exception) as t_exc:
        make(torch)
    with pytest.raises(type(t_exc.value)) as g_exc:
        make(gg)
    assert _sets_sorted(str(g_exc.value)) == _sets_sorted(str(t_exc.value))


def _sets_sorted(message):
    """A Python set printed in a message has no fixed order (hash seeds differ between
    processes): compare its elements sorted."""
    return re.sub(r"\{([^{}]*)\}", lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}",
                  message)


CONSTRUCTOR_ERRORS = {
    "groups_divide_in": lambda m: m.nn.Conv2d(3, 4, 3, groups=2),
    "groups_divide_out": lambda m: m.nn.Conv1d(4, 3, 3, groups=2),
    "groups_zero": lambda m: m.nn.Conv2d(4, 4, 3, groups=0),
    "same_strided": lambda m: m.nn.Conv2d(2, 2, 3, stride=(1, 2), padding="same"),
    "same_strided_1d": lambda m: m.nn.Conv1d(2, 2, 3, stride=2, padding="same"),
    "bad_padding_string": lambda m: m.nn.Conv1d(2, 2, 3, padding="full"),
    "bad_padding_mode": lambda m: m.nn.Conv2d(2, 2, 3, padding_mode="mirror"),
    "transposed_padding_mode": lambda m: m.nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect"),
    "transposed_groups": lambda m: m.nn.ConvTranspose1d(3, 4, 3, groups=2),
}


@pytest.mark.parametrize("name", list(CONSTRUCTOR_ERRORS))
def test_constructor_errors_match_torch(name):
    _raises_like_torch(CONSTRUCTOR_ERRORS[name])


def _forward(module_fn, shape, **kwargs):
    def make(m):
        x = m.tensor(np.random.default_rng(0).standard_normal(shape).astype(np.float32))
        return module_fn(m)(x, **kwargs)
    return make


FORWARD_ERRORS = {
    "output_size_too_big": _forward(lambda m: m.nn.ConvTranspose2d(2, 2, 3, stride=2),
                                    (1, 2, 4, 4), output_size=[12, 9]),
    "output_size_too_small_unbatched": _forward(lambda m: m.nn.ConvTranspose1d(2, 2, 3, 2),
                                                (2, 4), output_size=[8]),
    "output_size_length": _forward(lambda m: m.nn.ConvTranspose2d(2, 2, 3),
                                   (1, 2, 4, 4), output_size=[1, 6, 6]),
    "circular_pad_dims": _forward(lambda m: m.nn.CircularPad2d(1), (2, 2)),
    "circular_pad_1d_dims": _forward(lambda m: m.nn.CircularPad1d(1), (1, 2, 2, 3)),
    "upsample_both": _forward(lambda m: m.nn.Upsample(size=4, scale_factor=2), (1, 1, 2, 2)),
    "unpool_output_size": lambda m: m.nn.MaxUnpool2d(2)(
        m.ones(1, 1, 2, 2), m.zeros(1, 1, 2, 2, dtype=m.int64), output_size=[6, 4]),
    "unpool_output_size_length": lambda m: m.nn.MaxUnpool1d(2)(
        m.ones(1, 1, 2), m.zeros(1, 1, 2, dtype=m.int64), output_size=[4, 4]),
}


@pytest.mark.parametrize("name", list(FORWARD_ERRORS))
def test_forward_errors_match_torch(name):
    _raises_like_torch(FORWARD_ERRORS[name])


def test_conv_transpose_output_size_selects_output_padding():
    """output_size picks each valid size in [min, min + stride - 1], batched and unbatched."""
    rng = np.random.default_rng(1)
    t_mod = torch.nn.ConvTranspose2d(3, 2, 3, stride=(3, 2), padding=1)
    g_mod = gg.nn.ConvTranspose2d(3, 2, 3, stride=(3, 2), padding=1)
    g_mod.load_state_dict({k: gg.tensor(v.numpy()) for k, v in t_mod.state_dict().items()})
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    for size in ([10, 9], [11, 10], [12, 9], [2, 12, 10], [1, 2, 11, 9]):
        for batch in ((False, True) if len(size) == 2 else (len(size) == 4,)):
            a = torch.tensor(x[None] if batch else x)
            b = gg.tensor(x[None] if batch else x)
            out_t, out_g = t_mod(a, output_size=size), g_mod(b, output_size=size)
            assert tuple(out_g.shape) == tuple(out_t.shape)
            np.testing.assert_allclose(out_g.detach().numpy(), out_t.detach().numpy(),
                                       rtol=1e-5, atol=1e-5)


INIT_CASES = {
    "conv1d": (lambda m: m.nn.Conv1d(6, 40, 5), 6 * 5),
    "conv2d_grouped": (lambda m: m.nn.Conv2d(8, 64, (3, 2), groups=4), 2 * 3 * 2),
    "conv_transpose1d": (lambda m: m.nn.ConvTranspose1d(40, 6, 5), 6 * 5),
    # transposed: weight (in, out // groups, k), so fan_in = (out // groups) * k
    "conv_transpose2d_grouped": (lambda m: m.nn.ConvTranspose2d(64, 12, 3, groups=4), 3 * 9),
}


@pytest.mark.parametrize("name", list(INIT_CASES))
def test_default_init_matches_torch_distribution(name):
    """Weight and bias are uniform on +-1/sqrt(fan_in) for both libraries: every value within
    the bound, the extremes near it, the variance near bound**2 / 3."""
    make, fan_in = INIT_CASES[name]
    bound = 1 / math.sqrt(fan_in)
    gg.manual_seed(0)
    for m in (torch, gg):
        mod = make(m)
        for p in (mod.weight, mod.bias):
            v = p.detach().numpy().astype(np.float64).ravel()
            assert np.abs(v).max() <= bound * (1 + 1e-6)
            if v.size >= 400:
                assert np.abs(v).max() > 0.95 * bound
                assert abs(v.var() / (bound ** 2 / 3) - 1) < 0.2
        t_w = make(torch).weight
        assert tuple(mod.weight.shape) == tuple(t_w.shape)


def test_reset_parameters_redraws():
    gg.manual_seed(0)
    conv = gg.nn.Conv2d(2, 3, 3)
    before = conv.weight.detach().numpy().copy()
    conv.reset_parameters()
    assert not np.array_equal(before, conv.weight.detach().numpy())


def test_conv_module_uses_padding_mode_as_torch_pad_then_conv():
    """Conv2d(padding_mode='reflect') equals F.pad(reflect) then an unpadded conv2d."""
    conv = gg.nn.Conv2d(2, 3, 3, padding=(1, 2), padding_mode="reflect")
    x = gg.randn(1, 2, 5, 6)
    expected = gg.nn.functional.conv2d(gg.nn.functional.pad(x, (2, 2, 1, 1), mode="reflect"),
                                       conv.weight, conv.bias)
    np.testing.assert_array_equal(conv(x).detach().numpy(), expected.detach().numpy())


def test_max_pool_indices_round_trip_through_max_unpool():
    """MaxUnpool2d(MaxPool2d(return_indices=True)(x)) matches torch, values and gradients."""
    x = np.random.default_rng(2).standard_normal((2, 3, 6, 8))
    results = []
    for m in (torch, gg):
        xt = m.tensor(x, requires_grad=True)
        out, idx = m.nn.MaxPool2d(2, return_indices=True)(xt)
        y = m.nn.MaxUnpool2d(2)(out, idx, output_size=xt.shape)
        (y * m.tensor(np.arange(y.numel(), dtype=np.float64).reshape(y.shape))).sum().backward()
        results.append((y.detach().numpy(), xt.grad.numpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)


def _cnn(m):
    return m.nn.Sequential(
        m.nn.Conv2d(1, 16, 3, padding=1), m.nn.ReLU(), m.nn.MaxPool2d(2),
        m.nn.Conv2d(16, 32, 3), m.nn.ReLU(), m.nn.MaxPool2d(2),
        m.nn.Flatten(), m.nn.Linear(32 * 3 * 3, 10))


def test_small_cnn_trains_like_torch():
    """Five SGD steps from the same state on the same batches: equal losses and parameters."""
    rng = np.random.default_rng(0)
    batches = [(rng.standard_normal((8, 1, 16, 16)).astype(np.float32),
                np.eye(10, dtype=np.float32)[rng.integers(0, 10, 8)]) for _ in range(5)]
    # NOTE: a fixed torch seed: with some initial states two float32 window values in a max
    # pool differ only by rounding, the argmax flips and the runs part (seen for seed 24).
    torch.manual_seed(0)
    t_net = _cnn(torch)
    g_net = _cnn(gg)
    g_net.load_state_dict({k: gg.tensor(v.numpy().copy()) for k, v in
                           t_net.state_dict().items()})
    history = {}
    for m, net in ((torch, t_net), (gg, g_net)):
        opt = m.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
        losses = []
        for x, onehot in batches:
            opt.zero_grad()
            logp = m.nn.functional.log_softmax(net(m.tensor(x)), dim=1)
            loss = -(logp * m.tensor(onehot)).sum(1).mean()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        history[m] = losses, {k: v.detach().numpy() for k, v in net.state_dict().items()}
    (t_losses, t_state), (g_losses, g_state) = history[torch], history[gg]
    np.testing.assert_allclose(g_losses, t_losses, rtol=1e-5)
    for k in t_state:
        np.testing.assert_allclose(g_state[k], t_state[k], rtol=1e-4, atol=1e-5, err_msg=k)


REPRS = [
    lambda m: m.nn.Conv2d(3, 8, [3, 5], stride=[1, 2], padding=[0, 1], dilation=(2, 1)),
    lambda m: m.nn.Conv1d(4, 4, 3, padding="valid", groups=2, bias=False),
    lambda m: m.nn.Conv2d(4, 4, 3, padding="same", padding_mode="circular"),
    lambda m: m.nn.ConvTranspose2d(4, 2, 3, 2, 1, output_padding=(1, 0), dilation=1),
    lambda m: m.nn.ConvTranspose1d(4, 2, 3, output_padding=0, groups=2),
    lambda m: m.nn.MaxPool2d([2, 3], padding=(1, 1), ceil_mode=True),
    lambda m: m.nn.MaxPool1d(3, return_indices=True),
    lambda m: m.nn.AvgPool1d(4, 2),
    lambda m: m.nn.AvgPool2d((2, 3), divisor_override=2),
    lambda m: m.nn.LPPool2d(2, 3, stride=2),
    lambda m: m.nn.AdaptiveMaxPool2d((None, 3), return_indices=True),
    lambda m: m.nn.AdaptiveAvgPool1d(5),
    lambda m: m.nn.MaxUnpool2d(2, stride=(2, 1)),
    lambda m: m.nn.ConstantPad2d((1, 2, 3, 4), 2),
    lambda m: m.nn.ZeroPad1d([1, 2]),
    lambda m: m.nn.ReflectionPad1d(3),
    lambda m: m.nn.Upsample(scale_factor=(2, 3), mode="bilinear", align_corners=False),
    lambda m: m.nn.Upsample(size=[4, 5]),
    lambda m: m.nn.UpsamplingBilinear2d(scale_factor=2),
    lambda m: m.nn.Fold(output_size=(4, 5), kernel_size=[2, 2], stride=2),
    lambda m: m.nn.Unfold(3, padding=(1, 0)),
]


@pytest.mark.parametrize("i", range(len(REPRS)))
def test_repr_matches_torch(i):
    assert repr(REPRS[i](gg)) == repr(REPRS[i](torch))
