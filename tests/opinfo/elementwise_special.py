"""OpInfos for the extra elementwise math and torch.special: inverse/hyperbolic trigonometry,
the gamma family, erfc/erfinv, Bessel functions, sign tests, copysign, fmax/fmin, gcd/lcm,
ldexp, logaddexp2, nextafter, float_power, the ``torch.special`` names, in-place forms (methods
and ``torch.<name>_`` functions).

Domains keep away from poles and branch cuts; the poles and edges themselves are sampled
forward-only (``grad=False``) or without finite differences (``gradcheck=False``).
"""

from __future__ import annotations

import numpy as np

from .core import ALL, FLOAT, FLOAT_INT, ErrorInput, NonContig, OpInfo, SampleInput, make
from .elementwise import (
    binary_mixed,
    binary_samples,
    fn_and_method,
    function,
    maxmin_samples,
    method,
    pow_mixed,
    pow_samples,
    unary_samples,
)
from .inplace import on_clone

F32, F64, I32, I64, B = np.float32, np.float64, np.int32, np.int64, np.bool_
_NAN, _INF = np.nan, np.inf
_UF = FLOAT + (I64,)
_POLES = (0.0, -1.0, -2.0, -3.0, -4.0)

UNARY = [
    # name, unary_samples kwargs, dtypes
    ("asin", dict(low=-0.95, high=0.95, int_low=-1, int_high=1, extra=(1.0, -1.0, 1.5)), _UF),
    ("acos", dict(low=-0.95, high=0.95, int_low=-1, int_high=1, extra=(1.0, -1.0, 1.5)), _UF),
    ("atan", dict(extra=(_INF, -_INF)), _UF),
    ("sinh", dict(), _UF),
    ("cosh", dict(), _UF),
    ("asinh", dict(extra=(_INF, -_INF)), _UF),
    ("acosh", dict(low=1.1, high=4.0, int_low=1, int_high=5, extra=(1.0, 0.5, _INF)), _UF),
    ("atanh", dict(low=-0.9, high=0.9, int_low=-1, int_high=1, extra=(1.0, -1.0, 2.0)), _UF),
    ("deg2rad", dict(low=-200.0, high=200.0), ALL),
    ("rad2deg", dict(), ALL),
    ("sinc", dict(avoid=(0.0,), kinks=(0.0, 1.0, -2.0)), _UF),
    ("erfc", dict(low=-2.5, high=2.5, extra=(_INF, -_INF, 30.0)), _UF + (B,)),
    ("erfinv", dict(low=-0.95, high=0.95, int_low=-1, int_high=1,
                    extra=(1.0, -1.0, 0.0, 1.5, -0.999999)), _UF),
    ("lgamma", dict(low=-4.5, high=6.0, avoid=_POLES, int_low=-2, int_high=8,
                    extra=(0.0, -0.0, -1.0, -2.0, 1.0, 2.0, _INF, -_INF, _NAN, 40.0)), _UF),
    ("digamma", dict(low=-4.5, high=6.0, avoid=_POLES, int_low=1, int_high=8,
                     extra=(0.0, -0.0, -1.0, 1.0, _INF, 1e-3, 40.0)), _UF),
    ("i0", dict(low=-6.0, high=6.0, extra=(0.0, 40.0, -60.0)), _UF),
    ("frac", dict(avoid=tuple(range(-3, 4)), margin=0.05, extra=(-1.5, 2.0, -0.0, _INF)),
     FLOAT),
    ("sgn", dict(avoid=(0.0,), kinks=(0.0, -1.5, 2.0), extra=(0.0, -0.0, _INF, _NAN)), ALL),
]

