"""Norms and spectral counts: vector_norm, matrix_norm, norm (dispatching as torch), cond and
matrix_rank.

All are compositions, as in torch: vector norms are the ``linalg_vector_norm`` reduction,
spectral norms reduce ``svdvals``, and the 1/inf matrix norms are a vector 1-norm then a max.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype
from .._tensor import Tensor, wrap
from ._dispatch import unary
from ._util import dims_arg, wrap_dim
from .linalg_decomp import svdvals
from .linalg_solve import _tolerance, check_float, check_matrix

__all__ = ["vector_norm", "matrix_norm", "norm", "cond", "matrix_rank"]


def _cast(x, dtype):
    return x if dtype is None else x.to(_dtype.to_dtype(dtype))


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """The ``ord``-norm of ``x`` flattened (or over ``dim``): inf is max|x|, -inf min|x|,
    0 counts the nonzeros."""
    from .reduce import NORM

    check_float("linalg.vector_norm", x)
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' must be Number, not "
                        f"{type(ord).__name__}")
    x = _cast(x, dtype)
    shape = x._data.shape
    axes = dims_arg(dim, len(shape))
    if ord < 0 and x._data.size == 0:
        raise RuntimeError(f"linalg.vector_norm cannot compute the {ord} norm on an empty "
                           "tensor because the operation does not have an identity")
    return unary(NORM, x, {"p": float(ord), "axes": axes, "keepdim": keepdim, "shape": shape})


def _matrix_dims(name, dim, ndim):
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise RuntimeError(f"{name}: dim must be a 2-tuple. Got {_dims_str(dim)}")
    d0, d1 = wrap_dim(dim[0], ndim), wrap_dim(dim[1], ndim)
    if d0 == d1:
        raise RuntimeError(f"{name}: dims must be different. Got ({dim[0]}, {dim[1]})")
    return d0, d1


def _dims_str(dim):
    if isinstance(dim, (tuple, list)):
        return " ".join(str(d) for d in dim)
    return str(dim)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """'fro', 'nuc', 2/-2 (largest/smallest singular value), 1/-1 (max/min column sum of |A|),
    inf/-inf (max/min row sum) over the two dims ``dim``."""
    check_matrix("linalg.matrix_norm", A)
    d0, d1 = _matrix_dims("linalg.matrix_norm", dim, A._data.ndim)
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
        if ord == "fro":
            return vector_norm(A, 2, (d0, d1), keepdim, dtype=dtype)
        return _spectral(A, "nuc", d0, d1, keepdim, dtype)
    if ord not in (1, -1, 2, -2, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {_ord_str(ord)} not supported.")
    if abs(ord) == 2:
        return _spectral(A, ord, d0, d1, keepdim, dtype)
    from .reduce import amax, amin

    if abs(ord) == math.inf:
        d0, d1 = d1, d0
    if not keepdim and d0 < d1:
        d1 -= 1
    reduce = amax if ord > 0 else amin
    return reduce(vector_norm(A, 1.0, d0, keepdim, dtype=dtype), d1, keepdim)


def _ord_str(ord):
    if isinstance(ord, float) and ord.is_integer():
        return str(int(ord))
    return str(ord)


def _spectral(A, ord, d0, d1, keepdim, dtype):
    """Reduces the singular values of the (d0, d1) matrices: their sum, max or min."""
    from .reduce import amax, amin
    from .reduce import sum as rsum

    A = _cast(A, dtype)
    n = A._data.ndim
    perm = [i for i in range(n) if i not in (d0, d1)] + [d0, d1]
    s = svdvals(A.permute(*perm))
    out = rsum(s, -1) if ord == "nuc" else (amax if ord > 0 else amin)(s, -1)
    if keepdim:
        for d in sorted((d0, d1)):
            out = out.unsqueeze(d)
    return out


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """torch.linalg.norm: a matrix norm when ``ord`` is a string or ``dim`` names two dims (or
    A is 2-D and ``ord`` is given), else a vector norm (2-norm of everything by default)."""
    check_float("linalg.norm", A)
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None:
        if len(dim) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. "
                               f"Got [{', '.join(str(d) for d in dim)}]")
    elif ord is not None and A._data.ndim not in (1, 2):
        raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must be "
                           f"1D or 2D. Got {A._data.ndim}D.")
    if isinstance(ord, str):
        return matrix_norm(A, ord, (0, 1) if dim is None else tuple(dim), keepdim, dtype=dtype)
    if ord is not None and ((dim is not None and len(dim) == 2)
                            or (dim is None and A._data.ndim == 2)):
        return matrix_norm(A, ord, (0, 1) if dim is None else tuple(dim), keepdim, dtype=dtype)
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def cond(A, p=None):
    """Condition number in the ``p`` norm: s_max / s_min by default (p=None or 2)."""
    check_matrix("linalg.cond", A)
    if p is None or p in (2, -2):
        s = svdvals(A)
        hi, lo = s[..., 0], s[..., -1]
        return hi / lo if p != -2 else lo / hi
    from .linalg_solve import inv

    check_matrix("linalg.cond", A, square=True)
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None):
    """The number of singular values (|eigenvalues| if ``hermitian``) above max(atol, rtol *
    largest); ``tol`` is the older name of ``atol``. An int64 tensor without gradient."""
    check_matrix("linalg.matrix_rank", A)
    if tol is not None:
        atol, rtol = tol, 0.0
    a = A._data
    atol = atol._data if isinstance(atol, Tensor) else atol
    rtol = rtol._data if isinstance(rtol, Tensor) else rtol
    if a.size == 0:
        return wrap(np.zeros(a.shape[:-2], np.int64), False, None)
    if hermitian:
        s = np.abs(np.linalg.eigvalsh(a))
    else:
        s = np.linalg.svd(a, compute_uv=False)
    atol = atol if atol is None or np.ndim(atol) == 0 else np.asarray(atol)[..., None]
    rtol = rtol if rtol is None or np.ndim(rtol) == 0 else np.asarray(rtol)[..., None]
    tol = _tolerance(s.max(-1, keepdims=True), a.dtype, a.shape, atol, rtol)
    return wrap(np.asarray(np.sum(s > tol, axis=-1), np.int64), False, None)
