"""Converters of the elementwise and reduction ops (see ops.py for the table's contract).

Arithmetic runs in the op's output dtype: inputs are cast to it, as the dispatcher's promotion
did before the forward ran. Ops ONNX lacks are composed from a few ONNX operators.
"""

from __future__ import annotations

import math

import numpy as np

from ..compiler.ir import Value
from .ops import arg, in_dtype, register


def _out(instr):
    return instr.outs[0].dtype


def _common(instr, idx):
    """The dtype comparisons compute in: the promoted dtype of the tensor operands."""
    ds = [instr.ins[i].dtype for i in idx if isinstance(instr.ins[i], Value)]
    return np.result_type(*ds) if ds else np.dtype(np.float32)


# -- direct unary ops ------------------------------------------------------------------------
def _unary(op_type):
    def convert(b, instr):
        return b.node(op_type, [arg(b, instr, 0, _out(instr))])
    return convert


def _f32_only(op_type):
    """onnxruntime 1.32 implements these for float32 only: float64 goes through float32."""
    def convert(b, instr):
        dt = _out(instr)
        x = arg(b, instr, 0, dt)
        if np.dtype(dt) != np.float64:
            return b.node(op_type, [x])
        return b.cast(b.node(op_type, [b.cast(x, dt, np.float32)]), np.float32, dt)
    return convert


register("erf", "Erf")(_f32_only("Erf"))
register("tan", "Tan (Sin/Cos for float64)")(lambda b, i: b.node("Tan", [arg(b, i, 0, _out(i))])
                                              if _out(i) != np.float64 else b.node("Div", [
                                                  b.node("Sin", [arg(b, i, 0)]),
                                                  b.node("Cos", [arg(b, i, 0)])]))
for _name, _op in [("abs", "Abs"), ("exp", "Exp"), ("log", "Log"), ("sqrt", "Sqrt"),
                   ("sin", "Sin"), ("cos", "Cos"), ("tanh", "Tanh"),
                   ("sigmoid", "Sigmoid"), ("reciprocal", "Reciprocal"),
                   ("relu", "Relu"), ("sign", "Sign"), ("floor", "Floor"), ("ceil", "Ceil"),
                   ("neg", "Neg"), ("clone", "Identity")]:
    register(_name, _op)(_unary(_op))


@register("round", "Round / Mul+Round+Div")
def _round(b, instr):
    x = arg(b, instr, 0, _out(instr))
    d = instr.params.get("decimals", 0)
    if np.dtype(_out(instr)).kind != "f":
        return b.node("Identity", [x])
    if not d:
        return b.node("Round", [x])
    s = b.scalar(10.0 ** d, _out(instr))
    return b.node("Div", [b.node("Round", [b.node("Mul", [x, s])]), s])


def _fn(build):
    """A converter from ``build(b, x, dtype)`` on the op's first input cast to the output."""
    def convert(b, instr):
        dt = _out(instr)
        return build(b, arg(b, instr, 0, dt), dt, **instr.params)
    return convert


def _k(b, v, dt):
    return b.scalar(v, dt)


register("exp2", "Pow (decomposes)")(_fn(lambda b, x, dt: b.node("Pow", [_k(b, 2.0, dt), x])))
register("log2", "Log+Div (decomposes)")(_fn(
    lambda b, x, dt: b.node("Div", [b.node("Log", [x]), _k(b, math.log(2.0), dt)])))
register("log10", "Log+Div (decomposes)")(_fn(
    lambda b, x, dt: b.node("Div", [b.node("Log", [x]), _k(b, math.log(10.0), dt)])))
register("log1p", "Add+Log (decomposes)")(_fn(
    lambda b, x, dt: b.node("Log", [b.node("Add", [x, _k(b, 1.0, dt)])])))
register("expm1", "Exp+Sub (decomposes)")(_fn(
    lambda b, x, dt: b.node("Sub", [b.node("Exp", [x]), _k(b, 1.0, dt)])))
