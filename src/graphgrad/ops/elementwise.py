"""Elementwise ops: arithmetic, unary math, comparisons, logic, clamp/where, dtype casts.

Each op is one ``defop`` record (forward on arrays, VJP in the rules namespace); the public
functions and Tensor methods below call the dispatcher with it.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from . import _erf_kernels
from ._dispatch import apply, binary, unary
from ._opdef import defop

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _no_bool(name, message):
    """Wraps a forward so bool inputs raise as in torch (``message`` is torch's text)."""
    def check(fn):
        def forward(xp, *args, **kw):
            if any(np.result_type(a) == np.bool_ for a in args if a is not None):
                raise RuntimeError(message)
            return fn(xp, *args, **kw)
        forward.__name__ = name
        return forward
    return check


_SUB_BOOL = ("Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
             "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
_NEG_BOOL = ("Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
             "to invert a mask, use the `~` or `logical_not()` operator instead.")


def _int_division(fn):
    """Integer division by zero raises in torch (NumPy returns 0 with a warning)."""
    def forward(xp, a, b):
        if np.result_type(a, b).kind in "iu" and np.any(np.asarray(b) == 0):
            raise RuntimeError("ZeroDivisionError")
        return fn(xp, a, b)
    return forward


def _is_scalar(x) -> bool:
    return not isinstance(x, Tensor) and not isinstance(x, np.ndarray)


def _int_pow(xp, x, p):
    # NOTE: numpy's float power is ~100x slower than multiplication for small integer
    # exponents on negative bases (see shared/FACTS.md); special-case them.
    if p == 2:
        return x * x
    if p == 3:
        return x * x * x
    if p == 1:
        return x.copy()
    if p == 0.5 and x.dtype.kind == "f":
        return xp.sqrt(x)
    if p == -1 and x.dtype.kind == "f":
        return 1.0 / x
    if p == -0.5 and x.dtype.kind == "f":
        return 1.0 / xp.sqrt(x)  # torch's rsqrt: NaN at -inf, where NumPy's power gives 0
    if isinstance(p, int) and p < 0 and x.dtype.kind in "iub":
        # RuntimeError, not ValueError: the dispatcher would prefix the op name to a ValueError
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return xp.power(x, p)


def _erf(xp, x):
    return _erf_kernels.erf(x).astype(x.dtype, copy=False)  # vectorised, float32 in float32


# -- arithmetic ---------------------------------------------------------------------------
def _add_vjp(ns, g, alpha=1):
    return g, (g if alpha == 1 else g * alpha)


def _sub_vjp(ns, g, alpha=1):
    return g, -g if alpha == 1 else -g * alpha


def _mul_vjp(ns, g, a, b):
    if _is_scalar(b):
        return g * b, None
    if _is_scalar(a):
        return None, g * a
    return g * b, g * a


def _div_vjp(ns, g, a, b):
    if _is_scalar(b):
        return g / b, None
    return (None if _is_scalar(a) else g / b), -g * a / (b * b)


ADD = defop("add", lambda xp, a, b, alpha=1: a + b if alpha == 1 else a + alpha * b, _add_vjp,
            kind="elementwise", node="AddBackward0", onnx="Add")
SUB = defop("sub", lambda xp, a, b, alpha=1: a - b if alpha == 1 else a - alpha * b, _sub_vjp,
            kind="elementwise", node="SubBackward0", onnx="Sub")
RSUB = defop("rsub", lambda xp, a, b: b - a, lambda ns, g: (-g, None),
             kind="elementwise", node="RsubBackward1", onnx="Sub", hidden_inputs=("scalars",))
MUL = defop("mul", lambda xp, a, b: a * b, _mul_vjp, kind="elementwise", save=(0, 1),
            node="MulBackward0", onnx="Mul")
DIV = defop("div", lambda xp, a, b: a / b, _div_vjp, kind="elementwise", save=(0, 1),
            dtype_rule="float", node="DivBackward0", onnx="Div")


def _floor_divide_float(xp, a, b):
    """torch's div_floor for floats: from fmod, so inf // b and a // inf give NaN (NumPy's
    floor(a / b) gives inf and 0), and the quotient is rounded as torch rounds it."""
    mod = xp.fmod(a, b)
    div = (a - mod) / b
    div = xp.where((mod != 0) & ((xp.asarray(b) < 0) != (mod < 0)), div - 1, div)
    floor = xp.floor(div)
    floor = xp.where(div - floor > 0.5, floor + 1, floor)
    out = xp.where(div != 0, floor, xp.copysign(0.0, a / b))
    # divide by zero: the IEEE quotient
    out = xp.where(xp.asarray(b) == 0, a / b, out)
    return xp.asarray(out, dtype=np.result_type(a / b))


def _floor_divide(xp, a, b):
    if np.result_type(a, b).kind == "f":
        return _floor_divide_float(xp, a, b)
    return xp.floor_divide(a, b)


FLOOR_DIVIDE = defop("floor_divide", _int_division(_floor_divide), kind="elementwise",
                     onnx="Div")


def _remainder_vjp(ns, g, a, b):
    if _is_scalar(b):
        return g, None
    return g, -g * ns.const(_floor_divide_float(np, ns.raw(a), ns.raw(b)))


REMAINDER = defop("remainder", _int_division(lambda xp, a, b: xp.remainder(a, b)),
                  _remainder_vjp,
                  kind="elementwise", save=(0, 1), node="RemainderBackward0", onnx="Mod")


def _pow_scalar_vjp(ns, g, x, p):
    if p == 0:
        return ns.zeros_like(g), None
    if p == 1:
        return g, None
    if p == 2:
        return g * 2.0 * x, None
    return g * p * ns.pow(x, p - 1), None


def _pow_vjp(ns, g, a, b, out):
    ga = None if _is_scalar(a) else g * b * a ** (b - 1)
    if _is_scalar(b):
        return ga, None
    ra, rb = ns.raw(a), ns.raw(b)
    # d/db a**b = a**b * log(a); torch defines it as 0 where a == 0 and b >= 0.
    zero = ns.const((ra == 0) & (rb >= 0))
    safe_a = ns.where(zero, ns.const(np.ones_like(ra, dtype=np.result_type(ra, 1.0))), a)
    gb = ns.where(zero, 0.0, g * out * ns.log(safe_a))
    return ga, gb


POW_SCALAR = defop("pow.Tensor_Scalar", _int_pow, _pow_scalar_vjp, kind="elementwise",
                   save=(0, 1), node="PowBackward0", onnx="Pow", hidden_inputs=("scalars",))
POW = defop("pow.Tensor_Tensor", lambda xp, a, b: xp.power(a, b), _pow_vjp, kind="elementwise",
            save=(0, 1, "out"), node="PowBackward1", onnx="Pow")
RPOW = defop("pow.Scalar", lambda xp, a, b: xp.power(a, b),
             lambda ns, g, a, out: (None, g * out * math.log(a)), kind="elementwise",
             save=(0, "out"), node="PowBackward2", onnx="Pow",
             hidden_inputs=("scalars",))


def _max_min_vjp(ns, g, a, b, pick_greater):
    ra, rb = ns.raw(a), ns.raw(b)
    dt = np.result_type(ns.raw(g))
    a_loses = (ra < rb) if pick_greater else (ra > rb)
    b_loses = (ra > rb) if pick_greater else (ra < rb)
    # NOTE: ties split the gradient in half, as torch's maximum/minimum do; where either side
    # is NaN neither loses, so both get the whole gradient (torch's masked_fill rule)
    half = (ra == rb).astype(dt) * 0.5
    ga = None if _is_scalar(a) else g * ns.const(np.where(a_loses, 0, 1 - half).astype(dt))
    gb = None if _is_scalar(b) else g * ns.const(np.where(b_loses, 0, 1 - half).astype(dt))
    return ga, gb


MAXIMUM = defop("maximum", lambda xp, a, b: xp.maximum(a, b),
                lambda ns, g, a, b: _max_min_vjp(ns, g, a, b, True), kind="elementwise",
                save=(0, 1), node="MaximumBackward0", onnx="Max")
MINIMUM = defop("minimum", lambda xp, a, b: xp.minimum(a, b),
                lambda ns, g, a, b: _max_min_vjp(ns, g, a, b, False), kind="elementwise",
                save=(0, 1), node="MinimumBackward0", onnx="Min")


# -- unary math -------------------------------------------------------------------------------
def _sigmoid(xp, x):
    e = xp.exp(-xp.abs(x))  # stable on both tails, no overflow
    return xp.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(x.dtype, copy=False)


def _rsqrt(xp, x):
    return 1.0 / xp.sqrt(x)


def _unary(name, forward, vjp, save, node, onnx, dtype_rule="float"):
    return defop(name, forward, vjp, kind="elementwise", save=save, dtype_rule=dtype_rule,
                 node=node, onnx=onnx)


def _zero_vjp(ns, g):
    return ns.zeros_like(g)


NEG = _unary("neg", _no_bool("neg", _NEG_BOOL)(lambda xp, x: -x), lambda ns, g: -g, (),
             "NegBackward0", "Neg", "promote")


def _abs(xp, x):
    if x.dtype == np.bool_:
        raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool'")
    return xp.abs(x)


ABS = _unary("abs", _abs, lambda ns, g, x: g * ns.sign(x), (0,), "AbsBackward0", "Abs",
             "promote")
EXP = _unary("exp", lambda xp, x: xp.exp(x), lambda ns, g, out: g * out, ("out",),
             "ExpBackward0", "Exp")
EXP2 = _unary("exp2", lambda xp, x: xp.exp2(x), lambda ns, g, out: g * out * _LN2, ("out",),
              "Exp2Backward0", None)
LOG = _unary("log", lambda xp, x: xp.log(x), lambda ns, g, x: g / x, (0,), "LogBackward0", "Log")
LOG2 = _unary("log2", lambda xp, x: xp.log2(x), lambda ns, g, x: g / (x * _LN2), (0,),
              "Log2Backward0", None)
LOG10 = _unary("log10", lambda xp, x: xp.log10(x), lambda ns, g, x: g / (x * _LN10), (0,),
               "Log10Backward0", None)
LOG1P = _unary("log1p", lambda xp, x: xp.log1p(x), lambda ns, g, x: g / (x + 1.0), (0,),
               "Log1PBackward0", None)
EXPM1 = _unary("expm1", lambda xp, x: xp.expm1(x), lambda ns, g, out: g * (out + 1.0),
               ("out",), "Expm1Backward0", None)
SQRT = _unary("sqrt", lambda xp, x: xp.sqrt(x), lambda ns, g, out: g / (2.0 * out), ("out",),
              "SqrtBackward0", "Sqrt")
RSQRT = _unary("rsqrt", _rsqrt, lambda ns, g, out: -0.5 * g * out * out * out, ("out",),
               "RsqrtBackward0", None)
SIN = _unary("sin", lambda xp, x: xp.sin(x), lambda ns, g, x: g * ns.cos(x), (0,),
             "SinBackward0", "Sin")
COS = _unary("cos", lambda xp, x: xp.cos(x), lambda ns, g, x: -g * ns.sin(x), (0,),
             "CosBackward0", "Cos")
TAN = _unary("tan", lambda xp, x: xp.tan(x), lambda ns, g, out: g * (1.0 + out * out),
             ("out",), "TanBackward0", "Tan")
TANH = _unary("tanh", lambda xp, x: xp.tanh(x), lambda ns, g, out: g * (1.0 - out * out),
              ("out",), "TanhBackward0", "Tanh")
SIGMOID = _unary("sigmoid", _sigmoid, lambda ns, g, out: g * out * (1.0 - out), ("out",),
                 "SigmoidBackward0", "Sigmoid")
ERF = _unary("erf", _erf, lambda ns, g, x: g * _TWO_OVER_SQRT_PI * ns.exp(-(x * x)), (0,),
             "ErfBackward0", "Erf")
RECIPROCAL = _unary("reciprocal", lambda xp, x: 1.0 / x, lambda ns, g, out: -g * out * out,
                    ("out",), "ReciprocalBackward0", "Reciprocal")
SQUARE = _unary("square", lambda xp, x: x * x if x.dtype != np.bool_ else
                (x * x).astype(np.int64), lambda ns, g, x: g * 2.0 * x, (0,),
                "PowBackward0", None, "promote")
RELU = _unary("relu", _no_bool("relu", "Boolean inputs not supported for relu")(
    lambda xp, x: xp.maximum(x, 0)), lambda ns, g, out: g * ~(out <= 0),
              ("out",), "ReluBackward0", "Relu", "promote")
def _sign(xp, x):
    if x.dtype == np.bool_:
        return x.copy()
    out = xp.asarray(xp.sign(x))  # 0-d: NumPy returns a scalar
    if out.dtype.kind == "f":
        xp.copyto(out, 0, where=xp.isnan(out))  # torch: sign(nan) is 0
    return out


SIGN = _unary("sign", _sign, _zero_vjp,
              (), "SignBackward0", "Sign", "promote")


def _keep_int(fn):
    """Rounding ops return integer inputs unchanged, as torch does."""
    return lambda xp, x: x.copy() if x.dtype.kind in "iub" else fn(x)


FLOOR = _unary("floor", _keep_int(np.floor), _zero_vjp, (), "FloorBackward0", "Floor", "promote")
CEIL = _unary("ceil", _keep_int(np.ceil), _zero_vjp, (), "CeilBackward0", "Ceil", "promote")
TRUNC = _unary("trunc", _keep_int(np.trunc), _zero_vjp, (), "TruncBackward0", None, "promote")
def _round(xp, x, decimals=0):
    if x.dtype.kind in "iub":
        if decimals:
            raise NotImplementedError(f"\"round_cpu\" not implemented for "
                                      f"'{_TORCH_NAMES[x.dtype.name]}'")
        return x.copy()
    return xp.round(x, decimals)


_TORCH_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                "uint8": "Byte", "bool": "Bool"}
ROUND = _unary("round", _round, lambda ns, g, decimals=0: ns.zeros_like(g), (),
               "RoundBackward0", "Round", "promote")


def _clamp_vjp(ns, g, x, lo, hi):
    rx = ns.raw(x)
    rlo = None if lo is None else ns.raw(lo)
    rhi = None if hi is None else ns.raw(hi)
    inside = np.ones(rx.shape, dtype=bool)
    if rlo is not None:
        inside = inside & (rx >= rlo)
    if rhi is not None:
        inside = inside & (rx <= rhi)
    gx = g * ns.const(inside)
    glo = None if rlo is None or _is_scalar(lo) else g * ns.const(rx < rlo)
    ghi = None if rhi is None or _is_scalar(hi) else g * ns.const(rx > rhi)
    return gx, glo, ghi


def _clamp(xp, x, lo, hi):
    if lo is not None:
        x = xp.maximum(x, lo)
    if hi is not None:
        x = xp.minimum(x, hi)
    return x


CLAMP = defop("clamp", _clamp, _clamp_vjp, kind="elementwise", save=(0, 1, 2),
              node="ClampBackward1", onnx="Clip", hidden_inputs=("scalars",))


# -- comparisons and logic (never differentiable: outputs are bool) ---------------------------
def _cmp(name, fn, onnx):
    return defop(name, fn, kind="elementwise", onnx=onnx)


EQ = _cmp("eq", lambda xp, a, b: xp.equal(a, b), "Equal")
NE = _cmp("ne", lambda xp, a, b: xp.not_equal(a, b), None)
LT = _cmp("lt", lambda xp, a, b: xp.less(a, b), "Less")
LE = _cmp("le", lambda xp, a, b: xp.less_equal(a, b), "LessOrEqual")
GT = _cmp("gt", lambda xp, a, b: xp.greater(a, b), "Greater")
GE = _cmp("ge", lambda xp, a, b: xp.greater_equal(a, b), "GreaterOrEqual")
LOGICAL_AND = defop("logical_and", lambda xp, a, b: xp.logical_and(a, b), kind="elementwise",
                    dtype_rule="same", onnx="And")
LOGICAL_OR = defop("logical_or", lambda xp, a, b: xp.logical_or(a, b), kind="elementwise",
                   dtype_rule="same", onnx="Or")
LOGICAL_XOR = defop("logical_xor", lambda xp, a, b: xp.logical_xor(a, b), kind="elementwise",
                    dtype_rule="same", onnx="Xor")
LOGICAL_NOT = defop("logical_not", lambda xp, x: xp.logical_not(x), kind="elementwise",
                    dtype_rule="same", onnx="Not")


def _bitwise(fn):
    def forward(xp, a, b):
        kinds = {np.result_type(v).kind for v in (a, b)}
        if "f" in kinds:
            raise NotImplementedError(f"\"{fn.__name__}_cpu\" not implemented for 'Float'")
        return fn(a, b)
    return forward


BITWISE_AND = defop("bitwise_and", _bitwise(np.bitwise_and), kind="elementwise", onnx="BitwiseAnd")
BITWISE_OR = defop("bitwise_or", _bitwise(np.bitwise_or), kind="elementwise", onnx="BitwiseOr")
BITWISE_XOR = defop("bitwise_xor", _bitwise(np.bitwise_xor), kind="elementwise",
                    onnx="BitwiseXor")


def _invert(xp, x):
    if x.dtype.kind == "f":
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return xp.invert(x)


BITWISE_NOT = defop("bitwise_not", _invert, kind="elementwise", dtype_rule="same",
                    onnx="BitwiseNot")
ISNAN = defop("isnan", lambda xp, x: xp.isnan(x), kind="elementwise", dtype_rule="same",
              onnx="IsNaN")
ISINF = defop("isinf", lambda xp, x: xp.isinf(x), kind="elementwise", dtype_rule="same",
              onnx="IsInf")
ISFINITE = defop("isfinite", lambda xp, x: xp.isfinite(x), kind="elementwise",
                 dtype_rule="same", onnx=None)


# -- where and casts --------------------------------------------------------------------------
def _where_vjp(ns, g, cond, dtype=None):
    zero = ns.zeros_like(g)
    return None, ns.where(cond, g, zero), ns.where(cond, zero, g)


WHERE = defop("where", lambda xp, c, a, b, dtype: xp.where(c, a, b).astype(dtype, copy=False),
              _where_vjp, kind="elementwise", save=(0,), dtype_rule="same",
              node="WhereBackward0", onnx="Where", hidden_inputs=(0,))
TO_DTYPE = defop("to", lambda xp, x, dtype: x.astype(dtype), lambda ns, g, dtype: g,
                 kind="elementwise", dtype_rule="same", node="ToCopyBackward0", onnx="Cast")


def _to_dtype(x: Tensor, dtype) -> Tensor:
    return unary(TO_DTYPE, x, {"dtype": dtype.np})


# -- public functions -------------------------------------------------------------------------
def _tensor_arg(x, name):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    return x


def add(input, other, *, alpha=1):
    """``input + alpha * other`` with broadcasting and torch type promotion."""
    if alpha == 1:
        return binary(ADD, input, other)
    return binary(ADD, input, other, {"alpha": alpha})


def _check_sub(a, b):
    """torch refuses ``-`` with a bool operand (a tensor, or True/False with a tensor)."""
    if (a._data.dtype == np.bool_ if isinstance(a, Tensor) else type(a) is bool) or (
            b._data.dtype == np.bool_ if isinstance(b, Tensor) else type(b) is bool):
        raise RuntimeError(_SUB_BOOL)


def sub(input, other, *, alpha=1):
    _check_sub(input, other)
    if alpha == 1:
        return binary(SUB, input, other)
    return binary(SUB, input, other, {"alpha": alpha})


subtract = sub


def rsub(input, other, *, alpha=1):
    return sub(other, input, alpha=alpha) if isinstance(other, Tensor) else binary(
        RSUB, input, other)


def mul(input, other):
    return binary(MUL, input, other)


multiply = mul


def div(input, other, *, rounding_mode=None):
    if rounding_mode is None:
        return binary(DIV, input, other)
    if rounding_mode == "floor":
        return binary(FLOOR_DIVIDE, input, other)
    if rounding_mode == "trunc":
        return trunc(binary(DIV, input, other)).to(result_type_of(input, other))
    raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                     f"found '{rounding_mode}'")


