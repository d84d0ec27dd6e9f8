"""Products and least squares built from other ops: matrix_power, multi_dot, vecdot, lstsq.

These are compositions in torch too, so their gradients come from the ops they call (lstsq's
solution is pinv(A) @ B, whose gradient is torch's linalg_lstsq_backward).
"""

from __future__ import annotations

import numpy as np

from ..ops.creation import _leaf
from ..ops.linalg import matmul
from ..ops.linalg_decomp import svdvals
from ..ops.linalg_norms import matrix_rank
from ..ops.linalg_solve import (
    _SCALAR_NAMES,
    check_float,
    check_matrix,
    check_same_dtype,
    inv,
    pinv,
    return_type,
)

__all__ = ["matrix_power", "multi_dot", "vecdot", "lstsq"]


def matrix_power(A, n):
    """A @ A @ ... (n times) by repeated squaring; n < 0 uses inv(A), n = 0 the identity."""
    if A._data.ndim < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 "
                           "dimensions.")
    if A._data.shape[-1] != A._data.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they "
                           f"are {A._data.shape[-2]} by {A._data.shape[-1]} matrices")
    n = int(n)
    if n == 0:
        # copy_ over a clone, as torch: the result has a history that gives A a zero gradient
        eye = np.broadcast_to(np.eye(A._data.shape[-1], dtype=A._data.dtype), A._data.shape)
        return A.clone().copy_(_leaf(eye.copy(), False))  # a constant, also when compiled
    if n < 0:
        A, n = inv(A), -n
    if n == 1:
        return A.clone()
    result, base = None, A
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return result


def multi_dot(tensors):
    """The product of a chain of matrices; the first may be a row and the last a column vector."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    last = len(tensors) - 1
    for i, t in enumerate(tensors):
        nd = t._data.ndim
        if i in (0, last):
            if nd not in (1, 2):
                where = "first" if i == 0 else "last"
                raise RuntimeError(f"multi_dot(): the {where} tensor must be 1D or 2D but got "
                                   f"{nd}D")
        elif nd != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {nd}D")
    if len({t._data.dtype for t in tensors}) != 1:
        raise RuntimeError("multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                           f"{tensors[0].dtype} and tensor 1 is {tensors[1].dtype}")
    out = tensors[0]
    for t in tensors[1:]:
        out = matmul(out, t)
    return out


def vecdot(x, y, *, dim=-1):
    """sum(x * y, dim) over broadcast x and y (x conjugated, which is a no-op for real x)."""
    if x._data.dtype != y._data.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x "
                           f"of type {_SCALAR_NAMES[x._data.dtype.name]} and y of type "
                           f"{_SCALAR_NAMES[y._data.dtype.name]} instead")
    return (x * y).sum(dim)


_LSTSQ_T = return_type("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def lstsq(A, B, rcond=None, *, driver=None):
    """min ||A X - B|| for each matrix: (solution, residuals, rank, singular_values), each field
    filled as torch fills it for ``driver`` (default 'gelsy': residuals and singular values
    empty). The solution is computed as pinv(A) @ B."""
    check_matrix("torch.linalg.lstsq", A, "input")
    check_float("torch.linalg.lstsq", B, "b")
    if driver is not None and driver not in _DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, "
                           "gelsy, gelsd, gelss)")
    driver = driver or "gelsy"
    check_same_dtype("torch.linalg.lstsq", A, B)
    sa, sb = A._data.shape, B._data.shape
    vector = B._data.ndim == A._data.ndim - 1
    if (sb[-1] if vector else sb[-2]) != sa[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    b = B.unsqueeze(-1) if vector else B
    x = matmul(pinv(A, rtol=rcond) if rcond is not None and rcond > 0 else pinv(A), b)
    m, n = sa[-2:]
    dt = A._data.dtype
    empty = _leaf(np.zeros((0,), dt), False)
    residuals = x.reshape(-1)[:0]  # empty, but requires grad with the solution, as torch's
    rank = matrix_rank(A, rtol=rcond) if rcond is not None and rcond > 0 else matrix_rank(A)
    if driver != "gelsy" and m > n and bool((rank == n).all()):  # a read compile sees
        residuals = ((matmul(A, x) - b) ** 2).sum(-2)
    if driver == "gels":
        rank = _leaf(np.zeros((0,), np.int64), False)
    sv = svdvals(A.detach()) if driver in ("gelsd", "gelss") else empty
    return _LSTSQ_T(x.squeeze(-1) if vector else x, residuals, rank, sv)
