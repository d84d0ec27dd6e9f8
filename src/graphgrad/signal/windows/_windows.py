"""The windows of ``torch.signal.windows``, written as torch writes them: a ``linspace`` (which
carries ``requires_grad``) followed by differentiable ops, so ``requires_grad=True`` gives a
non-leaf window with torch's grad_fn (``SinBackward0``, ``SumBackward1``, ...)."""

from __future__ import annotations

import math
from collections.abc import Iterable

from ... import _dtype
from ...ops import creation as _c
from ...ops import elementwise as _e
from ...ops import elementwise_special as _s

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _checks(name, M, dtype):
    """The dtype to use, after torch's checks (ValueError, as torch.signal raises)."""
    if dtype is None:
        dtype = _dtype.get_default_dtype()
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if dtype is not _dtype.float32 and dtype is not _dtype.float64:
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _empty(M, dtype, device, requires_grad):
    """Windows of length 0 (and 1 where torch special-cases it) are leaves."""
    return _c.ones(M, dtype=dtype, device=device, requires_grad=requires_grad)


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=None, device=None,
                requires_grad=False):
    """``exp(-|n - center| / tau)``.

    >>> import graphgrad as torch
    >>> torch.signal.windows.exponential(4)
    tensor([0.2231, 0.6065, 0.6065, 0.2231])
    """
    dtype = _checks("exponential", M, dtype)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _empty(0, dtype, device, requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / tau
    k = _c.linspace(-center * constant, (-center + (M - 1)) * constant, M, dtype=dtype,
                    device=device, requires_grad=requires_grad)
    return _e.exp(-_e.abs(k))


def cosine(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """``sin(pi (n + 0.5) / M)`` (SciPy's cosine window)."""
    dtype = _checks("cosine", M, dtype)
    if M == 0:
        return _empty(0, dtype, device, requires_grad)
    constant = math.pi / (M + 1 if not sym and M > 1 else M)
    k = _c.linspace(0.5 * constant, (0.5 + (M - 1)) * constant, M, dtype=dtype, device=device,
                    requires_grad=requires_grad)
    return _e.sin(k)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=None, device=None,
             requires_grad=False):
    """``exp(-(n / (2 std))^2)`` centred on the window."""
    dtype = _checks("gaussian", M, dtype)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _empty(0, dtype, device, requires_grad)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / (std * math.sqrt(2))
    k = _c.linspace(start * constant, (start + (M - 1)) * constant, M, dtype=dtype,
                    device=device, requires_grad=requires_grad)
    return _e.exp(-(k ** 2))


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=None, device=None,
           requires_grad=False):
    """``I0(beta sqrt(1 - (n - N/2)^2 / (N/2)^2)) / I0(beta)``, ``N = M - 1 if sym else M``."""
    dtype = _checks("kaiser", M, dtype)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M <= 1:
        return _empty(M, dtype, device, requires_grad)
    beta = _c.tensor(beta, dtype=dtype)
    start = -beta
    constant = 2.0 * beta / (M if not sym else M - 1)
    end = _e.minimum(beta, start + (M - 1) * constant)
    k = _c.linspace(start, end, M, dtype=dtype, device=device, requires_grad=requires_grad)
    return _s.i0(_e.sqrt(beta * beta - _e.pow(k, 2))) / _s.i0(beta)


def general_cosine(M, *, a, sym=True, dtype=None, layout=None, device=None,
                   requires_grad=False):
    """``sum_i (-1)^i a_i cos(2 pi i n / N)``, ``N = M - 1 if sym else M``."""
    dtype = _checks("general_cosine", M, dtype)
    if M <= 1:
        return _empty(M, dtype, device, requires_grad)
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    constant = 2 * math.pi / (M if not sym else M - 1)
    k = _c.linspace(0, (M - 1) * constant, M, dtype=dtype, device=device,
                    requires_grad=requires_grad)
    a_i = _c.tensor([(-1) ** i * w for i, w in enumerate(a)], dtype=dtype,
                    requires_grad=requires_grad)
    i = _c.arange(a_i.shape[0], dtype=a_i.dtype, requires_grad=a_i.requires_grad)
    return (a_i.unsqueeze(-1) * _e.cos(i.unsqueeze(-1) * k)).sum(0)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """``alpha - (1 - alpha) cos(2 pi n / N)``."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, device=device,
                          requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    return general_hamming(M, sym=sym, dtype=dtype, device=device, requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    dtype = _checks("blackman", M, dtype)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, device=device,
                          requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The triangle ``1 - |2n / N - 1|``."""
    dtype = _checks("bartlett", M, dtype)
    if M <= 1:
        return _empty(M, dtype, device, requires_grad)
    constant = 2 / (M if not sym else M - 1)
    k = _c.linspace(-1, -1 + (M - 1) * constant, M, dtype=dtype, device=device,
                    requires_grad=requires_grad)
    return 1 - _e.abs(k)


def nuttall(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, device=device, requires_grad=requires_grad)
