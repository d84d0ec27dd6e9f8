"""Activations and extra elementwise math: logit, softplus, the ELU family (elu, selu, celu),
gelu, silu, mish, hardtanh/relu6, leaky_relu, hardsigmoid, hardswish, softsign, tanhshrink,
logsigmoid, nan_to_num, lerp, hypot, atan2, fmod, logaddexp, xlogy.

Forwards use the numerically stable forms torch computes (softplus' threshold, logsigmoid and
logaddexp without overflow). Kinks follow torch's subgradient conventions, read off the masks
in each rule. Activations that torch only has in ``torch.nn.functional`` are defined here but
exported by ``graphgrad.nn.functional``; ``__all__`` lists the ones torch has at top level.
The in-place forms (``elu_``, ``Tensor.lerp_``, ...) are built with ``inplace._make_inplace``.
"""

from __future__ import annotations

import math

import numpy as np

from .._tensor import Tensor
from . import _erf_kernels
from . import elementwise as E
from ._dispatch import _scalar, apply, binary, unary
from ._namespace import DIFF, RAW
from ._opdef import defop
from .inplace import _make_inplace

__all__ = ["logit", "selu", "celu", "nan_to_num", "lerp", "hypot", "atan2", "arctan2", "fmod",
           "logaddexp", "xlogy", "selu_", "celu_", "relu_"]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_GELU_CUBIC = 0.044715


def _extend_rules_namespaces():
    """The math the rules below need, in both rules namespaces (Note [Rules namespace])."""
    for name, raw, diff in (("erf", lambda x: E._erf(np, x), E.erf),
                            ("sigmoid", lambda x: E._sigmoid(np, x), E.sigmoid),
                            ("log1p", np.log1p, E.log1p)):
        if not hasattr(RAW, name):
            setattr(RAW, name, staticmethod(raw))
        if not hasattr(DIFF, name):
            setattr(DIFF, name, staticmethod(diff))


_extend_rules_namespaces()


def _torch_dtype_name(dtype) -> str:
    return E._TORCH_NAMES.get(np.dtype(dtype).name, np.dtype(dtype).name)


def _floating(kernel):
    """Wraps a forward so non-floating inputs raise torch's NotImplementedError for ``kernel``
    (checked after promotion, so an int tensor next to a float one is fine)."""
    def wrap(forward):
        def checked(xp, *arrays, **params):
            for a in arrays:
                if type(a) is np.ndarray and a.dtype.kind != "f":
                    raise NotImplementedError(
                        f"\"{kernel}\" not implemented for '{_torch_dtype_name(a.dtype)}'")
            return forward(xp, *arrays, **params)
        checked.__name__ = forward.__name__
        return checked
    return wrap


def _keep_where(ns, keep, g, other=0.0):
    """``g`` where the (raw, boolean) mask ``keep`` holds, else ``other``: a where, not a
    product, so that an infinite gradient does not turn into NaN outside the mask."""
    return ns.where(ns.const(keep), g, other)


def _activation(name, forward, vjp, node, onnx=None, save=(0,), dtype_rule="same"):
    return defop(name, forward, vjp, kind="elementwise", save=save, dtype_rule=dtype_rule,
                 node=node, onnx=onnx)


# -- logit ------------------------------------------------------------------------------------
def _logit_fwd(xp, x, eps=None):
    if eps is not None:
        x = xp.clip(x, eps, 1.0 - eps)
    return xp.log(x / (1.0 - x))


def _logit_vjp(ns, g, x, eps=None):
    rx = ns.raw(x)
    denom = x * (1.0 - x)
    ends = (rx == 0) | (rx == 1)
    if eps is None and ends.any():
        # torch gives g * inf at both ends: a +0 denominator (x * (1 - x) is -0 at x = -0.0)
        denom = ns.where(ns.const(ends), 0.0, denom)
    grad = g / denom
    if eps is None:  # outside [0, 1] the logit is undefined, and so is its gradient
        return ns.where(ns.const((rx < 0) | (rx > 1)), math.nan, grad)
    # clamped inputs have a flat logit: zero gradient outside [eps, 1 - eps]
    return ns.where(ns.const((rx < eps) | (rx > 1.0 - eps)), 0.0, grad)


