"""ModuleInfo records for the recurrent layers (RNN, LSTM, GRU and their cells) and attention
(MultiheadAttention, TransformerEncoderLayer, TransformerEncoder).

Loaded by tests/nn/moduleinfo.py (``_family``), which appends ``INFOS`` to ``MODULE_INFOS``.
Configurations with dropout run in eval mode, where dropout is off and values must match.
"""

from __future__ import annotations

import sys

import numpy as np

ModuleInfo = sys.modules["_gg_moduleinfo"].ModuleInfo

# A recurrence feeds each step's rounding into the next: float32 drifts a little from torch.
_F32 = {np.float32: (2e-5, 2e-5)}


def _info(name, args, kwargs=None, inputs=((4, 2, 3),), variant="", **kw):
    return ModuleInfo(name, args, kwargs or {}, inputs=inputs, variant=variant, tol=_F32,
                      needs=("linear",), **kw)


def _with_state(inner, wrapper="_WithState"):
    """A layer taking its state as a tuple ``(h, c)``, fed from two positional leaves."""
    def build(m):
        class _Wrap(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.rnn = inner(m)

            def forward(self, x, h, c):
                return self.rnn(x, (h, c))

        _Wrap.__name__ = _Wrap.__qualname__ = wrapper
        return _Wrap()
    return build


RECURRENT = [
    _info("RNN", (3, 5)),
    _info("RNN", (3, 5), {"nonlinearity": "relu", "num_layers": 2}, variant="relu_2layers"),
    _info("RNN", (3, 5, 2, "relu"), variant="positional_nonlinearity"),
    _info("RNN", (3, 5), {"bidirectional": True, "num_layers": 2}, variant="bidirectional"),
    _info("RNN", (3, 5), {"batch_first": True, "bias": False}, inputs=((2, 4, 3),),
          variant="batch_first_no_bias"),
    _info("RNN", (3, 5), inputs=((4, 3),), variant="unbatched"),
    _info("RNN", (3, 5), {"num_layers": 2}, inputs=((4, 2, 3), (2, 2, 5)), variant="h0"),
    _info("RNN", (3, 5), inputs=((4, 3), (1, 5)), variant="unbatched_h0"),
    _info("GRU", (3, 5)),
    _info("GRU", (3, 5), {"num_layers": 2, "bidirectional": True}, variant="bidirectional"),
    _info("GRU", (3, 5), {"batch_first": True}, inputs=((2, 4, 3), (1, 2, 5)),
          variant="batch_first_h0"),
    _info("GRU", (3, 5), {"bias": False}, inputs=((4, 3),), variant="unbatched_no_bias"),
    _info("GRU", (3, 5), {"num_layers": 3, "dropout": 0.5}, train=False, variant="dropout_eval"),
    _info("LSTM", (3, 5)),
    _info("LSTM", (3, 5), {"num_layers": 2}, variant="2layers"),
    _info("LSTM", (3, 5), {"bidirectional": True, "num_layers": 2}, variant="bidirectional"),
    _info("LSTM", (3, 5), {"batch_first": True, "bias": False}, inputs=((2, 4, 3),),
          variant="batch_first_no_bias"),
    _info("LSTM", (3, 5), {"proj_size": 2, "num_layers": 2, "bidirectional": True},
          variant="proj"),
    _info("LSTM", (3, 5), inputs=((4, 3),), variant="unbatched"),
    _info("LSTM", (3, 5), {"num_layers": 2, "dropout": 0.3}, train=False,
          variant="dropout_eval"),
    ModuleInfo("LSTM", constructor=_with_state(lambda m: m.nn.LSTM(3, 5, 2)),
               inputs=((4, 2, 3), (2, 2, 5), (2, 2, 5)), tol=_F32, variant="h0_c0"),
    ModuleInfo("LSTM", constructor=_with_state(lambda m: m.nn.LSTM(3, 5, proj_size=3)),
               inputs=((4, 3), (1, 3), (1, 5)), tol=_F32, variant="unbatched_proj_h0_c0"),
]

CELLS = [
    _info("RNNCell", (3, 5), inputs=((2, 3),)),
    _info("RNNCell", (3, 5), {"nonlinearity": "relu"}, inputs=((2, 3), (2, 5)),
          variant="relu_hx"),
    _info("RNNCell", (3, 5), {"bias": False}, inputs=((3,),), variant="unbatched_no_bias"),
    _info("GRUCell", (3, 5), inputs=((2, 3),)),
    _info("GRUCell", (3, 5), inputs=((3,), (5,)), variant="unbatched_hx"),
    _info("LSTMCell", (3, 5), inputs=((2, 3),)),
    _info("LSTMCell", (3, 5), {"bias": False}, inputs=((3,),), variant="unbatched_no_bias"),
    ModuleInfo("LSTMCell", constructor=_with_state(lambda m: m.nn.LSTMCell(3, 5)),
               inputs=((2, 3), (2, 5), (2, 5)), tol=_F32, variant="hx"),
]



def _call(inner, fn, wrapper="_Call"):
    """A layer called as ``fn(m, layer, *inputs)``: builds masks with module ``m`` and keeps
    only the outputs that are tensors."""
    def build(m):
        class _Wrap(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = inner(m)

            def forward(self, *xs):
                return fn(m, self.inner, *xs)

        _Wrap.__name__ = _Wrap.__qualname__ = wrapper
        return _Wrap()
    return build


def _mha(**kw):
    return lambda m: m.nn.MultiheadAttention(8, 2, **kw)


_KPM = np.array([[False, False, True, False], [False, False, False, False],
                 [True, False, False, True]])
_FLOAT_MASK = np.random.default_rng(3).standard_normal((5, 4))
_CAUSAL = np.tril(np.ones((5, 5), dtype=bool))


def _masked(m, mha, q, k, v):
    mask = m.tensor(_FLOAT_MASK).to(q.dtype)
    return mha(q, k, v, key_padding_mask=m.tensor(_KPM), attn_mask=mask,
               average_attn_weights=False)


def _causal_no_weights(m, mha, x):
    return mha(x, x, x, attn_mask=m.tensor(~_CAUSAL), need_weights=False, is_causal=True)[0]


def _self(m, mha, x):
    return mha(x, x, x)


def _src_masks(m, layer, x):
    return layer(x, src_mask=m.tensor(~_CAUSAL[:4, :4]), src_key_padding_mask=m.tensor(_KPM))


def _layer(**kw):
    return lambda m: m.nn.TransformerEncoderLayer(8, 2, 16, **{"dropout": 0.0, **kw})


_QKV = ((5, 3, 8), (4, 3, 8), (4, 3, 8))
ATTENTION = [
    ModuleInfo("MultiheadAttention", constructor=_call(_mha(), _self), inputs=((5, 3, 8),),
               tol=_F32, variant="self"),
    ModuleInfo("MultiheadAttention", (8, 2), inputs=_QKV, tol=_F32, variant="qkv"),
    ModuleInfo("MultiheadAttention", (8, 2), {"batch_first": True, "bias": False},
               inputs=((3, 5, 8), (3, 4, 8), (3, 4, 8)), tol=_F32, variant="batch_first"),
    ModuleInfo("MultiheadAttention", (8, 2), {"kdim": 6, "vdim": 4},
               inputs=((5, 3, 8), (4, 3, 6), (4, 3, 4)), tol=_F32, variant="kdim_vdim"),
    ModuleInfo("MultiheadAttention", constructor=_call(_mha(), _masked), inputs=_QKV, tol=_F32,
               variant="masks_per_head_weights"),
    ModuleInfo("MultiheadAttention",
               constructor=_call(_mha(batch_first=True), _causal_no_weights),
               inputs=((3, 5, 8),), tol=_F32, variant="causal_no_weights"),
    ModuleInfo("MultiheadAttention", (8, 2), inputs=((5, 8), (4, 8), (4, 8)), tol=_F32,
               variant="unbatched"),
    ModuleInfo("MultiheadAttention", (8, 4), {"add_bias_kv": True, "add_zero_attn": True},
               inputs=_QKV, tol=_F32, variant="bias_kv_zero_attn"),
    ModuleInfo("MultiheadAttention", (8, 2), {"dropout": 0.5}, inputs=_QKV, train=False,
               tol=_F32, variant="dropout_eval"),
    ModuleInfo("TransformerEncoderLayer", constructor=_layer(), inputs=((5, 3, 8),), tol=_F32),
    ModuleInfo("TransformerEncoderLayer",
               constructor=_layer(activation="gelu", norm_first=True, batch_first=True),
               inputs=((3, 5, 8),), tol=_F32, variant="gelu_norm_first_batch_first"),
    ModuleInfo("TransformerEncoderLayer",
               constructor=lambda m: m.nn.TransformerEncoderLayer(
                   8, 2, 16, dropout=0.0, activation=m.nn.functional.silu, bias=False,
                   layer_norm_eps=1e-3),
               inputs=((5, 3, 8),), tol=_F32, variant="callable_no_bias"),
    ModuleInfo("TransformerEncoderLayer",
               constructor=_call(_layer(batch_first=True), _src_masks),
               inputs=((3, 4, 8),), tol=_F32, variant="masks"),
    ModuleInfo("TransformerEncoderLayer", constructor=lambda m: m.nn.TransformerEncoderLayer(
        8, 2, 16), inputs=((5, 3, 8),), train=False, tol=_F32, variant="dropout_eval"),
    ModuleInfo("TransformerEncoder", constructor=lambda m: m.nn.TransformerEncoder(
        _layer()(m), 2, norm=m.nn.LayerNorm(8), enable_nested_tensor=False),
        inputs=((5, 3, 8),), tol=_F32),
    ModuleInfo("TransformerEncoder", constructor=lambda m: m.nn.TransformerEncoder(
        _layer(norm_first=True, batch_first=True)(m), 3, enable_nested_tensor=False),
        inputs=((3, 5, 8),), tol=_F32, variant="norm_first"),
]

INFOS = RECURRENT + CELLS + ATTENTION
