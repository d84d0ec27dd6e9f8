"""Fractional max pooling (Graham, 2014), as ``F.fractional_max_pool2d/3d``: windows of a
fixed size whose starts follow a pseudo-random increasing sequence, one per plane.

The starts are torch's ``generate_intervals`` (computed in the input's dtype, so float32 gives
torch's indices for the same ``_random_samples``); the maximum is picked in NumPy and the
output is a differentiable gather at its flat index, so the gradient goes to the maximum.
"""

from __future__ import annotations

import math

import numpy as np

from ..._tensor import Tensor
from ...ops.creation import tensor
from ...ops.random import rand

__all__ = ["fractional_max_pool2d", "fractional_max_pool2d_with_indices",
           "fractional_max_pool3d", "fractional_max_pool3d_with_indices"]

_DIM_NAMES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _intervals(sample, n_in, n_out, k):
    """Window starts (planes, n_out) for samples (planes,) in [0, 1): torch's sequence
    ``int((i + u) * alpha) - int(u * alpha)`` with the last window flush with the end."""
    seq = np.empty(sample.shape + (n_out,), dtype=np.int64)
    if n_out > 1:
        t = sample.dtype.type
        alpha = t(n_in - k) / t(n_out - 1)
        i = np.arange(n_out - 1).astype(sample.dtype)
        seq[:, :-1] = (((i + sample[:, None]) * alpha).astype(np.int64)
                       - (sample * alpha).astype(np.int64)[:, None])
    if n_out > 0:
        seq[:, -1] = n_in - k
    return seq


def _flat_argmax(x, starts, kernel, size):
    """Flat index into each (planes, *size) plane of the first maximum of every window."""
    d = len(kernel)
    planes = x.shape[0]
    out = tuple(s.shape[1] for s in starts)
    flat = np.zeros((planes,) + out + tuple(kernel), dtype=np.int64)
    for i, (s, k) in enumerate(zip(starts, kernel)):
        pos = s[:, :, None] + np.arange(k)  # (planes, out_i, k_i)
        shape = [planes] + [1] * (2 * d)
        shape[1 + i], shape[1 + d + i] = out[i], k
        flat += pos.reshape(shape) * math.prod(size[i + 1:])
    flat = flat.reshape((planes,) + out + (-1,))
    vals = np.take_along_axis(x.reshape(planes, -1), flat.reshape(planes, -1), axis=1)
    vals = vals.reshape(flat.shape)
    # torch's scan keeps the first maximum (a NaN wins, as in max pooling)
    k = np.argmax(np.where(np.isnan(vals), np.inf, vals), axis=-1)
    return np.take_along_axis(flat, k[..., None], axis=-1)[..., 0]


def _fractional(d, input, kernel_size, output_size, output_ratio, samples):
    name = f"fractional_max_pool{d}d"
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if input.dim() not in (d + 1, d + 2):
        raise RuntimeError(f"{name}(): Expected {d + 1}D or {d + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    size = tuple(input.shape[-d:])
    kernel = (int(kernel_size),) * d if isinstance(kernel_size, int) else tuple(kernel_size)
    if output_size is None:
        # torch's functional takes a sequence only (len() of a float raises TypeError there)
        ratio = tuple(output_ratio) if len(output_ratio) else ()
        if len(ratio) > d:
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple "
                             "of Ints.")
        output_size = tuple(int(size[i] * ratio[i]) for i in range(d))  # IndexError as torch
    out = (int(output_size),) * d if isinstance(output_size, int) else tuple(output_size)
    if input._data.dtype.kind != "f":
        raise NotImplementedError(f"\"{name}\" not implemented for "
                                  f"'{input.dtype.name.capitalize()}'")
    for what, n, o, k in zip(_DIM_NAMES[d], size, out, kernel):
        if o + k - 1 > n:
            where = name if d == 2 else f"{name}_out"
            raise RuntimeError(f"{where}(): pool {what} {k} too large relative to input "
                               f"{what} {n}")
    lead = tuple(input.shape[:-d])
    channels = input.shape[-d - 1]
    if samples is None:
        samples = rand(1 if input.dim() == d + 1 else input.shape[0], channels, d,
                       dtype=input.dtype)
    if samples._data.dtype != input._data.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.dim() != 3 or samples.shape[2] != d:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {d}; got "
                           f"{samples.shape[-1]}.")
    planes = math.prod(lead)
    u = samples._data[:planes // channels].reshape(planes, d)
    # 2-d reads its samples as (width, height), 3-d as (time, height, width), as torch does
    order = (1, 0) if d == 2 else (0, 1, 2)
    starts = [_intervals(u[:, order[i]], n, o, k)
              for i, (n, o, k) in enumerate(zip(size, out, kernel))]
    index = _flat_argmax(input._data.reshape((planes,) + size), starts, kernel, size)
    idx = tensor(index.reshape(planes, -1))
    y = input.reshape(planes, -1).gather(1, idx).reshape(lead + out)
    return y, idx.reshape(lead + out)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """(values, flat indices) of fractional max pooling over (N, C, H, W) or (C, H, W)."""
    return _fractional(2, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """Max pooling over pseudo-randomly placed ``kernel_size`` windows, giving
    ``output_size`` (or ``output_ratio`` times the input size).

    >>> import graphgrad as torch
    >>> x = torch.arange(16.).reshape(1, 1, 4, 4)
    >>> torch.nn.functional.fractional_max_pool2d(x, 2, output_size=3).shape
    torch.Size([1, 1, 3, 3])
    """
    y, idx = _fractional(2, input, kernel_size, output_size, output_ratio, _random_samples)
    return (y, idx) if return_indices else y


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """(values, flat indices) of fractional max pooling over (N, C, T, H, W) or (C, T, H, W)."""
    return _fractional(3, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """Max pooling over pseudo-randomly placed ``kernel_size`` volumes."""
    y, idx = _fractional(3, input, kernel_size, output_size, output_ratio, _random_samples)
    return (y, idx) if return_indices else y
