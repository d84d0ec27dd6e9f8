"""OpInfos for elementwise ops: unary math, binary arithmetic and operators, comparisons,
logical ops, clamp and where, in function, method and operator forms.

Domains keep samples away from points where a gradient is undefined; the points themselves are
sampled separately (``gradcheck=False``) to compare torch's subgradient conventions.
"""

from __future__ import annotations

import operator

import numpy as np

from .core import (
    ALL,
    FLOAT,
    FLOAT_INT,
    DType,
    ErrorInput,
    NonContig,
    OpInfo,
    SampleInput,
    make,
    variant_dtypes,
)

F32, F64, I32, I64, B = np.float32, np.float64, np.int32, np.int64, np.bool_
_NAN, _INF = np.nan, np.inf

UNARY_SHAPES = [(), (5,), (3, 4), (2, 1, 3), (0, 3)]
BINARY_SHAPES = [
    ((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 3), (4, 1)), ((), (3,)), ((3, 1), ()), ((), ()),
    ((0, 3), (1, 3)), ((4, 1), (1, 0)),
]


def method(name):
    """The method form: ``x.name(*args, **kwargs)``."""
    return lambda m: (lambda x, *a, **k: getattr(x, name)(*a, **k))


def function(name):
    return lambda m: getattr(m, name)


def fn_and_method(name, samples, **kw) -> list[OpInfo]:
    """``torch.name`` in full, and ``Tensor.name`` as a variant."""
    fn = OpInfo(name, function(name), samples, **kw)
    kw["dtypes"] = variant_dtypes(fn.dtypes)
    return [fn, OpInfo(f"Tensor.{name}", method(name), samples, variant=True, **kw)]


# --- unary ---------------------------------------------------------------------------------

def unary_samples(low=-3.0, high=3.0, *, avoid=(), margin=0.1, int_low=-5, int_high=5,
                  kinks=(), extra=()):
    """Shapes incl. 0-d, size-1 and size-0 dims, two non-contiguous layouts, plus ``kinks``
    (values where the gradient is a torch convention) and ``extra`` forward-only values."""

    def gen(dtype, rng):
        is_float = np.dtype(dtype).kind == "f"
        lo, hi = (low, high) if is_float else (int_low, int_high)

        def arr(shape):
            return make(shape, dtype, rng, lo, hi, avoid=avoid, margin=margin)

        for shape in UNARY_SHAPES:
            yield SampleInput(arr(shape))
        yield SampleInput(NonContig(arr((4, 3))), name="transposed")
        yield SampleInput(NonContig(arr((5,))), name="strided")
        if is_float and kinks:
            yield SampleInput(np.array(kinks, dtype=dtype), name="kinks", gradcheck=False)
        if is_float and extra:
            yield SampleInput(np.array(extra, dtype=dtype), name="special", grad=False)

    return gen


_UNARY_FLOAT = FLOAT + (I64,)

UNARY_SPECS = [
    # name, sample kwargs, dtypes
    ("exp", dict(), FLOAT + (I64, B)),
    ("exp2", dict(), _UNARY_FLOAT),
    ("log", dict(low=0.1, high=5.0, int_low=1, int_high=9, extra=(0.0, -1.0, _INF)), _UNARY_FLOAT),
    ("log2", dict(low=0.1, high=5.0, int_low=1, int_high=9), _UNARY_FLOAT),
    ("log10", dict(low=0.1, high=5.0, int_low=1, int_high=9), _UNARY_FLOAT),
    ("log1p", dict(low=-0.9, high=4.0, int_low=0, int_high=9), _UNARY_FLOAT),
    ("expm1", dict(), _UNARY_FLOAT),
    ("sqrt", dict(low=0.1, high=5.0, int_low=0, int_high=9, extra=(0.0, -1.0, _INF)),
     FLOAT + (I64, B)),
    ("rsqrt", dict(low=0.2, high=5.0, int_low=1, int_high=9, extra=(0.0, _INF)), _UNARY_FLOAT),
    ("sin", dict(low=-4.0, high=4.0), _UNARY_FLOAT),
    ("cos", dict(low=-4.0, high=4.0), _UNARY_FLOAT),
    ("tan", dict(low=-1.2, high=1.2, int_low=-1, int_high=1), _UNARY_FLOAT),
    ("tanh", dict(low=-4.0, high=4.0), _UNARY_FLOAT),
    ("sigmoid", dict(low=-5.0, high=5.0, extra=(-100.0, 100.0, -_INF, _INF)), _UNARY_FLOAT),
    ("erf", dict(low=-2.0, high=2.0), _UNARY_FLOAT),
    ("reciprocal", dict(avoid=(0.0,), margin=0.3, int_low=1, int_high=6, extra=(0.0, -0.0)),
     _UNARY_FLOAT),
    ("neg", dict(), FLOAT_INT),
    ("abs", dict(avoid=(0.0,), kinks=(0.0, -1.0, 2.0)), FLOAT_INT),
    ("relu", dict(avoid=(0.0,), kinks=(0.0, -1.0, 2.0)), FLOAT_INT),
    ("sign", dict(avoid=(0.0,), kinks=(0.0, -1.5, 2.0), extra=(0.0, -0.0, _INF, -_INF)), ALL),
    ("square", dict(), ALL),
    ("floor", dict(avoid=tuple(range(-3, 4)), margin=0.05, extra=(-0.5, 2.0, -2.0)), FLOAT_INT),
    ("ceil", dict(avoid=tuple(range(-3, 4)), margin=0.05, extra=(-0.5, 2.0, -2.0)), FLOAT_INT),
    ("trunc", dict(avoid=tuple(range(-3, 4)), margin=0.05, extra=(-0.5, 2.7, -2.7)), FLOAT_INT),
    ("round", dict(avoid=tuple(k + 0.5 for k in range(-4, 4)), margin=0.05,
                   extra=(0.5, 1.5, 2.5, -0.5, -1.5, 0.49)), FLOAT_INT),
]


