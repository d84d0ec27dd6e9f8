"""ModuleInfo records for the structure layers: TransformerDecoderLayer, TransformerDecoder,
Transformer and EmbeddingBag.

Loaded by tests/nn/moduleinfo.py (``_family``), which appends ``INFOS`` to ``MODULE_INFOS``.
"""

from __future__ import annotations

import sys

import numpy as np

_mi = sys.modules["_gg_moduleinfo"]
ModuleInfo, Long = _mi.ModuleInfo, _mi.Long

# Attention and layer norms sum many products: float32 differs from torch in the last bits.
_F32 = {np.float32: (1e-5, 1e-5)}
_TGT_KPM = np.array([[False, False, True, False], [False, False, False, False],
                     [True, False, False, True]])
_MEM_KPM = np.array([[False, True, False, False, False], [False, False, False, False, True],
                     [False, False, False, False, False]])


def _call(inner, fn, wrapper="Wrapper"):
    """A module holding ``inner(m)`` as ``inner`` whose forward is ``fn(m, inner, *xs)``."""
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


def _dec_layer(**kw):
    return lambda m: m.nn.TransformerDecoderLayer(8, 2, 16, **{"dropout": 0.0, **kw})


def _masks(m, layer, tgt, mem):
    causal = m.nn.Transformer.generate_square_subsequent_mask(4, dtype=tgt.dtype)
    return layer(tgt, mem, tgt_mask=causal, tgt_key_padding_mask=m.tensor(_TGT_KPM),
                 memory_key_padding_mask=m.tensor(_MEM_KPM))


def _bool_masks(m, layer, tgt, mem):
    mem_mask = m.tensor(np.random.default_rng(5).random((4, 5)) < 0.3)
    return layer(tgt, mem, tgt_mask=m.tensor(np.triu(np.ones((4, 4), bool), 1)),
                 memory_mask=mem_mask, tgt_is_causal=True)


def _transformer(m, model, src, tgt):
    causal = model.generate_square_subsequent_mask(4, dtype=tgt.dtype)
    return model(src, tgt, tgt_mask=causal, src_key_padding_mask=m.tensor(_MEM_KPM),
                 memory_key_padding_mask=m.tensor(_MEM_KPM))


_TM = (5, 3, 8)  # memory: (S, N, E)
_TT = (4, 3, 8)  # target: (T, N, E)
DECODER = [
    ModuleInfo("TransformerDecoderLayer", constructor=_dec_layer(), inputs=(_TT, _TM), tol=_F32),
    ModuleInfo("TransformerDecoderLayer",
               constructor=_dec_layer(activation="gelu", norm_first=True, batch_first=True),
               inputs=((3, 4, 8), (3, 5, 8)), tol=_F32, variant="gelu_norm_first_batch_first"),
    ModuleInfo("TransformerDecoderLayer",
               constructor=lambda m: m.nn.TransformerDecoderLayer(
                   8, 2, 16, dropout=0.0, activation=m.nn.functional.silu, bias=False,
                   layer_norm_eps=1e-3),
               inputs=(_TT, _TM), tol=_F32, variant="callable_no_bias"),
    ModuleInfo("TransformerDecoderLayer",
               constructor=lambda m: m.nn.TransformerDecoderLayer(
                   8, 2, 16, dropout=0.0, activation=m.nn.GELU(approximate="tanh")),
               inputs=(_TT, _TM), tol=_F32, variant="module_activation"),
    ModuleInfo("TransformerDecoderLayer", constructor=_call(_dec_layer(), _masks),
               inputs=(_TT, _TM), tol=_F32, variant="masks"),
    ModuleInfo("TransformerDecoderLayer", constructor=_call(_dec_layer(), _bool_masks),
               inputs=(_TT, _TM), tol=_F32, variant="bool_masks_causal"),
    ModuleInfo("TransformerDecoderLayer", (8, 2, 16), inputs=(_TT, _TM), train=False,
               tol=_F32, variant="dropout_eval"),
    ModuleInfo("TransformerDecoderLayer", constructor=_dec_layer(), inputs=((4, 8), (5, 8)),
               tol=_F32, variant="unbatched"),
    ModuleInfo("TransformerDecoder", constructor=lambda m: m.nn.TransformerDecoder(
        _dec_layer()(m), 2, norm=m.nn.LayerNorm(8)), inputs=(_TT, _TM), tol=_F32),
    ModuleInfo("TransformerDecoder", constructor=_call(lambda m: m.nn.TransformerDecoder(
        _dec_layer(norm_first=True)(m), 2), _masks), inputs=(_TT, _TM), tol=_F32,
        variant="norm_first_masks"),
    ModuleInfo("Transformer", (8, 2, 1, 2, 16, 0.0), inputs=(_TM, _TT), tol=_F32),
    ModuleInfo("Transformer", constructor=_call(lambda m: m.nn.Transformer(
        8, 2, 2, 1, 16, 0.0, activation="gelu", batch_first=True, norm_first=True,
        layer_norm_eps=1e-4), lambda m, t, s, g: _transformer(m, t, s.transpose(0, 1),
                                                                g.transpose(0, 1))),
        inputs=(_TM, _TT), tol=_F32, variant="masks_batch_first_norm_first"),
    ModuleInfo("Transformer", constructor=lambda m: m.nn.Transformer(
        8, 2, 1, 1, 16, 0.0, bias=False), inputs=((5, 8), (4, 8)), tol=_F32,
        variant="unbatched_no_bias"),
    ModuleInfo("Transformer", constructor=lambda m: m.nn.Transformer(
        8, 2, dim_feedforward=16, dropout=0.0, custom_encoder=m.nn.TransformerEncoder(
            m.nn.TransformerEncoderLayer(8, 2, 16, 0.0), 1, enable_nested_tensor=False),
        custom_decoder=m.nn.TransformerDecoder(_dec_layer()(m), 1)),
        inputs=(_TM, _TT), tol=_F32, variant="custom_encoder_decoder"),
]

