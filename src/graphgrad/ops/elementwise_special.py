"""Elementwise math beyond the core set: inverse and hyperbolic trigonometry, the gamma family
(lgamma, digamma, polygamma, mvlgamma), erfc/erfinv, Bessel i0 and torch.special's kernels
(i0e, i1, i1e, erfcx, ndtri, log_ndtr, entr, xlog1py, zeta), sinc, frac, sign tests, and the
binary ops copysign, fmax, fmin, gcd, lcm, ldexp, logaddexp2, nextafter.

Forwards call the NumPy kernels of ``_special_math`` in float64 and cast back to the input's
dtype; rules are torch's formulas (derivatives.yaml). Public functions, Tensor methods, in-place
forms and the top-level in-place functions (``torch.abs_``, ...) are bound at the bottom.
"""

from __future__ import annotations

import math

import numpy as np

from .._tensor import Tensor, wrap
from . import _erf_kernels as _K
from . import _special_f32 as _F32
from . import _special_math as S
from . import elementwise as E
from ._dispatch import binary, unary
from ._namespace import DIFF, RAW
from ._opdef import defop
from .activation import _floating, _keep_where
from .inplace import _make_inplace

_SQRT_PI = math.sqrt(math.pi)
_TWO_OVER_SQRT_PI = 2.0 / _SQRT_PI
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_LN2 = math.log(2.0)
_DEG = math.pi / 180.0
_LOG_PI = math.log(math.pi)


def _cast(fn):
    """A float64 kernel as a forward that keeps the input's floating dtype."""
    def forward(xp, x, **params):
        return fn(x, **params).astype(x.dtype, copy=False)
    forward.__name__ = fn.__name__
    return forward


def _like(fn):
    """A float64 kernel for the RAW rules namespace (result in the argument's dtype)."""
    return lambda x: fn(x).astype(np.result_type(x), copy=False)


def _unary(name, forward, vjp=None, save=(0,), node=None, dtype_rule="float", onnx=None):
    return defop(name, forward, vjp, kind="elementwise", save=save if vjp else (),
                 dtype_rule=dtype_rule, node=node, onnx=onnx)


# -- trigonometry and hyperbolic functions ----------------------------------------------------
ASIN = _unary("asin", lambda xp, x: xp.arcsin(x), lambda ns, g, x: g / ns.sqrt(1.0 - x * x),
              node="AsinBackward0", onnx="Asin")
ACOS = _unary("acos", lambda xp, x: xp.arccos(x), lambda ns, g, x: -g / ns.sqrt(1.0 - x * x),
              node="AcosBackward0", onnx="Acos")
ATAN = _unary("atan", lambda xp, x: xp.arctan(x), lambda ns, g, x: g / (1.0 + x * x),
              node="AtanBackward0", onnx="Atan")
SINH = _unary("sinh", lambda xp, x: xp.sinh(x), lambda ns, g, x: g * ns.cosh(x),
              node="SinhBackward0", onnx="Sinh")
COSH = _unary("cosh", lambda xp, x: xp.cosh(x), lambda ns, g, x: g * ns.sinh(x),
              node="CoshBackward0", onnx="Cosh")
ASINH = _unary("asinh", lambda xp, x: xp.arcsinh(x), lambda ns, g, x: g / ns.sqrt(x * x + 1.0),
               node="AsinhBackward0", onnx="Asinh")
ACOSH = _unary("acosh", lambda xp, x: xp.arccosh(x), lambda ns, g, x: g / ns.sqrt(x * x - 1.0),
               node="AcoshBackward0", onnx="Acosh")
ATANH = _unary("atanh", lambda xp, x: xp.arctanh(x), lambda ns, g, x: g / (1.0 - x * x),
               node="AtanhBackward0", onnx="Atanh")
DEG2RAD = _unary("deg2rad", lambda xp, x: x * _DEG, lambda ns, g: g * _DEG, (),
                 "Deg2RadBackward0")
RAD2DEG = _unary("rad2deg", lambda xp, x: x / _DEG, lambda ns, g: g / _DEG, (),
                 "Rad2DegBackward0")