def round_decimals_samples(dtype, rng):
    """``round(decimals=d)``, drawn away from the rounding boundaries at (k + 0.5) * 10**-d."""
    for decimals, shape in ((1, (3, 4)), (2, (5,)), (0, ()), (-1, (2, 3))):
        scale = 10.0 ** -decimals
        k = rng.integers(-30, 30, size=shape)
        frac = rng.uniform(0.1, 0.4, size=shape) * rng.choice([-1, 1], size=shape)
        yield SampleInput(((k + frac) * scale).astype(dtype), kwargs=dict(decimals=decimals))
    yield SampleInput(np.array([0.25, 0.35, -0.15, 1.05], dtype=dtype), kwargs=dict(decimals=1),
                      name="halves", grad=False)


def _unary_errors(name):
    def errors():
        if name == "neg":
            yield ErrorInput(SampleInput(np.array([True, False])), RuntimeError, "bool")
        if name == "abs":
            yield ErrorInput(SampleInput(np.array([True, False])), RuntimeError, "bool")
        if name == "relu":
            yield ErrorInput(SampleInput(np.array([True, False])), RuntimeError, "bool")
        if name == "round":
            yield ErrorInput(SampleInput(np.array([1, 2]), kwargs=dict(decimals=1)), RuntimeError,
                             "int_decimals")

    return errors


def unary_ops() -> list[OpInfo]:
    ops = []
    for name, kw, dtypes in UNARY_SPECS:
        ops += fn_and_method(name, unary_samples(**kw), dtypes=dtypes, errors=_unary_errors(name))
    ops.append(OpInfo("round.decimals", function("round"), round_decimals_samples))
    ops.append(OpInfo("Tensor.round.decimals", method("round"), round_decimals_samples))
    ops.append(OpInfo("operator.neg", lambda m: operator.neg, unary_samples(), dtypes=FLOAT_INT,
                      errors=_unary_errors("neg")))
    ops.append(OpInfo("operator.abs", lambda m: operator.abs, unary_samples(avoid=(0.0,)),
                      dtypes=FLOAT_INT))
    ops += fn_and_method("logical_not", unary_samples(extra=(0.0, -0.0, _NAN)), dtypes=ALL,
                         supports_grad=False)
    special = (0.0, _NAN, _INF, -_INF, 1e38, -1e-38)
    for name in ("isnan", "isinf", "isfinite"):
        ops += fn_and_method(name, unary_samples(extra=special), dtypes=ALL, supports_grad=False)
    ops.append(OpInfo(
        "operator.invert", lambda m: operator.invert, unary_samples(), dtypes=(B,) + (I64,),
        supports_grad=False,
        errors=lambda: [ErrorInput(SampleInput(np.array([1.0, 2.0])), TypeError, "float")],
    ))
    return ops


# --- binary --------------------------------------------------------------------------------