register("rsqrt", "Sqrt+Reciprocal (decomposes)")(_fn(
    lambda b, x, dt: b.node("Reciprocal", [b.node("Sqrt", [x])])))
register("square", "Mul (decomposes)")(_fn(lambda b, x, dt: b.node("Mul", [x, x])))
register("trunc", "Abs+Floor+Sign (decomposes)")(_fn(
    lambda b, x, dt: b.node("Mul", [b.node("Sign", [x]), b.node("Floor", [b.node("Abs", [x])])])
    if np.dtype(dt).kind == "f" else b.node("Identity", [x])))
register("silu", "Sigmoid+Mul (decomposes)")(_fn(
    lambda b, x, dt: b.node("Mul", [x, b.node("Sigmoid", [x])])))


def _softplus(b, x, dt, beta=1.0, threshold=20.0):
    bx = b.node("Mul", [x, _k(b, beta, dt)]) if beta != 1 else x
    sp = b.node("Softplus", [bx])
    if beta != 1:
        sp = b.node("Div", [sp, _k(b, beta, dt)])
    return b.node("Where", [b.node("Greater", [bx, _k(b, threshold, dt)]), x, sp])


register("softplus", "Softplus+Where")(_fn(_softplus))
register("log_sigmoid", "Softplus+Neg (decomposes)")(_fn(
    lambda b, x, dt: b.node("Neg", [b.node("Softplus", [b.node("Neg", [x])])])))
register("mish", "Softplus+Tanh+Mul (decomposes)")(_fn(
    lambda b, x, dt: b.node("Mul", [x, b.node("Tanh", [b.node("Softplus", [x])])])))


def _elu(b, x, dt, alpha=1.0, scale=1.0, input_scale=1.0):
    xs = b.node("Mul", [x, _k(b, input_scale, dt)]) if input_scale != 1 else x
    neg = b.node("Mul", [b.node("Sub", [b.node("Exp", [xs]), _k(b, 1.0, dt)]), _k(b, alpha, dt)])
    out = b.node("Where", [b.node("Greater", [x, _k(b, 0.0, dt)]), x, neg])
    return b.node("Mul", [out, _k(b, scale, dt)]) if scale != 1 else out


register(["elu", "celu", "elu_", "celu_"], "Exp+Where (decomposes)")(_fn(_elu))


def _gelu(b, x, dt, approximate="none"):
    half = _k(b, 0.5, dt)
    if approximate == "tanh":
        inner = b.node("Mul", [b.node("Add", [x, b.node("Mul", [_k(b, 0.044715, dt), b.node(
            "Mul", [x, b.node("Mul", [x, x])])])]), _k(b, math.sqrt(2.0 / math.pi), dt)])
        t = b.node("Tanh", [inner])
    else:
        t = b.node("Erf", [b.node("Mul", [x, _k(b, 1.0 / math.sqrt(2.0), dt)])])
    return b.node("Mul", [b.node("Mul", [x, half]), b.node("Add", [t, _k(b, 1.0, dt)])])


register("gelu", "Erf or Tanh (decomposes)")(_fn(_gelu))


def _hardtanh(b, x, dt, min_val=-1.0, max_val=1.0):
    return b.node("Clip", [x, _k(b, min_val, dt), _k(b, max_val, dt)])


register("hardtanh", "Clip")(_fn(_hardtanh))


def _leaky(b, x, dt, negative_slope=0.01):
    return b.node("Where", [b.node("Greater", [x, _k(b, 0.0, dt)]), x,
                            b.node("Mul", [x, _k(b, negative_slope, dt)])])


register(["leaky_relu", "leaky_relu_"], "Where+Mul")(_fn(_leaky))


def _rrelu(b, x, dt, lower=0.125, upper=1.0 / 3.0, **_):
    # Evaluation mode: the mean slope (training draws noise and is captured as a random op).
    return _leaky(b, x, dt, (lower + upper) / 2)


