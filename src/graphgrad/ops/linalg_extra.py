"""Solvers built on other factorizations: cholesky_solve, cholesky_inverse, triangular_solve, and
the tensor-shaped linalg.tensorinv / tensorsolve, plus linalg.vander and chain_matmul.

cholesky_solve and cholesky_inverse are ops with torch's rules (their gradients w.r.t. the
factor are full matrices, not masked to its triangle); the rest are compositions.
"""

from __future__ import annotations

import math

import numpy as np

from .._tensor import wrap
from ._dispatch import apply
from ._opdef import defop
from .linalg_solve import (
    _SCALAR_NAMES,
    _tri_solve_fwd,
    check_float,
    check_matrix,
    inv,
    return_type,
    solve,
    solve_triangular,
)

__all__ = ["cholesky_solve", "cholesky_inverse", "triangular_solve", "tensorinv",
           "tensorsolve", "vander", "chain_matmul", "eig", "eigvals"]


def _check_pair(name, b, a):
    check_float(name, b)
    check_float(name, a, "A")
    for x, what in ((b, "b"), (a, "A")):
        if x._data.ndim < 2:
            raise RuntimeError(f"{what} should have at least 2 dimensions, but has "
                               f"{x._data.ndim} dimensions instead")
    if b._data.dtype != a._data.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_SCALAR_NAMES[b._data.dtype.name]} and A of type "
                           f"{_SCALAR_NAMES[a._data.dtype.name]} instead.")
    sa, sb = a._data.shape, b._data.shape
    if sa[-1] != sa[-2] or sa[-1] != sb[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {sa[-2]} by "
                           f"{sa[-1]} but each b matrix is {sb[-2]} by {sb[-1]}")


# -- cholesky_solve -----------------------------------------------------------------------------
def _chol_solve_fwd(xp, b, f, upper):
    low = np.swapaxes(f, -1, -2) if upper else f  # A = L L^T either way
    y = _tri_solve_fwd(xp, low, b, False, True, False)
    return _tri_solve_fwd(xp, np.swapaxes(low, -1, -2), y, True, True, False)


def _chol_solve_vjp(ns, g, f, x, upper, needs):
    """gB = A^{-1} gX; gF = -(gB X^T + X gB^T) F (lower), -F (...) (upper): torch's rule."""
    mm, t = ns.matmul, ns.mT
    gb = (apply(CHOLESKY_SOLVE, (g, f), {"upper": upper}) if ns.differentiable
          else _chol_solve_fwd(np, g, f, upper))
    gf = None
    if needs[1]:
        common = mm(gb, t(x))
        common = common + t(common)
        gf = -mm(f, common) if upper else -mm(common, f)
    return (gb if needs[0] else None), gf


CHOLESKY_SOLVE = defop("cholesky_solve", _chol_solve_fwd, _chol_solve_vjp, kind="opaque",
                       save=(1, "out"), dtype_rule="same", node="CholeskySolveBackward0",
                       needs_mask=True)


def cholesky_solve(B, L, upper=False):
    """X with A X = B for A = L L^T (``upper``: A = U^T U) given the Cholesky factor."""
    _check_pair("cholesky_solve", B, L)
    return apply(CHOLESKY_SOLVE, (B, L), {"upper": bool(upper)})


# -- cholesky_inverse ---------------------------------------------------------------------------
def _chol_inv_fwd(xp, f, upper):
    n = f.shape[-1]
    eye = np.broadcast_to(np.eye(n, dtype=f.dtype), f.shape)
    return _chol_solve_fwd(xp, eye, f, upper)


def _chol_inv_vjp(ns, g, f, out, upper):
    mm, t = ns.matmul, ns.mT
    common = mm(out, mm(g + t(g), out))
    return -mm(f, common) if upper else -mm(common, f)


CHOLESKY_INVERSE = defop("cholesky_inverse", _chol_inv_fwd, _chol_inv_vjp, kind="opaque",
                         save=(0, "out"), dtype_rule="same", node="CholeskyInverseBackward0")