LOGIT = _activation("logit", _logit_fwd, _logit_vjp, "LogitBackward0", dtype_rule="float")


# -- softplus, logsigmoid, mish: the smooth relus ---------------------------------------------
@_floating("softplus_cpu")
def _softplus_fwd(xp, x, beta=1.0, threshold=20.0):
    z = x * beta
    # above the threshold softplus is the identity to working precision (and exp would overflow)
    return xp.where(z > threshold, x, xp.log1p(xp.exp(z)) / beta)


def _softplus_vjp(ns, g, x, beta=1.0, threshold=20.0):
    z = x * beta
    return ns.where(ns.const(ns.raw(z) > threshold), g, g * ns.sigmoid(z))


SOFTPLUS = _activation("softplus", _softplus_fwd, _softplus_vjp, "SoftplusBackward0", "Softplus")


@_floating("log_sigmoid_cpu")
def _logsigmoid_fwd(xp, x):
    # log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)): exp never overflows
    return xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x)))


LOGSIGMOID = _activation("log_sigmoid", _logsigmoid_fwd,
                         lambda ns, g, x: g * ns.sigmoid(-x), "LogSigmoidBackward0")


@_floating("mish_cpu")
def _mish_fwd(xp, x):
    return x * xp.tanh(xp.log1p(xp.exp(x)))


def _mish_vjp(ns, g, x):
    t = ns.tanh(ns.log1p(ns.exp(x)))
    s = ns.sigmoid(x)
    return g * (t + x * s * (1.0 - t * t))


MISH = _activation("mish", _mish_fwd, _mish_vjp, "MishBackward0", "Mish")


# -- the ELU family: elu, selu (ELU with fixed constants) and celu ---------------------------
def _elu_fwd(xp, x, alpha, scale, input_scale):
    # expm1 of the negative part only: the positive side never overflows
    neg = xp.expm1(xp.minimum(x, 0) * input_scale) * (alpha * scale)
    return xp.where(x > 0, x * scale, neg)


def _elu_vjp(ns, g, x, alpha, scale, input_scale):
    # torch's test is x <= 0, so a NaN takes the linear branch; the exp branch sees only the
    # non-positive inputs, so neither branch of the where overflows
    positive = ~(ns.raw(x) <= 0)
    safe = ns.where(ns.const(positive), 0.0, x)
    neg = g * (alpha * scale * input_scale) * ns.exp(safe * input_scale)
    return ns.where(ns.const(positive), g * scale, neg)


ELU = _activation("elu", _floating("elu_cpu")(_elu_fwd), _elu_vjp, "EluBackward0", "Elu")
CELU = _activation("celu", _floating("elu_cpu")(_elu_fwd), _elu_vjp, "CeluBackward0", "Celu")


# -- gelu and silu ----------------------------------------------------------------------------
@_floating("GeluKernelImpl")
def _gelu_fwd(xp, x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1.0 + xp.tanh(_SQRT_2_OVER_PI * (x + _GELU_CUBIC * x * x * x)))
    if type(x) is np.ndarray and x.dtype == np.float32:
        return _erf_kernels.gelu_f32(x)  # one fused pass per block: the erf and the products
    return 0.5 * x * (1.0 + E._erf(xp, x * _SQRT_HALF))