register(["rrelu", "rrelu_"], "Where+Mul (eval-mode slope)")(_fn(_rrelu))
register("hardsigmoid", "HardSigmoid")(_fn(
    lambda b, x, dt: b.node("HardSigmoid", [x], alpha=1.0 / 6, beta=0.5)))
register("hardswish", "HardSigmoid+Mul")(_fn(
    lambda b, x, dt: b.node("Mul", [x, b.node("HardSigmoid", [x], alpha=1.0 / 6, beta=0.5)])))


# NOTE: the tests below are written so that NaN fails them and passes through, as in torch.
def _hardshrink(b, x, dt, lambd=0.5):
    drop = b.node("LessOrEqual", [b.node("Abs", [x]), _k(b, lambd, dt)])
    return b.node("Where", [drop, _k(b, 0.0, dt), x])


def _softshrink(b, x, dt, lambd=0.5):
    drop = b.node("LessOrEqual", [b.node("Abs", [x]), _k(b, lambd, dt)])
    moved = b.node("Sub", [x, b.node("Mul", [b.node("Sign", [x]), _k(b, lambd, dt)])])
    return b.node("Where", [drop, _k(b, 0.0, dt), moved])


register("hardshrink", "Abs+Where")(_fn(_hardshrink))
register("softshrink", "Abs+Sign+Where (decomposes)")(_fn(_softshrink))


def _threshold(b, x, dt, threshold=0.0, value=0.0):
    return b.node("Where", [b.node("LessOrEqual", [x, _k(b, threshold, dt)]), _k(b, value, dt),
                            x])


register(["threshold", "threshold_"], "Greater+Where")(_fn(_threshold))


def _logit(b, x, dt, eps=None):
    if eps is not None:
        x = b.node("Clip", [x, _k(b, eps, dt), _k(b, 1.0 - eps, dt)])
    return b.node("Log", [b.node("Div", [x, b.node("Sub", [_k(b, 1.0, dt), x])])])


register("logit", "Clip+Div+Log (decomposes)")(_fn(_logit))


def _nan_to_num(b, x, dt, nan=0.0, posinf=None, neginf=None):
    if np.dtype(dt).kind != "f":
        return b.node("Identity", [x])
    info = np.finfo(dt)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    x = b.node("Where", [b.node("IsNaN", [x]), _k(b, nan, dt), x])
    x = b.node("Where", [b.node("IsInf", [x], detect_negative=0), _k(b, posinf, dt), x])
    return b.node("Where", [b.node("IsInf", [x], detect_positive=0), _k(b, neginf, dt), x])


register("nan_to_num", "IsNaN+IsInf+Where")(_fn(_nan_to_num))


@register("isnan", "IsNaN")
def _isnan(b, instr):
    if np.dtype(in_dtype(instr, 0)).kind != "f":
        return b.node("Not", [b.node("Equal", [arg(b, instr, 0), arg(b, instr, 0)])])
    return b.node("IsNaN", [arg(b, instr, 0)])


@register("isinf", "IsInf")
def _isinf(b, instr):
    return b.node("IsInf", [arg(b, instr, 0, np.float64 if np.dtype(in_dtype(instr, 0)).kind
                                 != "f" else None)])


@register("isfinite", "IsNaN+IsInf+Or+Not")
def _isfinite(b, instr):
    x = arg(b, instr, 0, np.float64 if np.dtype(in_dtype(instr, 0)).kind != "f" else None)
    return b.node("Not", [b.node("Or", [b.node("IsNaN", [x]), b.node("IsInf", [x])])])


@register("to", "Cast")
def _to(b, instr):
    return b.node("Identity", [arg(b, instr, 0, _out(instr))])


# -- binary arithmetic -----------------------------------------------------------------------
def _binary(op_type):
    def convert(b, instr):
        dt = _out(instr)
        return b.node(op_type, [arg(b, instr, 0, dt), arg(b, instr, 1, dt)])
    return convert