def binary_samples(low=-3.0, high=3.0, *, rhs_low=None, rhs_high=None, rhs_avoid=(),
                   margin=0.1, int_low=-5, int_high=5, scalars=(2, -1.5), ties=False,
                   tensor_only=False):
    """Broadcasting shape pairs, 0-d and size-0 operands, a non-contiguous pair, and Python
    scalars (weak typing). ``ties`` mixes in equal elements (comparisons)."""
    rhs_low = low if rhs_low is None else rhs_low
    rhs_high = high if rhs_high is None else rhs_high

    def gen(dtype, rng):
        is_float = np.dtype(dtype).kind == "f"

        def lhs(shape):
            lo, hi = (low, high) if is_float else (int_low, int_high)
            return make(shape, dtype, rng, lo, hi)

        def rhs(shape):
            lo, hi = (rhs_low, rhs_high) if is_float else (int_low, int_high)
            return make(shape, dtype, rng, lo, hi, avoid=rhs_avoid, margin=margin)

        for sa, sb in BINARY_SHAPES:
            a, b = lhs(sa), rhs(sb)
            if ties and a.shape == b.shape and a.size:
                b = np.where(rng.random(a.shape) < 0.5, a, b)
                yield SampleInput(a, (b,), name="ties", gradcheck=False)
            else:
                yield SampleInput(a, (b,))
        yield SampleInput(NonContig(lhs((4, 3))), (NonContig(rhs((4, 3))),), name="transposed")
        yield SampleInput(NonContig(lhs((5,))), (rhs((5,)),), name="strided")
        if not tensor_only:
            for s in scalars:
                if not is_float and isinstance(s, int) and s in rhs_avoid:
                    continue
                yield SampleInput(lhs((3, 4)), (s,), name="scalar")
            if not is_float:
                yield SampleInput(lhs((3, 4)), (2.5,), name="float_scalar")

    return gen


def binary_mixed(*, bool_ok=True, positive=False, nonzero_rhs=False, scalars=True,
                 tensor_only=False):
    """Operands whose dtypes differ, where type promotion decides the result dtype."""

    def gen(rng):
        lo = 0.5 if positive else -3.0

        def f(shape, dtype):
            return make(shape, dtype, rng, lo, 3.0, avoid=(0.0,) if nonzero_rhs else (),
                        margin=0.3)

        def i(shape, dtype):
            out = make(shape, dtype, rng, 1 if positive else -4, 4)
            return np.where(out == 0, 1, out).astype(dtype) if nonzero_rhs else out

        pairs = [
            (f((3,), F32), f((3,), F64)),
            (f((2, 3), F64), f((3,), F32)),
            (i((3,), I32), i((3,), I64)),
            (i((3,), I64), f((3,), F32)),
            (f((3,), F32), i((3,), I32)),
            (i((3,), I32), i((), I64)),
            (f((3,), F32), f((), F64)),
            (i((3,), I64), f((), F64)),
            (f((), F32), f((), F64)),
            (i((), I64), f((3,), F32)),
        ]
        if bool_ok:
            pairs += [(make((3,), B, rng), i((3,), I64)), (f((3,), F32), make((3,), B, rng))]
        for a, b in pairs:
            yield SampleInput(a, (b,), name=f"{a.dtype}_{b.dtype}")
        if scalars and not tensor_only:
            yield SampleInput(i((3,), I64), (2.5,), name="int64_pyfloat")
            yield SampleInput(i((3,), I32), (2,), name="int32_pyint")
            yield SampleInput(f((3,), F32), (3,), name="float32_pyint")
            if bool_ok:
                yield SampleInput(f((3,), F64), (True,), name="float64_pybool")
                yield SampleInput(make((3,), B, rng), (2,), name="bool_pyint")
                yield SampleInput(make((3,), B, rng), (1.5,), name="bool_pyfloat")

    return gen


def _broadcast_error():
    def errors():
        yield ErrorInput(SampleInput(np.ones((2, 3)), (np.ones((4,)),)), RuntimeError, "broadcast")
        yield ErrorInput(SampleInput(np.ones((2, 3)), (np.ones((3, 3)),)), RuntimeError,
                         "broadcast2")

    return errors


def _sub_errors():
    yield from _broadcast_error()()
    yield ErrorInput(SampleInput(np.array([True]), (np.array([False]),)), RuntimeError, "bool")


def _int_div_zero_errors():
    yield from _broadcast_error()()
    yield ErrorInput(SampleInput(np.array([3, 4]), (np.array([1, 0]),)), RuntimeError, "int_by_0")