_IDX = np.array([1, 2, 4, 5, 4, 3, 2, 9])
_OFF = np.array([0, 2, 2, 5])  # the second bag is empty
_PAD = np.array([[2, 2, 2], [0, 2, 7], [5, 5, 1]])  # every index of the first bag is padding


def _no_offsets(m, bag, input, per_sample_weights):
    return bag(input, None, per_sample_weights)


def _pretrained(m):
    w = m.tensor(np.random.default_rng(7).standard_normal((10, 3)))
    return m.nn.EmbeddingBag.from_pretrained(w, freeze=False, mode="max")


BAGS = [
    ModuleInfo("EmbeddingBag", (10, 3), inputs=(Long((3, 4), 10),)),
    ModuleInfo("EmbeddingBag", (10, 3), {"mode": "sum"}, inputs=(_IDX, _OFF), variant="sum"),
    ModuleInfo("EmbeddingBag", (10, 3), inputs=(_IDX, _OFF), variant="mean_offsets"),
    ModuleInfo("EmbeddingBag", (10, 3), {"mode": "max"}, inputs=(_IDX, _OFF), variant="max"),
    ModuleInfo("EmbeddingBag", (10, 3), {"mode": "max"}, inputs=(Long((4, 5), 10),),
               variant="max_2d"),
    ModuleInfo("EmbeddingBag", (10, 3), {"mode": "sum"}, inputs=(_IDX, _OFF, (8,)),
               variant="per_sample_weights"),
    ModuleInfo("EmbeddingBag", constructor=_call(lambda m: m.nn.EmbeddingBag(10, 3, mode="sum"),
                                                 _no_offsets),
               inputs=(Long((3, 4), 10), (3, 4)), variant="per_sample_weights_2d"),
    # torch's kernels disagree among modes when offsets[-1] < len(input): they end at len(input)
    ModuleInfo("EmbeddingBag", (10, 3), {"include_last_offset": True},
               inputs=(_IDX, np.array([0, 3, 3, 8])), variant="include_last_offset"),
    ModuleInfo("EmbeddingBag", (10, 3), {"include_last_offset": True, "mode": "max"},
               inputs=(_IDX, np.array([0, 3, 8])), variant="include_last_offset_max"),
    ModuleInfo("EmbeddingBag", (10, 3), {"padding_idx": 2}, inputs=(_PAD,), variant="padding"),
    ModuleInfo("EmbeddingBag", (10, 3), {"padding_idx": -8, "mode": "max"}, inputs=(_PAD,),
               variant="padding_max"),
    ModuleInfo("EmbeddingBag", constructor=_call(
        lambda m: m.nn.EmbeddingBag(10, 3, mode="sum", padding_idx=2), _no_offsets),
        inputs=(_PAD, (3, 3)), variant="padding_psw"),
    ModuleInfo("EmbeddingBag", (10, 3), {"max_norm": 1.0, "norm_type": 1.5, "mode": "sum"},
               inputs=(_IDX, _OFF), variant="max_norm"),
    ModuleInfo("EmbeddingBag", constructor=_pretrained, inputs=(_IDX, _OFF),
               variant="from_pretrained"),
]

INFOS = DECODER + BAGS