def _gelu_vjp(ns, g, x, approximate="none"):
    if approximate == "tanh":
        x2 = x * x
        t = ns.tanh(_SQRT_2_OVER_PI * (x + _GELU_CUBIC * x2 * x))
        inner_grad = _SQRT_2_OVER_PI * (1.0 + 3.0 * _GELU_CUBIC * x2)
        return g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * inner_grad)
    if type(x) is np.ndarray and type(g) is np.ndarray and x.dtype == g.dtype == np.float32 \
            and x.shape == g.shape:
        return _erf_kernels.gelu_grad_f32(x, g)  # raw arrays (no higher-order graph): fused
    cdf = 0.5 * (1.0 + ns.erf(x * _SQRT_HALF))
    pdf = _INV_SQRT_2PI * ns.exp(-0.5 * x * x)
    return g * (cdf + x * pdf)


GELU = _activation("gelu", _gelu_fwd, _gelu_vjp, "GeluBackward0", "Gelu")


@_floating("silu_cpu")
def _silu_fwd(xp, x):
    return x * E._sigmoid(xp, x)


def _silu_vjp(ns, g, x):
    s = ns.sigmoid(x)
    return g * s * (1.0 + x * (1.0 - s))


SILU = _activation("silu", _silu_fwd, _silu_vjp, "SiluBackward0")


# -- piecewise-linear activations -----------------------------------------------------------
def _hardtanh_fwd(xp, x, min_val, max_val):
    if x.dtype == np.bool_:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if x.dtype.kind != "f":  # integer tensors clamp to the bounds truncated to integers
        min_val, max_val = int(min_val), int(max_val)
    return xp.clip(x, min_val, max_val)


def _hardtanh_vjp(ns, g, x, min_val, max_val):
    rx = ns.raw(x)
    # NOTE: at NaN this gives the gradient, as torch's formula and its scalar loop do; torch's
    # vectorised loop (all but a tensor's last few elements) gives 0 there.
    return ns.where(ns.const((rx <= min_val) | (rx >= max_val)), 0.0, g)


HARDTANH = _activation("hardtanh", _hardtanh_fwd, _hardtanh_vjp, "HardtanhBackward0", "Clip")


@_floating("leaky_relu_cpu")
def _leaky_relu_fwd(xp, x, negative_slope):
    return xp.where(x > 0, x, x * negative_slope)


def _leaky_relu_vjp(ns, g, x, negative_slope):
    return ns.where(ns.const(ns.raw(x) > 0), g, g * negative_slope)


LEAKY_RELU = _activation("leaky_relu", _leaky_relu_fwd, _leaky_relu_vjp, "LeakyReluBackward0",
                         "LeakyRelu")


@_floating("hardsigmoid_cpu")
def _hardsigmoid_fwd(xp, x):
    return xp.clip(x + 3.0, 0.0, 6.0) / 6.0


def _hardsigmoid_vjp(ns, g, x):
    rx = ns.raw(x)
    return _keep_where(ns, (rx > -3.0) & (rx < 3.0), g / 6.0)


HARDSIGMOID = _activation("hardsigmoid", _hardsigmoid_fwd, _hardsigmoid_vjp,
                          "HardsigmoidBackward0", "HardSigmoid")


@_floating("hardswish_cpu")
def _hardswish_fwd(xp, x):
    return x * xp.clip(x + 3.0, 0.0, 6.0) / 6.0


def _hardswish_vjp(ns, g, x):
    rx = ns.raw(x)
    # torch: 0 up to -3, the ramp below 3, else (and at NaN) the gradient itself
    ramp = ns.where(ns.const(rx < 3.0), g * (x / 3.0 + 0.5), g)
    return _keep_where(ns, ~(rx <= -3.0), ramp)


HARDSWISH = _activation("hardswish", _hardswish_fwd, _hardswish_vjp, "HardswishBackward0",
                        "HardSwish")


# -- nan_to_num -------------------------------------------------------------------------------
def _nan_to_num_fwd(xp, x, nan=0.0, posinf=None, neginf=None):
    if x.dtype.kind != "f":  # integers and bools hold no NaN or infinity
        return x.copy()
    return xp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