def _pow_errors():
    yield from _broadcast_error()()
    yield ErrorInput(SampleInput(np.array([3, 4]), (-1,)), RuntimeError, "int_neg_scalar_exp")


def remainder_samples(dtype, rng):
    """``a % b`` with a/b kept away from integers, where the result jumps."""
    if np.dtype(dtype).kind != "f":
        yield from binary_samples(int_low=-7, int_high=7, rhs_avoid=(0,), scalars=(3, -2))(
            dtype, rng)
        return

    for sa, sb in ((3, 4), (3, 4)), ((2, 3), (3,)), ((), ()), ((0, 3), (3,)):
        b = make(sb, dtype, rng, -3.0, 3.0, avoid=(0.0,), margin=0.4)
        q = rng.integers(-3, 3, size=sa) + rng.uniform(0.1, 0.9, size=sa)
        yield SampleInput((q * b).astype(dtype), (b,))
    b = make((4, 3), dtype, rng, -3.0, 3.0, avoid=(0.0,), margin=0.4)
    q = rng.integers(-3, 3, size=(4, 3)) + rng.uniform(0.1, 0.9, size=(4, 3))
    yield SampleInput(NonContig((q * b).astype(dtype)), (NonContig(b),), name="transposed")
    q = rng.integers(-3, 3, size=(3, 4)) + rng.uniform(0.1, 0.9, size=(3, 4))
    yield SampleInput((q * 1.5).astype(dtype), (1.5,), name="scalar")
    yield SampleInput((q * -2).astype(dtype), (-2,), name="neg_int_scalar")


def pow_samples(dtype, rng):
    """Tensor and scalar exponents; bases stay positive wherever the exponent is not an int."""
    if np.dtype(dtype).kind != "f":
        base = make((3, 4), dtype, rng, -4, 4)
        yield SampleInput(base, (make((3, 4), dtype, rng, 0, 3),))
        yield SampleInput(base, (make((4,), dtype, rng, 0, 3),))
        yield SampleInput(base, (2,), name="int_scalar")
        yield SampleInput(base, (0.5,), name="float_scalar")
        yield SampleInput(make((), dtype, rng, 1, 4), (make((3,), dtype, rng, 0, 4),))
        return
    pos = lambda s: make(s, dtype, rng, 0.5, 2.5)  # noqa: E731
    yield SampleInput(pos((3, 4)), (make((3, 4), dtype, rng, -2.0, 2.0),))
    yield SampleInput(pos((2, 1, 3)), (make((4, 1), dtype, rng, -2.0, 2.0),))
    yield SampleInput(pos(()), (make((3,), dtype, rng, -2.0, 2.0),))
    yield SampleInput(pos((3,)), (make((), dtype, rng, -2.0, 2.0),))
    yield SampleInput(pos((0, 3)), (make((3,), dtype, rng),))
    yield SampleInput(NonContig(pos((4, 3))), (NonContig(make((4, 3), dtype, rng, -1.0, 1.0)),),
                      name="transposed")
    yield SampleInput(make((3, 4), dtype, rng), (2,), name="square")
    yield SampleInput(make((3, 4), dtype, rng), (3,), name="cube")
    yield SampleInput(make((3, 4), dtype, rng, avoid=(0.0,), margin=0.3), (-2,), name="neg_int")
    yield SampleInput(make((3, 4), dtype, rng), (0,), name="zero_exp")
    yield SampleInput(pos((3, 4)), (0.5,), name="sqrt")
    yield SampleInput(pos((3, 4)), (-1.5,), name="neg_float")
    yield SampleInput(make((3, 4), dtype, rng), (1.0,), name="float_one")
    yield SampleInput(np.array([-1.0, -2.0, 0.0, 4.0], dtype=dtype), (0.5,), name="nan_domain",
                      grad=False)


def pow_mixed(rng):
    yield SampleInput(make((3,), F32, rng, 0.5, 2.0), (make((3,), F64, rng),), name="f32_f64")
    yield SampleInput(make((3,), I64, rng, 1, 4), (make((3,), F32, rng),), name="int_base")
    yield SampleInput(make((3,), F32, rng, 0.5, 2.0), (make((3,), I64, rng, 0, 3),),
                      name="int_exp")
    yield SampleInput(make((3,), I32, rng, 1, 4), (make((), I64, rng, 0, 3),), name="i32_i64_0d")
    yield SampleInput(make((3,), I64, rng, 1, 4), (1.5,), name="int_pyfloat")
    yield SampleInput(make((3,), F32, rng, 0.5, 2.0), (make((), F64, rng),), name="f32_f64_0d")


