"""The less common activations as op-table primitives with torch's grad_fn names: hardshrink,
softshrink, threshold (and ``threshold_``), rrelu (and ``rrelu_``) and prelu.

rrelu's training-mode slopes come from graphgrad's generator and travel to the rule as the
``noise`` param, so backward multiplies by the same draws. ``glu`` and ``softmin`` are
composites, in ``nn/_functional/activation.py``.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from . import activation as A
from . import elementwise as E
from ._dispatch import apply, unary
from ._opdef import defop
from .inplace import _make_inplace
from .random import _rng

__all__ = ["hardshrink", "threshold", "threshold_", "rrelu", "rrelu_", "prelu"]

_tensor_arg = A._tensor_arg
# torch's ScalarType names, as its messages spell them
_SCALAR_TYPE = {**E._TORCH_NAMES, "float16": "Half", "float32": "Float", "float64": "Double"}


def _outside(ns, x, lambd):
    """Where ``x`` leaves ``[-lambd, lambd]`` (NaN included, as torch's masks read)."""
    rx = ns.raw(x)
    return ~((rx >= -lambd) & (rx <= lambd))


# -- hardshrink, softshrink: zero inside [-lambd, lambd] -------------------------------------
@A._floating("hardshrink_cpu")
def _hardshrink_fwd(xp, x, lambd):
    return xp.where((x >= -lambd) & (x <= lambd), 0, x)


def _shrink_vjp(ns, g, x, lambd):
    return A._keep_where(ns, _outside(ns, x, lambd), g)


HARDSHRINK = defop("hardshrink", _hardshrink_fwd, _shrink_vjp, kind="elementwise", save=(0,),
                   dtype_rule="same", node="HardshrinkBackward0", onnx="Shrink")


@A._floating("softshrink_check")
def _softshrink_fwd(xp, x, lambd):
    limit = float(np.finfo(x.dtype).max)
    if not 0 <= lambd <= limit:
        raise RuntimeError(f"lambda must be in range [0, {limit:g}] for input dtype "
                           f"{_SCALAR_TYPE[x.dtype.name]}, but found {lambd:g}")
    # x * 0 inside the band: a signed zero, and NaN stays NaN, as in torch's kernel
    return xp.where(x > lambd, x - lambd, xp.where(x < -lambd, x + lambd, x * 0))


SOFTSHRINK = defop("softshrink", _softshrink_fwd, _shrink_vjp, kind="elementwise", save=(0,),
                   dtype_rule="same", node="SoftshrinkBackward0", onnx="Shrink")


# -- threshold: value where x <= threshold ---------------------------------------------------
def _threshold_fwd(xp, x, threshold, value):
    if x.dtype == np.bool_:
        raise NotImplementedError("\"threshold_cpu\" not implemented for 'Bool'")
    # NOTE: x <= threshold, not x > threshold: NaN is kept, as in torch
    return xp.where(x <= threshold, value, x)


def _threshold_vjp(ns, g, x, threshold, value):
    return A._keep_where(ns, ~(ns.raw(x) <= threshold), g)


THRESHOLD = defop("threshold", _threshold_fwd, _threshold_vjp, kind="elementwise", save=(0,),
                  dtype_rule="same", node="ThresholdBackward0")
# threshold_ reads its derivative off a snapshot of the input, under torch's second name
THRESHOLD_INPLACE = defop("threshold_", _threshold_fwd, _threshold_vjp, kind="elementwise",
                          save=(0,), dtype_rule="same", node="ThresholdBackward1")

_C_NAMES = {"int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
            "float16": "c10::Half", "float32": "float", "float64": "double"}


def _scalar_as(v, dtype):
    """``v`` converted to the tensor's dtype as torch converts a Scalar: integers truncate,
    uint8 wraps, anything else out of range raises."""
    v = v.item() if isinstance(v, Tensor) else v
    if dtype.kind == "f":
        if np.isfinite(v) and abs(v) > np.finfo(dtype).max:
            raise RuntimeError(f"value cannot be converted to type {_C_NAMES[dtype.name]} "
                               "without overflow")
        return float(v)
    if dtype.kind == "b":
        return v
    v = int(v)
    if dtype.kind == "u":
        return v % (1 << (8 * dtype.itemsize))
    info = np.iinfo(dtype)
    if not info.min <= v <= info.max:
        raise RuntimeError(f"value cannot be converted to type {_C_NAMES[dtype.name]} without "
                           "overflow")
    return v


def _threshold_params(x, threshold, value):
    dtype = x._data.dtype
    return {"threshold": _scalar_as(threshold, dtype), "value": _scalar_as(value, dtype)}


def threshold(input, threshold, value):
    """``value`` where ``input <= threshold``, else ``input``.

    >>> import graphgrad as torch
    >>> torch.threshold(torch.tensor([-1.0, 0.5, 2.0]), 0.5, 9.0)
    tensor([9., 9., 2.])
    """
    _tensor_arg(input, "threshold")
    return unary(THRESHOLD, input, _threshold_params(input, threshold, value))


def _threshold_into(x, threshold, value):
    return unary(THRESHOLD_INPLACE, _tensor_arg(x, "threshold_"),
                 _threshold_params(x, threshold, value))


threshold_ = _make_inplace("threshold_", _threshold_into, True)


def hardshrink(input, lambd=0.5):
    """``input`` where ``|input| > lambd``, else 0.

    >>> import graphgrad as torch
    >>> torch.hardshrink(torch.tensor([-1.0, 0.3, 0.7]))
    tensor([-1.0000,  0.0000,  0.7000])
    """
    return unary(HARDSHRINK, _tensor_arg(input, "hardshrink"), {"lambd": lambd})


def softshrink(input, lambd=0.5):
    """``input`` moved ``lambd`` towards 0, and 0 inside ``[-lambd, lambd]``."""
    return unary(SOFTSHRINK, _tensor_arg(input, "softshrink"), {"lambd": lambd})


# -- rrelu: leaky relu with a random slope in training, the mean slope in eval ----------------
@A._floating("leaky_relu_cpu")
def _rrelu_fwd(xp, x, lower, upper, noise=None):
    if noise is not None:  # 1 where x > 0, the drawn slope elsewhere
        return x * noise
    return xp.where(x > 0, x, x * ((lower + upper) / 2))


def _rrelu_vjp(ns, g, x, lower, upper, noise=None):
    # NOTE: torch multiplies by the noise only when the interval is wider than 1e-6; otherwise
    # it takes leaky_relu's derivative with the mean slope, even in training
    if noise is not None and upper - lower > 1e-6:
        return g * ns.const(noise)
    return ns.where(ns.const(ns.raw(x) > 0), g, g * ((lower + upper) / 2))


def _rrelu_result_vjp(ns, g, out, lower, upper, noise=None):
    if noise is not None and upper - lower > 1e-6:
        return g * ns.const(noise)
    # the sign of the result is the sign of the input only for a non-negative slope
    return A._leaky_relu_result_vjp(ns, g, out, (lower + upper) / 2)


RRELU = defop("rrelu", _rrelu_fwd, _rrelu_vjp, kind="elementwise", save=(0,), dtype_rule="same",
              node="RreluWithNoiseBackward0")
RRELU_INPLACE = defop("rrelu_", _rrelu_fwd, _rrelu_result_vjp, kind="elementwise",
                      save=("out",), dtype_rule="same", node="RreluWithNoiseBackward1")


def _rrelu_params(x, name, lower, upper, training, generator):
    _tensor_arg(x, name)
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    a = x._data
    if not training:
        return {"lower": lower, "upper": upper}
    if a.dtype.kind != "f":
        raise NotImplementedError(f"\"rrelu_with_noise_out_cpu\" not implemented for "
                                  f"'{_SCALAR_TYPE[a.dtype.name]}'")
    slopes = _rng(generator).uniform(lower, upper, a.shape).astype(a.dtype, copy=False)
    return {"lower": lower, "upper": upper,
            "noise": np.where(a <= 0, slopes, np.ones((), a.dtype))}


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """Leaky relu whose negative slope is drawn from ``U(lower, upper)`` per element in
    training, and is ``(lower + upper) / 2`` otherwise.

    >>> import graphgrad as torch
    >>> torch.rrelu(torch.tensor([-2.0, 3.0]), 0.1, 0.3)
    tensor([-0.4000,  3.0000])
    """
    return unary(RRELU, input, _rrelu_params(input, "rrelu", lower, upper, training, generator))


def _rrelu_into(x, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return unary(RRELU_INPLACE, x,
                 _rrelu_params(x, "rrelu_", lower, upper, training, generator))


rrelu_ = _make_inplace("rrelu_", _rrelu_into, False)


# -- prelu: leaky relu with a learned slope per channel (dim 1) -----------------------------
@A._floating("prelu_cpu")
def _prelu_fwd(xp, x, weight):
    return xp.where(x > 0, x, weight * x)


def _prelu_vjp(ns, g, x, weight):
    # the engine sums the weight's gradient back over the broadcast (non-channel) dims
    positive = ns.const(ns.raw(x) > 0)
    return ns.where(positive, g, weight * g), ns.where(positive, 0.0, x * g)


PRELU = defop("_prelu_kernel", _prelu_fwd, _prelu_vjp, kind="elementwise", save=(0, 1),
              dtype_rule="same", node="PreluKernelBackward0", onnx="PRelu")


def prelu(input, weight):
    """``max(0, x) + weight * min(0, x)``; ``weight`` has one element, or one per channel
    (dim 1 of ``input``).

    >>> import graphgrad as torch
    >>> torch.prelu(torch.tensor([[-2.0, 1.0]]), torch.tensor([0.5, 0.1]))
    tensor([[-1.,  1.]])
    """
    _tensor_arg(input, "prelu")
    if not isinstance(weight, Tensor):
        raise TypeError(f"prelu(): argument 'weight' (position 2) must be Tensor, not "
                        f"{type(weight).__name__}")
    a, w = input._data, weight._data
    if a.dtype != w.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got "
                           f"{_SCALAR_TYPE[a.dtype.name]} and {_SCALAR_TYPE[w.dtype.name]}")
    ndim = a.ndim
    if w.size != 1:
        if ndim == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = a.shape[1] if ndim > 1 else 1
        if channels != w.size:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {w.size} and channel size = {channels}.")
    if w.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {w.ndim}")
    if ndim != w.ndim:  # the channel sits on dim 1; every other dim broadcasts
        shape = [1] * ndim
        if ndim > 1:
            shape[1] = w.size
        weight = weight.reshape(shape)
    return apply(PRELU, (input, weight))


Tensor.hardshrink = hardshrink
Tensor.prelu = prelu