def _nan_to_num_vjp(ns, g, x, nan=0.0, posinf=None, neginf=None):
    return _keep_where(ns, np.isfinite(ns.raw(x)), g)


NAN_TO_NUM = _activation("nan_to_num", _nan_to_num_fwd, _nan_to_num_vjp, "NanToNumBackward0")


# -- binary math ------------------------------------------------------------------------------
def _lerp_fwd(xp, start, end, weight):
    # torch's two-sided form: exact at both ends (weight 0 gives start, weight 1 gives end)
    diff = end - start
    if type(weight) is not np.ndarray:
        return start + weight * diff if weight < 0.5 else end - diff * (1.0 - weight)
    return xp.where(weight < 0.5, start + weight * diff, end - diff * (1.0 - weight))


LERP_SCALAR = defop("lerp.Scalar", _floating("lerp_kernel_scalar")(_lerp_fwd),
                    lambda ns, g, weight: (g * (1.0 - weight), g * weight),
                    kind="elementwise", dtype_rule="same", node="LerpBackward0")
LERP_TENSOR = defop("lerp.Tensor", _floating("lerp_kernel_tensor")(_lerp_fwd),
                    lambda ns, g, start, end, weight: (g * (1.0 - weight), g * weight,
                                                       g * (end - start)),
                    kind="elementwise", save=(0, 1, 2), dtype_rule="same", node="LerpBackward1")

HYPOT = defop("hypot", _floating("hypot_cpu")(lambda xp, a, b: xp.hypot(a, b)),
              lambda ns, g, a, b, out: (g * a / out, g * b / out), kind="elementwise",
              save=(0, 1, "out"), node="HypotBackward0")


def _atan2_vjp(ns, g, a, b):
    denom = a * a + b * b
    # torch masks the reciprocal to 0 at a == b == 0, so atan2(0, 0) has gradient 0
    zero = ns.const(ns.raw(denom) == 0)
    recip = ns.where(zero, 0.0, 1.0 / ns.where(zero, 1.0, denom))
    return g * b * recip, -g * a * recip


ATAN2 = defop("atan2", lambda xp, a, b: xp.arctan2(a, b), _atan2_vjp, kind="elementwise",
              save=(0, 1), dtype_rule="float", node="Atan2Backward0", onnx="Atan")


def _logaddexp_vjp(ns, g, a, b):
    # d/da log(e^a + e^b) = sigmoid(a - b): never overflows, unlike 1 / (1 + exp(b - a))
    return g * ns.sigmoid(a - b), g * ns.sigmoid(b - a)


LOGADDEXP = defop("logaddexp", _floating("logaddexp_cpu")(lambda xp, a, b: xp.logaddexp(a, b)),
                  _logaddexp_vjp, kind="elementwise", save=(0, 1), node="LogaddexpBackward0")


def _fmod(xp, a, b):
    if np.result_type(a) == np.bool_:
        raise NotImplementedError("\"fmod_cpu\" not implemented for 'Bool'")
    return xp.fmod(a, b)


def _fmod_vjp(ns, g, a, b):
    # a - trunc(a / b) * b: the quotient is piecewise constant
    return g, -g * ns.const(np.trunc(ns.raw(a) / ns.raw(b)))


FMOD_SCALAR = defop("fmod.Scalar", E._int_division(_fmod), lambda ns, g: (g, None),
                    kind="elementwise", node="FmodBackward0", onnx="Mod",
                    hidden_inputs=("scalars",))
FMOD = defop("fmod.Tensor", E._int_division(_fmod), _fmod_vjp, kind="elementwise", save=(0, 1),
             node="FmodBackward1", onnx="Mod")


def _log_operand(xp, y):
    # NOTE: np.log of a Python number is an np.float64, which would upcast float32 arrays
    return xp.log(y) if type(y) is np.ndarray else float(np.log(y))


def _xlogy_fwd(xp, x, y):
    # 0 * log(y) is 0 for any y but NaN, as in torch
    return xp.where((x == 0) & ~xp.isnan(y), 0.0, x * _log_operand(xp, y))