def _sinc_vjp(ns, g, x):
    # (pi x cos(pi x) - sin(pi x)) / (pi x^2), 0 at x == 0 (torch's masked_fill)
    rx = ns.raw(x)
    zero = rx == 0
    safe = ns.where(ns.const(zero), 1.0, x) if zero.any() else x
    px = safe * math.pi
    d = (px * ns.cos(px) - ns.sin(px)) / (px * safe)
    return _keep_where(ns, ~zero, g * d)


SINC = _unary("sinc", lambda xp, x: xp.sinc(x), _sinc_vjp, node="SincBackward0")


# -- error functions --------------------------------------------------------------------------
def _by_width(f64, f32):
    """A forward that runs float32 (and float16/bfloat16, via float32) inputs through the fast
    float32 kernel of ``_special_f32`` and the rest through the float64 one."""
    def forward(xp, x):
        if x.dtype == np.float32:
            return f32(x)
        if x.dtype.itemsize == 2 and x.dtype.kind in "fV":  # computed in float32, as torch
            return f32(x.astype(np.float32)).astype(x.dtype)
        return f64(x).astype(x.dtype, copy=False)
    forward.__name__ = f64.__name__
    return forward


def _erfinv(xp, x):
    if x.dtype == np.float32:
        return _K.erfinv_f32(x)
    if x.dtype.itemsize < 4 or x.dtype.name == "bfloat16":  # computed in float32, as torch
        return _K.erfinv_f32(x.astype(np.float32)).astype(x.dtype)
    return S.erfinv(x).astype(x.dtype, copy=False)


_TORCH_HALF_NAMES = {"float16": "Half", "bfloat16": "BFloat16"}


def _no_half(kernel, forward):
    """torch's CPU kernel ``kernel`` has no float16/bfloat16 version: refuse as torch does."""
    def checked(xp, x, **params):
        name = _TORCH_HALF_NAMES.get(getattr(x, "dtype", np.float64).name)
        if name is not None:
            raise NotImplementedError(f'"{kernel}" not implemented for \'{name}\'')
        return forward(xp, x, **params)
    return checked


ERFC = _unary("erfc", lambda xp, x: _K.erfc(x),
              lambda ns, g, x: -g * _TWO_OVER_SQRT_PI * ns.exp(-(x * x)),
              node="ErfcBackward0")
ERFINV = _unary("erfinv", _erfinv,
                lambda ns, g, out: g * (0.5 * _SQRT_PI) * ns.exp(out * out), ("out",),
                "ErfinvBackward0")
ERFCX = _unary("special_erfcx", _no_half("erfcx_cpu", lambda xp, x: _K.erfcx(x)),
               lambda ns, g, x, out: g * (2.0 * x * out - _TWO_OVER_SQRT_PI), (0, "out"),
               "SpecialErfcxBackward0")
NDTRI = _unary("special_ndtri", _no_half("ndtri_cpu", _by_width(S.ndtri, _F32.ndtri)),
               lambda ns, g, out: g * _SQRT_2PI * ns.exp(0.5 * out * out), ("out",),
               "SpecialNdtriBackward0")
LOG_NDTR = _unary("special_log_ndtr", _no_half("log_ndtr_cpu", _cast(S.log_ndtr)),
                  lambda ns, g, x, out: g * _INV_SQRT_2PI * ns.exp(-0.5 * x * x - out),
                  (0, "out"), "SpecialLogNdtrBackward0")


def _entr(xp, x):
    with np.errstate(all="ignore"):
        val = -x * xp.log(x)
    return xp.where(x > 0, val, xp.where(x == 0, 0.0, xp.where(x < 0, -np.inf, x))).astype(
        x.dtype, copy=False)


ENTR = _unary("special_entr", _entr, lambda ns, g, x: -g * (1.0 + ns.log(x)),
              node="SpecialEntrBackward0")


# -- the gamma family -------------------------------------------------------------------------
LGAMMA = _unary("lgamma", _by_width(S.lgamma, _F32.lgamma), lambda ns, g, x: g * ns.digamma(x),
                node="LgammaBackward0")
DIGAMMA = _unary("digamma", _by_width(S.digamma, _F32.digamma),
                 lambda ns, g, x: g * ns.polygamma(1, x), node="DigammaBackward0")
POLYGAMMA = _unary("polygamma", lambda xp, x, n: S.polygamma(n, x).astype(x.dtype, copy=False),
                   lambda ns, g, x, n: g * ns.polygamma(n + 1, x), node="PolygammaBackward0")