def rpow_samples(dtype, rng):
    if np.dtype(dtype).kind != "f":
        yield SampleInput(make((3, 4), dtype, rng, 0, 5), (2,), name="int_base")
        yield SampleInput(make((3,), dtype, rng, -3, 3), (2.5,), name="float_base")
        return
    yield SampleInput(make((3, 4), dtype, rng), (2,), name="int_base")
    yield SampleInput(make((5,), dtype, rng), (0.5,), name="float_base")
    yield SampleInput(make((), dtype, rng), (3.0,), name="0d")
    yield SampleInput(make((0, 2), dtype, rng), (2,), name="empty")
    yield SampleInput(NonContig(make((4, 3), dtype, rng)), (1.5,), name="transposed")


def reflected_samples(*, avoid=(), margin=0.1, int_low=-5, int_high=5, scalars=(2, 3.5),
                      frac_safe=False):
    """``scalar OP tensor``: args hold the scalar, the tensor is the input."""

    def gen(dtype, rng):
        is_float = np.dtype(dtype).kind == "f"

        def arr(shape):
            if is_float:
                return make(shape, dtype, rng, -3.0, 3.0, avoid=avoid, margin=margin)
            return make(shape, dtype, rng, int_low, int_high, avoid=avoid)

        for s in scalars:
            for shape in ((3, 4), ()):
                x = arr(shape)
                if frac_safe and is_float:
                    # keep s / x away from integers, where floor and remainder jump
                    bad = np.abs(s / x - np.round(s / x)) < 0.1
                    x = np.where(bad, x * 1.17, x).astype(dtype)
                yield SampleInput(x, (s,), name=type(s).__name__)
        yield SampleInput(arr((0, 3)), (scalars[0],), name="empty")
        yield SampleInput(NonContig(arr((4, 3))), (scalars[-1],), name="transposed")

    return gen


def _rop(sym):
    return {
        "radd": lambda x, s: s + x, "rsub": lambda x, s: s - x, "rmul": lambda x, s: s * x,
        "rtruediv": lambda x, s: s / x, "rfloordiv": lambda x, s: s // x,
        "rmod": lambda x, s: s % x, "rpow": lambda x, s: s ** x,
    }[sym]


def maxmin_samples(dtype, rng):
    yield from binary_samples(tensor_only=True, ties=True)(dtype, rng)
    if np.dtype(dtype).kind == "f":
        a = np.array([_NAN, 1.0, 2.0, _NAN], dtype=dtype)
        b = np.array([0.0, _NAN, 3.0, _NAN], dtype=dtype)
        yield SampleInput(a, (b,), name="nan", grad=False)
        yield SampleInput(np.array([-0.0, 0.0], dtype=dtype), (np.array([0.0, -0.0], dtype=dtype),),
                          name="signed_zero", grad=False)


def comparison_samples(dtype, rng):
    yield from binary_samples(ties=True, scalars=(0, 1.5, -1))(dtype, rng)
    if np.dtype(dtype).kind == "f":
        a = np.array([_NAN, 1.0, _INF, -_INF, 0.0], dtype=dtype)
        b = np.array([_NAN, _NAN, _INF, 0.0, -0.0], dtype=dtype)
        yield SampleInput(a, (b,), name="special")


def logical_samples(dtype, rng):
    yield from binary_samples(tensor_only=True)(dtype, rng)
    if np.dtype(dtype).kind == "f":
        yield SampleInput(np.array([0.0, -0.0, _NAN, 1.0]), (np.array([1.0, 1.0, 1.0, 0.0]),),
                          name="special")


def logical_mixed(rng):
    yield SampleInput(make((3,), F32, rng), (make((3,), I64, rng, -1, 1),), name="f32_i64")
    yield SampleInput(make((3,), B, rng), (make((3,), F64, rng),), name="bool_f64")
    yield SampleInput(make((2, 3), I32, rng, -1, 1), (make((3,), B, rng),), name="i32_bool")


def _bitwise_mixed(rng):
    yield SampleInput(make((3,), B, rng), (True,), name="bool_pybool")
    yield SampleInput(make((3,), B, rng), (make((3,), I64, rng),), name="bool_i64")
    yield SampleInput(make((3,), B, rng), (make((), B, rng),), name="bool_0d")


