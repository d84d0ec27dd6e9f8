"""Matrix products with a sparse operand: torch.sparse.mm / addmm, torch.spmm, and the
torch.mm / matmul / mv / addmm / ``@`` entry points when one operand is sparse.

Sparse x dense runs the spmm record (one gather of the dense rows, one segment sum); dense x
sparse is ``(S^T @ D^T)^T``; sparse x sparse joins the column indices of the left operand with
the row indices of the right one and coalesces, so its pattern is structural as torch's.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from . import _ops
from ._construct import check_tracing, coalesce
from ._tensor import SparseTensor, make_coo, refuse

__all__ = ["sparse_mm", "sparse_addmm", "spmm", "entry", "matmul"]


def _is_sparse(x):
    return isinstance(x, SparseTensor)


def _matrix(s, name):
    if s.ndim != 2 or s.dense_dim():
        raise refuse(s, f"{name} of a {s.ndim}-D sparse tensor with {s.dense_dim()} dense dims")
    return s


_SCALAR = {"torch.float32": "Float", "torch.float64": "Double", "torch.float16": "Half",
           "torch.int64": "Long", "torch.int32": "Int", "torch.complex64": "ComplexFloat",
           "torch.complex128": "ComplexDouble"}


def _check_dtype(a, b):
    if a.dtype != b.dtype:
        ta, tb = str(a.dtype), str(b.dtype)
        raise RuntimeError(f"expected scalar type {_SCALAR.get(ta, ta)} but found "
                           f"{_SCALAR.get(tb, tb)}")


def _sparse_dense(s, d, node, name):
    """``s @ d`` for a 2-D sparse ``s`` and a 1-D or 2-D dense ``d``."""
    _matrix(s, name)
    if not isinstance(d, Tensor):
        raise TypeError(f"{name}(): argument 'mat2' must be Tensor, not {type(d).__name__}")
    if d.ndim not in (1, 2):
        raise RuntimeError(f"{name}: expected a 1-D or 2-D dense operand, got {d.ndim}-D")
    n, k = s._ssize
    if d.shape[0] != k:
        if d.ndim == 1:
            raise RuntimeError(f"size mismatch, got input ({n}), mat ({n}x{k}), vec "
                               f"({d.shape[0]})")
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {k}, got "
                           f"{d.shape[0]}")
    _check_dtype(s, d)
    check_tracing()
    if s._splan is None:  # sorting the indices once per pattern, not per product
        s._splan = (_ops.sort_order(s._sidx[0]), _ops.sort_order(s._sidx[1]))
    return _ops.spmm(s._sidx[0], s._sidx[1], s._svals, d, n, node, orders=s._splan)


def _transposed(s):
    t = make_coo(np.ascontiguousarray(s._sidx[::-1]), s._svals, s._ssize[::-1], False)
    if s._splan is not None:
        t._splan = s._splan[::-1]
    return t


def _dense_sparse(d, s, node, name):
    """``d @ s``: ``(s^T @ d^T)^T``."""
    _matrix(s, name)
    if d.ndim == 1:
        return _sparse_dense(_transposed(s), d, node, name)
    if d.ndim != 2:
        raise RuntimeError(f"{name}: expected a 1-D or 2-D dense operand, got {d.ndim}-D")
    if d.shape[1] != s._ssize[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({d.shape[0]}x"
                           f"{d.shape[1]} and {s._ssize[0]}x{s._ssize[1]})")
    out = _sparse_dense(_transposed(s), d.t(), "MmBackward0", name).t()
    return _ops.alias(out, node)


def _sparse_sparse(a, b, name):
    _matrix(a, name)
    _matrix(b, name)
    if a._ssize[1] != b._ssize[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a._ssize[0]}x"
                           f"{a._ssize[1]} and {b._ssize[0]}x{b._ssize[1]})")
    _check_dtype(a, b)
    check_tracing()
    (ar, ac), (br, bc) = a._sidx, b._sidx
    order = np.argsort(br, kind="stable")
    brs = br[order]
    lo = np.searchsorted(brs, ac, "left")
    counts = np.searchsorted(brs, ac, "right") - lo
    pa = np.repeat(np.arange(ac.shape[0], dtype=np.int64), counts)
    total = int(counts.sum())
    start = np.repeat(lo - (np.cumsum(counts) - counts), counts)
    pb = order[start + np.arange(total, dtype=np.int64)]
    va = _ops.gather(pa, a._svals, (a._nnz(),))
    vb = _ops.gather(pb, b._svals, (b._nnz(),))
    prod = make_coo(np.stack([ar[pa], bc[pb]]), va * vb, (a._ssize[0], b._ssize[1]), False)
    out = coalesce(prod)
    out._svals = _ops.alias(out._svals, "SparseSparseMatmulBackward0")
    return out


def sparse_mm(mat1, mat2):
    """torch.sparse.mm: sparse @ dense (dense result), dense @ sparse, sparse @ sparse (sparse
    result); gradients reach both operands (the sparse one's on its pattern)."""
    if _is_sparse(mat1) and _is_sparse(mat2):
        return _sparse_sparse(mat1, mat2, "mm")
    if _is_sparse(mat1):
        if mat2.ndim != 2:
            raise RuntimeError("mm: mat2 must be a matrix")
        return _sparse_dense(mat1, mat2, "SparseAddmmBackward0", "mm")
    if _is_sparse(mat2):
        return _dense_sparse(mat1, mat2, "TransposeBackward0", "mm")
    from ..ops.linalg import mm

    return mm(mat1, mat2)


def spmm(input, mat2):
    """torch.spmm: ``input @ mat2`` with a sparse ``input`` (dense inputs work too)."""
    return entry("mm", input, mat2)


def _addmm(input, mat1, mat2, beta, alpha, node):
    prod = sparse_mm(mat1, mat2) if node == "SparseAddmmBackward0" else entry("mm", mat1, mat2)
    if _is_sparse(input) or _is_sparse(prod):
        raise refuse(input if _is_sparse(input) else prod, "addmm with a sparse result")
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:  # torch ignores input then (NaNs in it too)
        out = prod
    else:
        out = (input if beta == 1 else input * beta) + prod
    return _ops.alias(out, node)


def sparse_addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """torch.sparse.addmm: ``beta * mat + alpha * (mat1 @ mat2)`` with a sparse ``mat1``."""
    return _addmm(mat, mat1, mat2, beta, alpha, "SparseAddmmBackward0")


def matmul(input, other):
    return entry("matmul", input, other)


def entry(name, *args, **kwargs):
    """torch.mm / matmul / mv / addmm and ``@`` when an operand is sparse (the dense entry
    points come here only when reading an operand's data raised)."""
    if name == "addmm":
        input, a, b = args
        return _addmm(input, a, b, kwargs.get("beta", 1), kwargs.get("alpha", 1),
                      "AddmmBackward0")
    a, b = args
    if _is_sparse(a) and _is_sparse(b):
        if name == "mv":
            raise refuse(b, "mv with a sparse vector")
        return _sparse_sparse(a, b, name)
    if _is_sparse(a):
        if name == "mm" and getattr(b, "ndim", 2) != 2:
            raise RuntimeError("mat2 must be a matrix")
        if name == "mv" and b.ndim != 1:
            raise RuntimeError(f"vector + matrix @ vector expected, got 1, 2, {b.ndim}")
        node = "MvBackward0" if b.ndim == 1 else "MmBackward0"
        return _sparse_dense(a, b, node, name)
    if _is_sparse(b):
        if name in ("mm", "mv") and a.ndim != 2:
            raise RuntimeError("self must be a matrix")
        if name == "mv":
            raise refuse(b, "mv with a sparse vector")
        return _dense_sparse(a, b, "MmBackward0", name)
    raise TypeError(f"{name}: expected a sparse operand")
