"""Converters of the reductions, softmax and cumsum (see ops.py for the table's contract).

torch's values at the edges are kept: NaN wins in max/min, an empty mean is NaN, an empty
any() is False.
"""

from __future__ import annotations

import math

import numpy as np

from ._conv_math import _as_bool, _k, _out
from .ops import arg, register


# -- reductions -----------------------------------------------------------------------------
def _axes(instr, key="axes"):
    axes = instr.params.get(key)
    if axes is None:
        return None
    return tuple(int(a) for a in ((axes,) if isinstance(axes, int) else axes))


def _reduction(op_type):
    def convert(b, instr):
        dt = instr.params.get("dtype") or _out(instr)
        x = arg(b, instr, 0, dt if op_type != "ReduceMean" else _out(instr))
        if x is not None and instr.ins[0].dtype == np.bool_ and op_type in ("ReduceMax",
                                                                             "ReduceMin"):
            x = b.cast(b.x(instr.ins[0]), np.bool_, np.int32)
            out = b.reduce(op_type, x, _axes(instr), instr.params.get("keepdim", False))
            return b.cast(out, np.int32, np.bool_)
        return b.reduce(op_type, x, _axes(instr), instr.params.get("keepdim", False))
    return convert


def _nan_reduction(op_type):
    """ReduceMax/ReduceMin that propagate NaN, as torch (ONNX leaves it unspecified)."""
    plain = _reduction(op_type)

    def convert(b, instr):
        out = plain(b, instr)
        dt = _out(instr)
        if np.dtype(dt).kind != "f":
            return out
        nan = b.cast(b.node("IsNaN", [b.x(instr.ins[0])]), np.bool_, np.int32)
        any_nan = b.reduce("ReduceMax", nan, _axes(instr), instr.params.get("keepdim", False))
        hit = b.cast(any_nan, np.int32, np.bool_)
        return b.node("Where", [hit, _k(b, np.nan, dt), out])
    return convert


def _mean(b, instr):
    axes = _axes(instr)
    shape = instr.ins[0].shape
    n = int(np.prod([shape[a] for a in (axes if axes is not None else range(len(shape)))]))
    if n:
        return _reduction("ReduceMean")(b, instr)
    dt = _out(instr)  # a mean over nothing is 0/0 = NaN
    s = b.reduce("ReduceSum", arg(b, instr, 0, dt), axes, instr.params.get("keepdim", False))
    return b.node("Div", [s, _k(b, 0.0, dt)])


register(["sum", "sum.dim_IntList"], "ReduceSum")(_reduction("ReduceSum"))
register(["mean", "mean.dim"], "ReduceMean")(_mean)
register(["prod", "prod.dim_int"], "ReduceProd")(_reduction("ReduceProd"))
register(["max", "amax"], "ReduceMax")(_nan_reduction("ReduceMax"))
register(["min", "amin"], "ReduceMin")(_nan_reduction("ReduceMin"))


@register(["all", "any"], "Cast+ReduceSum")
def _all_any(b, instr):
    # counts, so that an empty reduction gives all() = True and any() = False
    x = _as_bool(b, instr, 0)
    if instr.name == "all":
        x = b.node("Not", [x])
    n = b.reduce("ReduceSum", b.cast(x, np.bool_, np.int64), _axes(instr),
                 instr.params.get("keepdim", False))
    hit = b.node("Greater", [n, b.scalar(0, np.int64)])
    return b.node("Not", [hit]) if instr.name == "all" else hit


@register(["max.dim", "min.dim"], "ReduceMax/ReduceMin+ArgMax/ArgMin")
def _max_dim(b, instr):
    x = arg(b, instr, 0)
    if not instr.ins[0].shape:
        return [b.node("Identity", [x]), b.const(np.zeros(instr.outs[-1].shape, np.int64))]
    axis = int(instr.params["axis"])
    keep = int(instr.params.get("keepdim", False))
    big = instr.name == "max.dim"
    val = b.reduce("ReduceMax" if big else "ReduceMin", x, (axis,), keep)
    outs = [val]
    if len(instr.outs) > 1:
        # the aux index keeps the reduced dim (as its shape in the IR says)
        idx = b.node("ArgMax" if big else "ArgMin", [x], axis=axis,
                     keepdims=int(len(instr.outs[1].shape) == len(instr.ins[0].shape)),
                     select_last_index=0)
        outs.append(idx)
    return outs