register("mul", "Mul")(_binary("Mul"))
register("div", "Div")(_binary("Div"))
register("maximum", "Max")(_binary("Max"))
register("minimum", "Min")(_binary("Min"))
register(["fmod.Scalar", "fmod.Tensor"], "Mod(fmod=1)")(
    lambda b, i: b.node("Mod", [arg(b, i, 0, _out(i)), arg(b, i, 1, _out(i))], fmod=1))


@register(["add", "sub"], "Add / Sub (and Mul for alpha)")
def _add(b, instr):
    dt = _out(instr)
    y = arg(b, instr, 1, dt)
    alpha = instr.params.get("alpha", 1)
    if alpha != 1:
        y = b.node("Mul", [y, b.scalar(alpha, dt)])
    return b.node("Add" if instr.name == "add" else "Sub", [arg(b, instr, 0, dt), y])


register("rsub", "Sub")(lambda b, i: b.node("Sub", [arg(b, i, 1, _out(i)),
                                                    arg(b, i, 0, _out(i))]))


@register(["pow.Tensor_Scalar", "pow.Tensor_Tensor", "pow.Scalar"], "Pow")
def _pow(b, instr):
    dt = _out(instr)
    return b.node("Pow", [arg(b, instr, 0, dt), arg(b, instr, 1, dt)])


def _floor_div(b, a, c, dt):
    if np.dtype(dt).kind == "f":
        return b.node("Floor", [b.node("Div", [a, c])])
    q = b.node("Floor", [b.node("Div", [b.cast(a, dt, np.float64), b.cast(c, dt, np.float64)])])
    return b.cast(q, np.float64, dt)


@register("floor_divide", "Div+Floor (decomposes)")
def _floor_divide(b, instr):
    dt = _out(instr)
    return _floor_div(b, arg(b, instr, 0, dt), arg(b, instr, 1, dt), dt)


@register("remainder", "Div+Floor+Mul+Sub (decomposes; ONNX Mod truncates for floats)")
def _remainder(b, instr):
    dt = _out(instr)
    a, c = arg(b, instr, 0, dt), arg(b, instr, 1, dt)
    if np.dtype(dt).kind != "f":
        return b.node("Mod", [a, c], fmod=0)
    return b.node("Sub", [a, b.node("Mul", [_floor_div(b, a, c, dt), c])])


@register("atan2", "Atan+Where (decomposes)")
def _atan2(b, instr):
    dt = _out(instr)
    y, x = arg(b, instr, 0, dt), arg(b, instr, 1, dt)
    y32, x32 = (b.cast(v, dt, np.float32) for v in (y, x)) if dt == np.float64 else (y, x)
    zero, pi = _k(b, 0.0, dt), _k(b, math.pi, dt)
    # 1/v < 0 tells -0.0 from 0.0, which atan2 distinguishes
    xneg = b.node("Less", [b.node("Reciprocal", [x]), zero])
    yneg = b.node("Less", [b.node("Reciprocal", [y]), zero])
    base = b.cast(b.node("Atan", [b.node("Div", [y32, x32])]), np.float32, dt) \
        if dt == np.float64 else b.node("Atan", [b.node("Div", [y, x])])
    shift = b.node("Where", [xneg, b.node("Where", [yneg, b.node("Neg", [pi]), pi]), zero])
    out = b.node("Add", [base, shift])
    both0 = b.node("And", [b.node("Equal", [x, zero]), b.node("Equal", [y, zero])])
    at0 = b.node("Where", [xneg, b.node("Where", [yneg, b.node("Neg", [pi]), pi]), y])
    out = b.node("Where", [both0, at0, out])
    bothinf = b.node("And", [b.node("IsInf", [x]), b.node("IsInf", [y])])
    quarter = b.node("Where", [xneg, _k(b, 3 * math.pi / 4, dt), _k(b, math.pi / 4, dt)])
    return b.node("Where", [bothinf, b.node("Mul", [b.node("Sign", [y]), quarter]), out])


