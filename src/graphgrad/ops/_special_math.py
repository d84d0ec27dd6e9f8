"""NumPy kernels of the special functions (log-gamma, digamma, polygamma, Hurwitz zeta, erfinv,
erfcx, ndtri, log_ndtr, modified Bessel i0/i1 and their scaled forms), float64 in and out.

Vectorised: each kernel runs a fixed, short loop of array operations (shifts by recurrence,
series, asymptotic expansions, Newton steps), never a Python loop over elements. Edge values
(poles, infinities, signed zeros) follow torch's CPU kernels.
"""

from __future__ import annotations

import math

import numpy as np

from . import _erf_kernels as _K

__all__ = ["lgamma", "digamma", "trigamma", "zeta", "polygamma", "erfc", "erfinv", "erfcx",
           "ndtri", "log_ndtr", "i0", "i0e", "i1", "i1e", "gammainc"]

_PI = math.pi
_EULER = 0.57721566490153286061
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_SQRT_PI = math.sqrt(math.pi)
_SQRT2 = math.sqrt(2.0)

# erf, erfc and erfcx are the float64 kernels of _erf_kernels (polynomial pieces, vectorised)
_erf, erfc, erfcx = _K.erf64, _K.erfc64, _K.erfcx64


def _f64(x):
    return np.asarray(x, dtype=np.float64)


def _sinpi_abs(x):
    """|sin(pi x)| with the argument reduced first, exact zero at the integers."""
    r = x - np.round(x)
    return np.abs(np.sin(_PI * r))


# -- Hurwitz zeta (Euler-Maclaurin, as Cephes' zeta) ------------------------------------------
# (2k)! / B_2k, the Euler-Maclaurin denominators
_EM = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
       7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
       -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18)
_EPS = np.finfo(np.float64).eps


def zeta(s, q):
    """Hurwitz zeta ``sum_k (k + q)**-s``; inf at s == 1 and at q a non-positive integer, NaN
    for s < 1 or (q < 0 and s not an integer), as Cephes (and so torch) returns."""
    s, q = np.broadcast_arrays(_f64(s), _f64(q))
    out = np.zeros(s.shape)
    if not out.size:
        return out
    inf = (s == 1) | ((q <= 0) & (q == np.floor(q)))
    nan = (s < 1) | ((q <= 0) & (s != np.floor(s))) | np.isnan(s) | np.isnan(q)
    ok = ~(inf | nan)
    if ok.any():
        out[ok] = _zeta_ok(s[ok], q[ok])
    out[inf & ~nan] = np.inf
    out[nan] = np.nan
    return out


def _zeta_ok(s, q):
    total = q ** -s
    # direct sum until a = q + n > 9 (at least 9 terms), then the Euler-Maclaurin tail
    steps = int(max(9, np.ceil(np.max(9.0 - q)) + 1)) if q.size else 9
    a = q.copy()
    b = np.zeros_like(q)
    for _ in range(steps):
        a = a + 1.0
        b = a ** -s
        total = total + b
    w = a
    total = total + b * w / (s - 1.0) - 0.5 * b
    fac = np.ones_like(q)
    k = 0.0
    done = np.zeros(q.shape, dtype=bool)
    for den in _EM:
        fac = fac * (s + k)
        b = b / w
        t = np.where(done, 0.0, fac * b / den)
        total = total + t
        done |= np.abs(t / total) < _EPS
        k += 1.0
        fac = fac * (s + k)
        b = b / w
        k += 1.0
    return total


# -- log-gamma --------------------------------------------------------------------------------
# (zeta(k) - 1) for k = 2..31: the Taylor coefficients of lgamma around 2
_ZM1 = _zeta_ok(np.arange(2.0, 32.0), np.full(30, 2.0))
_STIRLING = (1.0 / 12, -1.0 / 360, 1.0 / 1260, -1.0 / 1680, 1.0 / 1188, -691.0 / 360360,
             1.0 / 156, -3617.0 / 122400)


# Series are summed as (powers of the variable) @ (coefficients): two array operations instead
# of a Python loop of small ones, which dominates for small tensors.
_NEAR2_COEF = np.concatenate([[1.0 - _EULER], _ZM1 * (-1.0) ** np.arange(2, 32) / np.arange(2, 32)])
_SHIFT = np.arange(10, dtype=np.float64)


def _powers(v, k):
    """Columns v, v^2, ..., v^k (a running product: cheap, and as accurate as Horner here)."""
    return np.cumprod(np.broadcast_to(v[..., None], v.shape + (k,)), axis=-1)