@register(["argmax", "argmin"], "ArgMax/ArgMin")
def _argmax(b, instr):
    x = arg(b, instr, 0)
    axis = instr.params.get("axis")
    keep = int(instr.params.get("keepdim", False))
    op = "ArgMax" if instr.name == "argmax" else "ArgMin"
    if not instr.ins[0].shape:
        return b.const(np.zeros(instr.outs[0].shape, np.int64))
    if axis is None:
        x = b.reshape(x, [-1])
        out = b.node(op, [x], axis=0, keepdims=0)
        if keep:
            out = b.reshape(out, [1] * len(instr.ins[0].shape))
        return out
    return b.node(op, [x], axis=int(axis), keepdims=keep)


def _moments(b, x, axes, dt):
    mean = b.reduce("ReduceMean", x, axes, True)
    d = b.node("Sub", [x, mean])
    return mean, d


@register(["var", "std"], "ReduceMean+ReduceSum+Div (decomposes)")
def _var(b, instr):
    dt = _out(instr)
    x = arg(b, instr, 0, dt)
    axes = _axes(instr)
    shape = instr.ins[0].shape
    n = int(np.prod([shape[a] for a in (axes if axes is not None else range(len(shape)))]))
    _, d = _moments(b, x, axes, dt)
    ss = b.reduce("ReduceSum", b.node("Mul", [d, d]), axes, instr.params.get("keepdim", False))
    corr = instr.params.get("correction", 1)
    out = b.node("Div", [ss, b.scalar(max(n - corr, 0), dt)])
    return b.node("Sqrt", [out]) if instr.name == "std" else out


@register("logsumexp", "ReduceMax+Exp+ReduceSum+Log (decomposes)")
def _logsumexp(b, instr):
    dt = _out(instr)
    x = arg(b, instr, 0, dt)
    axes, keep = _axes(instr), instr.params.get("keepdim", False)
    m = b.reduce("ReduceMax", x, axes, True)
    m = b.node("Where", [b.node("IsInf", [m]), _k(b, 0.0, dt), m])
    s = b.reduce("ReduceSum", b.node("Exp", [b.node("Sub", [x, m])]), axes, True)
    out = b.node("Add", [b.node("Log", [s]), m])
    if not keep:
        out = b.squeeze(out, list(axes) if axes is not None else list(range(len(
            instr.ins[0].shape))))
    return out


@register("linalg_vector_norm", "Abs+Pow+ReduceSum (decomposes)")
def _vector_norm(b, instr):
    dt = _out(instr)
    x = b.node("Abs", [arg(b, instr, 0, dt)])
    p = float(instr.params.get("p", 2.0))
    axes, keep = _axes(instr), instr.params.get("keepdim", False)
    if p == math.inf:
        return b.reduce("ReduceMax", x, axes, keep)
    if p == -math.inf:
        return b.reduce("ReduceMin", x, axes, keep)
    if p == 0:
        nz = b.cast(b.node("Not", [b.node("Equal", [x, _k(b, 0.0, dt)])]), np.bool_, dt)
        return b.reduce("ReduceSum", nz, axes, keep)
    if p == 1:
        return b.reduce("ReduceSum", x, axes, keep)
    if p == 2:
        return b.node("Sqrt", [b.reduce("ReduceSum", b.node("Mul", [x, x]), axes, keep)])
    s = b.reduce("ReduceSum", b.node("Pow", [x, _k(b, p, dt)]), axes, keep)
    return b.node("Pow", [s, _k(b, 1.0 / p, dt)])


@register("sum_to_size", "ReduceSum")
def _sum_to_size(b, instr):
    x = arg(b, instr, 0)
    shape, size = instr.ins[0].shape, tuple(instr.params["size"])
    lead = len(shape) - len(size)
    keep_axes = [lead + i for i, s in enumerate(size) if s == 1 and shape[lead + i] != 1]
    if keep_axes:
        x = b.reduce("ReduceSum", x, keep_axes, True)
    if lead:
        x = b.reduce("ReduceSum", x, list(range(lead)), False)
    return x


@register(["softmax", "log_softmax"], "Softmax / LogSoftmax")
def _softmax(b, instr):
    op = "Softmax" if instr.name == "softmax" else "LogSoftmax"
    x = arg(b, instr, 0, _out(instr))
    if not instr.ins[0].shape:
        x = b.unsqueeze(x, [0])
        return b.squeeze(b.node(op, [x], axis=0), [0])
    return b.node(op, [x], axis=int(instr.params["axis"]))


@register("cumsum", "CumSum")
def _cumsum(b, instr):
    dt = instr.params.get("dtype") or _out(instr)
    x = arg(b, instr, 0, dt)
    if not instr.ins[0].shape:
        return b.node("Identity", [x])
    return b.node("CumSum", [x, b.const(np.array(int(instr.params["axis"]), dtype=np.int64))])