SPECIAL_UNARY = [
    ("erfcx", dict(low=-3.0, high=8.0, extra=(30.0, 1e3, -30.0, _INF, -_INF)), _UF),
    ("ndtri", dict(low=0.02, high=0.98, int_low=0, int_high=1,
                   extra=(0.0, 1.0, -0.5, 1e-30, 0.999999)), _UF),
    ("log_ndtr", dict(low=-12.0, high=5.0, extra=(-40.0, 40.0, _INF, -_INF)), _UF),
    ("entr", dict(low=0.05, high=3.0, int_low=0, int_high=4, extra=(0.0, -1.0, _NAN, _INF)),
     _UF),
    ("i0e", dict(low=-40.0, high=40.0, extra=(0.0, -_INF, 700.0)), _UF),
    ("i1", dict(low=-12.0, high=12.0, avoid=(0.0,), kinks=(0.0, 1e-9),
                extra=(50.0, -_INF)), _UF),
    ("i1e", dict(low=-40.0, high=40.0, avoid=(0.0,), kinks=(0.0, -1e-9),
                 extra=(700.0, -_INF)), _UF),
]


def _unary_errors(name):
    def errors():
        if name == "frac":
            yield ErrorInput(SampleInput(np.array([1, 2])), NotImplementedError, "int")
    return errors


def _special(name):
    return lambda m: getattr(m.special, name)


def unary_ops() -> list[OpInfo]:
    ops = []
    for name, kw, dtypes in UNARY:
        ops += fn_and_method(name, unary_samples(**kw), dtypes=dtypes, errors=_unary_errors(name))
    for alias, name in (("arcsin", "asin"), ("arccos", "acos"), ("arctan", "atan"),
                        ("arcsinh", "asinh"), ("arccosh", "acosh"), ("arctanh", "atanh")):
        kw = next(k for n, k, _ in UNARY if n == name)
        ops.append(OpInfo(alias, function(alias), unary_samples(**kw), dtypes=(F64,),
                          variant=True))
        ops.append(OpInfo(f"Tensor.{alias}", method(alias), unary_samples(**kw), dtypes=(F64,),
                          variant=True))
    for name, kw, dtypes in SPECIAL_UNARY:
        ops.append(OpInfo(f"special.{name}", _special(name), unary_samples(**kw), dtypes=dtypes))
    special = (0.0, -0.0, _INF, -_INF, _NAN, 1e-30, -2.5)
    for name in ("signbit", "isposinf", "isneginf", "isreal"):
        ops += fn_and_method(name, unary_samples(extra=special), dtypes=ALL, supports_grad=False)
    ops += fn_and_method("positive", unary_samples(), dtypes=FLOAT_INT)
    return ops


# --- polygamma and mvlgamma -------------------------------------------------------------------
def polygamma_samples(dtype, rng):
    is_float = np.dtype(dtype).kind == "f"
    for n in (0, 1, 2, 3):
        x = make((3, 4), dtype, rng, 0.3, 6.0) if is_float else make((3, 4), dtype, rng, 1, 6)
        yield SampleInput(x, (n,), name=f"n{n}")
    if not is_float:
        return
    yield SampleInput(make((5,), dtype, rng, -3.8, -0.2, avoid=_POLES, margin=0.15), (1,),
                      name="negative_n1")
    yield SampleInput(make((5,), dtype, rng, -3.8, -0.2, avoid=_POLES, margin=0.15), (2,),
                      name="negative_n2")
    yield SampleInput(make((), dtype, rng, 0.5, 3.0), (4,), name="0d")
    yield SampleInput(NonContig(make((4, 3), dtype, rng, 0.5, 3.0)), (2,), name="transposed")
    yield SampleInput(np.array([0.0, -1.0, _INF, 1e-3, 50.0], dtype=dtype), (2,),
                      name="edges", grad=False)
    yield SampleInput(np.array([0.0, -0.0, _INF, 1e-3, 50.0], dtype=dtype), (1,),
                      name="edges_n1", grad=False)


def _polygamma_errors():
    yield ErrorInput(SampleInput(np.ones(3), (-1,)), RuntimeError, "negative_n")
    yield ErrorInput(SampleInput(np.ones(3), (1.5,)), TypeError, "float_n")


def mvlgamma_samples(dtype, rng):
    is_float = np.dtype(dtype).kind == "f"
    for p, shape in ((1, (3, 4)), (2, (5,)), (3, ()), (4, (2, 3))):
        lo = 0.5 * (p - 1) + 0.3
        x = make(shape, dtype, rng, lo, lo + 5.0) if is_float else make(shape, dtype, rng, p,
                                                                          p + 5)
        yield SampleInput(x, kwargs=dict(p=p), name=f"p{p}")


