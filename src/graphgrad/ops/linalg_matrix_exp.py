"""The matrix exponential (linalg.matrix_exp), by scaling and squaring with a [13/13] Padé
approximant (Higham 2005), vectorised over the batch.

Its gradient is the upper-right block of exp([[A^T, G], [0, A^T]]) (Mathias 1996): the rule calls
the op itself, so it is differentiable again under create_graph.
"""

from __future__ import annotations

import numpy as np

from ._dispatch import apply
from ._opdef import defop
from .linalg_solve import check_matrix

__all__ = ["matrix_exp"]

# Higham 2005, Table 2.3 (the [13/13] coefficients) and Table 2.3's theta_13 for double.
_B13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
        129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
        40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def _expm(a):
    """exp of each matrix of ``a`` (float64, (B, n, n))."""
    n = a.shape[-1]
    norm = np.abs(a).sum(-2).max(-1)  # the 1-norm of each matrix
    with np.errstate(divide="ignore"):
        s = np.maximum(0, np.ceil(np.log2(norm / _THETA13))).astype(np.int64)
    s = np.where(np.isfinite(norm), s, 0)
    a = a / (2.0 ** s)[:, None, None]
    b = _B13
    eye = np.eye(n)
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2)
             + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye
    r = np.linalg.solve(v - u, v + u)
    for i in range(int(s.max(initial=0))):
        more = s > i
        r[more] = r[more] @ r[more]
    return r


def _matrix_exp_fwd(xp, a):
    if a.size == 0:
        return a.copy()
    flat = a.reshape((-1,) + a.shape[-2:]).astype(np.float64)
    with np.errstate(all="ignore"):
        return _expm(flat).astype(a.dtype, copy=False).reshape(a.shape)


def _matrix_exp_vjp(ns, g, a):
    n = ns.raw(a).shape[-1]
    at = ns.mT(a)
    zero = ns.const(np.zeros(ns.raw(g).shape, ns.raw(g).dtype))
    big = ns.cat([ns.cat([at, g], -1), ns.cat([zero, at], -1)], -2)
    e = matrix_exp(big) if ns.differentiable else _matrix_exp_fwd(np, big)
    return ns.getitem(e, (Ellipsis, slice(0, n), slice(n, None)))


MATRIX_EXP = defop("linalg_matrix_exp", _matrix_exp_fwd, _matrix_exp_vjp, kind="opaque",
                   save=(0,), dtype_rule="same", node="LinalgMatrixExpBackward0")


def matrix_exp(A):
    """exp(A) = sum_k A^k / k! of each square matrix of ``A`` (..., n, n).

    >>> import graphgrad as torch
    >>> torch.linalg.matrix_exp(torch.zeros(2, 2))
    tensor([[1., 0.],
            [0., 1.]])
    """
    check_matrix("linalg.matrix_exp", A, square=True)
    return apply(MATRIX_EXP, (A,))
