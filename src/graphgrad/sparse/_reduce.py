"""torch.sparse.sum, torch.sparse.softmax / log_softmax, and Tensor.sum on sparse tensors.

Sums over sparse dims group the entries by their remaining indices (a segment sum, so the
result is coalesced); sums over dense dims sum the values. softmax over a sparse dim runs
over the stored entries of each group only (unstored entries count as -inf, torch's
definition), with the group's max subtracted first for stability.
"""

from __future__ import annotations

import numpy as np

from .._tensor import wrap
from ..ops._util import wrap_dim
from . import _ops
from ._construct import check_tracing, coalesce
from ._tensor import SparseTensor, linear_index, make_coo, refuse

__all__ = ["sparse_sum", "tensor_sum", "softmax", "log_softmax"]


def _dims(dim, ndim):
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    out = sorted({wrap_dim(d, ndim) for d in dims})
    if len(out) != len(dims):
        raise RuntimeError("sum: dim appears multiple times in the list of dims")
    return out


def _group(idx, sizes):
    """(unique group keys' index columns, inverse map) for index rows ``idx`` over ``sizes``."""
    lin = linear_index(idx, sizes)
    uniq, inv = np.unique(lin, return_inverse=True)
    cols = np.stack(np.unravel_index(uniq, sizes)).astype(np.int64).reshape(len(sizes), -1)
    return cols, inv.reshape(-1)


def _sum(s, dim, dtype, node_all, node_dims):
    if not isinstance(s, SparseTensor):
        raise TypeError("torch.sparse.sum: expected a sparse tensor")
    if not s.is_sparse:
        raise refuse(s, "sum")
    check_tracing()
    v = s._svals if dtype is None else s._svals.to(dtype)
    if dim is None:
        out = v.sum()
        return out if node_all == "SumBackward0" else _ops.alias(out, node_all)
    sd = s.sparse_dim()
    dims = _dims(dim, s.ndim)
    dense_axes = tuple(d - sd + 1 for d in dims if d >= sd)
    if dense_axes:
        v = v.sum(dim=dense_axes)
    keep = [d for d in range(sd) if d not in dims]
    rest = tuple(s._ssize[d] for d in range(sd, s.ndim) if d not in dims)
    if not keep:
        return _ops.alias(v.sum(dim=0), node_dims)
    sizes = tuple(s._ssize[d] for d in keep)
    cols, inv = _group(s._sidx[keep], sizes)
    flat = (cols.shape[1],) + rest
    vals = _ops.scatter(inv, v, flat, flat, node=node_dims)
    return make_coo(cols, vals, sizes + rest, True)


def sparse_sum(input, dim=None, dtype=None):
    """torch.sparse.sum: a dense scalar without ``dim``; a sparse tensor over the remaining
    sparse dims (dense when every sparse dim is summed)."""
    return _sum(input, dim, dtype, "SumBackward0", "SparseSumBackward0")


def tensor_sum(self, dim=None, keepdim=False, *, dtype=None):
    """``Tensor.sum`` on a sparse tensor (torch's grad_fn names: SumBackward0/1)."""
    if keepdim:
        raise refuse(self, "sum(keepdim=True)")
    return _sum(self, dim, dtype, "SumBackward0", "SumBackward1")


def _softmax(input, dim, dtype, log):
    name = "log_softmax" if log else "softmax"
    if not isinstance(input, SparseTensor) or not input.is_sparse:
        if isinstance(input, SparseTensor):
            raise refuse(input, f"sparse.{name}")
        raise TypeError(f"torch.sparse.{name}: expected a sparse COO tensor")
    check_tracing()
    s = coalesce(input)
    v = s._svals if dtype is None else s._svals.to(dtype)
    if not v.is_floating_point():
        raise RuntimeError(f"{name}: expected a floating point tensor, got {v.dtype}")
    sd = s.sparse_dim()
    dim = wrap_dim(dim, s.ndim)
    node = "SparseLogSoftmaxBackward0" if log else "SparseSoftmaxBackward0"
    if dim >= sd:  # over a dense dim: each entry's values are an ordinary softmax
        out = v.log_softmax(dim - sd + 1) if log else v.softmax(dim - sd + 1)
        return make_coo(s._sidx, _ops.alias(out, node), s._ssize, True)
    keep = [d for d in range(sd) if d != dim]
    if keep:
        cols, inv = _group(s._sidx[keep], tuple(s._ssize[d] for d in keep))
        groups = cols.shape[1]
    else:
        inv = np.zeros(s._nnz(), dtype=np.int64)
        groups = 1
    raw = v._data
    top = np.full((groups,) + raw.shape[1:], -np.inf, dtype=raw.dtype)
    np.maximum.at(top, inv, raw)
    shifted = v - wrap(top[inv], False, None)
    e = shifted.exp()
    flat = (groups,) + tuple(raw.shape[1:])
    total = _ops.scatter(inv, e, flat, flat, node="SumBackward1")
    per_entry = _ops.gather(inv, total, flat)
    out = shifted - per_entry.log() if log else e / per_entry
    return make_coo(s._sidx, _ops.alias(out, node), s._ssize, True)


def softmax(input, dim, *, dtype=None):
    """torch.sparse.softmax: softmax over the stored entries along ``dim``."""
    return _softmax(input, dim, dtype, False)


def log_softmax(input, dim, *, dtype=None):
    """torch.sparse.log_softmax."""
    return _softmax(input, dim, dtype, True)