def _mvlgamma_errors():
    yield ErrorInput(SampleInput(np.ones(3) * 3, kwargs=dict(p=0)), RuntimeError, "p0")


def gamma_ops() -> list[OpInfo]:
    poly = lambda m: lambda x, n: m.polygamma(n, x)  # noqa: E731
    ops = [OpInfo("polygamma", poly, polygamma_samples, dtypes=_UF, errors=_polygamma_errors),
           OpInfo("Tensor.polygamma", method("polygamma"), polygamma_samples, dtypes=(F64,),
                  variant=True),
           OpInfo("special.polygamma", lambda m: lambda x, n: m.special.polygamma(n, x),
                  polygamma_samples, dtypes=(F64,), variant=True)]
    ops += fn_and_method("mvlgamma", mvlgamma_samples, dtypes=_UF, errors=_mvlgamma_errors)
    ops.append(OpInfo("special.multigammaln", _special("multigammaln"), mvlgamma_samples,
                      dtypes=(F64,), variant=True))
    return ops


# --- binary ----------------------------------------------------------------------------------
def copysign_samples(dtype, rng):
    yield from binary_samples(rhs_avoid=(0.0,), scalars=(2, -1.5, -0.0))(dtype, rng)
    if np.dtype(dtype).kind == "f":
        a = np.array([0.0, -0.0, 1.5, -2.0, _INF, _NAN], dtype=dtype)
        b = np.array([-1.0, 2.0, -0.0, 0.0, -1.0, -1.0], dtype=dtype)
        yield SampleInput(a, (b,), name="signed_zeros", gradcheck=False)


def ldexp_samples(dtype, rng):
    x = lambda s: make(s, dtype, rng)  # noqa: E731
    e = lambda s: make(s, I64, rng, -4, 4)  # noqa: E731
    # NOTE: torch's gradient takes 2 ** other in the integer dtype (0 for a negative other), so
    # integer exponents are compared with torch but not with finite differences
    yield SampleInput(x((3, 4)), (e((3, 4)),), name="int_exponent", gradcheck=False)
    yield SampleInput(x((2, 1, 3)), (e((4, 1)),), name="broadcast", gradcheck=False)
    yield SampleInput(x(()), (e((3,)),), name="0d", gradcheck=False)
    yield SampleInput(x((0, 3)), (e((3,)),), name="empty", gradcheck=False)
    yield SampleInput(NonContig(x((4, 3))), (e((4, 3)),), name="transposed", gradcheck=False)
    yield SampleInput(x((3, 4)), (make((3, 4), I64, rng, 0, 4),), name="nonneg_int_exponent")
    if np.dtype(dtype).kind == "f":
        yield SampleInput(x((3, 4)), (make((3, 4), dtype, rng, -2.0, 2.0),), name="float_exponent")


def _ldexp_mixed(rng):
    yield SampleInput(make((3,), I64, rng, -4, 4), (make((3,), I64, rng, 0, 3),), name="int_int")
    yield SampleInput(make((3,), F32, rng), (make((3,), F64, rng),), name="f32_f64")


def _int_binary(rng):
    yield SampleInput(make((3,), I32, rng, -9, 9), (make((3,), I64, rng, -9, 9),), name="i32_i64")
    yield SampleInput(make((3, 1), I64, rng, -30, 30), (make((4,), I64, rng, -12, 12),),
                      name="broadcast_wide")


def _pair_errors(name, kinds=()):
    def errors():
        yield ErrorInput(SampleInput(np.ones(3), (2.0,)), TypeError, "scalar_other")
        if "int" in kinds:
            yield ErrorInput(SampleInput(np.array([1, 2]), (np.array([1, 2]),)),
                             NotImplementedError, "int")
        if "float" in kinds:
            yield ErrorInput(SampleInput(np.ones(2), (np.ones(2),)), NotImplementedError,
                             "float")
        yield ErrorInput(SampleInput(np.ones((2, 3)), (np.ones((4,)),)), RuntimeError,
                         "broadcast")
    return errors


