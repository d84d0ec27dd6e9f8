"""Contractions: matmul (with batching and broadcasting), mm, bmm, mv, dot, outer.

One rule serves every matmul form: 1-D operands are lifted to matrices, the products are
taken, and broadcast batch dims are summed back by ``ns.sum_to``.
"""

from __future__ import annotations

from .._tensor import Tensor
from ..amp import autocast_mode as _amp
from ._dispatch import apply
from ._opdef import defop


def _matmul_fwd(xp, a, b):
    return xp.matmul(a, b)


def _matmul_vjp(ns, g, a, b, needs):
    sa, sb = ns.raw(a).shape, ns.raw(b).shape
    if len(sa) == 1 and len(sb) == 1:
        return (g * b if needs[0] else None), (g * a if needs[1] else None)
    a2 = ns.reshape(a, (1,) + sa) if len(sa) == 1 else a
    b2 = ns.reshape(b, sb + (1,)) if len(sb) == 1 else b
    gs = ns.raw(g).shape
    if len(sa) == 1:
        gs = gs[:-1] + (1,) + gs[-1:]
    if len(sb) == 1:
        gs = gs + (1,)
    g2 = ns.reshape(g, gs)
    ga = gb = None
    if needs[0]:
        ga = ns.reshape(ns.sum_to(ns.matmul(g2, ns.mT(b2)), ns.raw(a2).shape), sa)
    if needs[1]:
        sb2 = ns.raw(b2).shape
        if len(sb2) == 2 and len(gs) > 2:
            # A shared weight under batched inputs: one 2-D product instead of a batch + sum.
            k, n = sb2
            flat_a = ns.reshape(a2, (-1, k))
            flat_g = ns.reshape(g2, (-1, n))
            gb = ns.reshape(ns.matmul(ns.mT(flat_a), flat_g), sb)
        else:
            gb = ns.reshape(ns.sum_to(ns.matmul(ns.mT(a2), g2), sb2), sb)
    return ga, gb


def _contraction(name, node):
    return defop(name, _matmul_fwd, _matmul_vjp, kind="contraction", save=(0, 1),
                 dtype_rule="same", node=node, needs_mask=True, onnx="MatMul")


MATMUL = _contraction("matmul", "UnsafeViewBackward0")
MM = _contraction("mm", "MmBackward0")
BMM = _contraction("bmm", "BmmBackward0")
MV = _contraction("mv", "MvBackward0")
DOT = _contraction("dot", "DotBackward0")
VECMAT = _contraction("matmul.vecmat", "SqueezeBackward4")


def _check_pair(name, a, b):
    for i, x in enumerate((a, b)):
        if not isinstance(x, Tensor):
            raise TypeError(f"{name}(): argument '{('input', 'other')[i]}' must be Tensor, not "
                            f"{type(x).__name__}")
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{a.dtype} != {b.dtype}")


def matmul(input, other):
    """Matrix product with torch's rules for 1-D operands and broadcast batch dims."""
    low = _amp.lower_dtype()
    if low is not None:  # matmul is on autocast's list whichever op (mv, dot) it picks
        input, other = _amp.lower_cast(input, low), _amp.lower_cast(other, low)
    try:
        _check_pair("matmul", input, other)
    except NotImplementedError:  # a sparse operand refuses its _data: graphgrad/sparse
        from ..sparse._linalg import entry

        return entry("matmul", input, other)
    da, db = input._data.ndim, other._data.ndim
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {da}D "
                           f"and {db}D")
    ka = input._data.shape[-1]
    kb = other._data.shape[0] if db == 1 else other._data.shape[-2]
    if ka != kb:
        if da <= 2 and db <= 2:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                               f"({_mat_str(input._data.shape)} and "
                               f"{_mat_str(other._data.shape)})")
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{ka}] but got: [{kb}] (matmul of shapes "
                           f"{list(input._data.shape)} and {list(other._data.shape)}).")
    if da == 1 and db == 1:
        op = DOT
    elif da == 2 and db == 2:
        op = MM
    elif da == 2 and db == 1:
        op = MV
    elif da == 1 and db == 2:
        op = VECMAT
    else:
        op = MATMUL
    return apply(op, (input, other))


def _mat_str(shape):
    return "x".join(str(s) for s in (shape if len(shape) == 2 else (1,) + tuple(shape)))


def mm(input, mat2):
    try:
        _check_pair("mm", input, mat2)
    except NotImplementedError:  # a sparse operand refuses its _data: graphgrad/sparse
        from ..sparse._linalg import entry

        return entry("mm", input, mat2)
    if input._data.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2._data.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    return matmul(input, mat2)


def bmm(input, mat2):
    _check_pair("bmm", input, mat2)
    if input._data.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2._data.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    sa, sb = input._data.shape, mat2._data.shape
    if sa[0] != sb[0] or sa[2] != sb[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{sa[0]}, {sa[2]}] but got: [{sb[0]}, {sb[1]}].")
    return apply(BMM, (input, mat2))


def mv(input, vec):
    try:
        _check_pair("mv", input, vec)
    except NotImplementedError:  # a sparse operand refuses its _data: graphgrad/sparse
        from ..sparse._linalg import entry

        return entry("mv", input, vec)
    if input._data.ndim != 2 or vec._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input._data.ndim}, "
                           f"{input._data.ndim}, {vec._data.ndim}")
    return apply(MV, (input, vec))  # matmul's op for these shapes (not matmul: autocast casts it)


def dot(input, other):
    _check_pair("dot", input, other)
    if input._data.ndim != 1 or other._data.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input._data.ndim}D and "
                           f"{other._data.ndim}D tensors")
    if input._data.shape != other._data.shape:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input._data.shape[0]}] "
                           f"and src [{other._data.shape[0]}] to have the same number of "
                           "elements, but got "
                           f"{input._data.shape[0]} and {other._data.shape[0]} elements "
                           "respectively")
    return apply(DOT, (input, other))


inner = dot


def outer(input, vec2):
    """``input[:, None] * vec2[None, :]`` (torch composes it the same way)."""
    if input._data.ndim != 1 or vec2._data.ndim != 1:
        raise RuntimeError("outer: expected 1-D tensors")
    return input.reshape(-1, 1) * vec2


ger = outer

for _name in ("matmul", "mm", "bmm", "mv", "dot", "inner", "outer", "ger"):
    setattr(Tensor, _name, globals()[_name])
Tensor.__matmul__ = matmul
Tensor.__rmatmul__ = lambda self, other: matmul(other, self)