@register("hypot", "Mul+Add+Sqrt (decomposes)")
def _hypot(b, instr):
    dt = _out(instr)
    a, c = (b.node("Abs", [arg(b, instr, i, dt)]) for i in (0, 1))
    # scaled by the larger magnitude, so that squares do not overflow
    m = b.node("Max", [a, c])
    safe = b.node("Where", [b.node("Equal", [m, _k(b, 0.0, dt)]), _k(b, 1.0, dt), m])
    a2, c2 = b.node("Div", [a, safe]), b.node("Div", [c, safe])
    out = b.node("Mul", [m, b.node("Sqrt", [b.node("Add", [b.node("Mul", [a2, a2]),
                                                            b.node("Mul", [c2, c2])])])])
    inf = b.node("Or", [b.node("IsInf", [a]), b.node("IsInf", [c])])
    return b.node("Where", [inf, _k(b, np.inf, dt), out])


@register("logaddexp", "Max+Abs+Exp+Log (decomposes)")
def _logaddexp(b, instr):
    dt = _out(instr)
    a, c = arg(b, instr, 0, dt), arg(b, instr, 1, dt)
    m = b.node("Max", [a, c])
    d = b.node("Neg", [b.node("Abs", [b.node("Sub", [a, c])])])
    out = b.node("Add", [m, b.node("Log", [b.node("Add", [_k(b, 1.0, dt), b.node("Exp", [d])])])])
    # equal operands (infinities included): a + log 2, where a - c would be NaN
    return b.node("Where", [b.node("Equal", [a, c]), b.node("Add", [a, _k(b, math.log(2), dt)]),
                            out])


@register(["xlogy.Tensor", "xlogy.Scalar_Self", "xlogy.Scalar_Other"], "Log+Mul+Where")
def _xlogy(b, instr):
    dt = _out(instr)
    x, y = arg(b, instr, 0, dt), arg(b, instr, 1, dt)
    prod = b.node("Mul", [x, b.node("Log", [y])])
    zero = b.node("And", [b.node("Equal", [x, _k(b, 0.0, dt)]),
                          b.node("Not", [b.node("IsNaN", [y])])])
    return b.node("Where", [zero, _k(b, 0.0, dt), prod])


@register(["lerp.Scalar", "lerp.Tensor"], "Sub+Mul+Where (decomposes)")
def _lerp(b, instr):
    dt = _out(instr)
    s, e = arg(b, instr, 0, dt), arg(b, instr, 1, dt)
    w = arg(b, instr, 2, dt) if len(instr.ins) > 2 else b.scalar(instr.params["weight"], dt)
    diff = b.node("Sub", [e, s])
    lo = b.node("Add", [s, b.node("Mul", [w, diff])])
    hi = b.node("Sub", [e, b.node("Mul", [diff, b.node("Sub", [_k(b, 1.0, dt), w])])])
    return b.node("Where", [b.node("Less", [w, _k(b, 0.5, dt)]), lo, hi])


@register("heaviside", "Equal+Greater+Where")
def _heaviside(b, instr):
    dt = _out(instr)
    x, v = arg(b, instr, 0, dt), arg(b, instr, 1, dt)
    pos = b.cast(b.node("Greater", [x, _k(b, 0, dt)]), np.bool_, dt)
    return b.node("Where", [b.node("Equal", [x, _k(b, 0, dt)]), v, pos])


@register(["addcmul", "addcdiv"], "Mul/Div+Add")
def _addc(b, instr):
    dt = _out(instr)
    x, t1, t2 = (arg(b, instr, i, dt) for i in range(3))
    p = b.node("Mul" if instr.name == "addcmul" else "Div", [t1, t2])
    value = instr.params.get("value", 1)
    if value != 1:
        p = b.node("Mul", [p, b.scalar(value, dt)])
    return b.node("Add", [x, p])


