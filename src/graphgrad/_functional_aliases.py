"""The functional ops torch also exposes at top level (``torch.dropout``, ``torch.batch_norm``,
``torch.lstm_cell``, ...), with ATen's positional signatures, which differ from
``torch.nn.functional``'s (``torch.batch_norm(input, weight, bias, running_mean, running_var,
training, momentum, eps, cudnn_enabled)``). Each forwards to the composite in ``nn.functional``.
"""

from __future__ import annotations

import numpy as np

from ._tensor import wrap
from .nn import functional as F
from .nn._functional.dropout import _check_p as _check_dropout_p
from .nn._functional.dropout import _dropout_impl

__all__ = ["dropout", "dropout_", "alpha_dropout", "alpha_dropout_", "feature_dropout",
           "feature_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_", "batch_norm",
           "instance_norm", "layer_norm", "group_norm", "rms_norm", "embedding",
           "embedding_bag", "bilinear", "constant_pad_nd", "convolution", "lstm_cell",
           "gru_cell", "rnn_tanh_cell", "rnn_relu_cell"]


def _check_p(p):
    # ATen raises RuntimeError here where nn.functional raises ValueError.
    try:
        _check_dropout_p(p)
    except ValueError as e:
        raise RuntimeError(str(e)) from None


def _dropout_family(name, feature, alpha, inplace):
    def fn(input, p, train):
        _check_p(p)
        return _dropout_impl(input, p, train, inplace, feature=feature, alpha=alpha)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``torch.{name}(input, p, train)``"
    return fn


