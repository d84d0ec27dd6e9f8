"""Fits the polynomial coefficients of ``graphgrad/ops/_erf_kernels.py`` (run by hand; needs
mpmath, which is not a runtime dependency).

float64: erfcx(x) = exp(x^2) erfc(x) on [0.5, inf) in five pieces, each a polynomial fitted at
Chebyshev nodes against mpmath's erfc at 40 digits, in the variable y in [-1, 1] mapped from x
(first piece) or from 1/x (the others, where x erfcx(x) is smooth in 1/x). float32: erf(x) =
tanh(x P(x^2)) on [0, 4], P fitted by weighted least squares so that the error is relative in
erf. Prints the tables as Python literals; checks the maximum relative error on a fine grid.
"""

import mpmath as mp
import numpy as np
from numpy.polynomial import Chebyshev
from numpy.polynomial.chebyshev import cheb2poly

mp.mp.dps = 40
N = 800


def erfcx(x):
    return np.array([float(mp.erfc(mp.mpf(float(v))) * mp.exp(mp.mpf(float(v)) ** 2))
                     for v in x])


def horner(coef, t):
    r = np.full_like(t, coef[-1])
    for c in coef[-2::-1]:
        r = r * t + c
    return r


# (lo, hi, variable, degree): the float64 pieces
PIECES = [(0.5, 1.0, "x", 12), (1.0, 2.0, "inv", 14), (2.0, 4.0, "inv", 12),
          (4.0, 8.0, "inv", 11), (8.0, np.inf, "inv", 12)]


def fit_piece(lo, hi, var, deg):
    y = np.cos(np.pi * (np.arange(N) + 0.5) / N)
    if var == "x":
        a, b = lo, hi
        x = (a + b) / 2 + (b - a) / 2 * y
        f = erfcx(x)
    else:
        a, b = 1 / hi, 1 / lo
        u = (a + b) / 2 + (b - a) / 2 * y
        u = np.where(u == 0, 1e-300, u)
        x = 1 / u
        f = erfcx(x) * x
    coef = cheb2poly(Chebyshev.fit(y, f, deg, domain=[-1, 1]).coef)
    # check on a grid inside the piece
    xt = np.linspace(lo, min(hi, 60.0), 997)
    t = xt if var == "x" else 1 / xt
    yt = (2 * t - (a + b)) / (b - a)
    ref = erfcx(xt) * (1 if var == "x" else xt)
    err = np.max(np.abs(horner(coef, yt) / ref - 1))
    # the map y = t * scale + shift
    return coef, 2 / (b - a), -(a + b) / (b - a), err


def fit_f32(deg=7, c=4.0):
    x = np.linspace(1e-4, c, 4000)
    e = np.array([float(mp.erf(mp.mpf(float(v)))) for v in x])
    g = np.array([float(mp.atanh(mp.erf(mp.mpf(float(v))))) for v in x]) / x
    # d erf / erf = (1 - erf^2) x dg / erf: weight the fit of g by that sensitivity
    w = (1 - e * e) * x / e
    coef = np.polynomial.Polynomial.fit(x * x, g, deg, w=w, domain=[0, c * c],
                                        window=[0, c * c]).coef
    xt = np.linspace(1e-6, c, 20001).astype(np.float32)
    got = np.tanh(xt * horner(coef.astype(np.float32), (xt * xt)))
    ref = np.array([float(mp.erf(mp.mpf(float(v)))) for v in xt[::10]])
    return coef, np.max(np.abs(got[::10] / ref - 1))


if __name__ == "__main__":
    for p in PIECES:
        coef, scale, shift, err = fit_piece(*p)
        print(f"# {p}: max rel err {err:.2e}")
        print(f"({scale!r}, {shift!r}, ({', '.join(repr(float(c)) for c in coef)})),")
    for deg in (7,):
        coef, err = fit_f32(deg)
        print(f"# float32 degree {deg}: max rel err {err:.2e}")
        print(f"({', '.join(repr(float(c)) for c in coef)})")




def fit_gelu(deg=9, c=4.0 * 2.0 ** 0.5):
    """float32 exact GELU: x (1 + tanh(x Q(x^2))) / 2 on [-c, c], Q weighted for both the
    relative error of erf(x / sqrt 2) and the absolute error of GELU."""
    x = np.linspace(1e-4, c, 4000)
    r2 = mp.sqrt(2)
    e = np.array([float(mp.erf(mp.mpf(float(v)) / r2)) for v in x])
    ec = [mp.erfc(mp.mpf(float(v)) / r2) for v in x]
    g = np.array([float(0.5 * mp.log((2 - t) / t)) for t in ec]) / x
    w = (1 - e * e) * x / e + x * x * (1 - e * e)
    coef = np.polynomial.Polynomial.fit(x * x, g, deg, w=w, domain=[0, c * c],
                                        window=[0, c * c]).coef
    xt = np.linspace(-c, c, 8001).astype(np.float32)
    h = xt * np.float32(0.5)
    got = h * np.tanh(xt * horner(coef.astype(np.float32), xt * xt)) + h
    ref = np.array([float(mp.mpf(float(v)) * mp.ncdf(mp.mpf(float(v)))) for v in xt])
    return coef, np.max(np.abs(got - ref))


def fit_f32_tail(deg=10):
    """float32 erfc for x >= 1/2: erfcx(x) / t as a polynomial in t = 2 / (2 + x), in (0, 0.8]."""
    y = np.cos(np.pi * (np.arange(N) + 0.5) / N)
    hi = 2.0 / 2.5
    t = hi / 2 * (1 + y)
    x = 2.0 * (1 - t) / np.where(t == 0, 1e-300, t)
    coef = cheb2poly(Chebyshev.fit(y, erfcx(x) / t, deg, domain=[-1, 1]).coef)
    scale, shift = 2 / hi, -1.0
    xt = np.linspace(0.5, 60.0, 2001)
    tt = (2 / (2 + xt)).astype(np.float32)
    got = horner(coef.astype(np.float32), tt * np.float32(scale) + np.float32(shift)) * tt
    return coef, scale, shift, np.max(np.abs(got / erfcx(xt) - 1))


if __name__ == "__main__":
    coef, err = fit_gelu()
    print(f"# float32 GELU: max abs err {err:.2e}")
    print(f"({', '.join(repr(float(c)) for c in coef)})")
    coef, scale, shift, err = fit_f32_tail()
    print(f"# float32 erfc tail: max rel err {err:.2e}")
    print(f"({scale!r}, {shift!r}, ({', '.join(repr(float(c)) for c in coef)})),")