def _bitwise_errors():
    yield ErrorInput(SampleInput(np.ones(3), (np.ones(3),)), RuntimeError, "float")
    yield ErrorInput(SampleInput(np.ones(3, dtype=bool), (np.ones(2, dtype=bool),)), RuntimeError,
                     "broadcast")


def where_samples(dtype, rng):
    is_float = np.dtype(dtype).kind == "f"
    lo, hi = (-3.0, 3.0) if is_float else (-5, 5)

    def a(shape):
        return make(shape, dtype, rng, lo, hi)

    c = lambda s: make(s, B, rng)  # noqa: E731
    yield SampleInput(c((3, 4)), (a((3, 4)), a((3, 4))))
    yield SampleInput(c((3, 1)), (a((1, 4)), a((4,))), name="broadcast")
    yield SampleInput(c(()), (a((2, 3)), a(())), name="0d_cond")
    yield SampleInput(c((2, 3)), (a(()), a(())), name="0d_values")
    yield SampleInput(c((0, 3)), (a((1, 3)), a((0, 1))), name="empty")
    yield SampleInput(NonContig(c((4, 3))), (NonContig(a((4, 3))), a((3,))), name="transposed")
    yield SampleInput(c((3, 4)), (a((3, 4)), 0.5 if is_float else 2), name="scalar_other")
    yield SampleInput(c((3, 4)), (2, a((3, 4))), name="scalar_input")


def where_mixed(rng):
    c = make((3,), B, rng)
    yield SampleInput(c, (make((3,), F32, rng), make((3,), F64, rng)), name="f32_f64")
    yield SampleInput(c, (make((3,), I64, rng, -3, 3), 2.5), name="int_pyfloat")
    yield SampleInput(c, (make((3,), I32, rng, -3, 3), make((3,), I64, rng, -3, 3)),
                      name="i32_i64")
    yield SampleInput(c, (make((3,), F32, rng), make((), F64, rng)), name="f32_f64_0d")
    yield SampleInput(c, (1.0, 2), name="pyfloat_pyint")


def where_method_samples(dtype, rng):
    """``x.where(cond, y)``: the method's receiver is the value taken where cond holds."""
    for s in where_samples(dtype, rng):
        if isinstance(s.args[0], (np.ndarray, NonContig)):
            yield SampleInput(s.args[0], (s.input, s.args[1]), name=s.name)


def _where_errors():
    yield ErrorInput(SampleInput(np.ones(3), (np.ones(3), np.zeros(3))), RuntimeError,
                     "float_cond")
    yield ErrorInput(SampleInput(np.ones(3, dtype=bool), (np.ones(2), np.zeros(3))),
                     RuntimeError, "broadcast")


def clamp_samples(dtype, rng):
    is_float = np.dtype(dtype).kind == "f"
    bounds = (-1.0, 1.5) if is_float else (-2, 3)
    avoid = bounds if is_float else ()

    def x(shape):
        if is_float:
            return make(shape, dtype, rng, -3.0, 3.0, avoid=avoid, margin=0.1)
        return make(shape, dtype, rng, -5, 5)

    lo, hi = bounds
    yield SampleInput(x((3, 4)), kwargs=dict(min=lo), name="min")
    yield SampleInput(x((3, 4)), kwargs=dict(max=hi), name="max")
    yield SampleInput(x((3, 4)), kwargs=dict(min=lo, max=hi), name="both")
    yield SampleInput(x((5,)), (lo, hi), name="positional")
    yield SampleInput(x(()), kwargs=dict(min=lo), name="0d")
    yield SampleInput(x((0, 3)), kwargs=dict(min=lo, max=hi), name="empty")
    yield SampleInput(NonContig(x((4, 3))), kwargs=dict(min=lo, max=hi), name="transposed")
    yield SampleInput(x((3, 4)), kwargs=dict(min=hi, max=lo), name="min_above_max")
    if is_float:
        tlo = make((3, 1), dtype, rng, -2.0, -0.5)
        thi = make((4,), dtype, rng, 0.5, 2.0)
        xs = make((3, 4), dtype, rng, -3.0, 3.0)
        xs = np.where(np.abs(xs - tlo) < 0.1, xs + 0.3, xs)
        xs = np.where(np.abs(xs - thi) < 0.1, xs + 0.3, xs).astype(dtype)
        yield SampleInput(xs, kwargs=dict(min=tlo, max=thi), name="tensor_bounds")
        yield SampleInput(make((3, 4), dtype, rng, -3.0, 3.0, avoid=(0.0,)),
                          kwargs=dict(min=make((), dtype, rng, -0.5, -0.2)), name="tensor_min_0d")
        yield SampleInput(np.array([-1.0, 1.5, 0.0, 3.0], dtype=dtype), kwargs=dict(min=lo, max=hi),
                          name="at_bounds", gradcheck=False)
        yield SampleInput(np.array([_NAN, 2.0], dtype=dtype), kwargs=dict(min=lo, max=hi),
                          name="nan", grad=False)
    else:
        yield SampleInput(x((3, 4)), kwargs=dict(min=make((3, 1), dtype, rng, -3, 0)),
                          name="tensor_min")


