"""``make_tensor``: a random tensor of a dtype with values in ``[low, high)``, as torch.testing's.

Defaults per dtype follow torch (bool [0, 2), unsigned [0, 10), signed [-9, 10), floating
[-9, 9)); the draws come from graphgrad's default generator, so ``manual_seed`` repeats them.
"""

from __future__ import annotations

import collections.abc
import math
import warnings

from .. import _dtype
from .._finfo import finfo, iinfo
from ..ops.creation import _leaf
from ..ops.random import rand, randint

__all__ = ["make_tensor"]


def _low_high(low, high, dtype, lowest, highest, default_low, default_high):
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and dtype.is_floating_point:
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or complex "
                      "types is deprecated since 2.1 and will be removed in 2.3. Use "
                      "`torch.full(...)` instead.", FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), "
                         f"but {dtype} only supports [{lowest}, {highest})")
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if not dtype.is_floating_point:
        return math.ceil(low), math.ceil(high)
    return low, high


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    """A tensor of ``shape`` and ``dtype`` with values drawn uniformly from ``[low, high)``.

    >>> import graphgrad as torch
    >>> t = torch.testing.make_tensor(2, 3, dtype=torch.float32, device="cpu", low=-1, high=1)
    >>> t.shape, bool(((t >= -1) & (t < 1)).all())
    (torch.Size([2, 3]), True)
    """
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError(f"The parameters `noncontiguous` and `memory_format` are mutually "
                         f"exclusive, but got noncontiguous={noncontiguous} and "
                         f"memory_format={memory_format}")
    dtype = _dtype.to_dtype(dtype)
    if requires_grad and not dtype.is_floating_point:
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral "
                         f"dtypes, but got dtype={dtype}")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:
        # Twice the last dimension, then every other element: a strided view with an offset.
        shape = (*shape[:-1], 2 * shape[-1])
    if dtype is _dtype.bool:
        lo, hi = _low_high(low, high, dtype, 0, 2, 0, 2)
        result = randint(lo, hi, shape, dtype=dtype, device=device)
    elif not dtype.is_floating_point:
        info = iinfo(dtype)
        # randint's bounds go through int64, so int64's maximum itself cannot be drawn.
        highest = info.max + (1 if dtype is not _dtype.int64 else 0)
        lo, hi = _low_high(low, high, dtype, info.min, highest, -9, 10)
        result = randint(lo, hi, shape, dtype=dtype, device=device)
    else:
        info = finfo(dtype)
        lo, hi = _low_high(low, high, dtype, info.min, info.max, -9, 9)
        u = rand(shape, dtype=_dtype.float64, device=device)._data
        if hi - lo >= info.max:  # the width overflows: scale half-ranges, as torch does
            data = (lo / 2 + (hi / 2 - lo / 2) * u) * 2
        else:
            data = lo + (hi - lo) * u
        result = _leaf(data.astype(dtype.np), False)
    if noncontiguous:
        result = result[..., 1::2]
    if exclude_zero:
        zero = result._data == 0
        result._data[zero] = 1 if not dtype.is_floating_point else finfo(dtype).tiny
    if dtype.is_floating_point:
        result.requires_grad_(requires_grad)
    return result
