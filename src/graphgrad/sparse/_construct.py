"""Making sparse tensors and converting between layouts: sparse_coo_tensor,
sparse_csr_tensor, Tensor.to_sparse / to_sparse_csr / to_dense, coalesce, spdiags.

Indices are checked when a tensor is made (torch checks only under
``check_sparse_tensor_invariants``): an index outside the size would later give a wrong
dense result or an IndexError far from its cause.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype
from .._device import check_device
from .._tensor import Tensor, wrap
from ..ops.tensor_extras import sparse_coo, strided
from . import _ops
from ._tensor import SparseTensor, linear_index, make_coo, make_csr, sparse_csr

__all__ = ["sparse_coo_tensor", "sparse_csr_tensor", "to_sparse", "to_sparse_csr", "to_dense",
           "coalesce", "spdiags", "check_tracing"]


def check_tracing():
    """graphgrad.compile cannot capture sparse ops (their index arrays would be baked into
    the graph): it breaks the graph visibly here."""
    from ..ops import _dispatch

    if _dispatch._tracer is not None:
        _dispatch._tracer.unsupported("sparse tensors")


def _index_array(indices, name="indices"):
    if isinstance(indices, SparseTensor):
        raise TypeError(f"{name} must be a dense tensor, got a sparse tensor")
    a = indices._data if isinstance(indices, Tensor) else np.asarray(indices)
    if a.dtype.kind not in "iu":
        if a.size and not np.array_equal(a, np.trunc(a)):
            raise RuntimeError(f"{name} must be an int64 tensor")
    return np.array(a, dtype=np.int64, order="C")  # a copy: the tensor's indices are read-only


def _values_tensor(values, dtype):
    from ..ops.creation import tensor

    if isinstance(values, SparseTensor):
        raise TypeError("values must be a dense tensor, got a sparse tensor")
    v = values if isinstance(values, Tensor) else tensor(values, dtype=dtype)
    if dtype is not None and v.dtype != _dtype.to_dtype(dtype):
        v = v.to(dtype)
    return v


def _check_indices(idx, size):
    for d in range(idx.shape[0]):
        if idx.shape[1] == 0:
            break
        lo, hi = int(idx[d].min()), int(idx[d].max())
        if lo < 0:
            raise RuntimeError(f"found negative index {lo} for dim {d}")
        if hi >= size[d]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is "
                               f"{size[d]} but found index {hi}")


def _sorted_unique(lin):
    return lin.shape[0] < 2 or bool((lin[1:] > lin[:-1]).all())


def _leaf_or_input(v, requires_grad, node):
    """The values a new sparse tensor owns: a fresh leaf with ``requires_grad=True``, else a
    copy recorded under torch's grad_fn name (so gradients reach ``v``)."""
    if requires_grad:
        return wrap(v._data.copy(), False, None).requires_grad_(True)
    return _ops.alias(v, node, copy=True)


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """A sparse COO tensor with ``values[k]`` at ``indices[:, k]`` (duplicates add up).

    >>> import graphgrad as torch
    >>> s = torch.sparse_coo_tensor([[0, 1], [1, 0]], [2.0, 3.0], (2, 2))
    >>> s.to_dense().tolist()
    [[0.0, 2.0], [3.0, 0.0]]
    """
    check_device(device)
    check_tracing()
    idx = _index_array(indices)
    v = _values_tensor(values, dtype)
    if idx.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(idx.shape)}")
    if v.ndim == 0:
        raise RuntimeError("values must have at least 1 dimension (nnz), got a 0-d tensor")
    sd, nnz = idx.shape
    if v.shape[0] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{nnz}, nnz from values: {v.shape[0]}")
    if size is None:
        sparse_size = tuple(int(m) + 1 for m in idx.max(1)) if nnz else (0,) * sd
        size = sparse_size + tuple(v.shape[1:])
    size = tuple(int(s) for s in size)
    if len(size) != sd + v.ndim - 1:
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) "
                           f"= {len(size)}, sparse_dim = {sd}, dense_dim = {v.ndim - 1}")
    if tuple(v.shape[1:]) != size[sd:]:
        raise RuntimeError(f"values has incorrect size, expected {list((nnz,) + size[sd:])}, "
                           f"got {list(v.shape)}")
    _check_indices(idx, size)
    if is_coalesced:
        if not _sorted_unique(linear_index(idx, size[:sd])):
            raise RuntimeError("sparse_coo_tensor: is_coalesced=True but the indices are not "
                               "sorted and unique")
    vals = _leaf_or_input(v, requires_grad, "SparseCooTensorWithDimsAndTensorsBackward0")
    return make_coo(idx, vals, size, bool(is_coalesced) or (sd == 0 and nnz <= 1))


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None,
                      pin_memory=False, requires_grad=False, check_invariants=None):
    """A 2-D sparse CSR tensor: row ``i`` holds ``values[crow[i]:crow[i+1]]`` at columns
    ``col_indices[crow[i]:crow[i+1]]``."""
    check_device(device)
    check_tracing()
    crow = _index_array(crow_indices, "crow_indices")
    col = _index_array(col_indices, "col_indices")
    v = _values_tensor(values, dtype)
    if crow.ndim != 1 or col.ndim != 1:
        raise NotImplementedError("sparse_csr_tensor: batched CSR tensors (crow_indices with "
                                  "more than one dimension) are not implemented")
    if v.ndim != 1:
        raise NotImplementedError("sparse_csr_tensor: CSR tensors with dense dimensions are not "
                                  "implemented")
    nnz = col.shape[0]
    if v.shape[0] != nnz:
        raise RuntimeError(f"col_indices and values must have the same number of elements, but "
                           f"got {nnz} and {v.shape[0]}")
    if crow.shape[0] < 1 or crow[0] != 0 or crow[-1] != nnz or (np.diff(crow) < 0).any():
        raise RuntimeError("crow_indices must start at 0, be non-decreasing and end at nnz "
                           f"({nnz}); got {crow.tolist()}")
    if size is None:
        size = (crow.shape[0] - 1, int(col.max()) + 1 if nnz else 0)
    size = tuple(int(s) for s in size)
    if len(size) != 2 or size[0] != crow.shape[0] - 1:
        raise RuntimeError(f"sparse_csr_tensor: size {size} does not match crow_indices of "
                           f"length {crow.shape[0]}")
    t = make_csr(crow, col, v, size)
    _check_indices(t._sidx, size)
    t._svals = _leaf_or_input(v, requires_grad, "SparseCompressedTensorBackward0")
    t._scoal = _sorted_unique(linear_index(t._sidx, size))
    return t


