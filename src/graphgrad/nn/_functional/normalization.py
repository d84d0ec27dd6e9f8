"""``F.batch_norm``, ``F.instance_norm``, ``F.layer_norm``, ``F.group_norm`` and
``F.local_response_norm``: torch's argument checks and running statistics around the fused
normalization primitive of ``ops/normalization.py`` (see Note [Normalization primitive]).
"""

from __future__ import annotations

import numpy as np

from ...ops import _dispatch
from ...ops.normalization import BATCH_NORM, GROUP_NORM, LAYER_NORM, norm_apply
from ...ops.pooling import avg_pool2d
from ...ops.structure import pad

__all__ = ["batch_norm", "instance_norm", "layer_norm", "group_norm", "local_response_norm",
           "rms_norm"]

_TORCH_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                "uint8": "Byte", "bool": "Bool"}


def _check_float(x, kernel):
    dt = x._data.dtype
    if dt.kind not in "fV":  # V: bfloat16
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{_TORCH_NAMES.get(dt.name, dt.name)}'")


def _verify_batch_size(size):
    prod = size[0]
    for s in size[2:]:
        prod *= s
    if prod == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"{size}")


def _verify_spatial_size(size):
    prod = 1
    for s in size[2:]:
        prod *= s
    if prod == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                         f"{size}")


def _channels(input):
    if input.dim() < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[-{max(input.dim(), 1)}, {max(input.dim(), 1) - 1}], but got 1)")
    return input.shape[1]


def _check_sizes(c, **tensors):
    for name, t in tensors.items():
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")


def _update(stat, value, momentum):
    """``stat = (1 - momentum) * stat + momentum * value`` in place, computed in float64 as
    torch's accumulate type. NOTE: like torch's kernel this neither records nor bumps the
    buffer's version, so a graph that saved the buffer (eval mode) stays usable."""
    if stat is None:
        return
    if _dispatch._tracer is not None:
        # graphgrad.compile would replay the capture-time statistics: run this step eagerly
        _dispatch._tracer.state_update("BatchNorm's running-statistics update (train mode)")
    data = stat._data
    new = (1.0 - momentum) * data.astype(np.float64) + momentum * value.reshape(data.shape)
    np.copyto(data, new, casting="unsafe")


def _normalize_with(x, mean, var, weight, bias, shape, eps):
    """``(x - mean) / sqrt(var + eps) * weight + bias`` with per-channel statistics (the
    evaluation mode): two full-size ops, ``x * scale + shift``, as torch's CPU kernel."""
    scale = (var + eps).rsqrt()
    if weight is not None:
        scale = scale * weight
    shift = -mean * scale
    if bias is not None:
        shift = shift + bias
    return x * scale.reshape(shape) + shift.reshape(shape)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Normalizes each channel (dim 1) over the batch and spatial dims.

    In training the batch statistics are used and ``running_mean``/``running_var`` (when given)
    move towards them by ``momentum``, the variance unbiased; in evaluation the running
    statistics are used.

    >>> import graphgrad as torch
    >>> x = torch.tensor([[1.0, 2.0], [3.0, 6.0]])
    >>> rm, rv = torch.zeros(2), torch.ones(2)
    >>> torch.nn.functional.batch_norm(x, rm, rv, training=True, eps=0.0001)
    tensor([[-1.0000, -1.0000],
            [ 1.0000,  1.0000]])
    >>> rm, rv
    (tensor([0.2000, 0.4000]), tensor([1.1000, 1.7000]))
    """
    if training:
        _verify_batch_size(input.shape)
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    _check_float(input, "batch_norm")
    c = _channels(input)
    _check_sizes(c, weight=weight, bias=bias, running_mean=running_mean,
                 running_var=running_var)
    shape = (c,) + (1,) * (input.dim() - 2)
    if not training:
        if running_mean is None:
            raise RuntimeError("running_mean must be defined in evaluation mode")
        if running_var is None:
            raise RuntimeError("running_var must be defined in evaluation mode")
        return _normalize_with(input, running_mean, running_var, weight, bias, shape, eps)
    axes = (0,) + tuple(range(2, input.dim()))
    out, (mean, var, _) = norm_apply(BATCH_NORM, input, weight, bias, axes, shape, eps)
    if running_mean is not None or running_var is not None:
        n = input.numel() // c
        _update(running_mean, mean, momentum)
        _update(running_var, var * (n / (n - 1)), momentum)
    return out


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Normalizes each (sample, channel) plane over its spatial dims; with running statistics
    given, they move towards the batch average of the per-instance ones."""
    if use_input_stats:
        _verify_spatial_size(input.shape)
    _check_float(input, "batch_norm")
    n, c = input.shape[0], _channels(input)
    _check_sizes(c, weight=weight, bias=bias, running_mean=running_mean,
                 running_var=running_var)
    shape = (c,) + (1,) * (input.dim() - 2)
    if not use_input_stats:
        if running_mean is None or running_var is None:
            raise RuntimeError("Expected running_mean and running_var to be defined when "
                               "use_input_stats is false")
        return _normalize_with(input, running_mean, running_var, weight, bias, shape, eps)
    axes = tuple(range(2, input.dim()))
    out, (mean, var, _) = norm_apply(BATCH_NORM, input, weight, bias, axes, shape, eps)
    if running_mean is not None or running_var is not None:
        count = input.numel() // (n * c)
        _update(running_mean, mean.reshape(n, c).mean(0), momentum)
        _update(running_var, (var.reshape(n, c) * (count / (count - 1))).mean(0), momentum)
    return out