def _nan_samples(dtype, rng):
    yield from binary_samples(tensor_only=True)(dtype, rng)
    if np.dtype(dtype).kind == "f":
        a = np.array([_NAN, 1.0, _INF, -_INF, 0.0], dtype=dtype)
        b = np.array([0.0, _NAN, _INF, 2.0, -0.0], dtype=dtype)
        yield SampleInput(a, (b,), name="special", grad=False)


def float_power_samples(dtype, rng):
    yield from pow_samples(dtype, rng)


def float_power_scalar_base(dtype, rng):
    for s in (2, 0.5, 3.0):
        yield SampleInput(make((3, 4), dtype, rng, -2, 2), name=str(s), kwargs=dict(base=s))


def xlog1py_samples(dtype, rng):
    yield from binary_samples(rhs_low=-0.8, rhs_high=4.0, int_low=0, int_high=5,
                              scalars=(2, 3.5))(dtype, rng)
    if np.dtype(dtype).kind == "f":
        x = np.array([0.0, 0.0, 0.0, 0.0, 1.0, -2.0], dtype=dtype)
        y = np.array([-1.0, -2.0, 2.0, _NAN, -1.0, -2.0], dtype=dtype)
        yield SampleInput(x, (y,), name="zeros", gradcheck=False)


def xlog1py_scalar_self(dtype, rng):
    for s, shape in ((2.5, (3, 4)), (3, ()), (0, (5,))):
        yield SampleInput(make(shape, dtype, rng, -0.8, 4.0) if np.dtype(dtype).kind == "f"
                          else make(shape, dtype, rng, 0, 5), kwargs=dict(x=s),
                          name=type(s).__name__)


def zeta_samples(dtype, rng):
    is_float = np.dtype(dtype).kind == "f"
    s = lambda sh: make(sh, dtype, rng, 1.5, 6.0) if is_float else make(sh, dtype, rng, 2, 6)  # noqa: E731
    q = lambda sh: make(sh, dtype, rng, 0.5, 5.0) if is_float else make(sh, dtype, rng, 1, 5)  # noqa: E731
    yield SampleInput(s((3, 4)), (q((3, 4)),), nondiff=(0,))
    yield SampleInput(s((3, 1)), (q((4,)),), nondiff=(0,), name="broadcast")
    yield SampleInput(s(()), (q((2, 3)),), nondiff=(0,), name="0d")
    yield SampleInput(s((3,)), (2.5,), nondiff=(0,), name="scalar_q")
    if is_float:
        yield SampleInput(np.array([1.0, 0.5, 2.0, 3.0, 2.5], dtype=dtype),
                          (np.array([1.0, 1.0, 0.0, -1.5, -1.5], dtype=dtype),), name="edges",
                          grad=False)


def igamma_samples(dtype, rng):
    a = lambda sh: make(sh, dtype, rng, 0.5, 10.0)  # noqa: E731
    x = lambda sh: make(sh, dtype, rng, 0.1, 15.0)  # noqa: E731
    yield SampleInput(a((3, 4)), (x((3, 4)),), nondiff=(0,))
    yield SampleInput(a((3, 1)), (x((4,)),), nondiff=(0,), name="broadcast")
    yield SampleInput(a(()), (x((2, 3)),), nondiff=(0,), name="0d")
    yield SampleInput(NonContig(a((4, 3))), (NonContig(x((4, 3))),), nondiff=(0,),
                      name="transposed")
    yield SampleInput(np.array([0.0, 0.0, 1.0, -1.0, 1.0, 2.0, _INF, 1.0, 3.0], dtype=dtype),
                      (np.array([0.0, 1.0, 0.0, 1.0, -1.0, _INF, 1.0, _NAN, _INF], dtype=dtype),),
                      name="edges", grad=False)