def to_dense(self, dtype=None, *, masked_grad=None):
    """The dense tensor; its gradient flows to the values at the stored entries."""
    if not isinstance(self, SparseTensor):
        return self if dtype is None else self.to(dtype)
    check_tracing()
    t = self if dtype is None else self.to(dtype)
    sd = t._sidx.shape[0]
    rows = int(np.prod(t._ssize[:sd], dtype=np.int64))
    lin = linear_index(t._sidx, t._ssize[:sd])
    flat = (rows,) + tuple(t._ssize[sd:])
    return _ops.scatter(lin, t._svals, flat, t._ssize, unique=t._scoal)


def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """COO (or ``layout=torch.sparse_csr``) form of a tensor: the entries that are not zero
    (over the first ``sparse_dim`` dims; a slice with any non-zero is kept whole)."""
    if layout is not None and layout is not sparse_coo:
        if layout is sparse_csr:
            return to_sparse_csr(self)
        if layout is strided:
            return to_dense(self)
        raise NotImplementedError(f"to_sparse: layout={layout} is not implemented (COO and CSR "
                                  "are)")
    if blocksize is not None or dense_dim is not None:
        raise NotImplementedError("to_sparse: blocksize and dense_dim are not implemented")
    if isinstance(self, SparseTensor):
        if self._slayout is sparse_coo:
            if sparse_dim is not None and sparse_dim != self.sparse_dim():
                raise RuntimeError(f"to_sparse: conversion from Sparse to Sparse with sparse_dim="
                                   f"{sparse_dim} is not supported")
            return self
        return _csr_to_coo(self)
    check_tracing()
    arr = self._data
    sd = arr.ndim if sparse_dim is None else int(sparse_dim)
    if not 0 <= sd <= arr.ndim:
        raise RuntimeError(f"to_sparse: sparse_dim argument must be in [0, {arr.ndim}] range, "
                           f"but {sd} is given")
    shape = arr.shape
    if sd == 0:
        idx = np.zeros((0, 1), dtype=np.int64)
        lin = np.zeros(1, dtype=np.int64)
    else:
        mask = arr != 0
        if sd < arr.ndim:
            mask = mask.any(axis=tuple(range(sd, arr.ndim)))
        idx = np.stack(np.nonzero(mask)).astype(np.int64) if mask.ndim else mask
        lin = linear_index(idx, shape[:sd])
    flat = (int(np.prod(shape[:sd], dtype=np.int64)),) + shape[sd:]
    vals = _ops.gather(lin, self, flat, unique=True, node="ToSparseBackward1")
    return make_coo(idx, vals, shape, True)


