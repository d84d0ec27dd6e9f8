"""3-d pooling over (N, C, D, H, W) input: max (with torch's flat indices), average, adaptive
max and adaptive average, plus the ``*_with_indices`` spellings of adaptive max pooling.

The forwards of ``ops/pooling.py`` and the taps of ``ops/resample.py`` are N-d; these records
share them and differ only in torch's names (``MaxPool3DWithIndicesBackward0``, ...). The
average pool's backward op is its own record so that a second derivative keeps 3-d names.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from . import pooling as _p
from ._dispatch import apply, unary
from ._namespace import DIFF, RAW
from ._opdef import defop
from .resample import RESAMPLE, _adaptive_taps, _resample, _resample_pair

__all__ = ["max_pool3d", "max_pool3d_with_indices", "avg_pool3d", "adaptive_max_pool3d",
           "adaptive_avg_pool3d", "adaptive_max_pool1d_with_indices",
           "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices"]

MAX_POOL3D = defop("max_pool3d", _p._max_pool_fwd, _p._max_pool_vjp, kind="reduction",
                   save=("aux",), dtype_rule="same", node="MaxPool3DWithIndicesBackward0",
                   onnx="MaxPool")
ADAPTIVE_MAX_POOL3D = defop("adaptive_max_pool3d", _p._adaptive_max_fwd, _p._adaptive_max_vjp,
                            kind="reduction", save=("aux",), dtype_rule="same",
                            node="AdaptiveMaxPool3DBackward0")


def _avg_pool3d_vjp(ns, g, x_shape, **params):
    return ns.avg_pool3d_backward(g, x_shape, params)


def _avg_pool3d_backward_vjp(ns, g, shape, **params):
    return ns.avg_pool3d(g, params)


AVG_POOL3D = defop("avg_pool3d", _p._avg_pool_fwd_saving, _avg_pool3d_vjp, kind="reduction",
                   save=("aux",), dtype_rule="same", node="AvgPool3DBackward0",
                   onnx="AveragePool")
AVG_POOL3D_BACKWARD = defop("avg_pool3d_backward", _p._avg_pool_backward_fwd,
                            _avg_pool3d_backward_vjp, kind="reduction", dtype_rule="same",
                            node="AvgPool3DBackwardBackward0")

RAW.avg_pool3d = staticmethod(lambda x, params: _p._avg_pool_fwd(np, x, **params))
RAW.avg_pool3d_backward = staticmethod(
    lambda g, shape, params: _p._avg_pool_backward_fwd(np, g, shape, **params))
DIFF.avg_pool3d = staticmethod(lambda x, params: apply(AVG_POOL3D, (x,), params)[0])
DIFF.avg_pool3d_backward = staticmethod(
    lambda g, shape, params: unary(AVG_POOL3D_BACKWARD, g, dict(params, shape=shape)))

RESAMPLE["adaptive_avg3"] = _resample_pair("adaptive_avg_pool3d", "AdaptiveAvgPool3DBackward0")


def _check_5d(name, x):
    # torch's 3-d pools name the 4-d/5-d requirement before reading any dim (no IndexError)
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(x).__name__}")
    shape = x._data.shape
    if len(shape) not in (4, 5) or any(s == 0 for s in shape[-4:]):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """The maximum over each window of (N, C, D, H, W) or (C, D, H, W) input.

    >>> import graphgrad as torch
    >>> torch.max_pool3d(torch.arange(8.).reshape(1, 2, 2, 2), 2).tolist()
    [[[[7.0]]]]
    """
    _check_5d("max_pool3d", input)
    kernel, stride, padding, dilation = _p._pool_args("max_pool3d", input, 3, kernel_size,
                                                      stride, padding, dilation, ceil_mode)
    out, (index, _) = apply(MAX_POOL3D, (input,), {
        "kernel": kernel, "stride": stride, "padding": padding, "dilation": dilation,
        "ceil_mode": bool(ceil_mode)})
    return (out, _p._wrap_index(index)) if return_indices else out


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """The mean over each window of (N, C, D, H, W) or (C, D, H, W) input."""
    _check_5d("avg_pool3d", input)
    kernel, stride, padding, _ = _p._pool_args("avg_pool3d", input, 3, kernel_size, stride,
                                               padding, 1, ceil_mode)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    return apply(AVG_POOL3D, (input,), {
        "kernel": kernel, "stride": stride, "padding": padding, "ceil_mode": bool(ceil_mode),
        "count_include_pad": bool(count_include_pad), "divisor_override": divisor_override})[0]


def _check_adaptive3(name, x):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(x).__name__}")
    shape = x._data.shape
    if len(shape) not in (4, 5) or any(s == 0 for s in shape[-3:]):
        sep = ":" if name.startswith("adaptive_max") else ""
        raise RuntimeError(f"{name}(): Expected 4D or 5D tensor, but got{sep} {list(shape)}")


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """The maximum over torch's adaptive windows; ``return_indices`` adds the flat argmax."""
    _check_adaptive3("adaptive_max_pool3d", input)
    _p._float_only("adaptive_max_pool3d_cpu", input)
    out = _p._output_size(input, output_size, 3)
    y, (index, _) = apply(ADAPTIVE_MAX_POOL3D, (input,), {"output_size": out})
    return (y, _p._wrap_index(index)) if return_indices else y


def adaptive_avg_pool3d(input, output_size):
    """Averages over torch's adaptive windows, giving an ``output_size`` volume."""
    _check_adaptive3("adaptive_avg_pool3d", input)
    _p._float_only("adaptive_avg_pool3d_cpu", input)
    out = _p._output_size(input, output_size, 3)
    if out == (1, 1, 1):
        return input.mean((-3, -2, -1), keepdim=True)  # torch does the same (MeanBackward1)
    size = input._data.shape[-3:]
    return _resample("adaptive_avg3", input, tuple(_adaptive_taps(n, o)
                                                   for n, o in zip(size, out)))


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    return _p.adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return _p.adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    return adaptive_max_pool3d(input, output_size, True)