def clamp_mixed(rng):
    yield SampleInput(make((3, 4), I64, rng, -5, 5), kwargs=dict(min=0.5), name="int_pyfloat")
    yield SampleInput(make((3, 4), I64, rng, -5, 5), kwargs=dict(max=make((), F32, rng)),
                      name="int_f32_0d")
    yield SampleInput(make((3, 4), F32, rng), kwargs=dict(min=make((4,), F64, rng, -3.0, -2.0)),
                      name="f32_f64")


def _clamp_errors():
    yield ErrorInput(SampleInput(np.ones(3)), RuntimeError, "no_bounds")
    yield ErrorInput(SampleInput(np.ones(3), kwargs=dict(min=np.ones(2))), RuntimeError,
                     "broadcast")


def binary_ops() -> list[OpInfo]:
    ops = []
    sym = dict(
        add=(operator.add, ALL, binary_samples(), binary_mixed(), _broadcast_error()),
        sub=(operator.sub, FLOAT_INT, binary_samples(), binary_mixed(bool_ok=False), _sub_errors),
        mul=(operator.mul, ALL, binary_samples(), binary_mixed(), _broadcast_error()),
        div=(operator.truediv, FLOAT_INT,
             binary_samples(rhs_avoid=(0, 0.0), margin=0.3, scalars=(2, -1.5, 3.0)),
             binary_mixed(nonzero_rhs=True), _broadcast_error()),
        floor_divide=(operator.floordiv, FLOAT_INT,
                      binary_samples(rhs_avoid=(0, 0.0), margin=0.3, scalars=(2, -1.5)),
                      binary_mixed(bool_ok=False, nonzero_rhs=True), _int_div_zero_errors),
        remainder=(operator.mod, FLOAT_INT, remainder_samples,
                   binary_mixed(bool_ok=False, nonzero_rhs=True), _int_div_zero_errors),
        pow=(operator.pow, FLOAT_INT, pow_samples, pow_mixed, _pow_errors),
    )
    for name, (pyop, dtypes, samples, mixed, errors) in sym.items():
        kw = dict(dtypes=dtypes, mixed=mixed, errors=errors)
        if name == "floor_divide":
            # torch marks floor_divide's output as requiring grad but has no derivative for it
            kw.update(supports_grad=False, requires_grad_parity=False)
        ops += fn_and_method(name, samples, **kw)
        ops.append(OpInfo(f"operator.{pyop.__name__}", lambda m, f=pyop: f, samples, **kw))

    # reflected: python scalar on the left
    refl = dict(
        radd=(ALL, reflected_samples(), True),
        rsub=(FLOAT_INT, reflected_samples(), True),
        rmul=(ALL, reflected_samples(), True),
        rtruediv=(FLOAT_INT, reflected_samples(avoid=(0, 0.0), margin=0.3), True),
        rfloordiv=(FLOAT_INT, reflected_samples(avoid=(0, 0.0), margin=0.3, scalars=(7, -2.5),
                                                frac_safe=True), False),
        # torch has no derivative for remainder with a scalar dividend
        rmod=(FLOAT_INT, reflected_samples(avoid=(0, 0.0), margin=0.3, scalars=(5, 2.5),
                                           frac_safe=True), False),
        rpow=(FLOAT_INT, rpow_samples, True),
    )
    for name, (dtypes, samples, grad) in refl.items():
        kw = dict(dtypes=dtypes, supports_grad=grad)
        if not grad:
            kw["requires_grad_parity"] = False
        ops.append(OpInfo(f"operator.{name}", lambda m, n=name: _rop(n), samples, **kw))
    ops.append(OpInfo("operator.rsub.bool_error", lambda m: _rop("rsub"),
                      lambda dtype, rng: [], dtypes=(), errors=lambda: [
                          ErrorInput(SampleInput(np.array([True]), (True,)), RuntimeError)]))

    for name in ("maximum", "minimum"):
        ops += fn_and_method(name, maxmin_samples, dtypes=ALL,
                             mixed=binary_mixed(scalars=False), errors=_broadcast_error())

    cmp_ops = dict(eq=operator.eq, ne=operator.ne, lt=operator.lt, le=operator.le,
                   gt=operator.gt, ge=operator.ge)
    for name, pyop in cmp_ops.items():
        kw = dict(dtypes=ALL, supports_grad=False, mixed=binary_mixed(),
                  errors=_broadcast_error())
        ops += fn_and_method(name, comparison_samples, **kw)
        ops.append(OpInfo(f"operator.{name}", lambda m, f=pyop: f, comparison_samples, **kw))

    for name in ("logical_and", "logical_or", "logical_xor"):
        ops += fn_and_method(name, logical_samples, dtypes=ALL, supports_grad=False,
                             mixed=logical_mixed, errors=_broadcast_error())
    for pyop in (operator.and_, operator.or_, operator.xor):
        ops.append(OpInfo(f"operator.{pyop.__name__}", lambda m, f=pyop: f,
                          binary_samples(tensor_only=True), dtypes=(B, I64), supports_grad=False,
                          mixed=_bitwise_mixed, errors=_bitwise_errors))

    ops.append(OpInfo("where", function("where"), where_samples, dtypes=ALL, mixed=where_mixed,
                      errors=_where_errors))
    ops.append(OpInfo("Tensor.where", method("where"), where_method_samples,
                      dtypes=variant_dtypes(ALL), variant=True))
    for name in ("clamp", "clip"):
        ops += fn_and_method(name, clamp_samples, dtypes=FLOAT_INT, mixed=clamp_mixed,
                             errors=_clamp_errors)
    return ops