def binary_ops() -> list[OpInfo]:
    ops = []
    ops += fn_and_method("copysign", copysign_samples, dtypes=FLOAT_INT, mixed=binary_mixed())
    for name in ("fmax", "fmin"):
        ops += fn_and_method(name, maxmin_samples, dtypes=FLOAT_INT + (B,),
                             mixed=binary_mixed(scalars=False), errors=_pair_errors(name))
    for name in ("gcd", "lcm"):
        ops += fn_and_method(name, binary_samples(tensor_only=True, int_low=-12, int_high=12),
                             dtypes=(I64,), mixed=_int_binary,
                             errors=_pair_errors(name, ("float",)))
    ops += fn_and_method("ldexp", ldexp_samples, dtypes=FLOAT, mixed=_ldexp_mixed,
                         errors=_pair_errors("ldexp"))
    ops += fn_and_method("logaddexp2", _nan_samples, dtypes=FLOAT,
                         mixed=_float_mixed, errors=_pair_errors("logaddexp2", ("int",)))
    ops += fn_and_method("nextafter", _nan_samples, dtypes=FLOAT, supports_grad=False,
                         requires_grad_parity=False, errors=_pair_errors("nextafter", ("int",)))
    ops += fn_and_method("float_power", float_power_samples, dtypes=FLOAT_INT, mixed=pow_mixed)
    ops.append(OpInfo("float_power.scalar_base",
                      lambda m: lambda x, base: m.float_power(base, x), float_power_scalar_base,
                      dtypes=FLOAT_INT))
    # (no bool operands: torch computes xlog1py(float64, True) in reduced precision)
    ops.append(OpInfo("special.xlog1py", _special("xlog1py"), xlog1py_samples, dtypes=FLOAT_INT,
                      mixed=binary_mixed(positive=True, bool_ok=False)))
    ops.append(OpInfo("special.xlog1py.scalar_self",
                      lambda m: lambda y, x: m.special.xlog1py(x, y), xlog1py_scalar_self,
                      dtypes=FLOAT_INT))
    ops.append(OpInfo("special.zeta", _special("zeta"), zeta_samples, dtypes=FLOAT_INT))
    for name in ("igamma", "igammac"):
        ops += fn_and_method(name, igamma_samples, dtypes=FLOAT,
                             errors=_pair_errors(name, ("int",)))
    for name in ("gammainc", "gammaincc"):
        ops.append(OpInfo(f"special.{name}", _special(name), igamma_samples, dtypes=(F64,),
                          variant=True))
    ops.append(OpInfo("special.zeta.scalar_self", lambda m: lambda q: m.special.zeta(2.5, q),
                      lambda dtype, rng: [SampleInput(make((3, 4), dtype, rng, 0.5, 4.0))],
                      dtypes=FLOAT))
    return ops


# --- torch.special aliases of other ops ------------------------------------------------------
def _dim_samples(dtype, rng):
    yield SampleInput(make((3, 4), dtype, rng), (1,))
    yield SampleInput(make((2, 3, 4), dtype, rng), (0,), name="dim0")


def _dim_samples_0(dtype, rng):
    yield SampleInput(make((3, 4), dtype, rng))
    yield SampleInput(make((5,), dtype, rng), name="1d")


def _float_mixed(rng):
    yield SampleInput(make((3,), F32, rng), (make((3,), F64, rng),), name="f32_f64")
    yield SampleInput(make((2, 3), F64, rng), (make((3,), F32, rng),), name="f64_f32")
    yield SampleInput(make((3,), F32, rng), (make((), F64, rng),), name="f32_f64_0d")
    yield SampleInput(make((3,), F32, rng), (make((3,), I64, rng, -3, 3),), name="f32_i64")


def alias_ops() -> list[OpInfo]:
    f64 = dict(dtypes=(F64,), variant=True)
    ops = [OpInfo(f"special.{name}", _special(name), unary_samples(**kw), **f64) for name, kw in (
        ("expit", dict()), ("erf", dict()), ("erfc", dict()), ("erfinv", dict(low=-0.9, high=0.9)),
        ("gammaln", dict(low=0.2, high=5.0)), ("digamma", dict(low=0.2, high=5.0)),
        ("psi", dict(low=0.2, high=5.0)), ("i0", dict()), ("sinc", dict(avoid=(0.0,))),
        ("expm1", dict()), ("exp2", dict()), ("log1p", dict(low=-0.9, high=3.0)),
        ("ndtr", dict()), ("round", dict(avoid=tuple(k + 0.5 for k in range(-4, 4)))),
        ("logit", dict(low=0.05, high=0.95)))]
    ops.append(OpInfo("special.ndtr.int", _special("ndtr"), unary_samples(), dtypes=(I64, B)))
    ops.append(OpInfo("special.logit.eps", lambda m: lambda x: m.special.logit(x, eps=0.1),
                      unary_samples(low=0.2, high=0.8), **f64))
    ops.append(OpInfo("special.round.decimals",
                      lambda m: lambda x: m.special.round(x, decimals=1),
                      unary_samples(low=0.02, high=0.08), **f64))
    ops.append(OpInfo("special.xlogy", _special("xlogy"),
                      binary_samples(rhs_low=0.2, rhs_high=4.0), **f64))
    for name in ("softmax", "log_softmax", "logsumexp"):
        ops.append(OpInfo(f"special.{name}", _special(name), _dim_samples, **f64))
    ops.append(OpInfo("special.log_softmax.dtype",
                      lambda m: lambda x: m.special.log_softmax(x, 0, dtype=m.float64),
                      _dim_samples_0, dtypes=(F32,)))
    return ops