def _lgamma_big(x):
    """Stirling's series, for x >= 10."""
    inv = 1.0 / x
    series = _powers(inv * inv, len(_STIRLING) - 1) @ np.asarray(_STIRLING[1:]) + _STIRLING[0]
    return (x - 0.5) * np.log(x) - x + _HALF_LOG_2PI + series * inv


def _lgamma_near2(z):
    """lgamma(2 + z) for |z| <= 0.5: the Taylor series, accurate near the root at 2."""
    return _powers(z, len(_NEAR2_COEF)) @ _NEAR2_COEF


def _lgamma_pos(x):
    """lgamma for x > 0: the roots at 1 and 2 by Taylor series, else shift up to x >= 10."""
    out = np.empty_like(x)
    near = (x >= 0.5) & (x <= 2.5)
    rest = ~near
    if near.any():
        v = x[near]
        one = v < 1.5
        z = np.where(one, v - 1.0, v - 2.0)
        # lgamma(1 + z) = lgamma(2 + z) - log(1 + z)
        out[near] = _lgamma_near2(z) - np.where(one, np.log1p(z), 0.0)
    if rest.any():
        y = x[rest]
        small = y < 10.0
        if small.any():
            # lgamma(y) = lgamma(y + 10) - log(y (y + 1) ... (y + 9))
            ys = y[small]
            y[small] = ys + 10.0
            big = _lgamma_big(y)
            big[small] -= np.log(np.prod(ys[:, None] + _SHIFT, axis=1))
            out[rest] = big
        else:
            out[rest] = _lgamma_big(y)
    return out


def lgamma(x):
    """log|Gamma(x)|: inf at the non-positive integers and at +-inf, as torch."""
    x = _f64(x)
    out = np.full(x.shape, np.inf)
    pos = x > 0
    fin = np.isfinite(x)
    if (pos & fin).any():
        out[pos & fin] = _lgamma_pos(x[pos & fin])
    neg = (x <= 0) & fin & (x != np.floor(x))
    if neg.any():
        v = x[neg]
        # reflection: Gamma(x) Gamma(1 - x) = pi / sin(pi x)
        out[neg] = np.log(_PI / _sinpi_abs(v)) - _lgamma_pos(1.0 - v)
    out[np.isnan(x)] = np.nan
    return out


# -- digamma and polygamma --------------------------------------------------------------------
_PSI_ASYM = (1.0 / 12, -1.0 / 120, 1.0 / 252, -1.0 / 240, 1.0 / 132, -691.0 / 32760, 1.0 / 12)


def _digamma_pos(x):
    y = x.copy()
    acc = np.zeros_like(x)
    small = y < 10.0
    if small.any():
        # psi(y) = psi(y + 10) - sum_k 1 / (y + k)
        ys = y[small]
        acc[small] = -(1.0 / (ys[:, None] + _SHIFT)).sum(axis=1)
        y[small] = ys + 10.0
    series = _powers(1.0 / (y * y), len(_PSI_ASYM)) @ np.asarray(_PSI_ASYM)
    return acc + np.log(y) - 0.5 / y - series


def digamma(x):
    """psi(x): -inf at +0 (+inf at -0), NaN at the negative integers, as torch."""
    x = _f64(x)
    out = np.empty(x.shape)
    pos = x > 0
    out[pos] = _digamma_pos(x[pos])
    neg = x < 0
    if neg.any():
        v = x[neg]
        r = np.fmod(v, 1.0)
        with np.errstate(all="ignore"):
            val = _digamma_pos(1.0 - v) - _PI / np.tan(_PI * r)
        out[neg] = np.where(r == 0, np.nan, val)
    zero = x == 0
    out[zero] = np.copysign(np.inf, -x[zero])
    out[np.isnan(x)] = np.nan
    out[x == np.inf] = np.inf
    out[x == -np.inf] = np.nan
    return out


def trigamma(x):
    """psi'(x), by reflection below 1/2; 0 at +inf, as torch."""
    x = _f64(x)
    low = x < 0.5
    # psi'(x) = pi^2 / sin^2(pi x) - psi'(1 - x)
    z = zeta(2.0, np.where(low, 1.0 - x, np.where(x == np.inf, 1.0, x)))
    with np.errstate(all="ignore"):
        refl = (_PI * _PI) / np.sin(_PI * x) ** 2 - z
    out = np.asarray(np.where(low, refl, z))
    out[x == np.inf] = 0.0
    return out


def polygamma(n, x):
    """psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 1; digamma for n == 0."""
    if n == 0:
        return digamma(x)
    if n == 1:
        return trigamma(x)
    sign = 1.0 if n % 2 else -1.0
    return sign * math.exp(math.lgamma(n + 1.0)) * zeta(n + 1.0, x)


