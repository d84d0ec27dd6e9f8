"""Converters of the extra elementwise math (ops/elementwise_special.py), and the reasons the
special functions (gamma family, Bessel, inverse error functions, zeta) cannot be exported.

Trigonometric ops map to ONNX's own operators (through float32, as onnxruntime implements
them); the rest decompose into a few ONNX operators, written so that NaN and signed zeros come
out as torch's kernels give them.
"""

from __future__ import annotations

import math

import numpy as np

from ._conv_math import _f32_only
from .ops import arg, in_dtype, register, unsupported


def _out(instr):
    return instr.outs[0].dtype


def _k(b, v, dt):
    return b.scalar(v, dt)


for _name, _op in (("asin", "Asin"), ("acos", "Acos"), ("atan", "Atan"), ("sinh", "Sinh"),
                   ("cosh", "Cosh"), ("asinh", "Asinh"), ("acosh", "Acosh"), ("atanh", "Atanh")):
    register(_name, _op)(_f32_only(_op))


def _scale(factor):
    def convert(b, instr):
        dt = _out(instr)
        return b.node("Mul", [arg(b, instr, 0, dt), _k(b, factor, dt)])
    return convert


register("deg2rad", "Mul")(_scale(math.pi / 180.0))
register("rad2deg", "Mul")(_scale(180.0 / math.pi))


@register("erfc", "Erf+Sub (decomposes)")
def _erfc(b, instr):
    dt = _out(instr)
    return b.node("Sub", [_k(b, 1.0, dt), _f32_only("Erf")(b, instr)])


@register("sinc", "Sin+Div+Where (decomposes)")
def _sinc(b, instr):
    dt = _out(instr)
    x = arg(b, instr, 0, dt)
    px = b.node("Mul", [x, _k(b, math.pi, dt)])
    zero = b.node("Equal", [x, _k(b, 0.0, dt)])
    safe = b.node("Where", [zero, _k(b, 1.0, dt), px])
    return b.node("Where", [zero, _k(b, 1.0, dt), b.node("Div", [b.node("Sin", [safe]), safe])])


def _trunc(b, x):
    return b.node("Mul", [b.node("Sign", [x]), b.node("Floor", [b.node("Abs", [x])])])


@register("frac", "Abs+Floor+Sign+Sub (decomposes)")
def _frac(b, instr):
    x = arg(b, instr, 0, _out(instr))
    return b.node("Sub", [x, _trunc(b, x)])


@register("sgn", "Sign+Where")
def _sgn(b, instr):
    dt = _out(instr)
    x = arg(b, instr, 0, dt)
    if np.dtype(dt).kind == "b":
        return b.node("Identity", [x])
    if np.dtype(dt).kind != "f":
        return b.node("Sign", [x])
    return b.node("Where", [b.node("IsNaN", [x]), _k(b, 0.0, dt), b.node("Sign", [x])])


def _negative(b, x, dt):
    """x < 0, or x a negative zero (1 / -0.0 is -inf)."""
    zero = _k(b, 0.0, dt)
    neg_zero = b.node("And", [b.node("Equal", [x, zero]),
                              b.node("Less", [b.node("Reciprocal", [x]), zero])])
    return b.node("Or", [b.node("Less", [x, zero]), neg_zero])


@register("signbit", "Less+Reciprocal+Or")
def _signbit(b, instr):
    dt = in_dtype(instr, 0)
    x = arg(b, instr, 0)
    if np.dtype(dt).kind == "f":
        return _negative(b, x, dt)
    if np.dtype(dt).kind == "b":
        return b.node("Not", [b.node("Equal", [x, x])])
    return b.node("Less", [x, _k(b, 0, dt)])


def _inf_test(positive):
    def convert(b, instr):
        dt = in_dtype(instr, 0)
        x = arg(b, instr, 0)
        if np.dtype(dt).kind != "f":
            return b.node("Not", [b.node("Equal", [x, x])])  # all False
        return b.node("IsInf", [x], detect_negative=int(not positive),
                      detect_positive=int(positive))
    return convert


register("isposinf", "IsInf")(_inf_test(True))
register("isneginf", "IsInf")(_inf_test(False))


@register(["copysign.Tensor", "copysign.Scalar"], "Abs+Neg+Where (decomposes)")
def _copysign(b, instr):
    dt = _out(instr)
    mag = b.node("Abs", [arg(b, instr, 0, dt)])
    return b.node("Where", [_negative(b, arg(b, instr, 1, dt), dt), b.node("Neg", [mag]), mag])