dropout = _dropout_family("dropout", False, False, False)
dropout_ = _dropout_family("dropout_", False, False, True)
alpha_dropout = _dropout_family("alpha_dropout", False, True, False)
alpha_dropout_ = _dropout_family("alpha_dropout_", False, True, True)
feature_dropout = _dropout_family("feature_dropout", True, False, False)
feature_dropout_ = _dropout_family("feature_dropout_", True, False, True)
feature_alpha_dropout = _dropout_family("feature_alpha_dropout", True, True, False)
feature_alpha_dropout_ = _dropout_family("feature_alpha_dropout_", True, True, True)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):
    """``torch.batch_norm``: ATen's argument order (weight and bias before the statistics)."""
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                        eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                  eps, cudnn_enabled):
    """``torch.instance_norm`` in ATen's argument order."""
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                           momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    """``torch.layer_norm``."""
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    """``torch.group_norm``."""
    return F.group_norm(input, num_groups, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``torch.rms_norm``."""
    return F.rms_norm(input, normalized_shape, weight, eps)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """``torch.embedding(weight, indices, ...)``: a negative ``padding_idx`` means none."""
    padding_idx = None if padding_idx < 0 else padding_idx
    return F.embedding(indices, weight, padding_idx, None, 2.0, scale_grad_by_freq, sparse)


def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """``torch.embedding_bag``: ``(output, offset2bag, bag_size, max_indices)``; mode 0/1/2 is
    sum/mean/max. The three auxiliary tensors follow ATen's CPU kernel."""
    name = {0: "sum", 1: "mean", 2: "max"}[int(mode)]
    out = F.embedding_bag(indices, weight, offsets, None, 2, scale_grad_by_freq, name, sparse,
                          per_sample_weights, include_last_offset, padding_idx)
    idx = indices._data.reshape(-1)
    offs = offsets._data.astype(np.int64)
    n_off = offs.shape[0]
    ends = np.append(offs[1:], idx.shape[0])
    offset2bag = np.repeat(np.arange(n_off), ends - offs).astype(np.int64)
    n_bags = n_off - 1 if include_last_offset else n_off
    if name == "sum":
        # ATen's sum kernel leaves offset2bag empty on its float32 fast path (no padding
        # index); bag_size and max_indices stay zero, one per offset on the forward-only path
        # (a weight that does not require grad), one per bag otherwise.
        if _float32_fast_path(weight) and padding_idx is None:
            offset2bag = np.zeros(0, np.int64)
        zeros = np.zeros(n_bags if weight.requires_grad else n_off, np.int64)
        return out, _const(offset2bag), _const(zeros), _const(zeros.copy())
    kept = idx != padding_idx if padding_idx is not None else np.ones(idx.shape, bool)
    bag_size = np.bincount(offset2bag[kept], minlength=n_off)[:n_bags].astype(np.int64)
    if name == "max":
        # For each bag and column, the embedding row that gave the maximum.
        w = weight._data
        max_idx = np.zeros((n_bags, w.shape[1]), np.int64)
        for b in range(n_bags):
            rows = idx[offs[b]:ends[b]][kept[offs[b]:ends[b]]]
            if rows.size:
                max_idx[b] = rows[np.argmax(w[rows], axis=0)]
    else:
        max_idx = bag_size.copy()
    return out, _const(offset2bag), _const(bag_size), _const(max_idx)


def _float32_fast_path(weight):
    return weight._data.dtype == np.float32


def _const(a):
    return wrap(np.ascontiguousarray(a), False, None)


def bilinear(input1, input2, weight, bias=None):
    """``torch.bilinear``."""
    return F.bilinear(input1, input2, weight, bias)


def constant_pad_nd(input, pad, value=0):
    """``torch.constant_pad_nd(input, pad, value=0)``."""
    return F.pad(input, list(pad), "constant", value)


_CONV = {(3, False): F.conv1d, (4, False): F.conv2d, (5, False): F.conv3d}
_CONV_T = {3: F.conv_transpose1d, 4: F.conv_transpose2d, 5: F.conv_transpose3d}


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """``torch.convolution``: the N-d (transposed) convolution chosen by ``weight``'s rank."""
    nd = weight.dim()
    if nd not in _CONV_T:
        raise RuntimeError(f"Expected 3D (unbatched) or 4D (batched) input to conv, but got "
                           f"weight of size {list(weight.shape)}")
    k = nd - 2

    def per_dim(v):
        v = list(v) if isinstance(v, (list, tuple)) else [v]
        return tuple(v * k) if len(v) == 1 else tuple(v)
    if transposed:
        return _CONV_T[nd](input, weight, bias, per_dim(stride), per_dim(padding),
                           per_dim(output_padding), groups, per_dim(dilation))
    return _CONV[(nd, False)](input, weight, bias, per_dim(stride), per_dim(padding),
                              per_dim(dilation), groups)


def _gates(input, hx, w_ih, w_hh, b_ih, b_hh):
    return F.linear(input, w_ih, b_ih) + F.linear(hx, w_hh, b_hh)


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """``torch.lstm_cell(input, (h, c), w_ih, w_hh, b_ih, b_hh)`` -> ``(h', c')``."""
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    h, c = hx
    i, f, g, o = _gates(input, h, w_ih, w_hh, b_ih, b_hh).chunk(4, 1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c.tanh(), c


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """``torch.gru_cell``: gates r, z, n; ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``."""
    i_r, i_z, i_n = F.linear(input, w_ih, b_ih).chunk(3, 1)
    h_r, h_z, h_n = F.linear(hx, w_hh, b_hh).chunk(3, 1)
    r = (i_r + h_r).sigmoid()
    z = (i_z + h_z).sigmoid()
    n = (i_n + r * h_n).tanh()
    return n + z * (hx - n)


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """``torch.rnn_tanh_cell``: ``tanh(W_ih x + b_ih + W_hh h + b_hh)``."""
    return _gates(input, hx, w_ih, w_hh, b_ih, b_hh).tanh()


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """``torch.rnn_relu_cell``: ``relu(W_ih x + b_ih + W_hh h + b_hh)``."""
    return F.relu(_gates(input, hx, w_ih, w_hh, b_ih, b_hh))