# -- erf inverses -----------------------------------------------------------------------------
def _giles(w):
    """Giles' approximation of erfinv(x) / x from w = -log((1 - x)(1 + x)): a start for Newton."""
    a = w - 2.5
    p = 2.81022636e-08
    for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
              -0.00417768164, 0.246640727, 1.50140941):
        p = c + p * a
    b = np.sqrt(w) - 3.0
    q = -0.000200214257
    for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
              0.00943887047, 1.00167406, 2.83297682):
        q = c + q * b
    return np.where(w < 5.0, p, q)


def _inv_erfc_small(q):
    """y > 0 with erfc(y) = q, for 0 < q <= 0.5: Newton steps on log erfc, written with erfcx
    (log erfc(y) = log erfcx(y) - y^2) so that nothing underflows in the far tail."""
    log_q = np.log(q)
    w = -log_q - np.log(2.0 - q)
    # Giles' fit is made for w < 25 or so; further out, erfc(y) ~ exp(-y^2) / (y sqrt(pi))
    far = np.sqrt(np.maximum(-log_q - 0.5 * np.log(_PI * np.maximum(-log_q, 1.0)), 1.0))
    y = np.where(w < 25.0, _giles(np.minimum(w, 25.0)) * (1.0 - q), far)
    for _ in range(5):
        ex = erfcx(y)
        # d/dy log erfc(y) = -2 / (sqrt(pi) erfcx(y))
        y = y + (np.log(ex) - y * y - log_q) * ex * (0.5 * _SQRT_PI)
    return y


def _inv_erf_central(x):
    """y with erf(y) = x, for |x| <= 0.5: Newton steps on erf."""
    y = _giles(-np.log1p(-x * x)) * x
    for _ in range(3):
        y = y - (_erf(y) - x) * (0.5 * _SQRT_PI) * np.exp(y * y)
    return y


def erfinv(x):
    """The inverse of erf on (-1, 1); +-inf at +-1, NaN outside."""
    x = _f64(x)
    out = np.full(x.shape, np.nan)
    a = np.abs(x)
    central = a <= 0.5
    if central.any():
        out[central] = _inv_erf_central(x[central])
    tail = (a > 0.5) & (a < 1.0)
    if tail.any():
        out[tail] = np.sign(x[tail]) * _inv_erfc_small(1.0 - a[tail])  # 1 - |x| is exact here
    edge = a == 1.0
    out[edge] = np.sign(x[edge]) * np.inf
    return out


def ndtri(p):
    """The inverse of the standard normal CDF on (0, 1); -inf at 0, inf at 1, NaN outside."""
    p = _f64(p)
    out = np.full(p.shape, np.nan)
    central = (p >= 0.25) & (p <= 0.75)
    if central.any():
        out[central] = _SQRT2 * _inv_erf_central(2.0 * p[central] - 1.0)  # exact: Sterbenz
    lo = (p > 0) & (p < 0.25)
    if lo.any():
        out[lo] = -_SQRT2 * _inv_erfc_small(2.0 * p[lo])
    hi = (p > 0.75) & (p < 1)
    if hi.any():
        out[hi] = _SQRT2 * _inv_erfc_small(2.0 * (1.0 - p[hi]))
    out[p == 0] = -np.inf
    out[p == 1] = np.inf
    return out


# -- erfcx and log_ndtr -----------------------------------------------------------------------
def log_ndtr(x):
    """log of the standard normal CDF, accurate on both tails."""
    x = _f64(x)
    out = np.empty(x.shape)
    neg = x < -1.0
    t = -x[neg] / _SQRT2
    # ndtr(x) = erfcx(t) exp(-t^2) / 2 with t = -x / sqrt(2): no underflow far in the left tail
    out[neg] = np.log(0.5 * erfcx(t)) - t * t
    rest = ~neg
    out[rest] = np.log1p(-0.5 * erfc(x[rest] / _SQRT2))
    return out


# -- modified Bessel functions of the first kind ----------------------------------------------
_ASYM_X = 30.0


def _bessel_series(x, nu, terms=90):
    """sum_k (x^2/4)^k / (k! (k + nu)!) for |x| < 30: positive terms, so no cancellation."""
    q = 0.25 * x * x
    t = np.ones_like(x)
    total = t.copy()
    for k in range(1, terms):
        t = t * q * (1.0 / (k * (k + nu)))
        total = total + t
        if k % 8 == 0 and np.all(t <= total * 1e-17):
            break
    return total


