"""Spatial functions composed from existing ops, as ``torch.nn.functional``: power-average
pooling (``lp_pool1d/2d/3d``), ``max_unpool1d/2d/3d``, ``pixel_shuffle``/``pixel_unshuffle``,
``channel_shuffle``, the deprecated ``upsample*`` spellings of ``interpolate`` and ``pdist``.

Each is a reshape/permute, a scatter or a pooling call, so its derivatives come from those ops.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..._tensor import Tensor
from ...ops.creation import tensor, zeros
from ...ops.elementwise import relu, sign
from ...ops.linalg_norms import vector_norm
from ...ops.pooling import avg_pool1d, avg_pool2d, max_pool1d, max_pool2d
from ...ops.pooling3d import avg_pool3d, max_pool3d
from ...ops.resample import interpolate

__all__ = ["lp_pool1d", "lp_pool2d", "lp_pool3d", "max_unpool1d", "max_unpool2d",
           "max_unpool3d", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle",
           "native_channel_shuffle", "upsample", "upsample_nearest", "upsample_bilinear",
           "pdist"]


def _ntuple(value, d):
    if isinstance(value, (int, np.integer)):
        return (int(value),) * d
    return tuple(value)


# -- power-average pooling -------------------------------------------------------------------

def _lp_pool(d, max_pool, avg_pool, input, norm_type, kernel_size, stride, ceil_mode):
    """torch's ``lp_pool{d}d``: ``(sum over the window of x**p) ** (1/p)``, through avg_pool
    times the window size (a negative window sum, possible for odd p, is clamped to 0)."""
    if isinstance(norm_type, (int, float)):
        if norm_type == math.inf:
            return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -math.inf:
            return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if stride is not None:
        out = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    # torch multiplies by kernel_size itself in 1-d (a 1-tuple there fails as in torch)
    size = kernel_size if d == 1 else math.prod(_ntuple(kernel_size, d))
    return (sign(out) * relu(out.abs())).mul(size).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """The p-norm over sliding windows of (N, C, L) or (C, L) input."""
    return _lp_pool(1, max_pool1d, avg_pool1d, input, norm_type, kernel_size, stride,
                    ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """The p-norm over sliding windows of (N, C, H, W) or (C, H, W) input."""
    return _lp_pool(2, max_pool2d, avg_pool2d, input, norm_type, kernel_size, stride,
                    ceil_mode)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """The p-norm over sliding windows of (N, C, D, H, W) or (C, D, H, W) input.

    >>> import graphgrad as torch
    >>> torch.nn.functional.lp_pool3d(torch.ones(1, 2, 2, 2), 2, 2).tolist()
    [[[[2.8284270763397217]]]]
    """
    return _lp_pool(3, max_pool3d, avg_pool3d, input, norm_type, kernel_size, stride,
                    ceil_mode)


# -- max unpooling ---------------------------------------------------------------------------

def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    """The spatial output size, as torch's ``_unpool_output_size``."""
    d = len(kernel_size)
    in_size = input.shape[-d:]
    default = [(in_size[i] - 1) * stride[i] + kernel_size[i] - 2 * padding[i] for i in range(d)]
    if output_size is None:
        ret = default
    else:
        output_size = list(output_size)
        if len(output_size) == d + 2:
            output_size = output_size[2:]
        if len(output_size) != d:
            raise ValueError(f"output_size should be a sequence containing {d} or {d + 2} "
                             f"elements, but it has a length of '{len(output_size)}'")
        for i in range(d):
            lo, hi = default[i] - stride[i], default[i] + stride[i]
            if not lo < output_size[i] < hi:
                raise ValueError(f'invalid output_size "{output_size}" (dim {i} must be '
                                 f"between {lo} and {hi})")
        ret = output_size
    for i in range(d):
        if ret[i] < 0:
            raise ValueError(f"max_unpooling: output_size must contain non-negative spatial "
                             f"dimensions, but got output_size[{i}]={ret[i]}")
    return [int(v) for v in ret]