divide = true_divide = div


def result_type_of(a, b):
    return _dtype.result_type(a, b)


def floor_divide(input, other):
    return binary(FLOOR_DIVIDE, input, other)


def remainder(input, other):
    return binary(REMAINDER, input, other)


def pow(input, exponent):
    """``input ** exponent``; a Python-number exponent records ``PowBackward0``."""
    if isinstance(input, Tensor):
        if isinstance(exponent, Tensor):
            return binary(POW, input, exponent)
        return binary(POW_SCALAR, input, exponent)
    return binary(RPOW, input, exponent)


def maximum(input, other):
    return binary(MAXIMUM, input, other)


def minimum(input, other):
    return binary(MINIMUM, input, other)


def neg(input):
    return unary(NEG, input)


negative = neg


def _unary_fn(op, name):
    def fn(input):
        return unary(op, _tensor_arg(input, name))
    fn.__name__ = fn.__qualname__ = name
    grad = op.node_cls.__name__ if op.node_cls else "no gradient"
    fn.__doc__ = f"Elementwise ``{name}`` (grad_fn: {grad})."
    return fn


abs = _unary_fn(ABS, "abs")  # noqa: A001 - torch.abs
absolute = abs
exp = _unary_fn(EXP, "exp")
exp2 = _unary_fn(EXP2, "exp2")
log = _unary_fn(LOG, "log")
log2 = _unary_fn(LOG2, "log2")
log10 = _unary_fn(LOG10, "log10")
log1p = _unary_fn(LOG1P, "log1p")
expm1 = _unary_fn(EXPM1, "expm1")
sqrt = _unary_fn(SQRT, "sqrt")
rsqrt = _unary_fn(RSQRT, "rsqrt")
sin = _unary_fn(SIN, "sin")
cos = _unary_fn(COS, "cos")
tan = _unary_fn(TAN, "tan")
tanh = _unary_fn(TANH, "tanh")
sigmoid = _unary_fn(SIGMOID, "sigmoid")
erf = _unary_fn(ERF, "erf")
reciprocal = _unary_fn(RECIPROCAL, "reciprocal")
square = _unary_fn(SQUARE, "square")
relu = _unary_fn(RELU, "relu")
sign = _unary_fn(SIGN, "sign")
floor = _unary_fn(FLOOR, "floor")
ceil = _unary_fn(CEIL, "ceil")
trunc = _unary_fn(TRUNC, "trunc")
fix = trunc
isnan = _unary_fn(ISNAN, "isnan")
isinf = _unary_fn(ISINF, "isinf")
isfinite = _unary_fn(ISFINITE, "isfinite")
logical_not = _unary_fn(LOGICAL_NOT, "logical_not")
bitwise_not = _unary_fn(BITWISE_NOT, "bitwise_not")