def _xlogy_x_grad(ns, g, x, y):
    """d/dx: log(y), zero where x == 0 and y <= 0 (torch's convention), or where g is 0."""
    ry = ns.raw(y)
    grad = g * (ns.log(y) if type(ry) is np.ndarray else float(np.log(ry)))
    zero = ((ns.raw(x) == 0) & (ry <= 0)) | ((ns.raw(g) == 0) & ~np.isnan(ry))
    return ns.where(ns.const(zero), 0.0, grad)


XLOGY = defop("xlogy.Tensor", _xlogy_fwd,
              lambda ns, g, x, y: (_xlogy_x_grad(ns, g, x, y), g * x / y),
              kind="elementwise", save=(0, 1), dtype_rule="float", node="XlogyBackward0")
XLOGY_SCALAR_SELF = defop("xlogy.Scalar_Self", _xlogy_fwd,
                          lambda ns, g, x, y: (None, g * x / y), kind="elementwise",
                          save=(0, 1), dtype_rule="float", node="XlogyBackward1",
                          hidden_inputs=("scalars",))
XLOGY_SCALAR_OTHER = defop("xlogy.Scalar_Other", _xlogy_fwd,
                           lambda ns, g, x, y: (_xlogy_x_grad(ns, g, x, y), None),
                           kind="elementwise", save=(0, 1), dtype_rule="float",
                           node="XlogyBackward2", hidden_inputs=("scalars",))


# -- public functions -------------------------------------------------------------------------
_tensor_arg = E._tensor_arg


def logit(input, eps=None):
    """``log(p / (1 - p))``; with ``eps`` the input is clamped to ``[eps, 1 - eps]`` first."""
    return unary(LOGIT, _tensor_arg(input, "logit"), {"eps": eps} if eps is not None else None)


def softplus(input, beta=1.0, threshold=20.0):
    """``log(1 + exp(beta * x)) / beta``, the identity where ``beta * x > threshold``."""
    return unary(SOFTPLUS, _tensor_arg(input, "softplus"),
                 {"beta": beta, "threshold": threshold})


def elu(input, alpha=1.0):
    return unary(ELU, _tensor_arg(input, "elu"),
                 {"alpha": alpha, "scale": 1.0, "input_scale": 1.0})


def selu(input):
    """ELU with the self-normalising constants (grad_fn EluBackward0, as in torch)."""
    return unary(ELU, _tensor_arg(input, "selu"),
                 {"alpha": _SELU_ALPHA, "scale": _SELU_SCALE, "input_scale": 1.0})


def celu(input, alpha=1.0):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return unary(CELU, _tensor_arg(input, "celu"),
                 {"alpha": alpha, "scale": 1.0, "input_scale": 1.0 / alpha})


