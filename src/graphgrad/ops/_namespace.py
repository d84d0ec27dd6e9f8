"""The two namespaces derivative rules are written against.

Note [Rules namespace]: a VJP is written once, as ``rule(ns, g, *saved, **params)``, using
Python operators and ``ns.<fn>``. When no higher-order graph is wanted the engine passes
``RAW``: saved values and gradients are plain arrays and ``ns`` is NumPy, so backward pays no
Tensor wrapping. With ``create_graph=True`` it passes ``DIFF``: the same values are Tensors and
``ns`` maps to graphgrad's own differentiable ops, so the rule itself is recorded and can be
differentiated again. ``ns.raw(x)`` gives the array in both cases (for masks and indices that
need no gradient) and ``ns.const(a)`` turns such an array back into an operand.
"""

from __future__ import annotations

import numpy as np

__all__ = ["RAW", "DIFF", "sum_to_array"]


def sum_to_array(g, shape):
    """Sums ``g`` over the dims that broadcasting added or stretched, giving ``shape``."""
    gshape = g.shape
    if gshape == shape:
        return g
    lead = len(gshape) - len(shape)
    if lead < 0 or any(s != 1 and s != gs for s, gs in zip(shape, gshape[lead:])):
        # The rule returned something smaller that broadcasts up (e.g. a scalar gradient).
        return np.broadcast_to(g, shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and gshape[lead + i] != 1)
    r = g.sum(axis=axes, keepdims=True)
    return r.reshape(shape) if lead else r


def expand_array(g, shape):
    """Broadcasts ``g`` to ``shape``: a copy when small (np.broadcast_to costs ~4 us of Python),
    a read-only view when large (no memory traffic)."""
    if g.shape == shape:
        return g
    n = 1
    for s in shape:
        n *= s
    if n <= 4096:
        out = np.empty(shape, dtype=np.result_type(g))
        out[...] = g
        return out
    return np.broadcast_to(g, shape)


def _index_grad_array(g, shape, key):
    out = np.zeros(shape, dtype=np.result_type(g))
    out[key] = g
    return out


class RAW:
    """Rules namespace over NumPy arrays (no graph is recorded)."""

    differentiable = False
    exp = staticmethod(np.exp)
    log = staticmethod(np.log)
    sqrt = staticmethod(np.sqrt)
    sin = staticmethod(np.sin)
    cos = staticmethod(np.cos)
    tanh = staticmethod(np.tanh)

    @staticmethod
    def sign(x):
        out = np.asarray(np.sign(x))  # 0-d: NumPy returns a scalar
        if out.dtype.kind == "f":
            np.copyto(out, 0, where=np.isnan(out))  # torch: sign(nan) is 0 (abs's gradient)
        return out

    abs = staticmethod(np.abs)
    where = staticmethod(np.where)
    matmul = staticmethod(np.matmul)
    expand = staticmethod(expand_array)

    @staticmethod
    def reshape(x, shape):
        return x.reshape(shape)  # the method: np.reshape adds microseconds of Python

    @staticmethod
    def permute(x, axes):
        return x.transpose(axes)

    flip = staticmethod(np.flip)
    sum_to = staticmethod(sum_to_array)
    index_grad = staticmethod(_index_grad_array)

    @staticmethod
    def raw(x):
        return x

    @staticmethod
    def const(a):
        return a

    @staticmethod
    def sum(x, axes=None, keepdim=False):
        return x.sum(axis=axes, keepdims=keepdim)

    @staticmethod
    def prod(x, axes=None, keepdim=False):
        return np.prod(x, axis=axes, keepdims=keepdim)

    @staticmethod
    def mT(x):
        return np.swapaxes(x, -1, -2)

    @staticmethod
    def cat(xs, axis):
        return np.concatenate(xs, axis=axis)

    @staticmethod
    def getitem(x, key):
        return x[key]

    @staticmethod
    def cast(x, np_dtype):
        return x.astype(np_dtype, copy=False) if np.result_type(x) != np_dtype else x

    @staticmethod
    def zeros_like(x):
        return np.zeros_like(x)


class DIFF:
    """Rules namespace over Tensors: every call is a recorded, differentiable graphgrad op.

    Its functions are bound in ``graphgrad.ops.__init__`` once the op families are loaded.
    """

    differentiable = True

    @staticmethod
    def raw(x):
        from .._tensor import Tensor

        return x._data if isinstance(x, Tensor) else x

    @staticmethod
    def const(a):
        from .._tensor import wrap

        return wrap(np.asarray(a), False, None)