def _mvlgamma_fwd(xp, x, p):
    out = sum(S.lgamma(x - 0.5 * i) for i in range(p)) + p * (p - 1) * 0.25 * _LOG_PI
    return np.asarray(out).astype(x.dtype, copy=False)


MVLGAMMA = _unary("mvlgamma", _mvlgamma_fwd,
                  lambda ns, g, x, p: g * sum(ns.digamma(x - 0.5 * i) for i in range(p)),
                  node="MvlgammaBackward0")


# -- modified Bessel functions ----------------------------------------------------------------
def _i1_grad(ns, x, out, scaled):
    """d/dx of i1 (or i1e), torch's i1_backward: i0 - i1 / x (less sgn * i1e for i1e), 1/2
    where |x| is below the dtype's epsilon."""
    rx = ns.raw(x)
    tiny = np.abs(rx) <= np.finfo(np.result_type(rx)).eps
    safe = ns.where(ns.const(tiny), float(np.finfo(np.result_type(rx)).eps), x)
    if scaled:
        gi = ns.i0e(safe) - out * (ns.sign(safe) + 1.0 / safe)
    else:
        gi = ns.i0(safe) - out / safe
    return ns.where(ns.const(tiny), 0.5, gi)


I0 = _unary("i0", _cast(S.i0), lambda ns, g, x: g * ns.i1(x), node="I0Backward0")
I0E = _unary("special_i0e", _cast(S.i0e),
             lambda ns, g, x, out: g * (ns.i1e(x) - ns.sign(x) * out), (0, "out"),
             "SpecialI0EBackward0")
I1 = _unary("special_i1", _cast(S.i1), lambda ns, g, x, out: g * _i1_grad(ns, x, out, False),
            (0, "out"), "SpecialI1Backward0")
I1E = _unary("special_i1e", _cast(S.i1e), lambda ns, g, x, out: g * _i1_grad(ns, x, out, True),
             (0, "out"), "SpecialI1EBackward0")


# -- rounding and sign ------------------------------------------------------------------------
def _frac(xp, x):
    if x.dtype.kind != "f":
        raise NotImplementedError(
            f"\"frac_cpu\" not implemented for '{E._TORCH_NAMES[x.dtype.name]}'")
    return x - xp.trunc(x)


FRAC = _unary("frac", _frac, lambda ns, g: g, (), "FracBackward0", "promote")
def _sgn(xp, x):
    if x.dtype.kind != "f":
        return xp.sign(x) if x.dtype != np.bool_ else x.copy()
    return xp.where(xp.isnan(x), 0, xp.sign(x)).astype(x.dtype, copy=False)  # torch: sgn(NaN) = 0


SGN = _unary("sgn", _sgn,
             lambda ns, g: ns.zeros_like(g), (), "SgnBackward0", "promote", onnx="Sign")
SIGNBIT = _unary("signbit", lambda xp, x: xp.signbit(x) if x.dtype != np.bool_
                 else xp.zeros(x.shape, bool), dtype_rule="same")
ISPOSINF = _unary("isposinf", lambda xp, x: xp.isposinf(x) if x.dtype.kind == "f"
                  else xp.zeros(x.shape, bool), dtype_rule="same")
ISNEGINF = _unary("isneginf", lambda xp, x: xp.isneginf(x) if x.dtype.kind == "f"
                  else xp.zeros(x.shape, bool), dtype_rule="same")


# -- binary ops -------------------------------------------------------------------------------
def _copysign_self(ns, g, x, out):
    # torch: grad * result / self, 0 where self == 0; the ratio is +-1 (NaN at inf and NaN)
    rx = ns.raw(x)
    zero = rx == 0
    ratio = np.where(zero, 0.0, ns.raw(out) / np.where(zero, 1.0, rx))
    return g * ns.const(np.asarray(ratio, dtype=np.result_type(ns.raw(g))))


COPYSIGN = defop("copysign.Tensor", lambda xp, a, b: xp.copysign(a, b),
                 lambda ns, g, a, b, out: (_copysign_self(ns, g, a, out), ns.zeros_like(g)),
                 kind="elementwise", save=(0, 1, "out"), dtype_rule="float",
                 node="CopysignBackward0")