def _check_normalized(input, normalized_shape, **params):
    """``normalized_shape`` as a tuple, after torch's checks against the input and params."""
    if isinstance(normalized_shape, int) or not isinstance(normalized_shape, (tuple, list)):
        raise TypeError(f"layer_norm(): argument 'normalized_shape' (position 2) must be tuple "
                        f"of ints, not {type(normalized_shape).__name__}")
    shape = tuple(int(s) for s in normalized_shape)
    k, nd = len(shape), input.dim()
    if nd < k or tuple(input.shape[nd - k:]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*, {', '.join(str(s) for s in shape)}], but got input of size"
                           f"{list(input.shape)}")
    for name, t in params.items():
        if t is not None and tuple(t.shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but "
                               f"got {name} of shape {list(t.shape)} and normalized_shape = "
                               f"{list(shape)}")
    return shape


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalizes over the trailing ``normalized_shape`` dims, then applies the elementwise
    ``weight`` and ``bias`` (each of shape ``normalized_shape``).

    >>> import graphgrad as torch
    >>> torch.nn.functional.layer_norm(torch.tensor([[1.0, 3.0]]), (2,), eps=0.0)
    tensor([[-1.,  1.]])
    """
    shape = _check_normalized(input, normalized_shape, weight=weight, bias=bias)
    k, nd = len(shape), input.dim()
    _check_float(input, "LayerNormKernelImpl")
    axes = tuple(range(nd - k, nd))
    return norm_apply(LAYER_NORM, input, weight, bias, axes, shape, eps)[0]


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``x / sqrt(mean(x**2) + eps) * weight`` over the trailing ``normalized_shape`` dims;
    ``eps=None`` is the machine epsilon of ``input``'s dtype (a composite, as torch's)."""
    shape = _check_normalized(input, normalized_shape, weight=weight)
    _check_float(input, "rms_norm")
    if eps is None:
        eps = float(np.finfo(input._data.dtype).eps)
    dims = tuple(range(input.dim() - len(shape), input.dim()))
    out = input * ((input * input).mean(dims, keepdim=True) + eps).rsqrt()
    return out if weight is None else out * weight


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Splits the channels into ``num_groups`` groups and normalizes each group of each sample
    over its channels and spatial dims; ``weight`` and ``bias`` are per channel."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.dim()}")
    n, c = input.shape[:2]
    sp = tuple(input.shape[2:])
    _verify_batch_size([n * c // num_groups, num_groups] + list(sp))
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape {list(t.shape)} and "
                               f"input of shape {list(input.shape)}")
    _check_float(input, "GroupNormKernelImpl")
    x = input.reshape((n, num_groups, c // num_groups) + sp)
    wshape = (num_groups, c // num_groups) + (1,) * len(sp)
    out = norm_apply(GROUP_NORM, x, weight, bias, tuple(range(2, x.dim())), wshape, eps)[0]
    return out.reshape(input.shape)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """``x / (k + alpha * mean of x**2 over size neighbouring channels) ** beta``."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input "
                         f"(got {dim} dimensions)")
    if input.numel() == 0:
        return input
    n, c = input.shape[:2]
    # torch pools a (N, 1, C, *spatial) view with a (size, 1, ...) window; flattening the
    # spatial dims into one gives the same windows with a 2-d pool
    div = (input * input).reshape(n, 1, c, -1)
    div = pad(div, (0, 0, size // 2, (size - 1) // 2))
    div = avg_pool2d(div, (size, 1), stride=1).reshape(input.shape)
    return input / (div * alpha + k) ** beta