@register("clamp", "Max+Min")
def _clamp(b, instr):
    dt = _out(instr)
    x = arg(b, instr, 0, dt)
    lo, hi = instr.ins[1], instr.ins[2]
    if lo is not None:
        x = b.node("Max", [x, arg(b, instr, 1, dt)])
    if hi is not None:
        x = b.node("Min", [x, arg(b, instr, 2, dt)])
    return x


@register("where", "Where")
def _where(b, instr):
    dt = instr.params.get("dtype", _out(instr))
    return b.node("Where", [arg(b, instr, 0, np.bool_), arg(b, instr, 1, dt),
                            arg(b, instr, 2, dt)])


@register("binary_cross_entropy", "Log+Max+Mul (decomposes)")
def _bce(b, instr):
    dt = _out(instr)
    x, t = arg(b, instr, 0, dt), arg(b, instr, 1, dt)
    floor = _k(b, -100.0, dt)
    lx = b.node("Max", [b.node("Log", [x]), floor])
    l1x = b.node("Max", [b.node("Log", [b.node("Sub", [_k(b, 1.0, dt), x])]), floor])
    pos = b.node("Mul", [t, lx])
    neg = b.node("Mul", [b.node("Sub", [_k(b, 1.0, dt), t]), l1x])
    return b.node("Neg", [b.node("Add", [pos, neg])])


@register("_prelu_kernel", "PRelu")
def _prelu(b, instr):
    dt = _out(instr)
    x, w = arg(b, instr, 0, dt), arg(b, instr, 1, dt)
    return b.node("Where", [b.node("Greater", [x, _k(b, 0.0, dt)]), x, b.node("Mul", [x, w])])


# -- comparisons and logic -------------------------------------------------------------------
def _compare(op_type, negate=False):
    def convert(b, instr):
        dt = _common(instr, (0, 1))
        out = b.node(op_type, [arg(b, instr, 0, dt), arg(b, instr, 1, dt)])
        return b.node("Not", [out]) if negate else out
    return convert


for _name, _op in [("eq", "Equal"), ("lt", "Less"), ("le", "LessOrEqual"), ("gt", "Greater"),
                   ("ge", "GreaterOrEqual")]:
    register(_name, _op)(_compare(_op))
register("ne", "Equal+Not")(_compare("Equal", True))


def _logical(op_type):
    def convert(b, instr):
        return b.node(op_type, [_as_bool(b, instr, 0), _as_bool(b, instr, 1)])
    return convert


def _as_bool(b, instr, i):
    x = instr.ins[i]
    if isinstance(x, Value):
        if x.dtype == np.bool_:
            return b.x(x)
        return b.node("Not", [b.node("Equal", [b.x(x), b.scalar(0, x.dtype)])])
    return b.scalar(bool(x), np.bool_)


for _name, _op in [("logical_and", "And"), ("logical_or", "Or"), ("logical_xor", "Xor")]:
    register(_name, _op)(_logical(_op))
register("logical_not", "Not")(lambda b, i: b.node("Not", [_as_bool(b, i, 0)]))


def _bitwise(bool_op, int_op):
    def convert(b, instr):
        dt = _out(instr)
        op = bool_op if dt == np.bool_ else int_op
        return b.node(op, [arg(b, instr, 0, dt), arg(b, instr, 1, dt)])
    return convert


register("bitwise_and", "And / BitwiseAnd", 18)(_bitwise("And", "BitwiseAnd"))
register("bitwise_or", "Or / BitwiseOr", 18)(_bitwise("Or", "BitwiseOr"))
register("bitwise_xor", "Xor / BitwiseXor", 18)(_bitwise("Xor", "BitwiseXor"))
register("bitwise_not", "Not / BitwiseNot", 18)(
    lambda b, i: b.node("Not" if _out(i) == np.bool_ else "BitwiseNot", [arg(b, i, 0, _out(i))]))