def _fmax_fmin(op_type):
    def convert(b, instr):
        dt = _out(instr)
        x, y = arg(b, instr, 0, dt), arg(b, instr, 1, dt)
        both = b.node(op_type, [x, y])
        if np.dtype(dt).kind != "f":
            return both
        # a NaN operand loses to a number (Max/Min would propagate it)
        return b.node("Where", [b.node("IsNaN", [y]), x,
                                b.node("Where", [b.node("IsNaN", [x]), y, both])])
    return convert


register("fmax", "Max+IsNaN+Where")(_fmax_fmin("Max"))
register("fmin", "Min+IsNaN+Where")(_fmax_fmin("Min"))


@register("ldexp", "Pow+Mul (decomposes)")
def _ldexp(b, instr):
    dt = _out(instr)
    return b.node("Mul", [arg(b, instr, 0, dt),
                          b.node("Pow", [_k(b, 2.0, dt), arg(b, instr, 1, dt)])])


@register("logaddexp2", "Max+Abs+Pow+Log (decomposes)")
def _logaddexp2(b, instr):
    dt = _out(instr)
    x, y = arg(b, instr, 0, dt), arg(b, instr, 1, dt)
    m = b.node("Max", [x, y])
    d = b.node("Neg", [b.node("Abs", [b.node("Sub", [x, y])])])
    tail = b.node("Div", [b.node("Log", [b.node("Add", [_k(b, 1.0, dt), b.node(
        "Pow", [_k(b, 2.0, dt), d])])]), _k(b, math.log(2.0), dt)])
    # equal operands (infinities included): x + 1, where x - y would be NaN
    return b.node("Where", [b.node("Equal", [x, y]), b.node("Add", [x, _k(b, 1.0, dt)]),
                            b.node("Add", [m, tail])])


@register("special_entr", "Log+Mul+Where (decomposes)")
def _entr(b, instr):
    dt = _out(instr)
    x = arg(b, instr, 0, dt)
    zero = _k(b, 0.0, dt)
    val = b.node("Neg", [b.node("Mul", [x, b.node("Log", [x])])])
    out = b.node("Where", [b.node("Less", [x, zero]), _k(b, -np.inf, dt), x])  # NaN stays
    out = b.node("Where", [b.node("Equal", [x, zero]), zero, out])
    return b.node("Where", [b.node("Greater", [x, zero]), val, out])


@register(["special_xlog1py", "special_xlog1py.self_scalar", "special_xlog1py.other_scalar"],
          "Add+Log+Mul+Where")
def _xlog1py(b, instr):
    dt = _out(instr)
    x, y = arg(b, instr, 0, dt), arg(b, instr, 1, dt)
    prod = b.node("Mul", [x, b.node("Log", [b.node("Add", [y, _k(b, 1.0, dt)])])])
    zero = b.node("And", [b.node("Equal", [x, _k(b, 0.0, dt)]),
                          b.node("Not", [b.node("IsNaN", [y])])])
    return b.node("Where", [zero, _k(b, 0.0, dt), prod])


_NO_OP = ("ONNX has no {what} operator and no short exact decomposition (it needs series or "
          "iterations with data-dependent stopping); compute it outside the exported graph or "
          "approximate it in the model")
unsupported(["lgamma", "digamma", "polygamma", "mvlgamma"],
            _NO_OP.format(what="log-gamma/digamma/polygamma"))
unsupported(["i0", "special_i0e", "special_i1", "special_i1e"],
            _NO_OP.format(what="modified Bessel function"))
unsupported(["erfinv", "special_ndtri"], _NO_OP.format(what="inverse error function"))
unsupported(["special_erfcx", "special_log_ndtr"],
            _NO_OP.format(what="scaled complementary error function (erfcx)"))
unsupported("special_zeta", _NO_OP.format(what="Hurwitz zeta"))
unsupported(["igamma", "igammac"], _NO_OP.format(what="incomplete gamma function"))
unsupported(["gcd", "lcm"], "ONNX has no greatest-common-divisor operator; Euclid's algorithm "
            "needs a Loop whose trip count depends on the values")
unsupported("nextafter", "ONNX cannot step a float to its neighbouring representable value "
            "(no bit-level reinterpretation of floats as integers in the standard domain)")
