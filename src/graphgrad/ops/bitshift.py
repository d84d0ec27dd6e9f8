"""Bit shifts: ``bitwise_left_shift`` / ``bitwise_right_shift`` and the ``<<`` ``>>`` operators.

As in torch, a shift by a negative amount or by at least the width of the dtype gives 0 (left)
or the sign fill (right: 0, or -1 for a negative signed value); NumPy leaves those undefined.
Integer and bool operands only (bool shifted by a Python int promotes to int64, as in torch).
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ._dispatch import binary
from ._opdef import defop

__all__ = ["bitwise_left_shift", "bitwise_right_shift"]

_FLOAT_NAMES = {2: "Half", 4: "Float", 8: "Double"}


def _float_name(v):
    if isinstance(v, np.ndarray):
        return _FLOAT_NAMES.get(v.dtype.itemsize, "Float") if v.dtype.kind == "f" else None
    return "Float" if isinstance(v, float) else None  # a weak float scalar is float32's


def _shift(left):
    kernel = "lshift" if left else "rshift"

    def forward(xp, a, b):
        for v in (a, b):
            name = _float_name(v)
            if name is not None:
                raise NotImplementedError(f"\"{kernel}_cpu\" not implemented for '{name}'")
        if np.result_type(a).kind == "b":
            if np.result_type(b).kind == "b":
                raise NotImplementedError(f"\"{kernel}_cpu\" not implemented for 'Bool'")
            a = xp.asarray(a).astype(np.int64)
        if not isinstance(b, np.ndarray):  # a Python int amount keeps the tensor's dtype
            if 0 <= b < a.dtype.itemsize * 8:
                return xp.left_shift(a, b) if left else xp.right_shift(a, b)
            return xp.zeros_like(a) if left else xp.where(a < 0, -1, 0).astype(a.dtype)
        bits = np.result_type(a, b).itemsize * 8
        ok = (b >= 0) & (b < bits)
        safe = xp.where(ok, b, 0).astype(b.dtype, copy=False)
        out = xp.asarray(xp.left_shift(a, safe) if left else xp.right_shift(a, safe))
        fill = 0 if left else xp.where(xp.asarray(a) < 0, -1, 0)
        return xp.where(ok, out, fill).astype(out.dtype, copy=False)

    forward.__name__ = kernel
    return forward


BITWISE_LEFT_SHIFT = defop("bitwise_left_shift", _shift(True), kind="elementwise")
BITWISE_RIGHT_SHIFT = defop("bitwise_right_shift", _shift(False), kind="elementwise")


def bitwise_left_shift(input, other, *, out=None):  # noqa: A002 - torch's argument names
    """``input << other`` elementwise (either may be a Python int).

    >>> import graphgrad as torch
    >>> torch.bitwise_left_shift(torch.tensor([1, -8, 3]), 1)
    tensor([  2, -16,   6])
    """
    return _out(binary(BITWISE_LEFT_SHIFT, input, other), out)


def bitwise_right_shift(input, other, *, out=None):  # noqa: A002 - torch's argument names
    """``input >> other`` elementwise, arithmetic (sign-filling) for signed dtypes.

    >>> import graphgrad as torch
    >>> torch.bitwise_right_shift(torch.tensor([1, -8, 3]), 1)
    tensor([ 0, -4,  1])
    """
    return _out(binary(BITWISE_RIGHT_SHIFT, input, other), out)


def _out(result, out):
    if out is None:
        return result
    from .inplace import copy_

    copy_(out, result)
    return out


def _reflected(op):
    def method(self, other):
        return binary(op, other, self)
    return method


def _bind():
    from .tensor_extras import _no_grad_inplace

    T = Tensor
    T.bitwise_left_shift = lambda self, other: bitwise_left_shift(self, other)
    T.bitwise_right_shift = lambda self, other: bitwise_right_shift(self, other)
    T.__lshift__ = T.bitwise_left_shift
    T.__rshift__ = T.bitwise_right_shift
    T.__rlshift__ = _reflected(BITWISE_LEFT_SHIFT)
    T.__rrshift__ = _reflected(BITWISE_RIGHT_SHIFT)
    T.bitwise_left_shift_ = T.__ilshift__ = _no_grad_inplace("bitwise_left_shift_",
                                                             bitwise_left_shift)
    T.bitwise_right_shift_ = T.__irshift__ = _no_grad_inplace("bitwise_right_shift_",
                                                              bitwise_right_shift)


_bind()