COPYSIGN_SCALAR = defop("copysign.Scalar", lambda xp, a, b: xp.copysign(a, b),
                        lambda ns, g, a, out: (_copysign_self(ns, g, a, out), None),
                        kind="elementwise", save=(0, "out"), dtype_rule="float",
                        node="CopysignBackward1", hidden_inputs=("scalars",))


def _fmax_fmin_vjp(greater):
    def vjp(ns, g, a, b):
        ra, rb = ns.raw(a), ns.raw(b)
        # self wins ties and wherever other is NaN (torch's masks)
        wins = ((ra >= rb) if greater else (ra <= rb)) | np.isnan(rb)
        return _keep_where(ns, wins, g), _keep_where(ns, ~wins, g)
    return vjp


FMAX = defop("fmax", lambda xp, a, b: xp.fmax(a, b), _fmax_fmin_vjp(True), kind="elementwise",
             save=(0, 1), node="FmaxBackward0", onnx="Max")
FMIN = defop("fmin", lambda xp, a, b: xp.fmin(a, b), _fmax_fmin_vjp(False), kind="elementwise",
             save=(0, 1), node="FminBackward0", onnx="Min")


def _integer_only(name, fn):
    def forward(xp, a, b):
        kind = np.result_type(a, b)
        if kind.kind not in "iu":
            raise NotImplementedError(
                f"\"{name}_cpu\" not implemented for '{_scalar_name(kind)}'")
        return fn(a, b)
    return forward


def _scalar_name(dtype):
    return {"float32": "Float", "float64": "Double", "float16": "Half",
            **E._TORCH_NAMES}.get(np.dtype(dtype).name, np.dtype(dtype).name)


GCD = defop("gcd", _integer_only("gcd", np.gcd), kind="elementwise")
LCM = defop("lcm", _integer_only("lcm", np.lcm), kind="elementwise")


def _ldexp_vjp(ns, g, a, b):
    rb = ns.raw(b)
    if rb.dtype.kind in "iub":
        # NOTE: torch computes 2 ** other in the integer dtype, where a negative power is 0
        return g * ns.const(np.where(rb < 0, 0.0, np.exp2(np.maximum(rb, 0)))), None
    scale = ns.exp(b * _LN2)  # 2 ** other
    return g * scale, g * a * scale * _LN2


LDEXP = defop("ldexp", lambda xp, a, b: a * xp.exp2(b), _ldexp_vjp,
              kind="elementwise", save=(0, 1), dtype_rule="float", node="LdexpBackward0")


def _logaddexp2_vjp(ns, g, a, b):
    # grad / (1 + 2^(b - a)) = grad * sigmoid((a - b) ln 2): never overflows
    return g * ns.sigmoid((a - b) * _LN2), g * ns.sigmoid((b - a) * _LN2)


LOGADDEXP2 = defop("logaddexp2", _floating("logaddexp2_cpu")(
    lambda xp, a, b: xp.logaddexp2(a, b)), _logaddexp2_vjp, kind="elementwise", save=(0, 1),
    node="Logaddexp2Backward0")
# NOTE: torch marks nextafter's result as requiring grad but has no derivative for it; here it
# is simply not differentiable (as floor_divide).
NEXTAFTER = defop("nextafter", _floating("nextafter_cpu")(lambda xp, a, b: xp.nextafter(a, b)),
                  kind="elementwise")


def _xlog1py_fwd(xp, x, y):
    # 0 * log1p(y) is 0 for any y but NaN, as torch
    log1p = xp.log1p(y) if type(y) is np.ndarray else float(np.log1p(y))
    return xp.where((x == 0) & ~xp.isnan(y), 0.0, x * log1p)


def _xlog1py_x_grad(ns, g, x, y):
    ry = ns.raw(y)
    grad = g * (ns.log1p(y) if type(ry) is np.ndarray else float(np.log1p(ry)))
    return ns.where(ns.const((ns.raw(x) == 0) & (ry <= -1)), 0.0, grad)


XLOG1PY = defop("special_xlog1py", _xlog1py_fwd,
                lambda ns, g, x, y: (_xlog1py_x_grad(ns, g, x, y), g * x / (y + 1.0)),
                kind="elementwise", save=(0, 1), dtype_rule="float",
                node="SpecialXlog1PyBackward0")