def _csr_to_coo(t):
    vals = _ops.alias(t._svals, "ToSparseBackward0")
    return make_coo(t._sidx, vals, t._ssize, t._scoal)


def to_sparse_csr(self, dense_dim=None):
    """CSR form of a 2-D tensor (dense or COO)."""
    if dense_dim is not None:
        raise NotImplementedError("to_sparse_csr: dense_dim is not implemented")
    if isinstance(self, SparseTensor):
        if self._slayout is sparse_csr:
            return self
        coo = coalesce(self)
        node = "ToSparseCsrBackward0"
    else:
        if self.ndim != 2:
            raise NotImplementedError(f"to_sparse_csr: only 2-D tensors are implemented, got "
                                      f"{self.ndim}-D")
        coo = to_sparse(self)
        node = "ToSparseCsrBackward0"
    if coo.ndim != 2 or coo.dense_dim():
        raise NotImplementedError("to_sparse_csr: only 2-D tensors without dense dimensions are "
                                  "implemented")
    rows = coo._sidx[0]
    crow = np.zeros(coo._ssize[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=coo._ssize[0]), out=crow[1:])
    t = make_csr(crow, np.ascontiguousarray(coo._sidx[1]), _ops.alias(coo._svals, node),
                 coo._ssize)
    t._scoal = True
    return t


def coalesce(self):
    """Sorted, duplicate-free indices; duplicates' values are added."""
    if not isinstance(self, SparseTensor) or self._slayout is not sparse_coo:
        lay = "Strided" if not isinstance(self, SparseTensor) else "SparseCsr"
        raise RuntimeError(f"coalesce expected sparse coordinate tensor layout but got {lay}")
    if self._scoal:
        return self
    check_tracing()
    sd = self._sidx.shape[0]
    lin = linear_index(self._sidx, self._ssize[:sd])
    uniq, inv = np.unique(lin, return_inverse=True)
    idx = np.stack(np.unravel_index(uniq, self._ssize[:sd])).astype(np.int64).reshape(sd, -1)
    flat = (uniq.shape[0],) + tuple(self._svals.shape[1:])
    vals = _ops.scatter(inv.reshape(-1), self._svals, flat, flat, node="CoalesceBackward0")
    return make_coo(idx, vals, self._ssize, True)


def spdiags(diagonals, offsets, shape, layout=None):
    """A sparse matrix with ``diagonals[k]`` on diagonal ``offsets[k]`` (column ``j`` of the
    matrix takes ``diagonals[k, j]``, scipy's convention)."""
    if layout not in (None, sparse_coo):
        if layout is sparse_csr:
            return to_sparse_csr(spdiags(diagonals, offsets, shape))
        raise NotImplementedError(f"spdiags: layout={layout} is not implemented")
    d = diagonals if isinstance(diagonals, Tensor) else wrap(np.asarray(diagonals), False, None)
    offs = _index_array(offsets, "offsets").reshape(-1)
    if d.ndim == 1:
        d = d.reshape(1, -1)
    if d.ndim != 2 or d.shape[0] != offs.shape[0]:
        raise RuntimeError(f"spdiags: expected one row of diagonals per offset, got diagonals "
                           f"of shape {list(d.shape)} and {offs.shape[0]} offsets")
    n, m = (int(s) for s in shape)
    rows, cols, pick = [], [], []
    length = d.shape[1]
    for k, off in enumerate(offs.tolist()):
        j = np.arange(max(0, off), min(m, n + off, length), dtype=np.int64)
        rows.append(j - off)
        cols.append(j)
        pick.append(k * length + j)
    idx = np.stack([np.concatenate(rows), np.concatenate(cols)]) if rows else np.zeros((2, 0),
                                                                                      np.int64)
    lin = np.concatenate(pick) if pick else np.zeros(0, np.int64)
    vals = _ops.gather(lin, d, (d.shape[0] * length,), unique=True)
    return make_coo(idx, vals, (n, m), False)
