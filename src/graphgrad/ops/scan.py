"""Running scans and differences: cummax, cummin, logcumsumexp, diff.

cummax/cummin return the index of the running extreme (the latest of equal values, and of NaNs
once one is seen, as torch) and send each gradient there; repeats accumulate. logcumsumexp's
rule is torch's: sums of exponentials of the gradient's positive and negative parts, each taken
in log space so that nothing overflows.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor, wrap
from ._dispatch import apply, unary
from ._namespace import DIFF, RAW
from ._opdef import defop
from ._util import wrap_dim
from .gather import along_dim_key
from .reduce import _return_type, return_types

__all__ = ["cummax", "cummin", "logcumsumexp", "diff"]

return_types.cummax = _return_type("cummax")
return_types.cummin = _return_type("cummin")


# -- cummax / cummin ------------------------------------------------------------------------
def _running_extreme(x, axis, ufunc):
    """(values, indices): the running extreme along ``axis`` and where it was last attained."""
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    values = ufunc.accumulate(x, axis=axis)  # np.maximum/minimum propagate NaN
    if x.size == 0:
        return values, np.zeros(x.shape, np.int64)
    # A position updates the index when it equals the running extreme (ties take the later
    # one) or is NaN; the index is then the last such position so far.
    hit = x == values
    if x.dtype.kind == "f":
        hit |= np.isnan(x)
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    pos = np.where(hit, np.arange(x.shape[axis]).reshape(shape), -1)
    return values, np.maximum.accumulate(pos, axis=axis)


def _cummax_fwd(xp, x, axis):
    return _running_extreme(x, axis, np.maximum)


def _cummin_fwd(xp, x, axis):
    return _running_extreme(x, axis, np.minimum)


def _cumextreme_vjp(ns, g, idx, axis):
    if idx.ndim == 0:
        return g
    return ns.index_put_grad(g, idx.shape, along_dim_key(idx, axis))


CUMMAX = defop("cummax", _cummax_fwd, _cumextreme_vjp, kind="opaque", save=("aux",),
               dtype_rule="same", node="CummaxBackward0", onnx=None)
CUMMIN = defop("cummin", _cummin_fwd, _cumextreme_vjp, kind="opaque", save=("aux",),
               dtype_rule="same", node="CumminBackward0", onnx=None)


def _cumextreme(op, name, input, dim):
    axis = wrap_dim(dim, input._data.ndim)
    values, idx = apply(op, (input,), {"axis": axis})
    return getattr(return_types, name)(values, wrap(idx.astype(np.int64, copy=False), False,
                                                    None))


def cummax(input, dim):
    """Running maximum along ``dim`` and the index where each was attained."""
    return _cumextreme(CUMMAX, "cummax", input, dim)


def cummin(input, dim):
    """Running minimum along ``dim`` and the index where each was attained."""
    return _cumextreme(CUMMIN, "cummin", input, dim)


# -- logcumsumexp -------------------------------------------------------------------------------
def _logcumsumexp_fwd(xp, x, axis):
    if x.ndim == 0:
        return x.copy()
    return np.logaddexp.accumulate(x, axis=axis)


def _reverse_lcse(ns, x, axis):
    return ns.flip(ns.scan_logcumsumexp(ns.flip(x, (axis,)), axis), (axis,))


def _logcumsumexp_vjp(ns, g, x, out, axis):
    """torch's formula: grad = exp(x + rlcse(log g+ - out)) - exp(x + rlcse(log g- - out)),
    where rlcse is the reversed logcumsumexp and g+/g- the positive and negative parts of g."""
    rg = ns.raw(g)
    if rg.ndim == 0:
        return g
    lowest = np.finfo(rg.dtype).min
    pos, neg = ns.const(rg > 0), ns.const(rg < 0)
    log_abs = ns.log(ns.abs(ns.where(ns.const(rg == 0), 1.0, g)))
    up = ns.exp(_reverse_lcse(ns, ns.where(pos, log_abs, lowest) - out, axis) + x)
    down = ns.exp(_reverse_lcse(ns, ns.where(neg, log_abs, lowest) - out, axis) + x)
    return up - down


LOGCUMSUMEXP = defop("logcumsumexp", _logcumsumexp_fwd, _logcumsumexp_vjp, kind="opaque",
                     save=(0, "out"), dtype_rule="same", node="LogcumsumexpBackward0", onnx=None)


def logcumsumexp(input, dim):
    """``log(cumsum(exp(input)))`` along ``dim``, computed without overflow."""
    x = input._data
    if x.dtype.kind != "f":
        name = {"b": "Bool", "i": "Long", "u": "Byte"}[x.dtype.kind]
        if x.dtype.kind == "i" and x.dtype != np.int64:
            name = {4: "Int", 2: "Short", 1: "Char"}[x.dtype.itemsize]
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for '{name}'")
    return unary(LOGCUMSUMEXP, input, {"axis": wrap_dim(dim, x.ndim)})


# -- diff -----------------------------------------------------------------------------------
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim`` (``logical_xor`` for bools), after
    ``prepend`` and ``append`` are joined to the input along that dim."""
    from .elementwise import logical_xor
    from .movement import cat, narrow

    x = input._data
    if x.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    axis = wrap_dim(dim, x.ndim)
    parts = [input]
    for extra, front in ((prepend, True), (append, False)):
        if extra is None:
            continue
        if not isinstance(extra, Tensor) or extra._data.ndim != x.ndim:
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
        parts.insert(0, extra) if front else parts.append(extra)
    out = cat(parts, axis) if len(parts) > 1 else input
    for _ in range(n):
        size = out._data.shape[axis]
        if size == 0:
            break
        hi, lo = narrow(out, axis, 1, size - 1), narrow(out, axis, 0, size - 1)
        out = logical_xor(hi, lo) if out._data.dtype == np.bool_ else hi - lo
    return out


def _bind_rules_namespaces():
    RAW.scan_logcumsumexp = staticmethod(lambda x, axis: np.logaddexp.accumulate(x, axis=axis))
    DIFF.scan_logcumsumexp = staticmethod(
        lambda x, axis: unary(LOGCUMSUMEXP, x, {"axis": axis}))


def _bind():
    for name in __all__:
        setattr(Tensor, name, globals()[name])


_bind_rules_namespaces()
_bind()
