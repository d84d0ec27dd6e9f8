"""Attention as composites: ``F.scaled_dot_product_attention`` (torch's math reference) and
``F.multi_head_attention_forward``, the function behind ``nn.MultiheadAttention``.

Mask conventions are torch's: in SDPA a bool mask says which positions *take part*; in
multi-head attention a bool ``attn_mask``/``key_padding_mask`` says which are *masked out*.
"""

from __future__ import annotations

import math

import numpy as np

from ..._dtype import bool as bool_
from ...ops.creation import ones, tensor, zeros
from ...ops.movement import cat
from ...ops.nn import softmax
from .dropout import dropout
from .linear import linear

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]


def _float_mask(mask, dtype, what):
    """A bool mask (True = masked out) as an additive float mask; a float mask as is."""
    if mask is None:
        return None
    if mask.dtype.is_floating_point:
        return mask
    if mask.dtype != bool_:
        raise AssertionError(f"only bool and floating types of {what} are supported")
    return zeros(tuple(mask.shape), dtype=dtype).masked_fill(mask, float("-inf"))


def _repeat_heads(x, groups):
    """``x.repeat_interleave(groups, dim=-3)`` from views: (..., Hk, S, D) -> (..., Hk*g, S, D)."""
    shape = tuple(x.shape)
    y = x.unsqueeze(-3).expand(*shape[:-2], groups, *shape[-2:])
    return y.reshape(*shape[:-3], shape[-3] * groups, *shape[-2:])


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """``softmax(q @ k^T * scale + mask) @ v`` over the last two dims.

    >>> import graphgrad as torch
    >>> q = torch.ones(2, 3, 4)
    >>> torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True).shape
    torch.Size([2, 3, 4])
    """
    L, S = query.size(-2), key.size(-2)
    scale_factor = 1 / math.sqrt(query.size(-1)) if scale is None else scale
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                               "set when is_causal=True")
        attn_mask = ones(L, S, dtype=query.dtype).tril().bool()
    if enable_gqa and query.dim() >= 3 and key.size(-3) != query.size(-3):
        if query.size(-3) % key.size(-3) or query.size(-3) % value.size(-3):
            raise RuntimeError("number of heads in key/value must divide the number of heads "
                               "in query")
        key = _repeat_heads(key, query.size(-3) // key.size(-3))
        value = _repeat_heads(value, query.size(-3) // value.size(-3))
    scores = query.matmul(key.transpose(-2, -1)) * scale_factor
    if attn_mask is not None:
        if attn_mask.dtype.is_floating_point:
            scores = scores + attn_mask
        else:
            scores = scores.masked_fill(attn_mask.logical_not(), float("-inf"))
    dead = None
    if attn_mask is not None:
        # torch's safe softmax: a row with every position masked attends to nothing (0, not NaN,
        # and no NaN gradient either, hence the finite stand-in before the softmax).
        dead = np.isneginf(scores.detach().numpy()).all(-1, keepdims=True)
        dead = tensor(dead) if dead.any() else None
        if dead is not None:
            scores = scores.masked_fill(dead, 0.0)
    weights = softmax(scores, -1)
    if dead is not None:
        weights = weights.masked_fill(dead, 0.0)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, True)
    return weights.matmul(value)


def _in_projection(query, key, value, e, w, b, q_w, k_w, v_w, b_q_k_v):
    if w is not None:
        if query is key and key is value:
            return linear(query, w, b).chunk(3, -1)
        wq, wk, wv = w.chunk(3)
        bq, bk, bv = (None, None, None) if b is None else b.chunk(3)
    else:
        wq, wk, wv = q_w, k_w, v_w
        bq, bk, bv = b_q_k_v
    return linear(query, wq, bq), linear(key, wk, bk), linear(value, wv, bv)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """Multi-head attention on sequence-first inputs (L, N, E), or unbatched (L, E).

    Returns ``(output, weights)``; ``weights`` is None unless ``need_weights``.
    """
    if static_k is not None or static_v is not None:
        raise NotImplementedError("multi_head_attention_forward: static_k/static_v are not "
                                  "supported")
    batched = query.dim() == 3
    if not batched:
        if query.dim() != 2 or key.dim() != 2 or value.dim() != 2:
            raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but "
                                 f"received {query.dim()}-D query tensor")
        same_kv = key is value
        same_qk = query is key
        query = query.unsqueeze(1)
        key = query if same_qk else key.unsqueeze(1)
        value = key if same_kv else value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    L, N, E = query.shape
    S = key.shape[0]
    if E != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {E}")
    head_dim = E // num_heads
    if head_dim * num_heads != E:
        raise AssertionError(f"embed_dim {E} not divisible by num_heads {num_heads}")
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    key_padding_mask = _float_mask(key_padding_mask, query.dtype, "key_padding_mask")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # SDPA builds the causal mask itself
    else:
        attn_mask = _float_mask(attn_mask, query.dtype, "attn_mask")
        if key_padding_mask is not None:
            is_causal = False

    b_q_k_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
    q, k, v = _in_projection(query, key, value, E,
                             None if use_separate_proj_weight else in_proj_weight,
                             in_proj_bias, q_proj_weight, k_proj_weight, v_proj_weight, b_q_k_v)
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (L, S):
                raise RuntimeError(f"The shape of the 2D attn_mask is {tuple(attn_mask.shape)}, "
                                   f"but should be {(L, S)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (N * num_heads, L, S):
                raise RuntimeError(f"The shape of the 3D attn_mask is {tuple(attn_mask.shape)}, "
                                   f"but should be {(N * num_heads, L, S)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
    if bias_k is not None and bias_v is not None:
        k = cat([k, bias_k.expand(1, N, E)])
        v = cat([v, bias_v.expand(1, N, E)])
        if attn_mask is not None:
            attn_mask = cat([attn_mask, zeros(*attn_mask.shape[:-1], 1, dtype=attn_mask.dtype)],
                            -1)
        if key_padding_mask is not None:
            key_padding_mask = cat([key_padding_mask,
                                    zeros(N, 1, dtype=key_padding_mask.dtype)], -1)
    q = q.reshape(L, N * num_heads, head_dim).transpose(0, 1)
    k = k.reshape(k.shape[0], N * num_heads, head_dim).transpose(0, 1)
    v = v.reshape(v.shape[0], N * num_heads, head_dim).transpose(0, 1)
    if add_zero_attn:
        k = cat([k, zeros(N * num_heads, 1, head_dim, dtype=k.dtype)], 1)
        v = cat([v, zeros(N * num_heads, 1, head_dim, dtype=v.dtype)], 1)
        if attn_mask is not None:
            attn_mask = cat([attn_mask, zeros(*attn_mask.shape[:-1], 1, dtype=attn_mask.dtype)],
                            -1)
        if key_padding_mask is not None:
            key_padding_mask = cat([key_padding_mask,
                                    zeros(N, 1, dtype=key_padding_mask.dtype)], -1)
    S = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (N, S):
            raise AssertionError(f"expecting key_padding_mask shape of {(N, S)}, but got "
                                 f"{tuple(key_padding_mask.shape)}")
        kpm = key_padding_mask.reshape(N, 1, 1, S).expand(-1, num_heads, -1, -1)
        kpm = kpm.reshape(N * num_heads, 1, S)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0

    if need_weights:
        scores = (q * (1 / math.sqrt(head_dim))).matmul(k.transpose(-2, -1))
        if attn_mask is not None:
            scores = scores + attn_mask
        weights = softmax(scores, -1)
        if dropout_p > 0.0:
            weights = dropout(weights, dropout_p, True)
        out = weights.matmul(v)
        out = out.transpose(0, 1).reshape(L * N, E)
        out = linear(out, out_proj_weight, out_proj_bias).reshape(L, N, E)
        weights = weights.reshape(N, num_heads, L, S)
        if average_attn_weights:
            weights = weights.mean(1)
        if not batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights

    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.reshape(N, num_heads, -1, S)
    q = q.reshape(N, num_heads, L, head_dim)
    k = k.reshape(N, num_heads, S, head_dim)
    v = v.reshape(N, num_heads, S, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(L * N, E)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(L, N, E)
    if not batched:
        out = out.squeeze(1)
    return out, None