def _bessel_asym(x, nu, terms=24):
    """exp(-x) sqrt(2 pi x) I_nu(x) for x >= 30: the Hankel expansion (DLMF 10.40.1)."""
    mu = 4.0 * nu * nu
    t = np.ones_like(x)
    total = t.copy()
    for k in range(1, terms):
        t = t * -(mu - (2 * k - 1) ** 2) / (k * 8.0 * x)
        total = total + t
    return total / np.sqrt(2.0 * _PI * x)


def _scaled(x, nu):
    """(exp(-|x|) I_nu(|x|)) for |x| finite: series below 30, Hankel expansion above."""
    a = np.abs(x)
    out = np.empty_like(a)
    small = a < _ASYM_X
    if small.any():
        s = a[small]
        series = _bessel_series(s, nu) * np.exp(-s)
        out[small] = series if nu == 0 else series * (0.5 * s)
    if not small.all():
        out[~small] = _bessel_asym(a[~small], nu)
    return out


def i0e(x):
    x = _f64(x)
    out = _scaled(np.where(np.isinf(x), 1.0, x), 0)
    out[np.isinf(x)] = 0.0
    return out


def i1e(x):
    x = _f64(x)
    out = np.asarray(np.sign(x) * _scaled(np.where(np.isinf(x), 1.0, x), 1))
    out[np.isinf(x)] = np.sign(x[np.isinf(x)]) * 0.0
    return out


def i0(x):
    x = _f64(x)
    with np.errstate(over="ignore"):
        return i0e(x) * np.exp(np.abs(x))


def i1(x):
    x = _f64(x)
    a = np.abs(x)
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.asarray(np.sign(x) * _scaled(np.where(np.isinf(x), 1.0, x), 1) * np.exp(a))
    out[np.isinf(x)] = np.nan  # as torch's kernel: inf * exp(-inf)-style 0 * inf
    return out


# -- regularized incomplete gamma -------------------------------------------------------------
def _gammainc_series(a, x):
    """P(a, x) by its power series (x < a + 1), stopped per element at convergence."""
    term = 1.0 / a
    total = term.copy()
    ap = a.copy()
    done = np.zeros(a.shape, dtype=bool)
    for _ in range(600):
        ap = ap + 1.0
        term = np.where(done, 0.0, term * x / ap)
        total = total + term
        done |= np.abs(term) < np.abs(total) * _EPS
        if done.all():
            break
    return total * np.exp(-x + a * np.log(x) - lgamma(a))


def _gammaincc_cf(a, x):
    """Q(a, x) by Legendre's continued fraction (x >= a + 1), modified Lentz."""
    tiny = 1e-300
    b = x + 1.0 - a
    c = np.full(a.shape, 1.0 / tiny)
    d = 1.0 / b
    h = d.copy()
    done = np.zeros(a.shape, dtype=bool)
    for i in range(1, 600):
        an = -i * (i - a)
        b = b + 2.0
        d = an * d + b
        d = np.where(np.abs(d) < tiny, tiny, d)
        c = b + an / c
        c = np.where(np.abs(c) < tiny, tiny, c)
        d = 1.0 / d
        delta = np.where(done, 1.0, d * c)
        h = h * delta
        done |= np.abs(delta - 1.0) < _EPS
        if done.all():
            break
    return np.exp(-x + a * np.log(x) - lgamma(a)) * h


def gammainc(a, x, upper=False):
    """The regularized incomplete gamma P(a, x) (``upper``: Q = 1 - P), with torch's values at
    the edges: NaN for negative arguments or a == x == 0, 1 (or 0) at a == 0 or x == inf."""
    a, x = np.broadcast_arrays(_f64(a), _f64(x))
    p = np.full(a.shape, np.nan)
    q = np.full(a.shape, np.nan)
    ok = (a > 0) & (x > 0) & np.isfinite(a) & np.isfinite(x)
    series = ok & (x < a + 1.0)
    cf = ok & ~series
    if series.any():
        p[series] = _gammainc_series(a[series], x[series])
        q[series] = 1.0 - p[series]
    if cf.any():
        q[cf] = _gammaincc_cf(a[cf], x[cf])
        p[cf] = 1.0 - q[cf]
    # the edges, as torch: x == 0 -> P = 0; a == 0 (x > 0) or x == inf (a finite) -> P = 1
    for cond, pv in (((x == 0) & (a > 0), 0.0), ((a == 0) & (x > 0), 1.0),
                     ((x == np.inf) & (a > 0) & np.isfinite(a), 1.0),
                     ((a == np.inf) & (x >= 0) & np.isfinite(x), 0.0)):
        p[cond] = pv
        q[cond] = 1.0 - pv
    return q if upper else p