def round(input, *, decimals=0):  # noqa: A001 - torch.round
    return unary(ROUND, input, {"decimals": decimals} if decimals else None)


def clamp(input, min=None, max=None):  # noqa: A002 - torch's parameter names
    """Limits ``input`` to ``[min, max]``; bounds may be numbers or tensors."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    return apply(CLAMP, (input, min, max))


clip = clamp


def clamp_min(input, min):  # noqa: A002
    return clamp(input, min=min)


def clamp_max(input, max):  # noqa: A002
    return clamp(input, max=max)


def _compare(op):
    def fn(input, other):
        return binary(op, input, other)
    fn.__name__ = op.name
    return fn


eq = _compare(EQ)
ne = _compare(NE)
not_equal = ne
lt = _compare(LT)
less = lt
le = _compare(LE)
less_equal = le
gt = _compare(GT)
greater = gt
ge = _compare(GE)
greater_equal = ge
logical_and = _compare(LOGICAL_AND)
logical_or = _compare(LOGICAL_OR)
logical_xor = _compare(LOGICAL_XOR)
bitwise_and = _compare(BITWISE_AND)
bitwise_or = _compare(BITWISE_OR)
bitwise_xor = _compare(BITWISE_XOR)


def where(condition, input=None, other=None):
    """Picks ``input`` where ``condition`` holds, else ``other`` (numbers allowed)."""
    if input is None and other is None:
        from .indexing import nonzero

        return nonzero(condition, as_tuple=True)
    if not isinstance(condition, Tensor):
        raise TypeError("where(): argument 'condition' must be Tensor")
    if condition._data.dtype != np.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {condition.dtype}")
    target = _dtype.result_type(input, other)
    return apply(WHERE, (condition, input, other), {"dtype": target.np})


def equal(input, other) -> bool:
    return input.shape == other.shape and bool(np.array_equal(input._data, other._data))


def allclose(input, other, rtol=1e-5, atol=1e-8, equal_nan=False) -> bool:
    return bool(np.allclose(input._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))


def isclose(input, other, rtol=1e-5, atol=1e-8, equal_nan=False):
    from .._tensor import wrap

    return wrap(np.isclose(input._data, _data_of(other), rtol=rtol, atol=atol,
                           equal_nan=equal_nan), False, None)


def _data_of(x):
    return x._data if isinstance(x, Tensor) else x


# -- Tensor methods and operators -------------------------------------------------------------
def _reflect(op):
    return lambda self, other: binary(op, other, self)


def _eq_operator(op):
    def method(self, other):
        if other is None or not isinstance(other, (Tensor, int, float, complex, bool,
                                                   np.generic)):
            return op is NE
        return binary(op, self, other)
    return method


def _bind():
    T = Tensor
    for name in ("add", "sub", "mul", "div", "floor_divide", "remainder", "pow", "maximum",
                 "minimum", "neg", "abs", "exp", "exp2", "log", "log2", "log10", "log1p", "expm1",
                 "sqrt", "rsqrt", "sin", "cos", "tan", "tanh", "sigmoid", "erf", "reciprocal",
                 "square", "relu", "sign", "floor", "ceil", "trunc", "round", "clamp", "clip",
                 "clamp_min", "clamp_max", "eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf",
                 "isfinite", "logical_and", "logical_or", "logical_xor", "logical_not",
                 "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "subtract",
                 "multiply", "divide", "true_divide", "negative", "absolute", "fix",
                 "greater", "greater_equal", "less", "less_equal", "not_equal", "equal",
                 "allclose", "isclose"):
        fn = globals().get(name)
        if fn is not None:
            setattr(T, name, fn)
    T.where = lambda self, condition, other: where(condition, self, other)
    T.__add__ = T.__radd__ = lambda self, other: binary(ADD, self, other)
    T.__sub__ = sub
    T.__rsub__ = lambda self, other: _check_sub(self, other) or binary(RSUB, self, other)
    T.__mul__ = T.__rmul__ = lambda self, other: binary(MUL, self, other)
    T.__truediv__ = lambda self, other: binary(DIV, self, other)
    # torch computes ``number / t`` as ``t.reciprocal() * number`` (grad_fn MulBackward0)
    T.__rtruediv__ = lambda self, other: binary(MUL, unary(RECIPROCAL, self), other)
    T.__floordiv__ = lambda self, other: binary(FLOOR_DIVIDE, self, other)
    T.__rfloordiv__ = _reflect(FLOOR_DIVIDE)
    T.__mod__ = lambda self, other: binary(REMAINDER, self, other)
    T.__rmod__ = _reflect(REMAINDER)
    T.__pow__ = lambda self, other: pow(self, other)
    T.__rpow__ = lambda self, other: pow(other, self)
    T.__neg__ = lambda self: unary(NEG, self)
    T.__pos__ = lambda self: self
    T.__abs__ = lambda self: unary(ABS, self)
    T.__invert__ = lambda self: unary(BITWISE_NOT, self)
    T.__and__ = T.__rand__ = lambda self, other: binary(BITWISE_AND, self, other)
    T.__or__ = T.__ror__ = lambda self, other: binary(BITWISE_OR, self, other)
    T.__xor__ = T.__rxor__ = lambda self, other: binary(BITWISE_XOR, self, other)
    T.__eq__ = _eq_operator(EQ)
    T.__ne__ = _eq_operator(NE)
    T.__lt__ = lambda self, other: binary(LT, self, other)
    T.__le__ = lambda self, other: binary(LE, self, other)
    T.__gt__ = lambda self, other: binary(GT, self, other)
    T.__ge__ = lambda self, other: binary(GE, self, other)


_bind()
