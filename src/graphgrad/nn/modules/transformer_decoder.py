"""``TransformerDecoderLayer`` (self-attention, cross-attention over the encoder's memory,
feed-forward), ``TransformerDecoder`` (a stack of deep copies with an optional final norm) and
``Transformer`` (encoder + decoder, xavier-initialised), with torch's parameter names so torch
state dicts load unchanged.
"""

from __future__ import annotations

import copy

from ...ops.creation import full
from ...ops.structure import triu
from .. import functional as F
from ..init import xavier_uniform_
from .activation_attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm
from .transformer import TransformerEncoder, TransformerEncoderLayer, _get_activation_fn

__all__ = ["TransformerDecoderLayer", "TransformerDecoder", "Transformer"]


def _generate_square_subsequent_mask(sz, device=None, dtype=None):
    """``-inf`` above the diagonal, ``0`` elsewhere: position i attends to positions <= i."""
    return triu(full((sz, sz), float("-inf"), dtype=dtype, device=device), diagonal=1)


def _get_seq_len(src, batch_first):
    shape = src.shape
    if len(shape) == 2:
        return shape[0]
    return shape[1 if batch_first else 0]


def _detect_is_causal_mask(mask, is_causal=None, size=None):
    """``is_causal`` when given; otherwise whether ``mask`` equals the causal mask of ``size``."""
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask.shape[-2]
        causal = _generate_square_subsequent_mask(sz, dtype=mask.dtype)
        make_causal = mask.shape == causal.shape and bool((mask == causal).all())
    return make_causal


class TransformerDecoderLayer(Module):
    """``x + SA(x)``, ``x + MHA(x, memory)``, ``x + FF(x)``, each followed (or, with
    ``norm_first``, preceded) by a LayerNorm.

    >>> import graphgrad as torch
    >>> layer = torch.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, batch_first=True)
    >>> layer(torch.ones(3, 4, 8), torch.ones(3, 5, 8)).shape
    torch.Size([3, 4, 8])
    """

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, bias=bias, **kw)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, bias=bias, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        self.activation = activation

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask,
                                    memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask,
                                               memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           is_causal=is_causal, need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, is_causal=is_causal,
                                need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


class TransformerDecoder(Module):
    """``num_layers`` deep copies of ``decoder_layer`` applied in turn, then ``norm`` if given.

    ``tgt_is_causal=None`` (the default) detects whether ``tgt_mask`` is the causal mask.
    """

    def __init__(self, decoder_layer, num_layers, norm=None) -> None:
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        output = tgt
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask,
                         memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """An encoder over ``src`` and a decoder over ``tgt`` attending to the encoder's output;
    every parameter with more than one dimension is xavier-uniform initialised.

    >>> import graphgrad as torch
    >>> model = torch.nn.Transformer(8, 2, 1, 1, dim_feedforward=16)
    >>> model(torch.ones(5, 3, 8), torch.ones(4, 3, 8)).shape
    torch.Size([4, 3, 8])
    >>> torch.nn.Transformer.generate_square_subsequent_mask(2)
    tensor([[0., -inf],
            [0., 0.]])
    """

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation=F.relu, custom_encoder=None,
                 custom_decoder=None, layer_norm_eps=1e-5, batch_first=False, norm_first=False,
                 bias=True, device=None, dtype=None) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                      batch_first, norm_first, bias)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            encoder_layer = TransformerEncoderLayer(*layer_args, **kw)
            encoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
            self.encoder = TransformerEncoder(encoder_layer, num_encoder_layers, encoder_norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            decoder_layer = TransformerDecoderLayer(*layer_args, **kw)
            decoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
            self.decoder = TransformerDecoder(decoder_layer, num_decoder_layers, decoder_norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        is_batched = src.dim() == 3
        if is_batched and src.shape[0 if self.batch_first else 1] != tgt.shape[
                0 if self.batch_first else 1]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """A float mask: ``-inf`` where position i would attend to a later position j > i."""
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.dim() > 1:
                xavier_uniform_(p)