def _max_unpool(name, d, input, indices, kernel_size, stride, padding, output_size):
    """Scatters ``input`` to the flat positions ``indices`` of a zero volume per channel; the
    gradient is the gather at the same positions, as torch's ``MaxUnpool*Backward``."""
    if not isinstance(input, Tensor) or not isinstance(indices, Tensor):
        raise TypeError(f"{name}(): argument 'input' and 'indices' must be Tensor")
    kernel = _ntuple(kernel_size, d)
    stride = kernel if stride is None else _ntuple(stride, d)
    padding = _ntuple(padding, d)
    size = _unpool_output_size(input, kernel, stride, padding, output_size)
    if indices.dtype.name != "int64":
        raise RuntimeError(f"elements in indices should be type int64 but got: "
                           f"{str(indices.dtype).replace('torch.', '')}")
    if input.dim() not in (d + 1, d + 2):
        raise RuntimeError(f"Input to {name} should be a {d + 1}d or {d + 2}d Tensor, but "
                           f"got a tensor with {input.dim()} dimensions.")
    if tuple(input.shape) != tuple(indices.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    lead = tuple(input.shape[:-d])
    n = math.prod(size)
    flat_idx = indices.flatten(-d) if d > 1 else indices
    src = input.flatten(-d) if d > 1 else input
    if flat_idx.numel():
        bad = flat_idx._data[(flat_idx._data < 0) | (flat_idx._data >= n)]
        if bad.size:
            raise RuntimeError(f"Found an invalid max index: {int(bad.flat[0])} (output "
                               f"volumes are of size {'x'.join(map(str, size))}")
    out = zeros(lead + (n,), dtype=input.dtype)
    return out.scatter(-1, flat_idx, src).reshape(lead + tuple(size))


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool1d``: each value goes back to its index, zeros
    elsewhere."""
    return _max_unpool("max_unpool1d", 1, input, indices, kernel_size, stride, padding,
                       output_size)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool2d``."""
    return _max_unpool("max_unpool2d", 2, input, indices, kernel_size, stride, padding,
                       output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool3d``."""
    return _max_unpool("max_unpool3d", 3, input, indices, kernel_size, stride, padding,
                       output_size)


# -- pixel and channel shuffles --------------------------------------------------------------

def _check_shuffle(name, input, factor, what):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    if input.dim() < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input "
                           f"with {input.dim()} dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {factor}")


def pixel_shuffle(input, upscale_factor):
    """(*, C * r * r, H, W) -> (*, C, H * r, W * r): channels become sub-pixel positions.

    >>> import graphgrad as torch
    >>> torch.pixel_shuffle(torch.arange(4.).reshape(4, 1, 1), 2).tolist()
    [[[0.0, 1.0], [2.0, 3.0]]]
    """
    r = int(upscale_factor)
    _check_shuffle("pixel_shuffle", input, r, "upscale_factor")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    k = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(k), k, k + 3, k + 1, k + 4, k + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H * r, W * r) -> (*, C * r * r, H, W): the inverse of ``pixel_shuffle``."""
    r = int(downscale_factor)
    _check_shuffle("pixel_unshuffle", input, r, "downscale_factor")
    *lead, c, h, w = input.shape
    for dim, n, what in ((-2, h, "height"), (-1, w, "width")):
        if n % r:
            raise RuntimeError(f"pixel_unshuffle expects {what} to be divisible by "
                               f"downscale_factor, but input.size({dim})={n} is not divisible "
                               f"by {r}")
    k = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(k), k, k + 2, k + 4, k + 1, k + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


def channel_shuffle(input, groups):
    """(N, g * k, *) -> channels reordered as the transpose of a (g, k) grid (ShuffleNet)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"channel_shuffle(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    g = int(groups)
    if g <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{g}")
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    n, c, *rest = input.shape
    if c % g:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {g} groups.")
    return input.reshape(n, g, c // g, *rest).transpose(1, 2).reshape(n, c, *rest)


native_channel_shuffle = channel_shuffle


# -- deprecated interpolate spellings --------------------------------------------------------

def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated: ``interpolate`` (torch warns the same way)."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode='nearest')``."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)``."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# -- pairwise distances ----------------------------------------------------------------------

def pdist(input, p=2):
    """The p-norm distance between every pair of rows of an (N, M) input, as the
    upper triangle (i < j) of the distance matrix, row by row: N * (N - 1) / 2 values.

    >>> import graphgrad as torch
    >>> torch.pdist(torch.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]])).tolist()
    [5.0, 1.0, 4.242640495300293]
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"pdist(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if input._data.dtype.kind != "f":
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    i, j = np.triu_indices(input.shape[0], 1)
    diff = input[tensor(i)] - input[tensor(j)]
    return vector_norm(diff, p, dim=1)
