"""torch's window factories: hann_window, hamming_window, blackman_window, bartlett_window and
kaiser_window. They are creation functions (leaves, like ``arange``), computed with the same
arithmetic steps as ATen's kernels in the target dtype; ``periodic=True`` computes a window
one longer and drops its last point. (The differentiable ``torch.signal.windows`` are in
graphgrad/signal.)
"""

from __future__ import annotations

import operator

import numpy as np

from .. import _dtype
from .._device import check_device
from ._special_math import i0 as _i0
from .creation import _leaf

__all__ = ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
           "kaiser_window"]

# C++ spellings torch prints in its TensorOptions error message.
_CPP_NAMES = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "bool": "bool"}


def _checks(name, n, dtype, device):
    """(length, NumPy dtype) after torch's argument checks."""
    if isinstance(n, bool) or not isinstance(n, int):
        try:
            n = operator.index(n)
        except TypeError:
            raise TypeError(f"{name}(): argument 'window_length' (position 1) must be int, not "
                            f"{type(n).__name__}") from None
    check_device(device)
    d = _dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype)
    if d.is_complex:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '"
                                  f"{'ComplexFloat' if d.itemsize == 8 else 'ComplexDouble'}'")
    if not d.is_floating_point:
        raise RuntimeError(
            f"{name} expects floating point dtypes, got: TensorOptions(dtype="
            f"{_CPP_NAMES.get(d.name, d.name)}, device=cpu, layout=Strided (default), "
            "requires_grad=false (default), pinned_memory=false, memory_format=(nullopt))")
    if n < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={n}")
    return n, d.np


def _trivial(n, dt, requires_grad):
    """Lengths 0 and 1 (an empty window, a single 1)."""
    return _leaf(np.ones(n, dtype=dt), requires_grad) if n <= 1 else None


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, pin_memory=False, requires_grad=False):
    """``alpha - beta * cos(2 pi n / (N - 1))``.

    >>> import graphgrad as torch
    >>> torch.hamming_window(4, periodic=False)
    tensor([0.0800, 0.7700, 0.7700, 0.0800])
    """
    n, dt = _checks("hamming_window", window_length, dtype, device)
    out = _trivial(n, dt, requires_grad)
    if out is not None:
        return out
    m = n + 1 if periodic else n
    w = np.arange(m, dtype=dt) * dt.type(2.0 * np.pi / (m - 1))
    w = np.cos(w) * dt.type(-beta) + dt.type(alpha)
    return _leaf(np.ascontiguousarray(w[:n]), requires_grad)


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                pin_memory=False, requires_grad=False):
    """``0.5 - 0.5 cos(2 pi n / (N - 1))`` (``hamming_window`` with alpha = beta = 0.5).

    >>> import graphgrad as torch
    >>> torch.hann_window(4)
    tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    n, _ = _checks("hann_window", window_length, dtype, device)
    return hamming_window(n, periodic, 0.5, 0.5, dtype=dtype, device=device,
                          requires_grad=requires_grad)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    """``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``."""
    n, dt = _checks("blackman_window", window_length, dtype, device)
    out = _trivial(n, dt, requires_grad)
    if out is not None:
        return out
    m = n + 1 if periodic else n
    w = np.arange(m, dtype=dt) * dt.type(np.pi / (m - 1))
    w = np.cos(w * dt.type(4)) * dt.type(0.08) - np.cos(w * dt.type(2)) * dt.type(0.5) \
        + dt.type(0.42)
    return _leaf(np.ascontiguousarray(w[:n]), requires_grad)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    """The triangle ``1 - |2n / (N - 1) - 1|``."""
    n, dt = _checks("bartlett_window", window_length, dtype, device)
    out = _trivial(n, dt, requires_grad)
    if out is not None:
        return out
    m = n + 1 if periodic else n
    w = np.arange(m, dtype=dt) * dt.type(2.0 / (m - 1))
    half = ((m - 1) >> 1) + 1
    w[half:] = dt.type(2) - w[half:]
    return _leaf(np.ascontiguousarray(w[:n]), requires_grad)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, pin_memory=False, requires_grad=False):
    """``I0(beta sqrt(1 - ((n - a) / a)^2)) / I0(beta)`` with ``a = (N - 1) / 2``."""
    n, dt = _checks("kaiser_window", window_length, dtype, device)
    out = _trivial(n, dt, requires_grad)
    if out is not None:
        return out
    m = n + 1 if periodic else n
    # NOTE: ATen evaluates the Bessel function in the op's math type; float64 here then rounding
    # once is within one unit of the last place of it.
    alpha = (m - 1) / 2.0
    r = (np.arange(m, dtype=np.float64) - alpha) / alpha
    w = _i0(beta * np.sqrt(np.maximum(1.0 - r * r, 0.0))) / _i0(np.float64(beta))
    return _leaf(np.ascontiguousarray(w[:n].astype(dt)), requires_grad)
