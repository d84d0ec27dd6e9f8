"""The op -> scalar-expression table for generated kernels: one entry per elementwise op of
``graphgrad.ops.OPS`` that a kernel can compute per element, reproducing its forward exactly
(NaN propagation, torch's kinks, stable forms). An entry returns None for inputs it does not
cover (integer division, unusual dtypes): such an op stays unfused and runs its own forward.

A template gets ``c`` (the emitter: typed literals, locals, casts) and its operands as source
text already typed to the compute dtype; params come by keyword.
"""

from __future__ import annotations

import math

__all__ = ["TEMPLATES", "template_for"]

_SQRT_HALF = math.sqrt(0.5)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)

TEMPLATES: dict = {}


def _t(*names):
    def register(fn):
        for n in names:
            TEMPLATES[n] = fn
        return fn
    return register


def template_for(name):
    return TEMPLATES.get(name)


# -- helpers ----------------------------------------------------------------------------------
def _max(c, a, b):
    # np.maximum: NaN in either operand wins
    return c.let(f"({a} if ({a} >= {b} or {a} != {a}) else {b})")


def _min(c, a, b):
    return c.let(f"({a} if ({a} <= {b} or {a} != {a}) else {b})")


def _floating(c):
    return c.dt.kind == "f"


# -- arithmetic -------------------------------------------------------------------------------
@_t("add")
def _add(c, a, b, alpha=1):
    if c.dt.kind == "b":
        return None
    return f"{a} + {b}" if alpha == 1 else f"{a} + {c.lit(alpha)} * {b}"


@_t("sub")
def _sub(c, a, b, alpha=1):
    if c.dt.kind == "b":
        return None
    return f"{a} - {b}" if alpha == 1 else f"{a} - {c.lit(alpha)} * {b}"


@_t("rsub")
def _rsub(c, a, b):
    return None if c.dt.kind == "b" else f"{b} - {a}"


@_t("mul")
def _mul(c, a, b):
    return f"{a} * {b}" if c.dt.kind in "fiu" else None


@_t("div")
def _div(c, a, b):
    return f"{a} / {b}" if _floating(c) else None


@_t("floor_divide")
def _floordiv(c, a, b):
    # torch's float floor division (from fmod, with its rounding and inf/NaN cases) has no
    # short scalar form: it stays unfused and runs eager's forward
    return None


@_t("remainder")
def _remainder(c, a, b):
    return f"np.remainder({a}, {b})" if _floating(c) else None


@_t("fmod.Scalar", "fmod.Tensor")
def _fmod(c, a, b):
    return f"np.fmod({a}, {b})" if _floating(c) else None


@_t("pow.Tensor_Scalar")
def _pow_scalar(c, x, p):
    p = c.raw(1)
    if c.dt.kind == "f":
        if p == 2:
            return f"{x} * {x}"
        if p == 3:
            return f"{x} * {x} * {x}"
        if p == 1:
            return x
        if p == 0.5:
            return f"np.sqrt({x})"
        if p == -1:
            return f"{c.lit(1)} / {x}"
        return f"{x} ** {c.lit(p)}"
    if c.dt.kind in "iu" and isinstance(p, int) and 0 <= p <= 3:
        return {0: c.lit(1), 1: x, 2: f"{x} * {x}", 3: f"{x} * {x} * {x}"}[p]
    return None


@_t("pow.Tensor_Tensor")
def _pow(c, a, b):
    return f"{a} ** {b}" if _floating(c) else None


@_t("pow.Scalar")
def _rpow(c, a, b):
    return f"{a} ** {b}" if _floating(c) else None


@_t("maximum")
def _maximum(c, a, b):
    return _max(c, a, b) if c.dt.kind in "fiu" else None


@_t("minimum")
def _minimum(c, a, b):
    return _min(c, a, b) if c.dt.kind in "fiu" else None


@_t("addcmul")
def _addcmul(c, x, t1, t2, value=1):
    return f"{x} + {c.lit(value)} * {t1} * {t2}" if _floating(c) else None


@_t("addcdiv")
def _addcdiv(c, x, t1, t2, value=1):
    return f"{x} + {c.lit(value)} * {t1} / {t2}" if _floating(c) else None


@_t("lerp.Scalar")
def _lerp_scalar(c, start, end, weight):
    if not _floating(c):
        return None
    w = weight
    d = c.let(f"{end} - {start}")
    if w < 0.5:
        return f"{start} + {c.lit(w)} * {d}"
    return f"{end} - {d} * {c.lit(1.0 - w)}"


@_t("lerp.Tensor")
def _lerp_tensor(c, start, end, weight):
    if not _floating(c):
        return None
    d = c.let(f"{end} - {start}")
    one = c.lit(1.0)
    return (f"({start} + {weight} * {d}) if {weight} < {c.lit(0.5)} "
            f"else ({end} - {d} * ({one} - {weight}))")


@_t("hypot")
def _hypot(c, a, b):
    return f"math.hypot({a}, {b})" if _floating(c) else None


