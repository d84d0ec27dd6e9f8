"""Advanced indexing: integer-array and boolean-mask keys (mixed with slices), nonzero.

Advanced keys gather copies, so the rule scatters the gradient back with accumulation:
an index that repeats receives the sum of its gradients.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor, wrap
from ._dispatch import unary
from ._opdef import defop


def _to_numpy_key(key):
    items = key if isinstance(key, tuple) else (key,)
    out = []
    for k in items:
        if isinstance(k, Tensor):
            k = k._data
        elif isinstance(k, list):
            k = np.asarray([x._data if isinstance(x, Tensor) else x for x in k])
        if isinstance(k, np.ndarray) and k.dtype.kind == "f":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        out.append(k)
    return tuple(out)


def _scatter_add_fwd(xp, g, shape, key):
    out = xp.zeros(shape, dtype=g.dtype)
    xp.add.at(out, key, g)
    return out


INDEX = defop("index", lambda xp, x, key, in_shape: x[key],
              lambda ns, g, key, in_shape: ns.index_put_grad(g, in_shape, key),
              kind="indexing", dtype_rule="same", node="IndexBackward0", onnx="Gather")
INDEX_PUT_GRAD = defop(
    "index_put_backward", lambda xp, g, shape, key: _scatter_add_fwd(xp, g, shape, key),
    lambda ns, gg, shape, key: ns.getitem(gg, key), kind="indexing", dtype_rule="same",
    node="IndexPutBackward0", onnx="ScatterND")


def advanced_getitem(input, key):
    x = input._data
    key = _to_numpy_key(key)
    try:
        x[key]
    except IndexError as e:
        raise IndexError(str(e)) from None
    return unary(INDEX, input, {"key": key, "in_shape": x.shape})


def nonzero(input, *, as_tuple=False):
    """Indices of the nonzero elements: one row per element (or one index tensor per dim).
    A 0-d input counts as one element with no dims, as in torch."""
    a = input._data
    if a.ndim == 0:  # NumPy 2 refuses nonzero of a 0-d array
        if as_tuple:
            return (wrap(np.zeros(int(bool(a)), np.int64), False, None),)
        return wrap(np.zeros((int(bool(a)), 0), np.int64), False, None)
    idx = np.nonzero(a)
    if as_tuple:
        return tuple(wrap(i.astype(np.int64), False, None) for i in idx)
    return wrap(np.stack(idx, axis=1).astype(np.int64), False, None)


Tensor.nonzero = nonzero
