"""Arithmetic and shape methods of sparse tensors: sparse + sparse, sparse * scalar,
sparse * dense, dense + sparse, zero-preserving unary ops on the values, t / transpose.

Only ops with f(0) == 0 run on the values alone (relu, abs, neg, sqrt, sin, tanh, pow with a
positive exponent, ...); exp and the like would turn unstored zeros into ones, so they raise
as in torch.
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ..ops._util import wrap_dim
from . import _ops
from ._construct import check_tracing, coalesce, to_dense
from ._tensor import SparseTensor, _like, linear_index, make_coo, refuse, sparse_csr

__all__ = ["install"]


def _scalar(x):
    return isinstance(x, numbers.Number) or (isinstance(x, Tensor)
                                             and not isinstance(x, SparseTensor) and x.ndim == 0)


def _add(a, b, alpha, node):
    if not isinstance(b, SparseTensor):
        if isinstance(b, Tensor):
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) "
                               "instead.")
        raise refuse(a, "add with a scalar (it would fill every unstored entry)")
    if a._slayout is not b._slayout:
        raise refuse(a, f"add of {a._slayout} and {b._slayout}")
    if a._ssize != b._ssize:
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has "
                           f"size {list(a._ssize)} while other has size {list(b._ssize)} "
                           "(FYI: dense-sparse addition does not currently support "
                           "broadcasting)")
    if a.sparse_dim() != b.sparse_dim():
        raise refuse(a, "add of sparse tensors with different sparse_dim")
    check_tracing()
    va, vb = a._svals, b._svals
    if va.dtype != vb.dtype:
        target = _dtype.promote_types(va.dtype, vb.dtype)
        va, vb = va.to(target), vb.to(target)
    if alpha != 1:
        vb = vb * alpha
    from ..ops.movement import cat

    sd = a.sparse_dim()
    sizes = a._ssize[:sd]
    lin = np.concatenate([linear_index(a._sidx, sizes), linear_index(b._sidx, sizes)])
    uniq, inv = np.unique(lin, return_inverse=True)
    idx = np.stack(np.unravel_index(uniq, sizes)).astype(np.int64).reshape(sd, -1)
    flat = (uniq.shape[0],) + tuple(va.shape[1:])
    vals = _ops.scatter(inv.reshape(-1), cat([va, vb]), flat, flat, node=node)
    out = make_coo(idx, vals, a._ssize, a._scoal and b._scoal)
    if a._slayout is sparse_csr:
        from ._construct import to_sparse_csr

        return to_sparse_csr(out)
    return out


def add(self, other, *, alpha=1):
    return _add(self, other, alpha, "AddBackward0")


def sub(self, other, *, alpha=1):
    return _add(self, other, -alpha, "SubBackward0")


def _radd(self, other):
    if isinstance(other, Tensor):  # dense + sparse is dense
        return other + to_dense(self)
    raise refuse(self, "add with a scalar (it would fill every unstored entry)")


def _rsub(self, other):
    if isinstance(other, Tensor):
        return other - to_dense(self)
    raise refuse(self, "sub with a scalar (it would fill every unstored entry)")


def mul(self, other):
    if _scalar(other):
        return _like(self, self._svals * other)
    if isinstance(other, SparseTensor):
        return _mul_sparse(self, other)
    if isinstance(other, Tensor) and self.is_sparse and not self.dense_dim():
        return _like(self, self._svals * _at_entries(self, other))
    raise refuse(self, "mul with this operand")


def _at_entries(s, d):
    """Dense ``d`` (broadcast to ``s``'s shape) read at ``s``'s stored positions: sparse *
    dense keeps the sparse pattern."""
    n = len(s._ssize)
    if d.ndim > n or any(a != 1 and a != b for a, b in zip(d.shape[::-1], s._ssize[::-1])):
        raise RuntimeError(f"mul: the dense operand of shape {list(d.shape)} does not broadcast "
                           f"to the sparse tensor's size {list(s._ssize)}")
    if tuple(d.shape) == s._ssize:
        lin = linear_index(s._sidx, s._ssize)
        return _ops.gather(lin, d, (int(np.prod(s._ssize, dtype=np.int64)),))
    if d.ndim < n:
        d = d.reshape((1,) * (n - d.ndim) + tuple(d.shape))
    sizes = tuple(d.shape)
    lin = linear_index(np.stack([s._sidx[k] if sizes[k] != 1 else np.zeros_like(s._sidx[k])
                                 for k in range(n)]), sizes)
    return _ops.gather(lin, d, (int(np.prod(sizes, dtype=np.int64)),))


def _mul_sparse(a, b):
    """sparse * sparse: the product at the positions both store (both coalesced first)."""
    if a._ssize != b._ssize or not (a.is_sparse and b.is_sparse):
        raise RuntimeError(f"mul: expected sparse operands of the same size, got "
                           f"{list(a._ssize)} and {list(b._ssize)}")
    if a.sparse_dim() != b.sparse_dim():
        raise refuse(a, "mul of sparse tensors with different sparse_dim")
    check_tracing()
    both = a._scoal and b._scoal
    a, b = coalesce(a), coalesce(b)
    sd = a.sparse_dim()
    la, lb = linear_index(a._sidx, a._ssize[:sd]), linear_index(b._sidx, b._ssize[:sd])
    _, ia, ib = np.intersect1d(la, lb, assume_unique=True, return_indices=True)
    va = _ops.gather(ia, a._svals, (a._nnz(),) + tuple(a._svals.shape[1:]))
    vb = _ops.gather(ib, b._svals, (b._nnz(),) + tuple(b._svals.shape[1:]))
    return make_coo(np.ascontiguousarray(a._sidx[:, ia]), va * vb, a._ssize, both)


def select(self, dim, index):
    """The slice ``index`` of sparse dim ``dim`` (a sparse tensor with one sparse dim less)."""
    if not self.is_sparse or self.sparse_dim() < 2:
        raise refuse(self, "select leaving no sparse dim" if self.is_sparse else "select of CSR")
    dim = wrap_dim(dim, self.ndim)
    if dim >= self.sparse_dim():
        raise refuse(self, "select along a dense dim")
    size = self._ssize[dim]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(self._ssize)} at dimension {dim}")
    check_tracing()
    pick = np.flatnonzero(self._sidx[dim] == index % size)
    idx = np.ascontiguousarray(np.delete(self._sidx[:, pick], dim, axis=0))
    vals = _ops.gather(pick, self._svals, (self._nnz(),) + tuple(self._svals.shape[1:]),
                       node="SelectBackward0")
    out_size = self._ssize[:dim] + self._ssize[dim + 1:]
    return make_coo(idx, vals, out_size, self._scoal)


def _getitem(self, key):
    if type(key) is int:
        return select(self, 0, key)
    raise refuse(self, "indexing other than s[int]")


def index_select(self, dim, index):
    """The slices ``index`` along sparse dim ``dim`` (repeats allowed), in ``index``'s order."""
    if not self.is_sparse:
        raise refuse(self, "index_select of a CSR tensor")
    dim = wrap_dim(dim, self.ndim)
    if dim >= self.sparse_dim():
        raise refuse(self, "index_select along a dense dim")
    check_tracing()
    want = index._data if isinstance(index, Tensor) else np.asarray(index)
    if want.ndim > 1 or want.dtype.kind not in "iu":
        raise IndexError("index_select(): Index is supposed to be a vector of integers")
    want = want.astype(np.int64).reshape(-1)
    size = self._ssize[dim]
    if want.size and (want.min() < -size or want.max() >= size):
        raise IndexError(f"index_select(): index out of range for dim {dim} of size {size}")
    want = np.where(want < 0, want + size, want)
    keys = self._sidx[dim]
    order = np.argsort(keys, kind="stable")
    lo = np.searchsorted(keys[order], want, "left")
    counts = np.searchsorted(keys[order], want, "right") - lo
    total = int(counts.sum())
    starts = np.repeat(lo - (np.cumsum(counts) - counts), counts)
    pick = order[starts + np.arange(total, dtype=np.int64)]
    idx = self._sidx[:, pick].copy()
    idx[dim] = np.repeat(np.arange(want.size, dtype=np.int64), counts)
    vals = _ops.gather(pick, self._svals, (self._nnz(),) + tuple(self._svals.shape[1:]),
                       node="IndexSelectBackward0")
    size = list(self._ssize)
    size[dim] = want.size
    return make_coo(idx, vals, size, False)


def div(self, other, *, rounding_mode=None):
    if not _scalar(other) or rounding_mode is not None:
        raise refuse(self, "div by a tensor")
    return _like(self, self._svals / other)


def _rdiv(self, other):
    raise refuse(self, "division by a sparse tensor")


def _matmul(self, other):
    from ._linalg import entry

    return entry("matmul", self, other)


def _rmatmul(self, other):
    from ._linalg import entry

    return entry("matmul", other, self)


def _mm(self, other):
    from ._linalg import entry

    return entry("mm", self, other)


def _mv(self, other):
    from ._linalg import entry

    return entry("mv", self, other)


def transpose(self, dim0, dim1):
    if not self.is_sparse:
        raise refuse(self, "transpose of a CSR tensor (it would be CSC)")
    n = self.ndim
    d0, d1 = wrap_dim(dim0, n), wrap_dim(dim1, n)
    sd = self.sparse_dim()
    if (d0 < sd) != (d1 < sd):
        raise RuntimeError("transpose(): can't transpose a sparse dim with a dense dim")
    return _swap(self, d0, d1, sd, "TransposeBackward0")


def _swap(self, d0, d1, sd, node):
    size = list(self._ssize)
    size[d0], size[d1] = size[d1], size[d0]
    if d0 < sd:
        order = list(range(sd))
        order[d0], order[d1] = order[d1], order[d0]
        idx = np.ascontiguousarray(self._sidx[order])
        vals = _ops.alias(self._svals, node)
        return make_coo(idx, vals, size, self._scoal and d0 == d1)
    vals = self._svals.transpose(d0 - sd + 1, d1 - sd + 1)
    return make_coo(self._sidx, vals, size, self._scoal)


def t(self):
    if not self.is_sparse:
        raise refuse(self, "t of a CSR tensor (it would be CSC)")
    if self.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{self.ndim}D")
    if self.ndim < 2:
        return self
    return _swap(self, 0, 1, self.sparse_dim(), "TBackward0")


# Unary ops that keep zeros at zero: computed on the values alone.
_ZERO_PRESERVING = ("neg", "negative", "abs", "absolute", "relu", "sqrt", "square", "sin",
                    "sinh", "tan", "tanh", "asin", "asinh", "atan", "atanh", "sign", "sgn",
                    "trunc", "floor", "ceil", "round", "expm1", "log1p", "erf", "erfinv",
                    "deg2rad", "rad2deg", "frac", "signbit", "isnan", "isinf", "nan_to_num")


_LINEAR = ("neg", "negative", "deg2rad", "rad2deg")


def _unary(name):
    linear = name in _LINEAR

    def method(self, *args, **kwargs):
        # f(a) + f(b) != f(a + b): repeated entries are added up first (torch does too)
        s = self if linear or not self.is_sparse else coalesce(self)
        return _like(s, getattr(s._svals, name)(*args, **kwargs))
    method.__name__ = name
    return method


def pow(self, exponent):
    if not isinstance(exponent, numbers.Number) or exponent <= 0:
        raise refuse(self, "pow with a non-positive or tensor exponent")
    s = coalesce(self) if self.is_sparse else self
    return _like(s, s._svals ** exponent)


def install():
    """Puts the methods on SparseTensor (they override the dense ones it inherits)."""
    T = SparseTensor
    from ._construct import to_sparse, to_sparse_csr
    from ._reduce import tensor_sum

    T.add, T.sub, T.mul, T.div = add, sub, mul, div
    T.multiply, T.subtract, T.true_divide, T.divide = mul, sub, div, div
    T.__add__ = lambda self, other: add(self, other)
    T.__sub__ = lambda self, other: sub(self, other)
    T.__radd__, T.__rsub__ = _radd, _rsub
    T.__mul__ = T.__rmul__ = mul
    T.__truediv__ = div
    T.__rtruediv__ = _rdiv
    T.__matmul__, T.__rmatmul__ = _matmul, _rmatmul
    T.matmul, T.mm, T.mv = _matmul, _mm, _mv
    T.__neg__ = _unary("neg")
    T.__abs__ = _unary("abs")
    T.__pow__ = T.pow = pow
    for name in _ZERO_PRESERVING:
        setattr(T, name, _unary(name))
    T.t, T.transpose = t, transpose
    T.index_select = index_select
    T.select = select
    T.__getitem__ = _getitem
    T.sum = tensor_sum
    T.to_dense, T.to_sparse, T.to_sparse_csr, T.coalesce = to_dense, to_sparse, to_sparse_csr, \
        coalesce
    T.to_sparse_coo = lambda self: to_sparse(self)