def gelu(input, approximate="none"):
    """``x * Phi(x)``, or its tanh approximation with ``approximate='tanh'``."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return unary(GELU, _tensor_arg(input, "gelu"),
                 {"approximate": approximate} if approximate != "none" else None)


def silu(input):
    return unary(SILU, _tensor_arg(input, "silu"))


def mish(input):
    """``x * tanh(softplus(x))``."""
    return unary(MISH, _tensor_arg(input, "mish"))


def hardtanh(input, min_val=-1.0, max_val=1.0):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return unary(HARDTANH, _tensor_arg(input, "hardtanh"),
                 {"min_val": min_val, "max_val": max_val})


def relu6(input):
    """``hardtanh(x, 0, 6)`` (grad_fn HardtanhBackward0, as in torch)."""
    return unary(HARDTANH, _tensor_arg(input, "relu6"), {"min_val": 0.0, "max_val": 6.0})


def leaky_relu(input, negative_slope=0.01):
    return unary(LEAKY_RELU, _tensor_arg(input, "leaky_relu"),
                 {"negative_slope": negative_slope})


def hardsigmoid(input):
    return unary(HARDSIGMOID, _tensor_arg(input, "hardsigmoid"))


def hardswish(input):
    return unary(HARDSWISH, _tensor_arg(input, "hardswish"))


def logsigmoid(input):
    return unary(LOGSIGMOID, _tensor_arg(input, "logsigmoid"))


def softsign(input):
    """``x / (1 + |x|)``, composed as torch composes it (grad_fn DivBackward0)."""
    return E.div(input, E.add(E.abs(input), 1))


def tanhshrink(input):
    """``x - tanh(x)``, composed as torch composes it (grad_fn SubBackward0)."""
    return E.sub(input, E.tanh(input))


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """NaN becomes ``nan``, infinities ``posinf``/``neginf`` (default: the dtype's extremes)."""
    return unary(NAN_TO_NUM, _tensor_arg(input, "nan_to_num"),
                 {"nan": nan, "posinf": posinf, "neginf": neginf})


_C_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
                 "int64": "long int", "int32": "int", "int16": "short int",
                 "int8": "signed char", "uint8": "unsigned char", "bool": "bool"}


def _same_dtype(name, x, like):
    if x._data.dtype != like._data.dtype:
        raise RuntimeError(f"expected dtype {_C_TYPE_NAMES[like._data.dtype.name]} for `{name}` "
                           f"but got dtype {_C_TYPE_NAMES[x._data.dtype.name]}")


def lerp(input, end, weight):
    """``input + weight * (end - input)``; ``weight`` is a number or a tensor."""
    _tensor_arg(input, "lerp")
    if not isinstance(end, Tensor):
        raise TypeError(f"lerp(): argument 'end' (position 2) must be Tensor, not "
                        f"{type(end).__name__}")
    _same_dtype("end", end, input)
    if isinstance(weight, Tensor):
        if weight._data.ndim == 0 and weight._data.dtype != input._data.dtype:
            # torch takes a 0-d weight of any dtype, as a number in the ends' dtype
            weight = E._to_dtype(weight, input.dtype)
        _same_dtype("weight", weight, input)
        return apply(LERP_TENSOR, (input, end, weight))
    return apply(LERP_SCALAR, (input, end), {"weight": _scalar(weight)})


def _tensor_pair(name, input, other):
    """torch's signature for these ops takes two tensors (no Python-number overload)."""
    _tensor_arg(input, name)
    if not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")


def hypot(input, other):
    """``sqrt(input**2 + other**2)`` without intermediate overflow."""
    _tensor_pair("hypot", input, other)
    return binary(HYPOT, input, other)


def atan2(input, other):
    """The angle of the point ``(other, input)``, in ``[-pi, pi]``."""
    _tensor_pair("atan2", input, other)
    return binary(ATAN2, input, other)


arctan2 = atan2


def logaddexp(input, other):
    _tensor_pair("logaddexp", input, other)
    return binary(LOGADDEXP, input, other)


def fmod(input, other):
    """The C remainder: it has the sign of the dividend (``remainder`` has the divisor's)."""
    _tensor_arg(input, "fmod")
    return binary(FMOD if isinstance(other, Tensor) else FMOD_SCALAR, input, other)


def xlogy(input, other):
    """``input * log(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN)."""
    if isinstance(input, Tensor):
        return binary(XLOGY if isinstance(other, Tensor) else XLOGY_SCALAR_OTHER, input, other)
    if isinstance(other, Tensor):
        return binary(XLOGY_SCALAR_SELF, input, other)
    raise TypeError(f"xlogy() received an invalid combination of arguments - got "
                    f"({type(input).__name__}, {type(other).__name__}), but expected a Tensor")


