"""Neural-network primitives kept fused for numerical stability: softmax and log_softmax."""

from __future__ import annotations

from .._tensor import Tensor
from ._dispatch import unary
from ._opdef import defop
from ._util import wrap_dim


def _softmax_fwd(xp, x, axis):
    if x.ndim == 0:
        return xp.ones_like(x)
    if x.size == 0:  # torch returns the empty tensor; NumPy's max has no identity
        return x.copy()
    e = xp.exp(x - xp.max(x, axis=axis, keepdims=True))
    return e / xp.sum(e, axis=axis, keepdims=True)


def _log_softmax_fwd(xp, x, axis):
    if x.ndim == 0:
        return xp.zeros_like(x)
    if x.size == 0:
        return x.copy()
    shifted = x - xp.max(x, axis=axis, keepdims=True)
    return shifted - xp.log(xp.sum(xp.exp(shifted), axis=axis, keepdims=True))


def _softmax_vjp(ns, g, out, axis):
    if not ns.raw(out).ndim:
        return ns.zeros_like(g)
    return out * (g - ns.sum(g * out, (axis,), True))


def _log_softmax_vjp(ns, g, out, axis):
    if not ns.raw(out).ndim:
        return ns.zeros_like(g)
    return g - ns.exp(out) * ns.sum(g, (axis,), True)


SOFTMAX = defop("softmax", _softmax_fwd, _softmax_vjp, kind="reduction", save=("out",),
                dtype_rule="same", node="SoftmaxBackward0", onnx="Softmax")
LOG_SOFTMAX = defop("log_softmax", _log_softmax_fwd, _log_softmax_vjp, kind="reduction",
                    save=("out",), dtype_rule="same", node="LogSoftmaxBackward0",
                    onnx="LogSoftmax")


def _normalize(op, input, dim, dtype):
    if dim is None:
        raise TypeError(f"{op.name}() missing required argument 'dim'")
    if dtype is not None:
        input = input.to(dtype)
    if input._data.dtype.kind not in "fV":  # V: bfloat16
        raise RuntimeError(f"\"{op.name}_lastdim_kernel_impl\" not implemented for "
                           f"'{input.dtype.name.capitalize()}'")
    return unary(op, input, {"axis": wrap_dim(dim, input._data.ndim)})


def softmax(input, dim=None, dtype=None):
    """``exp(x) / sum(exp(x))`` along ``dim``, computed stably."""
    return _normalize(SOFTMAX, input, dim, dtype)


def log_softmax(input, dim=None, dtype=None):
    return _normalize(LOG_SOFTMAX, input, dim, dtype)


Tensor.softmax = softmax
Tensor.log_softmax = log_softmax
