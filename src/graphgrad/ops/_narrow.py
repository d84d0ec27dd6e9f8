"""bfloat16 compute: every op with a bfloat16 operand runs in float32 and rounds its result.

This is what torch's CPU kernels do for bfloat16 (load, compute in float32, round the result
once), and what NumPy cannot do itself: ``ml_dtypes``' bfloat16 has kind 'V', which the op
table's forwards and the dispatcher's checks do not treat as floating (Note [bfloat16] in
``_dtype.py``). The dispatcher calls in here only after bfloat16 was first used.

Each entry returns ``NotImplemented`` when no bfloat16 is involved. Otherwise its bfloat16
tensor operands are cast to float32 by a recorded cast (ToCopyBackward0, so gradients flow
back and the engine rounds them to bfloat16, the parameter's dtype), the op runs through the
ordinary dispatch, and a floating float32 result is cast back to bfloat16 when torch's type
promotion gives bfloat16 (bfloat16 with bfloat16, integers, bool or Python scalars; with float32
or float64 the result is that wider dtype, and an op given ``dtype=`` keeps it). View ops run
on the 16-bit storage itself (a view must alias its base).
"""

from __future__ import annotations

import threading

import numpy as np

from .. import _dtype
from .._tensor import Tensor, wrap
from ..amp.autocast_mode import FP32, LOWER
from ..autograd.grad_mode import state as _mode
from . import _dispatch
from .elementwise import TO_DTYPE

_F32 = np.dtype(np.float32)
_F16 = np.dtype(np.float16)
try:
    _BF16 = _dtype.bfloat16.np
except ModuleNotFoundError:  # a float16 autocast region without ml_dtypes: matches nothing
    _BF16 = np.dtype([("no_bfloat16", np.uint8)])
_AMP = [None]  # the CPU autocast region's NumPy dtype, or None (amp/autocast_mode.py)


def set_autocast(np_dtype) -> None:
    _AMP[0] = np_dtype


def _autocast(op, inputs):
    """Casts the operands as torch's CPU autocast does for ``op`` (None: not on a list)."""
    name = op.name
    if name in LOWER:
        want = _AMP[0]
    elif name in FP32:
        want = _F32
    else:
        return None
    out = []
    for x in inputs:
        if isinstance(x, Tensor):
            dt = x._data.dtype
            if dt != want and (dt == _F32 or dt == _F16 or dt == _BF16) and \
                    (want == _F32 or dt != np.float64):
                x = _cast(x, want)
        out.append(x)
    return out


def _f16(entry, op, inputs, params):
    """An op of the lower-precision list in a float16 region: in float32, rounded to float16."""
    ups = [_cast(x, _F32) if isinstance(x, Tensor) and x._data.dtype == _F16 else x
           for x in inputs]
    result = entry(op, ups, params)
    return _down(result, _dtype.float16, params)


def _cast(t: Tensor, np_dtype) -> Tensor:
    """``t.to(np_dtype)`` with its ToCopyBackward0 node, whatever the dtypes' kinds."""
    out = t._data.astype(np_dtype)
    if t._rg and _mode.grad_enabled and not _mode.inference:
        fn = t._fn
        node = _dispatch._new_node(TO_DTYPE, (fn if fn is not None else t._accumulator(),),
                                   ((t._data.shape, t._data.dtype),), {"dtype": np_dtype})
        node._saved = ()
        node._versions = None
        return wrap(out, True, node)
    return wrap(out, False, None)


def _up(x):
    if isinstance(x, Tensor) and x._data.dtype == _BF16:
        if x._view is not None and x._view[3] != x._vc[0]:
            _dispatch._refresh_view(x)
        return _cast(x, _F32)
    return x


def _down(result, target, params):
    """Rounds a float32 result (or the tensor of ``(tensor, aux)``) to bfloat16."""
    if target.itemsize != 2 or (params and params.get("dtype") is not None):
        return result
    if isinstance(result, tuple):
        return (_down(result[0], target, None),) + result[1:]
    if isinstance(result, Tensor) and result._data.dtype == _F32:
        return _cast(result, target.np)
    return result


def _target(inputs):
    """torch's result dtype of the operands (tensors by dimension, then Python scalars)."""
    dims, zeros, scalars = [], [], []
    for x in inputs:
        if isinstance(x, Tensor):
            (dims if x._data.ndim else zeros).append(_dtype._FROM_NP[x._data.dtype])
        elif type(x) in (int, float, bool, complex):
            scalars.append(x)
    return _dtype.combine(dims, zeros, scalars)


class _Inside(threading.local):
    """Set while this module calls back into the dispatcher (per thread)."""

    flag = False


_INSIDE = _Inside()


def _call(entry, *args):
    _INSIDE.flag = True
    try:
        return entry(*args)
    finally:
        _INSIDE.flag = False


def _lower_f16(op):
    return _AMP[0] == _F16 and op.name in LOWER


def unary(op, x, params):
    if x._data.dtype is not _BF16 and _AMP[0] is None and op is not TO_DTYPE:
        return NotImplemented  # the common case first: nothing to do
    if _INSIDE.flag:
        return NotImplemented
    if op is TO_DTYPE:
        target = params["dtype"]
        if target == _BF16 or x._data.dtype == _BF16:
            return _cast(x, target) if x._data.dtype != target else \
                _call(_dispatch.unary, op, x, params)
        return NotImplemented
    x0 = x
    if _AMP[0] is not None and (cast := _autocast(op, (x,))) is not None:
        x = cast[0]
        if _lower_f16(op):
            return _f16(lambda o, i, p: _call(_dispatch.unary, o, i[0], p), op, (x,), params)
    if x._data.dtype != _BF16 or op.view:
        # a view aliases the 16-bit storage: NumPy views work for any dtype
        return NotImplemented if x is x0 else _call(_dispatch.unary, op, x, params)
    return _down(_call(_dispatch.unary, op, _up(x), params), _dtype.bfloat16, params)


def binary(op, a, b, params):
    if _AMP[0] is None and not ((isinstance(a, Tensor) and a._data.dtype is _BF16)
                                or (isinstance(b, Tensor) and b._data.dtype is _BF16)):
        return NotImplemented
    if _INSIDE.flag:
        return NotImplemented
    a0, b0 = a, b
    if _AMP[0] is not None and (cast := _autocast(op, (a, b))) is not None:
        a, b = cast
        if _lower_f16(op):
            return _f16(lambda o, i, p: _call(_dispatch.binary, o, i[0], i[1], p), op, (a, b),
                        params)
    if not ((isinstance(a, Tensor) and a._data.dtype == _BF16)
            or (isinstance(b, Tensor) and b._data.dtype == _BF16)):
        return NotImplemented if a is a0 and b is b0 else \
            _call(_dispatch.binary, op, a, b, params)
    target = _target((a, b))
    return _down(_call(_dispatch.binary, op, _up(a), _up(b), params), target, params)


def apply(op, inputs, params):
    if _INSIDE.flag:
        return NotImplemented
    changed = False
    if _AMP[0] is not None and (cast := _autocast(op, inputs)) is not None:
        changed = any(c is not x for c, x in zip(cast, inputs))
        inputs = cast
        if _lower_f16(op):
            return _f16(lambda o, i, p: _call(_dispatch.apply, o, i, p), op, inputs, params)
    if op.view or not any(isinstance(x, Tensor) and x._data.dtype == _BF16 for x in inputs):
        return _call(_dispatch.apply, op, inputs, params) if changed else NotImplemented
    target = _target(inputs)
    return _down(_call(_dispatch.apply, op, [_up(x) for x in inputs], params), target, params)