XLOG1PY_SCALAR_SELF = defop("special_xlog1py.self_scalar", _xlog1py_fwd,
                            lambda ns, g, x, y: (None, g * x / (y + 1.0)), kind="elementwise",
                            save=(0, 1), dtype_rule="float", node="SpecialXlog1PyBackward1",
                            hidden_inputs=("scalars",))
XLOG1PY_SCALAR_OTHER = defop("special_xlog1py.other_scalar", _xlog1py_fwd,
                             lambda ns, g, x, y: (_xlog1py_x_grad(ns, g, x, y), None),
                             kind="elementwise", save=(0, 1), dtype_rule="float",
                             node="SpecialXlog1PyBackward2", hidden_inputs=("scalars",))


def _zeta_fwd(xp, x, q):
    dt = np.result_type(x, q)
    return S.zeta(x, q).astype(dt if dt.kind == "f" else np.float32, copy=False)


def _zeta_vjp(ns, g, x, q, needs):
    if needs[0]:
        raise RuntimeError("the derivative for 'zeta' is not implemented.")
    if not needs[1]:
        return None, None
    return None, g * -x * ns.zeta(x + 1.0, q)


ZETA = defop("special_zeta", _zeta_fwd, _zeta_vjp, kind="elementwise", save=(0, 1),
             dtype_rule="float", node="SpecialZetaBackward0", needs_mask=True)


def _igamma_vjp(upper):
    def vjp(ns, g, a, x, needs):
        if needs[0]:
            raise NotImplementedError(
                f"the derivative for '{'igammac' if upper else 'igamma'}: input' is not "
                "implemented.")
        if not needs[1]:
            return None, None
        # d/dx P(a, x) = x^(a-1) e^-x / Gamma(a); a is a constant here (no derivative in a)
        ra = ns.raw(a)
        am1, lg = ns.const(ra - 1.0), ns.const(_like(S.lgamma)(ra))
        d = g * ns.exp(am1 * ns.log(x) - x - lg)
        return None, -d if upper else d
    return vjp


IGAMMA = defop("igamma", _floating("igamma_cpu")(
    lambda xp, a, x: S.gammainc(a, x).astype(np.result_type(a, x), copy=False)),
    _igamma_vjp(False), kind="elementwise", save=(0, 1), node="IgammaBackward0",
    needs_mask=True)
IGAMMAC = defop("igammac", _floating("igammac_cpu")(
    lambda xp, a, x: S.gammainc(a, x, upper=True).astype(np.result_type(a, x), copy=False)),
    _igamma_vjp(True), kind="elementwise", save=(0, 1), node="IgammacBackward0",
    needs_mask=True)


# -- the rules namespaces ---------------------------------------------------------------------
def _extend_rules_namespaces():
    """The functions the rules above call, in both namespaces (Note [Rules namespace])."""
    raw = {"cosh": np.cosh, "sinh": np.sinh, "digamma": _like(S.digamma),
           "i0": _like(S.i0), "i1": _like(S.i1), "i0e": _like(S.i0e), "i1e": _like(S.i1e),
           "polygamma": lambda n, x: S.polygamma(n, x).astype(np.result_type(x), copy=False),
           "zeta": lambda x, q: S.zeta(x, q).astype(np.result_type(x, q), copy=False)}
    diff = {"cosh": cosh, "sinh": sinh, "digamma": digamma, "i0": i0, "i1": special_i1,
            "i0e": special_i0e, "i1e": special_i1e, "polygamma": polygamma,
            "zeta": special_zeta}
    for name, fn in raw.items():
        setattr(RAW, name, staticmethod(fn))
        setattr(DIFF, name, staticmethod(diff[name]))


# -- public functions -------------------------------------------------------------------------
_tensor_arg = E._tensor_arg


def _fn(op, name):
    def fn(input):
        return unary(op, _tensor_arg(input, name))
    fn.__name__ = fn.__qualname__ = name
    grad = op.node_cls.__name__ if op.node_cls else "no gradient"
    fn.__doc__ = f"Elementwise ``{name}`` (grad_fn: {grad})."
    return fn


