"""The single dispatch point: every op application in graphgrad passes through here.

It prepares input dtypes (torch promotion), calls the op's forward on raw arrays, and, when
grad mode is on and an input requires grad, records one graph Node. This is the eager hot path:
no shape inference (NumPy computes shapes), no per-call dict building.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype
from .._tensor import Tensor, wrap
from ..autograd.graph import next_sequence
from ..autograd.grad_mode import state as _mode

__all__ = ["apply", "unary", "binary"]

xp = np  # the only backend so far; see graphgrad/backends
_ndarray = np.ndarray
_asarray = np.asarray


def _edge(t):
    """The node a gradient for tensor ``t`` flows into, or None."""
    fn = t.grad_fn
    if fn is not None:
        return fn
    if t._rg:
        return t._accumulator()
    return None


def _scalar(x):
    """Python scalars are weak operands; NumPy scalars are treated as Python ones, as in torch."""
    t = type(x)
    if t is float or t is int or t is bool:
        return x
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, (float, int)):
        return x
    raise TypeError(f"unsupported operand type {t.__name__}; expected a Tensor or a number")


def _default_float():
    return _dtype._defaults.float.np


def _promote_arrays(arrays, inputs, to_float):
    """Casts the array inputs to torch's result dtype; scalars stay weak."""
    dims, zeros, scalars = [], [], []
    for a, x in zip(arrays, inputs):
        if type(a) is _ndarray:
            (dims if a.ndim else zeros).append(_dtype.from_numpy_dtype(a.dtype))
        elif a is not None and not isinstance(x, (tuple, list, slice)):
            scalars.append(a)
    target = _dtype.combine(dims, zeros, scalars)
    if target is None:
        return arrays
    target = target.np
    if to_float and target.kind != "f":
        target = _default_float()
    return [a.astype(target) if type(a) is _ndarray and a.dtype != target else a for a in arrays]


def _record(op, inputs, arrays_meta, out, params, aux=None):
    """Makes the Node for ``out``; returns the output tensor."""
    node = op.node_cls()
    node._op = op
    node._next = tuple(_edge(x) if isinstance(x, Tensor) else None for x in inputs)
    node._meta = arrays_meta
    save = op.save
    if save:
        node._saved = tuple(_saved_value(op, inputs, s, out, aux) for s in save)
    else:
        node._saved = ()
    node._params = params
    node._seq = next_sequence()
    node._extra = None
    return wrap(out, True, node)


def _saved_value(op, inputs, s, out, aux):
    if s == "out":
        return out
    if s == "aux":
        return aux
    x = inputs[s]
    if isinstance(x, Tensor) and x._inf:
        raise RuntimeError(
            "Inference tensors cannot be saved for backward. To work around you can make a "
            "clone to get a normal tensor and use it in autograd. "
            f"(op: {op.name}, input {s} of shape {list(x._data.shape)})"
        )
    return x


def _forward_error(op, inputs, err):
    """Turns a NumPy error into the exception torch raises, naming the op and the shapes."""
    shapes = [list(x._data.shape) if isinstance(x, Tensor) else x for x in inputs
              if isinstance(x, Tensor)]
    if isinstance(err, np.exceptions.AxisError):
        return IndexError(f"{op.name}: Dimension out of range ({err})")
    msg = str(err)
    if "broadcast" in msg:
        return RuntimeError(_broadcast_message(op, shapes))
    return RuntimeError(f"{op.name}: {msg} (input shapes: {shapes})")


def _broadcast_message(op, shapes):
    a, b = shapes[0], shapes[1] if len(shapes) > 1 else shapes[0]
    for k in range(1, max(len(a), len(b)) + 1):
        sa = a[-k] if k <= len(a) else 1
        sb = b[-k] if k <= len(b) else 1
        if sa != sb and sa != 1 and sb != 1:
            dim = max(len(a), len(b)) - k
            return (f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at "
                    f"non-singleton dimension {dim} (in {op.name}: shapes {a} and {b})")
    return f"{op.name}: shapes {shapes} cannot be broadcast together"


def _run(op, arrays, params, inputs):
    try:
        if params:
            return op.forward(xp, *arrays, **params)
        return op.forward(xp, *arrays)
    except ValueError as err:  # NumPy reports bad shapes as ValueError; torch as RuntimeError
        raise _forward_error(op, inputs, err) from None


def unary(op, x, params=None):
    """Applies a one-input op to tensor ``x``."""
    a = x._data
    if op.dtype_rule == "float" and a.dtype.kind != "f":
        a = a.astype(_default_float())
    out = _run(op, (a,), params, (x,))
    if type(out) is not _ndarray:
        out = _asarray(out)
    if x._rg and _mode.grad_enabled and op.vjp is not None and out.dtype.kind == "f":
        return _record(op, (x,), ((x._data.shape, x._data.dtype),), out, params)
    return wrap(out, False, None)


def binary(op, a, b, params=None):
    """Applies a two-input elementwise op; either side may be a Python scalar."""
    ta = isinstance(a, Tensor)
    tb = isinstance(b, Tensor)
    if ta and tb:
        da, db = a._data, b._data
        if da.dtype != db.dtype:
            da, db = _promote_arrays((da, db), (a, b), op.dtype_rule == "float")
        elif op.dtype_rule == "float" and da.dtype.kind != "f":
            f = _default_float()
            da, db = da.astype(f), db.astype(f)
        meta = ((a._data.shape, a._data.dtype), (b._data.shape, b._data.dtype))
        rg = a._rg or b._rg
    elif ta:
        da = a._data
        b = db = _scalar(b)
        kind = da.dtype.kind
        if kind != "f" and (op.dtype_rule == "float" or type(db) is float):
            da = da.astype(_default_float())
        meta = ((a._data.shape, a._data.dtype), None)
        rg = a._rg
    else:
        db = b._data
        a = da = _scalar(a)
        kind = db.dtype.kind
        if kind != "f" and (op.dtype_rule == "float" or type(da) is float):
            db = db.astype(_default_float())
        meta = (None, (b._data.shape, b._data.dtype))
        rg = b._rg
    out = _run(op, (da, db), params, (a, b))
    if type(out) is not _ndarray:
        out = _asarray(out)
    if rg and _mode.grad_enabled and op.vjp is not None and out.dtype.kind == "f":
        return _record(op, (a, b), meta, out, params)
    return wrap(out, False, None)


def apply(op, inputs, params=None):
    """Applies any op; ``inputs`` holds tensors, scalars, None, or other plain arguments.

    Returns the output tensor, or ``(tensor, aux)`` for an op whose forward returns an
    auxiliary array too (declared by saving ``"aux"``, e.g. the indices of ``max(dim)``).
    """
    arrays = [x._data if isinstance(x, Tensor) else x for x in inputs]
    rule = op.dtype_rule
    if rule != "same":
        arrays = _promote_arrays(arrays, inputs, rule == "float")
    out = _run(op, arrays, params, inputs)
    aux = None
    if "aux" in op.save:
        out, aux = out
    if type(out) is not _ndarray:
        out = _asarray(out)
    rg = False
    if op.vjp is not None and _mode.grad_enabled and out.dtype.kind == "f":
        for x in inputs:
            if isinstance(x, Tensor) and x._rg:
                rg = True
                break
    if rg:
        meta = tuple((x._data.shape, x._data.dtype) if isinstance(x, Tensor) else None
                     for x in inputs)
        result = _record(op, inputs, meta, out, params, aux)
    else:
        result = wrap(out, False, None)
    return (result, aux) if "aux" in op.save else result