def cholesky_inverse(L, upper=False):
    """(L L^T)^{-1} (``upper``: (U^T U)^{-1}) from a Cholesky factor."""
    if L._data.dtype.kind != "f":
        raise NotImplementedError(f'"cholesky_inverse_out_cpu" not implemented for '
                                  f"'{_SCALAR_NAMES[L._data.dtype.name]}'")
    check_matrix("cholesky_inverse", L, square=True)
    return apply(CHOLESKY_INVERSE, (L,), {"upper": bool(upper)})


# -- triangular_solve ---------------------------------------------------------------------------
_TRIANGULAR_SOLVE_T = return_type("triangular_solve", ["solution", "cloned_coefficient"])


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):
    """torch.triangular_solve: (X, A.clone()) with op(A) X = b, op transposing with
    ``transpose``; only A's ``upper`` (or lower) triangle is read."""
    _check_pair("triangular_solve", b, A)
    a = A.mT if transpose else A
    x = solve_triangular(a, b, upper=bool(upper) != bool(transpose),
                         unitriangular=bool(unitriangular))
    shape = np.broadcast_shapes(A._data.shape[:-2], b._data.shape[:-2]) + A._data.shape[-2:]
    return _TRIANGULAR_SOLVE_T(x, A.expand(shape).clone())


# -- tensorinv, tensorsolve ---------------------------------------------------------------------
def tensorinv(A, ind=2):
    """The tensor X with tensordot(X, A, ind) = I: A reshaped to a square matrix and inverted."""
    if not isinstance(ind, int) or ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = A._data.shape
    rows, cols = math.prod(shape[:ind]), math.prod(shape[ind:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    return inv(A.reshape(rows, cols)).reshape(shape[ind:] + shape[:ind])


def tensorsolve(A, B, dims=None):
    """X with tensordot(A, X, X.ndim) = B; ``dims`` moves those dims of A to the end first."""
    if dims is not None:
        nd = A._data.ndim
        dims = [d % nd for d in dims]
        A = A.permute([d for d in range(nd) if d not in dims] + dims)
    shape, k = A._data.shape, B._data.ndim
    rows, cols = math.prod(shape[:k]), math.prod(shape[k:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:])"
                           f" == prod(self.shape[:other.ndim]), but got {cols} != {rows}")
    return solve(A.reshape(rows, cols), B.reshape(rows)).reshape(shape[k:])


# -- vander, chain_matmul -----------------------------------------------------------------------
def vander(x, N=None):
    """(..., n, N): x^0, x^1, ..., x^(N-1) in increasing powers, by cumprod as torch."""
    from .. import _dtype
    from .movement import cat, expand, unsqueeze
    from .sorting import cumprod

    a = x._data
    if a.ndim == 0:
        raise RuntimeError("N must be greater than 1.")
    n = a.shape[-1] if N is None else int(N)
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    if a.dtype.kind == "b":
        x = x.to(_dtype.int64)
    ones = wrap(np.ones(a.shape + (1,), x._data.dtype), False, None)
    cols = cat([ones, expand(unsqueeze(x, -1), a.shape + (n - 1,))], -1)
    return cumprod(cols, -1)


def chain_matmul(*matrices):
    """The product of 2-D matrices (deprecated in torch in favour of linalg.multi_dot)."""
    from ..linalg._products import multi_dot

    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        if m._data.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m._data.ndim}, expected 2 instead.")
    if len(matrices) == 1:
        return matrices[0].clone()
    return multi_dot(matrices)


# -- eig, eigvals -------------------------------------------------------------------------------
def _no_complex(name):
    raise NotImplementedError(f"torch.linalg.{name} returns complex eigenvalues and eigenvectors; "
                              "graphgrad has no complex dtype, so it is not provided. For "
                              "symmetric matrices use linalg.eigh / linalg.eigvalsh")


def eig(A, *, out=None):
    _no_complex("eig")


def eigvals(A, *, out=None):
    _no_complex("eigvals")
