"""Dropout: ``F.dropout``, ``F.dropout1d/2d/3d``, ``F.alpha_dropout`` and
``F.feature_alpha_dropout``, composed as torch's CPU kernel is: a Bernoulli(1 - p) mask drawn
from graphgrad's generator, scaled, then multiplied in (``MulBackward0``). Feature variants draw
one mask entry per (sample, channel). Outside training, or with ``p == 0``, the input itself is
returned.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..._tensor import wrap
from ...ops import _dispatch
from ...ops import random as _random

__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
           "feature_alpha_dropout"]

# SELU's negative saturation value -scale * alpha: where alpha dropout sends dropped units.
_ALPHA = 1.7580993408473766
_TORCH_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                "uint8": "Byte", "bool": "Bool"}


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _noise(input, p, feature, alpha):
    """(multiplier, shift or None) arrays in ``input``'s dtype, broadcasting against it."""
    x = input._data
    if feature:
        if x.ndim < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = x.shape[:2] + (1,) * (x.ndim - 2)
    else:
        shape = x.shape
    if x.dtype.kind not in "fV":  # V: bfloat16
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_TORCH_NAMES.get(x.dtype.name, x.dtype.name)}")
    dtype = x.dtype
    keep = (_random.default_generator._rng.random(shape) < 1.0 - p).astype(dtype)
    if not alpha:
        return keep * dtype.type(1.0 / (1.0 - p)), None
    a = 1.0 / np.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
    shift = (keep - 1) * (_ALPHA * a) + _ALPHA * a * p
    return keep * dtype.type(a), shift.astype(dtype)


def _dropout_impl(input, p, train, inplace, feature=False, alpha=False):
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        zero = wrap(np.zeros((), dtype=input._data.dtype), False, None)
        if _dispatch._tracer is not None:  # graphgrad.compile: a constant
            _dispatch._tracer.const(zero._data)
        return input.mul_(zero) if inplace else input * zero
    mult, shift = _noise(input, p, feature, alpha)
    if _dispatch._tracer is not None:  # graphgrad.compile: fresh masks on every replay
        like = wrap(np.broadcast_to(np.zeros((), input._data.dtype), input._data.shape), False,
                    None)
        _dispatch._tracer.random((mult, shift), lambda: _noise(like, p, feature, alpha),
                                 label="dropout")
    mult = wrap(mult, False, None)
    if inplace:
        input.mul_(mult)
        return input if shift is None else input.add_(wrap(shift, False, None))
    out = input * mult
    return out if shift is None else out + wrap(shift, False, None)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes each element with probability ``p`` and scales the rest by ``1 / (1 - p)``.

    >>> import graphgrad as torch
    >>> x = torch.ones(4)
    >>> torch.nn.functional.dropout(x, 0.5, training=False) is x
    True
    """
    _check_p(p)
    return _dropout_impl(input, p, training, inplace)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps SELU's zero mean and unit variance: dropped units take SELU's negative
    saturation value, then an affine map restores the moments."""
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, alpha=True)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """``alpha_dropout`` with one draw per (sample, channel)."""
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, feature=True, alpha=True)


def _feature(input, p, training, inplace, unbatched_dim):
    """Channel-wise dropout; an unbatched input is seen through a batch-of-one view."""
    if input.dim() == unbatched_dim:
        out = _dropout_impl(input.unsqueeze(0), p, training, inplace, feature=True)
        return input if inplace else out.squeeze(0)
    return _dropout_impl(input, p, training, inplace, feature=True)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of a (N, C, L) or (C, L) input with probability ``p``."""
    _check_p(p)
    nd = input.dim()
    if nd not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {nd}D input. "
                           "Note that dropout1d exists to provide channel-wise dropout on inputs "
                           "with 1 spatial dimension, a channel dimension, and an optional batch "
                           "dimension (i.e. 2D or 3D inputs).")
    return _feature(input, p, training, inplace, 2)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of a (N, C, H, W) input with probability ``p``; a 3-d input is
    read as (N, C, L), as torch does."""
    _check_p(p)
    nd = input.dim()
    if nd not in (3, 4):
        warnings.warn(f"dropout2d: Received a {nd}-D input to dropout2d, which is deprecated "
                      "and will result in an error in a future release. To retain the behavior "
                      "and silence this warning, please use dropout instead. Note that dropout2d "
                      "exists to provide channel-wise dropout on inputs with 2 spatial "
                      "dimensions, a channel dimension, and an optional batch dimension (i.e. "
                      "3D or 4D inputs).", stacklevel=2)
    if nd == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
                      "1D dropout behavior is desired - input is interpreted as shape (N, C, L), "
                      "where C is the channel dim. This behavior will change in a future release "
                      "to interpret the input as one without a batch dimension, i.e. shape "
                      "(C, H, W). To maintain the 1D channel-wise dropout behavior, please "
                      "switch to using dropout1d instead.", stacklevel=2)
    return _dropout_impl(input, p, training, inplace, feature=True)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of a (N, C, D, H, W) or (C, D, H, W) input with probability ``p``."""
    _check_p(p)
    nd = input.dim()
    if nd not in (4, 5):
        warnings.warn(f"dropout3d: Received a {nd}-D input to dropout3d, which is deprecated "
                      "and will result in an error in a future release. To retain the behavior "
                      "and silence this warning, please use dropout instead. Note that dropout3d "
                      "exists to provide channel-wise dropout on inputs with 3 spatial "
                      "dimensions, a channel dimension, and an optional batch dimension (i.e. "
                      "4D or 5D inputs).", stacklevel=2)
    if nd != 5:
        return _feature(input, p, training, inplace, nd)
    return _dropout_impl(input, p, training, inplace, feature=True)
