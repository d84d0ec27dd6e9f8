"""The fused recurrence ops (first and second derivatives by finite differences), the recurrent
layers' dropout and errors, and ``F.scaled_dot_product_attention`` against torch.

Module parity (outputs and every gradient) is in the ModuleInfo table (moduleinfo_rnn.py).
"""

import numpy as np
import pytest
import torch

import graphgrad as gg
from graphgrad.ops import rnn as R

T, B, H, P = 3, 2, 3, 2


def _leaves(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [gg.tensor(rng.standard_normal(s) * 0.6, requires_grad=True) for s in shapes]


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("case", ["lstm", "lstm_proj", "gru", "rnn_tanh", "rnn_relu"])
def test_fused_layer_grad_and_gradgrad(case, reverse):
    if case.startswith("lstm"):
        p = P if case == "lstm_proj" else H
        args = _leaves((T, B, 4 * H), (B, p), (B, H), (4 * H, p), (4 * H,),
                       *([(p, H)] if case == "lstm_proj" else []))

        def fn(*a):
            return R.lstm_layer(*a, reverse=reverse)
    elif case == "gru":
        args = _leaves((T, B, 3 * H), (B, H), (3 * H, H), (3 * H,))

        def fn(*a):
            return R.gru_layer(*a, reverse=reverse)
    else:
        args = _leaves((T, B, H), (B, H), (H, H), (H,))
        nl = case.split("_")[1]

        def fn(*a):
            return R.rnn_layer(*a, nonlinearity=nl, reverse=reverse)
    assert gg.autograd.gradcheck(fn, args)
    assert gg.autograd.gradgradcheck(fn, args)


@pytest.mark.parametrize("name", ["LSTM", "GRU", "RNN"])
def test_dropout_between_layers_in_training(name):
    """With p=1 the second layer sees zeros in training (deterministic), as in torch."""
    t_mod = getattr(torch.nn, name)(3, 4, 2, dropout=1.0).double()
    g_mod = getattr(gg.nn, name)(3, 4, 2, dropout=1.0).double()
    g_mod.load_state_dict({k: gg.tensor(v.numpy().copy()) for k, v in t_mod.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((5, 2, 3))
    t_out = t_mod(torch.tensor(x))[0].detach().numpy()
    g_out = g_mod(gg.tensor(x))[0].detach().numpy()
    np.testing.assert_allclose(g_out, t_out, rtol=1e-7, atol=1e-7)
    g_mod.eval()
    assert not np.allclose(g_mod(gg.tensor(x))[0].detach().numpy(), g_out)


def _raises_like_torch(build, call):
    with pytest.raises(Exception) as t_err:
        call(build(torch), torch)
    with pytest.raises(type(t_err.value)):
        call(build(gg), gg)


@pytest.mark.parametrize("call", [
    lambda mod, m: mod(m.ones(2, 3, 4, 3)),                              # 4-d input
    lambda mod, m: mod(m.ones(4, 2, 5)),                                 # wrong input_size
    lambda mod, m: mod(m.ones(4, 2, 3), (m.zeros(1, 5), m.zeros(1, 5))),  # 2-d state, 3-d input
    lambda mod, m: mod(m.ones(4, 2, 3), (m.zeros(2, 2, 5), m.zeros(1, 2, 5))),  # wrong size
], ids=["4d", "input_size", "state_dims", "state_size"])
def test_lstm_errors_match_torch(call):
    _raises_like_torch(lambda m: m.nn.LSTM(3, 5), call)


@pytest.mark.parametrize("kwargs", [{"proj_size": 5}, {"proj_size": -1}, {"dropout": 1.5},
                                    {"num_layers": 0}, {"bias": 1}])
def test_constructor_errors_match_torch(kwargs):
    _raises_like_torch(lambda m: m, lambda m, _: m.nn.LSTM(3, 5, **kwargs))


def test_rnn_rejects_proj_and_bad_nonlinearity():
    for m in (torch, gg):
        with pytest.raises(ValueError):
            m.nn.GRU(3, 5, proj_size=2)
        with pytest.raises(ValueError):
            m.nn.RNN(3, 5, nonlinearity="gelu")


# -- scaled dot product attention --------------------------------------------------------------
_RNG = np.random.default_rng(7)
_BOOL = _RNG.random((4, 6)) > 0.4
_BOOL[1] = False  # a fully masked row: torch gives zeros (and zero gradients)


@pytest.mark.parametrize("q_shape, kv_shape, kwargs", [
    ((2, 3, 4, 8), (2, 3, 6, 8), {}),
    ((2, 3, 4, 8), (2, 3, 6, 8), {"scale": 0.3}),
    ((2, 4, 8), (2, 4, 8), {"is_causal": True}),
    ((2, 3, 4, 8), (2, 3, 6, 8), {"attn_mask": _BOOL}),
    ((2, 3, 4, 8), (2, 3, 6, 8), {"attn_mask": _RNG.standard_normal((3, 4, 6))}),
    ((2, 4, 4, 8), (2, 2, 6, 8), {"enable_gqa": True}),
], ids=["plain", "scale", "causal", "bool_mask", "float_mask", "gqa"])
def test_sdpa_matches_torch(q_shape, kv_shape, kwargs):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in (q_shape, kv_shape, kv_shape)]
    results = []
    for m in (torch, gg):
        leaves = [m.tensor(a, requires_grad=True) for a in arrays]
        kw = {k: m.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
        out = m.nn.functional.scaled_dot_product_attention(*leaves, **kw)
        out.backward(m.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape))))
        results.append([out.detach().numpy()] + [x.grad.numpy() for x in leaves])
    for a, b in zip(*results):
        np.testing.assert_allclose(b, a, rtol=1e-7, atol=1e-9)


def test_sdpa_dropout_keeps_or_zeroes_weights():
    """With v = identity the output rows are the (dropped) attention weights: each is 0 or the
    undropped weight / (1 - p)."""
    q = gg.tensor(np.random.default_rng(1).standard_normal((1, 200, 4)))
    v = gg.eye(200, dtype=gg.float64).unsqueeze(0)
    k = gg.tensor(np.random.default_rng(2).standard_normal((1, 200, 4)))
    full = gg.nn.functional.scaled_dot_product_attention(q, k, v).numpy()
    dropped = gg.nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=0.25).numpy()
    kept = dropped != 0
    np.testing.assert_allclose(dropped[kept], full[kept] / 0.75, rtol=1e-12)
    assert 0.70 < kept.mean() < 0.80


def test_sdpa_causal_with_mask_raises_like_torch():
    _raises_like_torch(lambda m: m.ones(2, 3, 4), lambda x, m: m.nn.functional.
                       scaled_dot_product_attention(x, x, x, attn_mask=m.ones(3, 3).bool(),
                                                    is_causal=True))