# -- in-place forms --------------------------------------------------------------------------
# NOTE: torch's in-place elu (selu, celu) and leaky_relu save their result, not their input
# (grad_fn EluBackward1, CeluBackward1, LeakyReluBackward1), and read the derivative off its
# sign. That is right only for a non-negative slope, so torch refuses a negative one in backward.
_NEGATIVE_SLOPE = ("In-place {} backward calculation is triggered with a negative slope which is "
                   "not supported. This is caused by calling in-place forward function with a "
                   "negative slope, please call out-of-place version instead.")


def _elu_result_vjp(ns, g, out, alpha, scale, input_scale):
    if alpha * scale < 0:
        raise RuntimeError(_NEGATIVE_SLOPE.format("elu"))
    # below zero, out = a * (exp(x * s) - 1) with a = alpha * scale: its derivative is s*(out + a)
    neg = g * input_scale * (out + alpha * scale)
    # torch tests out <= 0: a NaN result takes the linear branch
    return ns.where(ns.const(~(ns.raw(out) <= 0)), g * scale, neg)


def _leaky_relu_result_vjp(ns, g, out, negative_slope):
    if negative_slope < 0:
        raise RuntimeError(_NEGATIVE_SLOPE.format("leakyReLu") + " File an issue at "
                           "https://github.com/pytorch/pytorch if you do require supporting "
                           "in-place leakRelu backward calculation with negative slope")
    return ns.where(ns.const(ns.raw(out) > 0), g, g * negative_slope)


ELU_RESULT = _activation("elu_", _floating("elu_cpu")(_elu_fwd), _elu_result_vjp,
                         "EluBackward1", "Elu", save=("out",))
CELU_RESULT = _activation("celu_", _floating("elu_cpu")(_elu_fwd), _elu_result_vjp,
                          "CeluBackward1", "Celu", save=("out",))
LEAKY_RELU_RESULT = _activation("leaky_relu_", _leaky_relu_fwd, _leaky_relu_result_vjp,
                                "LeakyReluBackward1", "LeakyRelu", save=("out",))


def _elu_into(x, alpha=1.0):
    return unary(ELU_RESULT, _tensor_arg(x, "elu_"),
                 {"alpha": alpha, "scale": 1.0, "input_scale": 1.0})


def _selu_into(x):
    return unary(ELU_RESULT, _tensor_arg(x, "selu_"),
                 {"alpha": _SELU_ALPHA, "scale": _SELU_SCALE, "input_scale": 1.0})


def _celu_into(x, alpha=1.0):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return unary(CELU_RESULT, _tensor_arg(x, "celu_"),
                 {"alpha": alpha, "scale": 1.0, "input_scale": 1.0 / alpha})


def _leaky_relu_into(x, negative_slope=0.01):
    return unary(LEAKY_RELU_RESULT, _tensor_arg(x, "leaky_relu_"),
                 {"negative_slope": negative_slope})


# The ops that save their input get a snapshot of it (saves_self=True) when recording.
elu_ = _make_inplace("elu_", _elu_into, False)
selu_ = _make_inplace("selu_", _selu_into, False)
celu_ = _make_inplace("celu_", _celu_into, False)
leaky_relu_ = _make_inplace("leaky_relu_", _leaky_relu_into, False)
hardtanh_ = _make_inplace("hardtanh_", hardtanh, True)
silu_ = _make_inplace("silu_", silu, True)
mish_ = _make_inplace("mish_", mish, True)
hardsigmoid_ = _make_inplace("hardsigmoid_", hardsigmoid, True)
hardswish_ = _make_inplace("hardswish_", hardswish, True)


def relu_(input):
    return _tensor_arg(input, "relu_").relu_()



for _name in ("logit", "nan_to_num", "lerp", "hypot", "atan2", "arctan2", "fmod", "logaddexp",
              "xlogy"):
    setattr(Tensor, _name, globals()[_name])
for _name in ("logit", "nan_to_num", "lerp", "hypot", "atan2", "arctan2", "fmod", "xlogy"):
    setattr(Tensor, _name + "_", _make_inplace(_name + "_", globals()[_name], True))