@_t("atan2")
def _atan2(c, a, b):
    return f"math.atan2({a}, {b})" if _floating(c) else None


@_t("logaddexp")
def _logaddexp(c, a, b):
    if not _floating(c):
        return None
    m = _max(c, a, b)
    # equal operands (both infinite included) give a + log(2); otherwise the stable form
    return (f"({a} + {c.lit(math.log(2.0))}) if {a} == {b} else "
            f"({m} + np.log1p(np.exp(-abs({a} - {b}))))")


# -- unary math -------------------------------------------------------------------------------
@_t("neg")
def _neg(c, x):
    return f"-{x}" if c.dt.kind in "fiu" else None


@_t("abs")
def _abs(c, x):
    return f"abs({x})" if c.dt.kind in "fiu" else None


def _fn(name, expr):
    @_t(name)
    def template(c, x):
        return expr.format(x=x, one=c.lit(1)) if _floating(c) else None
    return template


_fn("exp", "np.exp({x})")
_fn("exp2", "np.exp2({x})")
_fn("log", "np.log({x})")
_fn("log2", "np.log2({x})")
_fn("log10", "np.log10({x})")
_fn("log1p", "np.log1p({x})")
_fn("expm1", "np.expm1({x})")
_fn("sqrt", "np.sqrt({x})")
_fn("rsqrt", "{one} / np.sqrt({x})")
_fn("sin", "np.sin({x})")
_fn("cos", "np.cos({x})")
_fn("tan", "np.tan({x})")
_fn("erf", "math.erf({x})")
_fn("reciprocal", "{one} / {x}")
_fn("floor", "np.floor({x})")
_fn("ceil", "np.ceil({x})")
_fn("trunc", "np.trunc({x})")


@_t("tanh")
def _tanh(c, x):
    return c.tanh(x) if _floating(c) else None


@_t("sigmoid")
def _sigmoid(c, x):
    return c.sigmoid(x) if _floating(c) else None


@_t("round")
def _round(c, x, decimals=0):
    return f"np.rint({x})" if _floating(c) and decimals == 0 else None


@_t("square")
def _square(c, x):
    return f"{x} * {x}" if c.dt.kind in "fiu" else None


@_t("relu")
def _relu(c, x):
    if c.dt.kind not in "fiu":
        return None
    return _max(c, x, c.lit(0))


@_t("sign")
def _sign(c, x):
    if c.dt.kind == "f":
        # NaN compares false both ways: sign(nan) is 0, as torch's
        return f"({c.lit(1)} if {x} > 0 else ({c.lit(-1)} if {x} < 0 else {c.lit(0)}))"
    if c.dt.kind in "iu":
        return f"({x} > 0) - ({x} < 0)"
    return None


@_t("clamp")
def _clamp(c, x, lo, hi):
    if c.dt.kind not in "fiu":
        return None
    if c.raw(1) is not None or c.is_slot(1):
        x = _max(c, x, lo)
    if c.raw(2) is not None or c.is_slot(2):
        x = _min(c, x, hi)
    return x


# -- comparisons and logic (bool results) ----------------------------------------------------
def _cmp(name, symbol):
    @_t(name)
    def template(c, a, b):
        return f"{a} {symbol} {b}" if c.dt.kind in "fiub" else None
    return template


for _n, _s in (("eq", "=="), ("ne", "!="), ("lt", "<"), ("le", "<="), ("gt", ">"),
               ("ge", ">=")):
    _cmp(_n, _s)


@_t("logical_and")
def _land(c, a, b):
    return f"({a} != 0) & ({b} != 0)"


@_t("logical_or")
def _lor(c, a, b):
    return f"({a} != 0) | ({b} != 0)"


@_t("logical_xor")
def _lxor(c, a, b):
    return f"({a} != 0) != ({b} != 0)"


@_t("logical_not")
def _lnot(c, x):
    return f"{x} == 0"


def _bit(name, symbol):
    @_t(name)
    def template(c, a, b):
        return f"{a} {symbol} {b}" if c.dt.kind in "iub" else None
    return template


_bit("bitwise_and", "&")
_bit("bitwise_or", "|")
_bit("bitwise_xor", "^")


@_t("bitwise_not")
def _bnot(c, x):
    if c.dt.kind == "b":
        return f"not {x}"
    return f"~{x}" if c.dt.kind in "iu" else None


@_t("isnan")
def _isnan(c, x):
    return f"{x} != {x}" if _floating(c) else None


@_t("isinf")
def _isinf(c, x):
    return f"np.isinf({x})" if _floating(c) else None


@_t("isfinite")
def _isfinite(c, x):
    return f"np.isfinite({x})" if _floating(c) else None


@_t("where")
def _where(c, cond, a, b, dtype=None):
    out = c.out_dtype
    return f"{c.cast(a, out)} if {cond} else {c.cast(b, out)}"


@_t("to", "cast")
def _to(c, x, dtype=None):
    out = c.out_dtype
    if out.kind == "b":
        return f"{x} != 0"
    if c.in_dtype(0).kind == "f" and out.kind in "iu":
        return None  # NaN/overflow conversions are undefined in LLVM; NumPy's rules differ
    return c.cast(x, out)