# --- in-place forms --------------------------------------------------------------------------
_INPLACE_UNARY = {
    "asin_": (-0.9, 0.9), "acos_": (-0.9, 0.9), "atan_": (-2, 2), "sinh_": (-2, 2),
    "cosh_": (-2, 2), "asinh_": (-2, 2), "acosh_": (1.2, 3), "atanh_": (-0.9, 0.9),
    "arcsin_": (-0.9, 0.9), "arccos_": (-0.9, 0.9), "arctan_": (-2, 2), "arcsinh_": (-2, 2),
    "arccosh_": (1.2, 3), "arctanh_": (-0.9, 0.9), "deg2rad_": (-2, 2), "rad2deg_": (-2, 2),
    "sinc_": (0.1, 2), "erfc_": (-2, 2), "erfinv_": (-0.9, 0.9), "lgamma_": (0.2, 4),
    "digamma_": (0.2, 4), "i0_": (-2, 2), "frac_": (0.1, 0.9), "sgn_": (0.1, 2),
}
# the top-level in-place functions: torch.exp_(t) is t.exp_()
_TOP_LEVEL = {
    "abs_": (-2, 2), "acos_": (-0.9, 0.9), "arcsinh_": (-2, 2), "ceil_": (0.1, 0.9),
    "cos_": (-2, 2), "cosh_": (-2, 2), "deg2rad_": (-2, 2), "erf_": (-2, 2), "erfc_": (-2, 2),
    "exp2_": (-2, 2), "exp_": (-2, 2), "expm1_": (-2, 2), "fix_": (0.1, 0.9),
    "floor_": (0.1, 0.9), "frac_": (0.1, 0.9), "i0_": (-2, 2), "log10_": (0.2, 3),
    "log1p_": (0.2, 3), "log2_": (0.2, 3), "log_": (0.2, 3), "logit_": (0.1, 0.9),
    "nan_to_num_": (-2, 2), "neg_": (-2, 2), "negative_": (-2, 2), "rad2deg_": (-2, 2),
    "reciprocal_": (0.3, 3), "round_": (0.1, 0.4), "rsqrt_": (0.3, 3), "sigmoid_": (-2, 2),
    "sin_": (-2, 2), "sinc_": (0.1, 2), "sinh_": (-2, 2), "sqrt_": (0.3, 3), "square_": (-2, 2),
    "tan_": (-1, 1), "tanh_": (-2, 2), "trunc_": (0.1, 0.9), "zero_": (-2, 2),
}


def _top_level(name):
    def op(m):
        def run(x, *args, **kwargs):
            y = x.clone()
            out = getattr(m, name)(y, *args, **kwargs)
            assert out is y, f"torch.{name} must return its input"
            return y
        return run
    return op


def _range(low, high, args=()):
    def gen(dtype, rng):
        yield SampleInput(make((3, 4), dtype, rng, low, high), args)
        yield SampleInput(make((), dtype, rng, low, high), args, name="0d")
        yield SampleInput(NonContig(make((4, 3), dtype, rng, low, high)), args,
                          name="transposed")
    return gen


def _inplace_errors():
    yield ErrorInput(SampleInput(np.array([1, 2])), RuntimeError, "int_result")


