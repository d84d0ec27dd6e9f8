"""Vectorised error functions: erf, erfc, erfcx and the normal CDF used by exact GELU.

float64 (and anything that is not float32 or narrower): erf(x) by its Taylor series for
|x| < 1/2; above, erfc(|x|) = exp(-x^2) erfcx(|x|) with erfcx a polynomial per piece of
[1/2, inf) (coefficients fitted by ``tools/fit_erf.py`` against mpmath; a few ulp) and exp(-x^2)
split so that the rounding of x^2 does not cost relative accuracy in the far tail.

float32 (and float16/bfloat16, computed in float32 and rounded, as torch's CPU kernels):
erf(x) = tanh(x P(x^2)) on x clamped to [-4, 4], one formula with no branches, so that it costs
about twenty NumPy passes; relative error below 2.2e-7 (2-4 ulp), exact signed zero, erf(+-inf) =
+-1, NaN in NaN out. Arrays are processed in cache-sized blocks.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["erf", "erfc", "erfcx", "erf64", "erfc64", "erfcx64", "erfinv_f32", "gelu_f32",
           "gelu_grad_f32"]

_BLOCK = 1 << 16
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
# erf(x) / x = sum_n (-1)^n x^(2n) / (n! (2n + 1)) * 2 / sqrt(pi): 13 terms reach 1 ulp below 1/2
_TAYLOR = tuple(_TWO_OVER_SQRT_PI * (-1) ** n / (math.factorial(n) * (2 * n + 1))
                for n in range(13))
# (lo, hi, in 1/x, scale, shift, coefficients): on lo <= |x| < hi, with t = x or 1/x and
# y = t * scale + shift in [-1, 1], erfcx(x) = P(y) (or P(y) / x for the 1/x pieces).
_PIECES = (
    (0.5, 1.0, False, 4.0, -3.0,
     (0.5069376502931449, -0.09199317291394801, 0.014434883221954232,
     -0.002028688468689313, 0.0002609005567605294, -3.114966981324629e-05,
     3.4885738558365633e-06, -3.693567245832695e-07, 3.719547052583039e-08,
     -3.579289220567716e-09, 3.305885343252159e-10, -3.0095037573119043e-11,
     2.5920599000528456e-12)),
    (1.0, 2.0, True, 4.0, -3.0,
     (0.4681795920385406, -0.042270244446359906, 0.001209242039285439,
     0.0006295812456501168, -0.0001971317781523832, 3.680539414409601e-05,
     -4.423081992013801e-06, 3.42126284635924e-08, 1.6981961870055076e-07,
     -6.18628710036262e-08, 1.5028494404489833e-08, -2.8140387797748173e-09,
     3.51104745277553e-10, 3.8244252209551636e-11, -2.8489921533036976e-11)),
    (2.0, 4.0, True, 8.0, -3.0,
     (0.5308603493169751, -0.018948191196765832, -0.001438124808000097,
     0.0003462266290516082, -2.83891422124108e-05, -1.1538101043345739e-06,
     7.486044946658499e-07, -1.2192253580067812e-07, 8.114822280802514e-09,
     1.2730191567555944e-09, -5.194000785024859e-10, 8.77184547221077e-11,
     -6.050981937733013e-12)),
    (4.0, 8.0, True, 16.0, -3.0,
     (0.554754113146394, -0.005993561956300791, -0.0008157912375093341,
     5.2213305759662994e-05, 1.2379957849296271e-06, -4.0270172887990613e-07,
     2.0514151910511207e-08, 1.7813594599402904e-09, -3.6765319677556364e-10,
     1.8011059310651956e-11, 2.4780177909633494e-12, -5.014655357626907e-13)),
    (8.0, np.inf, True, 16.0, -1.0,
     (0.5630940451988935, -0.0021784105810957887, -0.0010641152761701864,
     2.461201292647819e-05, 5.568155786636956e-06, -3.336198967945902e-07,
     -4.182000498745286e-08, 5.309994044466748e-09, 3.193375730514703e-10,
     -9.393663624734923e-11, -3.671618564737857e-13, 1.6543211245334532e-12,
     -7.336353746723034e-14)),
)
# float32: atanh(erf(x)) / x as a polynomial in x^2 on [0, 16] (weighted for erf's relative error)
# (degree 7: a higher degree gains nothing in float32 and leaves erf(4) short of 1)
_F32 = tuple(np.float32(c) for c in (
    1.1283792609149386, 0.10276948461915993, -0.00019380427986581125, -0.0006167643519957061,
    8.566388683243826e-05, -5.069398783571927e-06, 5.957259287449374e-08, 4.078590238503678e-09))
# GELU: atanh(erf(x / sqrt 2)) / x in x^2 on [0, 32], weighted also for GELU's absolute error
# on the negative side, where x Phi(x) = x (1 + tanh) / 2 cancels
_F32_HALF = tuple(np.float32(c) for c in (
    0.7978845860302475, 0.036335244497884944, -3.6129718930961786e-05, -5.291418735101748e-05,
    3.1674193027211442e-06, 9.95204134002935e-09, -1.2239680849050217e-08,
    7.488731112016137e-10, -2.0101960976982434e-11, 2.0945214638290428e-13))
# float32 erfc for x >= 1/2: erfcx(x) = t P(2.5 t - 1) with t = 2 / (2 + x) in (0, 0.8]
_F32_TAIL = tuple(np.float32(c) for c in (
    0.44750287837491176, 0.23215039497189258, 0.08096954428678163, 0.012959011315836344,
    -0.0027608189525407225, -0.0015058226478059209, 0.0001622870041099844,
    0.0001720176750950486, -2.3381867836746996e-05, -1.6534049223082548e-05,
    3.3525391870625755e-06))
_LOW_MASK_F32 = np.uint32(0xFFFFF000)
_F32_CLAMP = np.float32(4.0)
# past 6.25, x Q(x^2) > 11 and NumPy's float32 tanh is exactly +-1 (at 9.9 it is still 1 - 6e-8,
# which would leave GELU at -1e4 at -6e-4 instead of 0)
_F32_CLAMP_HALF = np.float32(6.25)
_F32_INV_SQRT_2PI = np.float32(1.0 / math.sqrt(2.0 * math.pi))
_LOW_MASK = np.uint64(0xFFFFFFFF00000000)


def _horner(coef, t):
    r = np.full_like(t, coef[-1])
    for c in coef[-2::-1]:
        r *= t
        r += c
    return r


# -- float32 ------------------------------------------------------------------------------
def _flat_1d(fn):
    """Runs a kernel on a C-contiguous array of at least one dimension; the result keeps x's
    shape (0-d included: NumPy's ufuncs would hand back scalars)."""
    def run(x):
        x = np.asarray(x)
        flat = np.ascontiguousarray(x.reshape(-1))
        return fn(flat).reshape(x.shape)
    run.__name__ = fn.__name__
    run.__doc__ = fn.__doc__
    return run


def _blocks(flat, fn):
    """Applies ``fn(block) -> array`` over cache-sized blocks of a flat array."""
    out = np.empty_like(flat)
    for i in range(0, flat.size, _BLOCK):
        out[i:i + _BLOCK] = fn(flat[i:i + _BLOCK])
    return out


@_flat_1d
def gelu_f32(x):
    """Exact GELU x Phi(x) for float32 x, with Phi(x) = (1 + tanh(x Q(x^2))) / 2."""
    def one(b):
        c = np.clip(b, -_F32_CLAMP_HALF, _F32_CLAMP_HALF)
        s = c * c
        r = np.full_like(s, _F32_HALF[-1])
        for k in _F32_HALF[-2::-1]:
            r *= s
            r += k
        r *= c
        np.tanh(r, out=r)
        h = b * np.float32(0.5)
        r *= h
        r += h
        return r
    if x.size <= _BLOCK:
        return one(x)
    return _blocks(x, one)


def gelu_grad_f32(x, g):
    """g * d/dx (x Phi(x)) = g (Phi(x) + x phi(x)) for float32 x and g of one shape."""
    xf = np.ascontiguousarray(x.reshape(-1))
    gf = np.ascontiguousarray(g.reshape(-1))
    out = np.empty_like(xf)
    for i in range(0, xf.size, _BLOCK):
        b, gb = xf[i:i + _BLOCK], gf[i:i + _BLOCK]
        c = np.clip(b, -_F32_CLAMP_HALF, _F32_CLAMP_HALF)
        s = c * c
        r = np.full_like(s, _F32_HALF[-1])
        for k in _F32_HALF[-2::-1]:
            r *= s
            r += k
        r *= c
        np.tanh(r, out=r)
        r += np.float32(1.0)
        r *= np.float32(0.5)  # Phi(x)
        e = np.multiply(b, b, out=s)
        e *= np.float32(-0.5)
        np.exp(e, out=e)
        e *= _F32_INV_SQRT_2PI
        e *= b  # x phi(x)
        r += e
        np.multiply(r, gb, out=out[i:i + _BLOCK])
    return out.reshape(x.shape)


# Giles (2010), "Approximating the erfinv function": erfinv(x) / x from w = -log(1 - x^2),
# made for single precision (about 2.5e-7 relative here, in float32 arithmetic)
_GILES_CENTRAL = tuple(np.float32(c) for c in (
    2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
    -0.00125372503, -0.00417768164, 0.246640727, 1.50140941))
_GILES_TAIL = tuple(np.float32(c) for c in (
    -0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
    -0.0076224613, 0.00943887047, 1.00167406, 2.83297682))


@_flat_1d
def erfinv_f32(x):
    """erfinv for float32 x: Giles' single-precision approximation; +-inf at +-1, NaN outside."""
    one = np.float32(1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        w = (one - x) * (one + x)
        np.log(w, out=w)
        np.negative(w, out=w)
        a = w - np.float32(2.5)
        p = np.full_like(a, _GILES_CENTRAL[0])
        for c in _GILES_CENTRAL[1:]:
            p *= a
            p += c
        flat = p
        i = np.flatnonzero(w >= 5.0)  # |x| > 0.9966: few elements, by index
        if i.size:
            b = np.sqrt(w.take(i)) - np.float32(3.0)
            q = np.full_like(b, _GILES_TAIL[0])
            for c in _GILES_TAIL[1:]:
                q *= b
                q += c
            flat.put(i, q)
        p *= x
    edge = np.flatnonzero(np.abs(x) == one)
    if edge.size:
        flat.put(edge, np.copysign(np.float32(np.inf), x.take(edge)))
    return p


@_flat_1d
def _erf_f32(x):
    def one(b):
        c = np.clip(b, -_F32_CLAMP, _F32_CLAMP)
        s = c * c
        r = np.full_like(s, _F32[-1])
        for k in _F32[-2::-1]:
            r *= s
            r += k
        r *= c
        return np.tanh(r, out=r)
    if x.size <= _BLOCK:
        return one(x)
    return _blocks(x, one)


@_flat_1d
def _erfc_f32(x):
    """1 - erf below 1/2; above, exp(-x^2) erfcx(x) with the float32 tail piece."""
    return _erfc_f32_block(x) if x.size <= _BLOCK else _blocks(x, _erfc_f32_block)


def _erfc_f32_block(x):
    out = _erf_f32(x)
    np.subtract(np.float32(1.0), out, out=out)
    i = np.flatnonzero(x >= 0.5)
    if i.size:
        v = x.take(i)
        vh = (v.view(np.uint32) & _LOW_MASK_F32).view(np.float32)  # vh * vh is exact
        with np.errstate(invalid="ignore", under="ignore", over="ignore"):
            low = (v - vh) * (v + vh)
            low[np.isnan(low)] = 0.0  # v == inf
            e = np.exp(-vh * vh)
            e *= np.exp(-low)
            t = np.float32(2.0) / (v + np.float32(2.0))
            p = _horner(_F32_TAIL, t * np.float32(2.5) - np.float32(1.0))
            p *= t
            e *= p
        out.put(i, e)
    return out


# -- float64 ------------------------------------------------------------------------------
def _exp_neg_sq(a):
    """exp(-a^2) with a^2 split as ah^2 + (a - ah)(a + ah), ah a's top 21 significant bits, so
    that ah^2 is exact and the tail keeps its relative accuracy up to the underflow."""
    ah = (a.view(np.uint64) & _LOW_MASK).view(np.float64)
    with np.errstate(invalid="ignore"):
        low = (a - ah) * (a + ah)
    low[np.isnan(low)] = 0.0  # a == inf: inf - inf
    return np.exp(-ah * ah) * np.exp(-low)


def _erfcx_tail(a):
    """erfcx(a) for a >= 1/2 (inf gives 0), piece by piece."""
    out = np.empty_like(a)
    # the pieces start at powers of two: frexp's exponent numbers them (0 for [1/2, 1), ...)
    piece = np.minimum(np.frexp(a)[1], len(_PIECES) - 1)
    piece[a == np.inf] = len(_PIECES) - 1  # frexp(inf) gives exponent 0
    for k, (_lo, _hi, inverse, scale, shift, coef) in enumerate(_PIECES):
        # index arrays: gathers by integer index are several times faster than boolean masks
        i = np.flatnonzero(piece == k)
        if not i.size:
            continue
        v = a.take(i)
        if inverse:
            with np.errstate(divide="ignore"):
                y = (1.0 / v) * scale + shift
            out.put(i, _horner(coef, y) / v)
        else:
            out.put(i, _horner(coef, v * scale + shift))
    return out


def _split(x):
    """x as float64, |x|, and the flat indices of |x| < 1/2 and of the (non-NaN) rest."""
    x = np.asarray(x, dtype=np.float64)
    a = np.abs(x)
    small = a < 0.5
    return x, a, np.flatnonzero(small), np.flatnonzero(~small & (a == a))


def _small_erf(x, i):
    v = x.take(i)
    return v * _horner(_TAYLOR, v * v)


def _tail_erfc(a, i):
    v = a.take(i)
    with np.errstate(under="ignore"):
        return _exp_neg_sq(v) * _erfcx_tail(v)


def _erf_f64(x):
    x, a, small, tail = _split(x)
    out = x.copy()  # NaN stays NaN
    out.put(small, _small_erf(x, small))
    out.put(tail, 1.0 - _tail_erfc(a, tail))
    out.put(tail, np.copysign(out.take(tail), x.take(tail)))
    return out


def _erfc_f64(x):
    x, a, small, tail = _split(x)
    out = x.copy()
    out.put(small, 1.0 - _small_erf(x, small))
    out.put(tail, _tail_erfc(a, tail))
    neg = tail[x.take(tail) < 0]
    out.put(neg, 2.0 - out.take(neg))
    return out


def _erfcx_f64(x):
    x, a, small, tail = _split(x)
    out = x.copy()
    v = x.take(small)
    out.put(small, np.exp(v * v) * (1.0 - _small_erf(x, small)))
    xt = x.take(tail)
    pos, neg = tail[xt > 0], tail[xt < 0]
    out.put(pos, _erfcx_tail(x.take(pos)))
    if neg.size:
        v = -x.take(neg)
        # erfcx(-v) = 2 exp(v^2) - erfcx(v); exp(v^2) = 1 / exp(-v^2) keeps the split's accuracy
        with np.errstate(over="ignore", divide="ignore", under="ignore"):
            out.put(neg, 2.0 / _exp_neg_sq(v) - _erfcx_tail(v))
    return out


# the float64 kernels by name, for the special functions built on them (float64 in and out)
erf64, erfc64, erfcx64 = _erf_f64, _erfc_f64, _erfcx_f64


# -- entry points: dtype in, dtype out ----------------------------------------------------
def _narrow(x):
    return x.dtype.kind == "f" and x.dtype.itemsize <= 4 or x.dtype.name == "bfloat16"


def erf(x):
    """erf in x's floating dtype (float64 for anything that is not a floating array)."""
    x = np.asarray(x)
    if x.dtype == np.float32:
        return _erf_f32(x)
    if _narrow(x):
        return _erf_f32(x.astype(np.float32)).astype(x.dtype)
    return _erf_f64(x)


def erfc(x):
    x = np.asarray(x)
    if x.dtype == np.float32:
        return _erfc_f32(x)
    if _narrow(x):
        return _erfc_f32(x.astype(np.float32)).astype(x.dtype)
    return _erfc_f64(x)


def erfcx(x):
    x = np.asarray(x)
    if _narrow(x):
        with np.errstate(over="ignore"):  # inf far in the negative tail, as torch
            return _erfcx_f64(x).astype(x.dtype)
    return _erfcx_f64(x)