# -- activations ------------------------------------------------------------------------------
@_t("gelu")
def _gelu(c, x, approximate="none"):
    if not _floating(c):
        return None
    if approximate == "tanh":
        inner = c.let(f"{c.lit(_SQRT_2_OVER_PI)} * ({x} + {c.lit(0.044715)} * {x} * {x} * {x})")
        return f"{c.lit(0.5)} * {x} * ({c.lit(1)} + {c.tanh(inner)})"
    return f"{c.lit(0.5)} * {x} * ({c.lit(1)} + math.erf({x} * {c.lit(_SQRT_HALF)}))"


@_t("silu")
def _silu(c, x):
    return f"{x} * {c.sigmoid(x)}" if _floating(c) else None


@_t("softplus")
def _softplus(c, x, beta=1.0, threshold=20.0):
    if not _floating(c):
        return None
    z = c.let(f"{x} * {c.lit(beta)}")
    return f"{x} if {z} > {c.lit(threshold)} else np.log1p(np.exp({z})) / {c.lit(beta)}"


@_t("log_sigmoid")
def _log_sigmoid(c, x):
    if not _floating(c):
        return None
    return f"{_min(c, x, c.lit(0))} - np.log1p(np.exp(-abs({x})))"


@_t("mish")
def _mish(c, x):
    return f"{x} * {c.tanh(c.let(f'np.log1p(np.exp({x}))'))}" if _floating(c) else None


@_t("elu", "celu", "elu_", "celu_")
def _elu(c, x, alpha, scale, input_scale):
    if not _floating(c):
        return None
    neg = c.let(f"np.expm1({_min(c, x, c.lit(0))} * {c.lit(input_scale)}) * "
                f"{c.lit(alpha * scale)}")
    return f"{x} * {c.lit(scale)} if {x} > 0 else {neg}"


@_t("leaky_relu", "leaky_relu_")
def _leaky_relu(c, x, negative_slope):
    if not _floating(c):
        return None
    return f"{x} if {x} > 0 else {x} * {c.lit(negative_slope)}"


@_t("hardtanh")
def _hardtanh(c, x, min_val, max_val):
    if not _floating(c):
        return None
    return _min(c, _max(c, x, c.lit(min_val)), c.lit(max_val))


@_t("hardsigmoid")
def _hardsigmoid(c, x):
    if not _floating(c):
        return None
    clipped = _min(c, _max(c, c.let(f"{x} + {c.lit(3.0)}"), c.lit(0.0)), c.lit(6.0))
    return f"{clipped} / {c.lit(6.0)}"


@_t("hardswish")
def _hardswish(c, x):
    if not _floating(c):
        return None
    clipped = _min(c, _max(c, c.let(f"{x} + {c.lit(3.0)}"), c.lit(0.0)), c.lit(6.0))
    return f"{x} * {clipped} / {c.lit(6.0)}"


@_t("logit")
def _logit(c, x, eps=None):
    if not _floating(c):
        return None
    if eps is not None:
        x = _min(c, _max(c, x, c.lit(eps)), c.lit(1.0 - eps))
    return f"np.log({x} / ({c.lit(1.0)} - {x}))"


@_t("hardshrink")
def _hardshrink(c, x, lambd):
    if not _floating(c):
        return None
    return f"{c.lit(0)} if ({x} >= {c.lit(-lambd)} and {x} <= {c.lit(lambd)}) else {x}"


@_t("softshrink")
def _softshrink(c, x, lambd):
    if not _floating(c):
        return None
    lo, hi = c.lit(-lambd), c.lit(lambd)
    # x * 0 inside the band: a signed zero, and NaN stays NaN, as the forward does
    return f"{x} - {hi} if {x} > {hi} else ({x} + {hi} if {x} < {lo} else {x} * {c.lit(0)})"


@_t("threshold", "threshold_")
def _threshold(c, x, threshold, value):
    if not _floating(c):
        return None
    return f"{c.lit(value)} if {x} <= {c.lit(threshold)} else {x}"


@_t("xlogy.Tensor", "xlogy.Scalar_Self", "xlogy.Scalar_Other")
def _xlogy(c, x, y):
    if not _floating(c):
        return None
    return f"{c.lit(0)} if ({x} == 0 and {y} == {y}) else {x} * np.log({y})"


@_t("binary_cross_entropy")
def _bce(c, x, t):
    if not _floating(c):
        return None
    m = c.lit(-100)
    a = _max(c, c.let(f"np.log1p(-{x})"), m)
    b = _max(c, c.let(f"np.log({x})"), m)
    return f"({t} - {c.lit(1)}) * {a} - {t} * {b}"


def _check_table():
    """Every name above must be an elementwise op of the table (or the IR's cast)."""
    from ...ops import OPS

    for name in TEMPLATES:
        if name != "cast":
            assert OPS[name].kind == "elementwise", name


_check_table()