asin = arcsin = _fn(ASIN, "asin")
acos = arccos = _fn(ACOS, "acos")
atan = arctan = _fn(ATAN, "atan")
sinh = _fn(SINH, "sinh")
cosh = _fn(COSH, "cosh")
asinh = arcsinh = _fn(ASINH, "asinh")
acosh = arccosh = _fn(ACOSH, "acosh")
atanh = arctanh = _fn(ATANH, "atanh")
deg2rad = _fn(DEG2RAD, "deg2rad")
rad2deg = _fn(RAD2DEG, "rad2deg")
sinc = _fn(SINC, "sinc")
erfc = _fn(ERFC, "erfc")
erfinv = _fn(ERFINV, "erfinv")
lgamma = _fn(LGAMMA, "lgamma")
digamma = _fn(DIGAMMA, "digamma")
i0 = _fn(I0, "i0")
frac = _fn(FRAC, "frac")
sgn = _fn(SGN, "sgn")
signbit = _fn(SIGNBIT, "signbit")
isposinf = _fn(ISPOSINF, "isposinf")
isneginf = _fn(ISNEGINF, "isneginf")
special_erfcx = _fn(ERFCX, "erfcx")
special_ndtri = _fn(NDTRI, "ndtri")
special_log_ndtr = _fn(LOG_NDTR, "log_ndtr")
special_entr = _fn(ENTR, "entr")
special_i0e = _fn(I0E, "i0e")
special_i1 = _fn(I1, "i1")
special_i1e = _fn(I1E, "i1e")


def polygamma(n, input):
    """The ``n``-th derivative of digamma (``n >= 0``); grad_fn PolygammaBackward0."""
    if isinstance(n, Tensor) or type(n) is not int and not isinstance(n, np.integer):
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return unary(POLYGAMMA, _tensor_arg(input, "polygamma"), {"n": int(n)})


def mvlgamma(input, p):
    """The multivariate log-gamma of dimension ``p`` (torch 2.13 no longer checks that every
    element exceeds (p - 1) / 2)."""
    _tensor_arg(input, "mvlgamma")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    return unary(MVLGAMMA, input, {"p": int(p)})


def isreal(input):
    """True everywhere: graphgrad has no complex dtypes."""
    return wrap(np.ones(_tensor_arg(input, "isreal")._data.shape, dtype=bool), False, None)


def _tensor_pair(name, input, other):
    _tensor_arg(input, name)
    if not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")


def copysign(input, other):
    """``|input|`` with the sign of ``other`` (a tensor or a number); a float result."""
    _tensor_arg(input, "copysign")
    return binary(COPYSIGN if isinstance(other, Tensor) else COPYSIGN_SCALAR, input, other)


def _pair_fn(op, name):
    def fn(input, other):
        _tensor_pair(name, input, other)
        return binary(op, input, other)
    fn.__name__ = fn.__qualname__ = name
    return fn


fmax = _pair_fn(FMAX, "fmax")
fmin = _pair_fn(FMIN, "fmin")
gcd = _pair_fn(GCD, "gcd")
lcm = _pair_fn(LCM, "lcm")
ldexp = _pair_fn(LDEXP, "ldexp")
logaddexp2 = _pair_fn(LOGADDEXP2, "logaddexp2")
nextafter = _pair_fn(NEXTAFTER, "nextafter")
igamma = _pair_fn(IGAMMA, "igamma")
igammac = _pair_fn(IGAMMAC, "igammac")
special_gammainc = _pair_fn(IGAMMA, "special_gammainc")
special_gammaincc = _pair_fn(IGAMMAC, "special_gammaincc")


def float_power(input, exponent):
    """``input ** exponent`` computed in float64 (both operands are cast first, as torch)."""
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError("float_power() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(exponent).__name__})")
    return E.pow(_as_double(input), _as_double(exponent))


def _as_double(x):
    if isinstance(x, Tensor):
        return x if x._data.dtype == np.float64 else x.double()
    return float(x)


def special_xlog1py(input, other):
    """``input * log1p(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN)."""
    if isinstance(input, Tensor):
        op = XLOG1PY if isinstance(other, Tensor) else XLOG1PY_SCALAR_OTHER
        return binary(op, input, other)
    if isinstance(other, Tensor):
        return binary(XLOG1PY_SCALAR_SELF, input, other)
    raise TypeError("xlog1py() received an invalid combination of arguments - got "
                    f"({type(input).__name__}, {type(other).__name__})")