def _binary_inplace(rhs_low=-2.0, rhs_high=2.0, scalar=None):
    def gen(dtype, rng):
        yield SampleInput(make((3, 4), dtype, rng), (make((3, 4), dtype, rng, rhs_low, rhs_high),))
        yield SampleInput(make((3, 4), dtype, rng), (make((4,), dtype, rng, rhs_low, rhs_high),),
                          name="broadcast")
        if scalar is not None:
            yield SampleInput(make((3, 4), dtype, rng), (scalar,), name="scalar")
    return gen


def inplace_ops() -> list[OpInfo]:
    # NOTE: torch has no derivative for in-place asinh/acosh/atanh (its backward raises);
    # graphgrad's is the out-of-place one, so only forward and requires_grad are compared.
    no_grad = ("asinh_", "acosh_", "atanh_", "arcsinh_", "arccosh_", "arctanh_")
    ops = [OpInfo(f"Tensor.{n}", on_clone(n), _range(*r), supports_grad=n not in no_grad)
           for n, r in _INPLACE_UNARY.items()]
    ops.append(OpInfo("Tensor.asin_.int_error", on_clone("asin_"), lambda d, r: [], dtypes=(),
                      errors=_inplace_errors))
    ops += [OpInfo(f"torch.{n}", _top_level(n), _range(*r), supports_grad=n not in no_grad)
            for n, r in _TOP_LEVEL.items()]
    ops += [
        OpInfo("Tensor.polygamma_", on_clone("polygamma_"), _range(0.3, 4, (2,))),
        OpInfo("Tensor.mvlgamma_", on_clone("mvlgamma_"), _range(1.5, 4, (2,))),
        OpInfo("Tensor.copysign_", on_clone("copysign_"),
               _binary_inplace(0.2, 2.0, scalar=-1.5)),
        OpInfo("Tensor.ldexp_", on_clone("ldexp_"), _binary_inplace(-2.0, 2.0)),
        OpInfo("Tensor.nextafter_", on_clone("nextafter_"), _binary_inplace(),
               supports_grad=False, requires_grad_parity=False),
        OpInfo("Tensor.float_power_", on_clone("float_power_"), _range(0.3, 3, (2.5,)),
               dtypes=(F64,), errors=lambda: [ErrorInput(SampleInput(
                   np.ones(3, dtype=F32), (2,)), RuntimeError, "float32_base")]),
        OpInfo("Tensor.gcd_", on_clone("gcd_"), _binary_inplace(-9, 9), dtypes=(I64,)),
        OpInfo("Tensor.lcm_", on_clone("lcm_"), _binary_inplace(-9, 9), dtypes=(I64,)),
        OpInfo("torch.clamp_", _top_level("clamp_"), _range(-2, 2, (-1.0, 1.0))),
        OpInfo("torch.clamp_min_", _top_level("clamp_min_"), _range(-2, 2, (-1.0,))),
        OpInfo("torch.clamp_max_", _top_level("clamp_max_"), _range(-2, 2, (1.0,))),
        OpInfo("torch.clip_", _top_level("clip_"), _range(-2, 2, (-1.0, 1.0))),
        OpInfo("torch.fill_", _top_level("fill_"), _range(-2, 2, (1.5,))),
        OpInfo("torch.xlogy_", _top_level("xlogy_"), _binary_inplace(0.2, 3.0, scalar=2.0)),
        OpInfo("torch.gcd_", _top_level("gcd_"), _binary_inplace(-9, 9), dtypes=(I64,)),
        OpInfo("torch.lcm_", _top_level("lcm_"), _binary_inplace(-9, 9), dtypes=(I64,)),
        OpInfo("torch.ldexp_", _top_level("ldexp_"), _binary_inplace()),
        # (self is igamma's first argument, which has no derivative in torch either)
        OpInfo("Tensor.igamma_", on_clone("igamma_"), _binary_inplace(0.2, 3.0),
               supports_grad=False),
        OpInfo("Tensor.igammac_", on_clone("igammac_"), _binary_inplace(0.2, 3.0),
               supports_grad=False),
    ]
    return ops


def op_db() -> list[OpInfo]:
    return unary_ops() + gamma_ops() + binary_ops() + alias_ops() + inplace_ops()