# --- dtype conversion ----------------------------------------------------------------------

def to_samples(dtype, rng):
    """``x.to(dtype)``; float-to-float conversions pass the gradient back in the input dtype.
    Casts to float32 lose precision, so finite differences are not taken through them."""
    is_float = np.dtype(dtype).kind == "f"
    x = make((3, 4), dtype, rng, -3.0, 3.0) if is_float else make((3, 4), dtype, rng, -5, 5)
    yield SampleInput(x, (DType("float64"),), name="to_float64")
    yield SampleInput(x, kwargs=dict(dtype=DType("float32")), name="to_float32", gradcheck=False)
    yield SampleInput(x, (DType("int64"),), name="to_int64", grad=False)
    yield SampleInput(x, (DType("int32"),), name="to_int32", grad=False)
    yield SampleInput(x, (DType("bool"),), name="to_bool", grad=False)
    yield SampleInput(make((), dtype, rng), (DType("float64"),), name="0d")
    yield SampleInput(make((0, 2), dtype, rng), (DType("float32"),), name="empty",
                      gradcheck=False)
    yield SampleInput(NonContig(x.T.copy()), (DType("float64"),), name="transposed")
    if is_float:
        yield SampleInput(np.array([2.7, -2.7, -0.5, 1e10], dtype=dtype), (DType("int64"),),
                          name="truncation", grad=False)


def conversion_samples(dtype, rng):
    is_float = np.dtype(dtype).kind == "f"
    x = make((3, 4), dtype, rng, -3.0, 3.0) if is_float else make((3, 4), dtype, rng, -5, 5)
    yield SampleInput(x)
    yield SampleInput(make((), dtype, rng))
    yield SampleInput(NonContig(x.T.copy()), name="transposed")


def conversion_ops() -> list[OpInfo]:
    ops = [OpInfo("Tensor.to", method("to"), to_samples, dtypes=ALL)]
    ops.append(OpInfo("Tensor.double", method("double"), conversion_samples, dtypes=ALL))
    # a cast to float32 loses precision: no finite differences through it
    ops.append(OpInfo("Tensor.float", method("float"), lambda dtype, rng: (
        SampleInput(s.input, name=s.name, gradcheck=False)
        for s in conversion_samples(dtype, rng)), dtypes=ALL))
    for name in ("long", "int", "bool"):
        ops.append(OpInfo(f"Tensor.{name}", method(name), conversion_samples, dtypes=ALL,
                          supports_grad=False))
    return ops


def op_db() -> list[OpInfo]:
    return unary_ops() + binary_ops() + conversion_ops()
