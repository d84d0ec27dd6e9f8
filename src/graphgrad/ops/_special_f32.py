"""Fast float32 paths of lgamma, digamma and ndtri (float32 in, float32 out).

The float64 kernels of ``_special_math`` reach full double precision with series and masks
per region; a float32 result needs far less. These run a short fixed chain of float64 array
operations on every element and round once, so the result is the float64 value rounded to
float32 (about as accurate as before, at a fraction of the cost):

- lgamma: Stirling's series at x + 8, shifted back by one log of a product, for x >= 1/2;
  the reflection formula below, by index for the elements that need it;
- digamma: six steps of the recurrence psi(x) = psi(x + 1) - 1/x for every element, then the
  asymptotic series at x + 6 >= 6; reflection below 1/2;
- ndtri: Giles' float32 erfinv at 2p - 1 with w = -log(4 p (1 - p)) computed from p (so small
  p keeps its digits); the far tails (|2p - 1| > 1 - 1e-7) by the float64 kernel.
"""

from __future__ import annotations

import math

import numpy as np

from . import _erf_kernels as _K
from . import _special_math as S

__all__ = ["lgamma", "digamma", "ndtri"]

# Stirling's series of lgamma at y >= 8: 1/(12 y) - 1/(360 y^3) + ... (in 1/y^2, times 1/y)
_STIRLING = (1.0 / 12, -1.0 / 360, 1.0 / 1260, -1.0 / 1680, 1.0 / 1188)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_LOG_PI = math.log(math.pi)
# psi(z) ~ log z - 1/(2z) - sum B_2k / (2k z^2k): the first five terms, enough for z >= 6
_PSI = (1.0 / 12, -1.0 / 120, 1.0 / 252, -1.0 / 240, 1.0 / 132)


_BLOCK = 1 << 15


def _blockwise(fn, x):
    """fn (float64 block -> float64 block) over cache-sized blocks of x, rounded to float32:
    small temporaries stay in cache and are reused by the allocator (fresh multi-megabyte
    arrays cost a page fault per 4 KiB on every call)."""
    x = np.asarray(x)
    flat = np.ascontiguousarray(x).reshape(-1)
    out = np.empty(flat.shape, np.float32)
    for i in range(0, flat.size, _BLOCK):
        out[i:i + _BLOCK] = fn(flat[i:i + _BLOCK].astype(np.float64))
    return out.reshape(x.shape)


def _lgamma_big(z):
    """lgamma(z) for z >= 1/2 (float64): Stirling's series at y = z + 8, shifted back by
    lgamma(z) = lgamma(z + 8) - log(z (z + 1) ... (z + 7)) (the product stays finite up to
    float32's largest value)."""
    prod = z.copy()
    for k in range(1, 8):
        prod *= z + k
    y = z + 8.0
    inv = 1.0 / y
    inv2 = inv * inv
    series = np.full_like(y, _STIRLING[-1])
    for c in _STIRLING[-2::-1]:
        series *= inv2
        series += c
    series *= inv
    return (y - 0.5) * np.log(y) - y + (_HALF_LOG_2PI + series) - np.log(prod)


def lgamma(x):
    return _blockwise(_lgamma_block, x)


def _lgamma_block(v):
    with np.errstate(all="ignore"):
        z = v.copy()
        low = np.flatnonzero(~(v >= 0.5))  # below 1/2, and NaN
        z.put(low, 1.0 - v.take(low))
        out = _lgamma_big(z)
        if low.size:
            w = v.take(low)
            s = np.abs(np.sin(math.pi * (w - np.round(w))))  # exact zero at the integers
            out.put(low, (_LOG_PI - np.log(s)) - out.take(low))
        out[np.isinf(v)] = np.inf
        out[(v == 1.0) | (v == 2.0)] = 0.0  # the roots, exactly as torch
    return out


def digamma(x):
    return _blockwise(_digamma_block, x)


def _digamma_block(v):
    with np.errstate(all="ignore"):
        z = v.copy()
        low = np.flatnonzero(~(v >= 0.5))
        z.put(low, 1.0 - v.take(low))
        acc = 1.0 / z
        for k in range(1, 6):
            acc += 1.0 / (z + k)
        y = z + 6.0
        inv2 = 1.0 / (y * y)
        series = np.full_like(y, _PSI[-1])
        for c in _PSI[-2::-1]:
            series *= inv2
            series += c
        series *= inv2
        out = np.log(y) - 0.5 / y - series - acc
        if low.size:
            w = v.take(low)
            r = w - np.round(w)
            # psi(x) = psi(1 - x) - pi / tan(pi x); NaN at the negative integers, -inf at +0
            val = out.take(low) - math.pi / np.tan(math.pi * r)
            val[r == 0] = np.nan
            zero = w == 0
            val[zero] = np.copysign(np.inf, -w[zero])
            out.put(low, val)
        out[v == np.inf] = np.inf
        out[v == -np.inf] = np.nan
    return out


def ndtri(p):
    p = np.asarray(p)
    flat = np.ascontiguousarray(p, dtype=np.float32).reshape(-1)
    with np.errstate(all="ignore"):
        x = flat * np.float32(2.0) - np.float32(1.0)
        w = np.float32(4.0) * flat * (np.float32(1.0) - flat)
        np.log(w, out=w)
        np.negative(w, out=w)
        a = w - np.float32(2.5)
        r = np.full_like(a, _K._GILES_CENTRAL[0])
        for c in _K._GILES_CENTRAL[1:]:
            r *= a
            r += c
        mid = np.flatnonzero((w >= 5.0) & (w < 16.0))
        if mid.size:
            b = np.sqrt(w.take(mid)) - np.float32(3.0)
            q = np.full_like(b, _K._GILES_TAIL[0])
            for c in _K._GILES_TAIL[1:]:
                q *= b
                q += c
            r.put(mid, q)
        r *= x
        r *= np.float32(math.sqrt(2.0))
        # the far tails, the edges 0 and 1 and everything outside [0, 1]: the float64 kernel
        far = np.flatnonzero(~(w < 16.0))
        if far.size:
            r.put(far, S.ndtri(flat.take(far).astype(np.float64)).astype(np.float32))
    return r.reshape(p.shape)