def special_zeta(input, other):
    """The Hurwitz zeta function ``sum_k (k + other) ** -input``; differentiable in ``other``."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError("zeta() received an invalid combination of arguments")
    return binary(ZETA, input, other)


_extend_rules_namespaces()


# -- Tensor methods, in-place forms, top-level in-place functions -----------------------------
_METHODS = ("asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "arcsin",
            "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "deg2rad", "rad2deg", "sinc",
            "erfc", "erfinv", "lgamma", "digamma", "i0", "frac", "sgn", "signbit", "isposinf",
            "isneginf", "isreal", "mvlgamma", "copysign", "fmax", "fmin", "gcd",
            "lcm", "ldexp", "logaddexp2", "nextafter", "float_power", "igamma", "igammac")
# in-place name -> (out-of-place function, whether the op reads the old value for backward)
_INPLACE = {n + "_": (globals()[n], True) for n in (
    "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "arcsin", "arccos",
    "arctan", "arcsinh", "arccosh", "arctanh", "sinc", "erfc", "lgamma", "digamma", "i0",
    "mvlgamma", "copysign", "ldexp", "gcd", "lcm", "nextafter", "igamma", "igammac")}
_INPLACE.update({"erfinv_": (erfinv, False), "deg2rad_": (deg2rad, False),
                 "rad2deg_": (rad2deg, False), "frac_": (frac, False), "sgn_": (sgn, False)})

# torch's top-level in-place functions (``torch.exp_(x)`` is ``x.exp_()``)
_TOP_LEVEL_INPLACE = (
    "abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_",
    "arctan_", "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_",
    "clamp_max_", "clamp_min_", "clip_", "cos_", "cosh_", "deg2rad_", "erf_", "erfc_",
    "exp2_", "exp_", "expm1_", "fill_", "fix_", "floor_", "frac_", "gcd_", "i0_", "lcm_",
    "ldexp_", "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_",
    "negative_", "rad2deg_", "reciprocal_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_",
    "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_", "xlogy_", "zero_", "index_put_",
    "detach_",
)
# aliases of existing in-place methods that torch also spells this way
_ALIASES = {"absolute_": "abs_", "negative_": "neg_", "fix_": "trunc_", "divide_": "div_",
            "multiply_": "mul_", "subtract_": "sub_", "true_divide_": "div_"}


def _polygamma_method(self, n):
    return polygamma(n, self)


_polygamma_ = _make_inplace("polygamma_", lambda x, n: polygamma(n, x), True)
_float_power_into = _make_inplace("float_power_", float_power, True)


def _float_power_(self, exponent):
    if self._data.dtype != np.float64:
        raise RuntimeError(f"the base given to float_power_ has dtype "
                           f"{_scalar_name(self._data.dtype)} but the operation's result "
                           "requires dtype Double")
    return _float_power_into(self, exponent)


def _top_level(name):
    def fn(input, *args, **kwargs):
        return getattr(_tensor_arg(input, name), name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``torch.{name}(t, ...)`` is ``t.{name}(...)``: in place."
    return fn


def _bind():
    for name in _METHODS:
        setattr(Tensor, name, globals()[name])
    Tensor.polygamma = _polygamma_method
    for name, (fn, saves) in _INPLACE.items():
        setattr(Tensor, name, _make_inplace(name, fn, saves))
    Tensor.polygamma_ = _polygamma_
    Tensor.float_power_ = _float_power_
    for alias, target in _ALIASES.items():
        if not hasattr(Tensor, alias):
            setattr(Tensor, alias, getattr(Tensor, target))


_bind()
for _name in _TOP_LEVEL_INPLACE:
    globals()[_name] = _top_level(_name)

__all__ = ["asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "arcsin",
           "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "deg2rad", "rad2deg", "sinc",
           "erfc", "erfinv", "lgamma", "digamma", "polygamma", "mvlgamma", "i0", "frac", "sgn",
           "signbit", "isposinf", "isneginf", "isreal", "copysign", "fmax", "fmin",
           "gcd", "lcm", "ldexp", "logaddexp2", "nextafter", "float_power", "igamma",
           "igammac", *_TOP_LEVEL_INPLACE]
