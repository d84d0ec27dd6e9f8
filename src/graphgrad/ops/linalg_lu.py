"""LU factorization with partial pivoting: linalg.lu_factor(_ex), linalg.lu, lu_solve, lu_unpack.

The factorization is LAPACK's getrf written in NumPy, vectorised over the batch (one Python
step per column), so pivots (1-based, int32) and info match torch's. The rules are torch's
(linalg_lu_backward, and the exact derivative of lu_solve w.r.t. the packed LU and B).
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor, wrap
from ._dispatch import apply
from ._opdef import defop
from .linalg_solve import (
    _SCALAR_NAMES,
    _tri_solve_fwd,
    apply_multi,
    check_float,
    check_matrix,
    check_same_dtype,
    lu_info,
    ns_solve_tri,
    return_type,
    saved_outputs,
    slot_grads,
    solve,
    tri_mask,
)

__all__ = ["lu_factor", "lu_factor_ex", "lu", "lu_solve", "lu_unpack", "solve_ex",
           "torch_lu", "torch_lu_solve"]


# -- NumPy kernels ------------------------------------------------------------------------------
def getrf(a):
    """(LU, pivots, info) of each matrix of ``a`` (..., m, n), as LAPACK's getrf."""
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    k = min(m, n)
    lu = np.array(a, copy=True).reshape((-1, m, n))
    piv = np.empty((lu.shape[0], k), np.int32)
    info = np.zeros(lu.shape[0], np.int32)
    rows = np.arange(lu.shape[0])
    with np.errstate(all="ignore"):
        for j in range(k):
            p = j + np.argmax(np.abs(lu[:, j:, j]), axis=1)
            piv[:, j] = p + 1
            top = lu[rows, j].copy()
            lu[rows, j] = lu[rows, p]
            lu[rows, p] = top
            d = lu[:, j, j]
            zero = d == 0
            info[(info == 0) & zero] = j + 1
            # NOTE: a zero pivot leaves its column unscaled (it is all zeros), as getf2 does
            mult = lu[:, j + 1:, j] / np.where(zero, 1, d)[:, None]
            lu[:, j + 1:, j] = mult
            lu[:, j + 1:, j + 1:] -= mult[:, :, None] * lu[:, j, None, j + 1:]
    return (lu.reshape(a.shape), piv.reshape(batch + (k,)), info.reshape(batch))


def permutation(piv, m):
    """perm with (P^T A)[i] = A[perm[i]] for the row swaps ``piv`` (1-based) of getrf."""
    flat = piv.reshape((-1, piv.shape[-1])).astype(np.int64) - 1
    perm = np.broadcast_to(np.arange(m), (flat.shape[0], m)).copy()
    rows = np.arange(flat.shape[0])
    for j in range(flat.shape[1]):
        p = flat[:, j]
        top = perm[:, j].copy()
        perm[:, j] = perm[rows, p]
        perm[rows, p] = top
    return perm.reshape(piv.shape[:-1] + (m,))


def perm_matrix(piv, m, dtype):
    """P with A = P L U."""
    perm = permutation(piv, m)
    return (perm[..., None, :] == np.arange(m)[:, None]).astype(dtype)


def _unpack(ns, lu):
    """(L, U) from the packed factor, in either rules namespace."""
    m, n = ns.raw(lu).shape[-2:]
    k = min(m, n)
    eye = ns.const(np.eye(m, k, dtype=ns.raw(lu).dtype))
    l_ = tri_mask(ns, ns.getitem(lu, (Ellipsis, slice(None), slice(0, k))), False, -1) + eye
    u = tri_mask(ns, ns.getitem(lu, (Ellipsis, slice(0, k), slice(None))), True)
    return l_, u


# -- the rule both factorizations share ---------------------------------------------------------
def lu_grad(ns, gl, gu, p, l_, u):
    """torch's linalg_lu_backward (A = P L U, pivoted) for square, wide and tall A."""
    if gl is None and gu is None:
        return None
    mm, t = ns.matmul, ns.mT
    m, n = ns.raw(l_).shape[-2], ns.raw(u).shape[-1]
    k = min(m, n)
    cols, rows = (Ellipsis, slice(None), slice(0, k)), (Ellipsis, slice(0, k), slice(None))
    dt = ns.raw(u).dtype
    if m == n:
        ga = None if gl is None else tri_mask(ns, mm(t(l_), gl), False, -1)
        if gu is not None:
            ug = tri_mask(ns, mm(gu, t(u)), True)
            ga = ug if ga is None else ga + ug
        ga = ns_solve_tri(ns, t(u), ga, False, left=False)
        ga = ns_solve_tri(ns, t(l_), ga, True, True, unit=True)
    elif m < n:
        ga = None if gl is None else mm(t(l_), gl)
        if gu is not None:
            ug = -mm(tri_mask(ns, gu, True), t(u))
            ga = ug if ga is None else ga + ug
        ga = ns_solve_tri(ns, t(ns.getitem(u, cols)), tri_mask(ns, ga, False, -1), False,
                          left=False)
        if gu is not None:
            ga = ns.cat([ga + tri_mask(ns, ns.getitem(gu, cols), True),
                         ns.getitem(gu, (Ellipsis, slice(None), slice(k, None)))], -1)
        ga = ns_solve_tri(ns, t(l_), ga, True, True, unit=True)
        if gu is None:
            ga = ns.cat([ga, ns.const(np.zeros(ns.raw(ga).shape[:-1] + (n - k,), dt))], -1)
    else:
        ga = None if gu is None else mm(gu, t(u))
        if gl is not None:
            lg = -mm(t(l_), tri_mask(ns, gl, False, -1))
            ga = lg if ga is None else ga + lg
        ga = ns_solve_tri(ns, t(ns.getitem(l_, rows)), tri_mask(ns, ga, True), True, True,
                          unit=True)
        if gl is not None:
            ga = ns.cat([ga + tri_mask(ns, ns.getitem(gl, rows), False, -1),
                         ns.getitem(gl, (Ellipsis, slice(k, None), slice(None)))], -2)
        ga = ns_solve_tri(ns, t(u), ga, False, left=False)
        if gl is None:
            shape = ns.raw(ga).shape
            ga = ns.cat([ga, ns.const(np.zeros(shape[:-2] + (m - k, shape[-1]), dt))], -2)
    return mm(p, ga)


# -- lu_factor ----------------------------------------------------------------------------------
def _lu_factor_fwd(xp, a):
    return getrf(a)


def _lu_factor_vjp(ns, g, aux):
    glu = slot_grads(g, 3)[0]
    if glu is None:
        return None
    lu, piv, _ = saved_outputs(ns, aux)
    m, n = ns.raw(lu).shape[-2:]
    k = min(m, n)
    l_, u = _unpack(ns, lu)
    p = ns.const(perm_matrix(ns.raw(piv), m, ns.raw(lu).dtype))
    gl = ns.getitem(glu, (Ellipsis, slice(None), slice(0, k)))
    gu = ns.getitem(glu, (Ellipsis, slice(0, k), slice(None)))
    return lu_grad(ns, gl, gu, p, l_, u)


LU_FACTOR = defop("linalg_lu_factor_ex", _lu_factor_fwd, _lu_factor_vjp, kind="opaque",
                  save=("aux",), dtype_rule="same", node="LinalgLuFactorExBackward0")
_LU_FACTOR_EX_T = return_type("linalg_lu_factor_ex", ["LU", "pivots", "info"])
_LU_FACTOR_T = return_type("linalg_lu_factor", ["LU", "pivots"])
_LU_WITH_INFO_T = return_type("_lu_with_info", ["LU", "pivots", "info"])


def _no_pivot(name, pivot):
    if not pivot:
        raise RuntimeError(f"{name}: LU without pivoting is not implemented on the CPU")


def _zero_pivot_error(name, lu, info):
    flat = info.reshape(-1)
    b = int(np.flatnonzero(flat)[0])
    where = f"(Batch element {b}): " if info.ndim else ""
    k = int(flat[b])
    return RuntimeError(f"{name}: {where}U[{k},{k}] is zero and using it on lu_solve would "
                        "result in a division by zero. If you still want to perform the "
                        "factorization, consider calling linalg.lu(A, pivot) or "
                        "linalg.lu_factor_ex(A, pivot)")


def lu_factor_ex(A, *, pivot=True, check_errors=False):
    """(LU, pivots, info): L (unit diagonal, below) and U packed in one matrix, 1-based row
    swaps, and info > 0 naming the first zero pivot of U (the factor is still returned)."""
    check_matrix("torch.linalg.lu_factor_ex", A)
    _no_pivot("linalg.lu_factor", pivot)
    lu_, piv, info = apply_multi(LU_FACTOR, (A,), {})
    if check_errors and np.any(info._data):
        raise _zero_pivot_error("torch.linalg.lu_factor_ex", lu_._data, info._data)
    return _LU_FACTOR_EX_T(lu_, piv, info)


def lu_factor(A, *, pivot=True):
    """(LU, pivots) of ``A`` (..., m, n); a zero pivot of U raises, as torch."""
    check_matrix("torch.linalg.lu_factor", A)
    _no_pivot("linalg.lu_factor", pivot)
    lu_, piv, info = apply_multi(LU_FACTOR, (A,), {})
    if np.any(info._data):
        raise _zero_pivot_error("torch.linalg.lu_factor", lu_._data, info._data)
    return _LU_FACTOR_T(lu_, piv)


def torch_lu(A, pivot=True, get_infos=False):
    """torch.lu / Tensor.lu: (LU, pivots), and the infos with ``get_infos``."""
    check_matrix("torch.linalg.lu_factor_ex", A)
    _no_pivot("linalg.lu_factor", pivot)
    lu_, piv, info = apply_multi(LU_FACTOR, (A,), {})
    if get_infos:
        return _LU_WITH_INFO_T(lu_, piv, info)
    if np.any(info._data):
        raise _zero_pivot_error("torch.linalg.lu_factor_ex", lu_._data, info._data)
    return lu_, piv


# -- lu -----------------------------------------------------------------------------------------
def _lu_fwd(xp, a):
    lu_, piv, _ = getrf(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    l_ = np.tril(lu_[..., :, :k], -1) + np.eye(m, k, dtype=a.dtype)
    return perm_matrix(piv, m, a.dtype), l_, np.triu(lu_[..., :k, :])


def _lu_vjp(ns, g, aux):
    _, gl, gu = slot_grads(g, 3)
    p, l_, u = saved_outputs(ns, aux)
    return lu_grad(ns, gl, gu, ns.const(ns.raw(p)), l_, u)


LU = defop("linalg_lu", _lu_fwd, _lu_vjp, kind="opaque", save=("aux",), dtype_rule="same",
           node="LinalgLuBackward0")
_LU_T = return_type("linalg_lu", ["P", "L", "U"])


def lu(A, *, pivot=True):
    """(P, L, U) with A = P L U: P a permutation, L unit lower (m, k), U upper (k, n)."""
    check_matrix("linalg.lu", A)
    _no_pivot("linalg.lu", pivot)
    p, l_, u = apply_multi(LU, (A,), {})
    return _LU_T(wrap(p._data, False, None), l_, u)  # P is a constant, as torch's


# -- lu_unpack ----------------------------------------------------------------------------------
_LU_UNPACK_T = return_type("lu_unpack", ["P", "L", "U"])


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """(P, L, U) from lu_factor's output; L and U are differentiable w.r.t. ``LU_data``."""
    from .movement import getitem
    from .structure import tril, triu

    check_matrix("torch.lu_unpack", LU_data, "LU_data")
    if not isinstance(LU_pivots, Tensor) or LU_pivots._data.dtype != np.int32:
        got = _SCALAR_NAMES.get(getattr(getattr(LU_pivots, "_data", None), "dtype",
                                        np.dtype(object)).name, "a non-tensor")
        raise RuntimeError(f"torch.lu_unpack: LU_pivots is expected to be a contiguous tensor "
                           f"of torch.int32 dtype. Note: this function is intended to be used "
                           f"with the output produced by torch.linalg.lu_factor (got {got})")
    a = LU_data._data
    m, n = a.shape[-2:]
    k = min(m, n)
    empty = wrap(np.zeros((0,), a.dtype), False, None)
    if unpack_data:
        l_ = tril(getitem(LU_data, (Ellipsis, slice(None), slice(0, k))), -1)
        l_ = l_ + wrap(np.eye(m, k, dtype=a.dtype), False, None)
        u = triu(getitem(LU_data, (Ellipsis, slice(0, k), slice(None))))
    else:  # empty, with LU_data's history as torch's
        l_ = LU_data.reshape(-1)[:0]
        u = LU_data.reshape(-1)[:0]
    p = wrap(perm_matrix(LU_pivots._data, m, a.dtype), False, None) if unpack_pivots else empty
    return _LU_UNPACK_T(p, l_, u)


# -- lu_solve -----------------------------------------------------------------------------------
def _swap(x):
    return np.swapaxes(x, -1, -2)


def _lu_solve_fwd(xp, lu_, piv, b, left, adjoint):
    if not left:  # X op(A) = B  <=>  op(A)^T X^T = B^T
        return _swap(_lu_solve_fwd(xp, lu_, piv, _swap(b), True, not adjoint))
    n = lu_.shape[-1]
    batch = np.broadcast_shapes(lu_.shape[:-2], b.shape[:-2])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    perm = np.broadcast_to(permutation(piv, n)[..., None], batch + b.shape[-2:])
    if not adjoint:  # X = U^{-1} L^{-1} P^T B
        y = _tri_solve_fwd(xp, lu_, np.take_along_axis(b, perm, -2), False, True, True)
        return _tri_solve_fwd(xp, lu_, y, True, True, False)
    # A^T X = B: X = P L^{-T} U^{-T} B
    y = _tri_solve_fwd(xp, _swap(lu_), b, False, True, False)
    z = _tri_solve_fwd(xp, _swap(lu_), y, True, True, True)
    return np.take_along_axis(z, np.argsort(perm, axis=-2), -2)


def _ns_lu_solve(ns, lu_, piv, b, left, adjoint):
    if ns.differentiable:
        return apply(LU_SOLVE, (lu_, wrap(ns.raw(piv), False, None), b),
                     {"left": left, "adjoint": adjoint})
    return _lu_solve_fwd(np, lu_, piv, b, left, adjoint)


def _lu_solve_vjp(ns, g, lu_, piv, x, left, adjoint, needs):
    mm, t = ns.matmul, ns.mT
    gb = _ns_lu_solve(ns, lu_, piv, g, left, not adjoint)
    glu = None
    if needs[0]:  # through A = P L U, reading only the triangles the factor holds
        gop = -mm(gb, t(x)) if left else -mm(t(x), gb)
        ga = t(gop) if adjoint else gop
        n = ns.raw(lu_).shape[-1]
        pga = mm(ns.const(_swap(perm_matrix(ns.raw(piv), n, ns.raw(lu_).dtype))), ga)
        l_, u = _unpack(ns, lu_)
        glu = tri_mask(ns, mm(pga, t(u)), False, -1) + tri_mask(ns, mm(t(l_), pga), True)
    return glu, None, (gb if needs[2] else None)


LU_SOLVE = defop("linalg_lu_solve", _lu_solve_fwd, _lu_solve_vjp, kind="opaque",
                 save=(0, 1, "out"), dtype_rule="same", node="LinalgLuSolveBackward0",
                 needs_mask=True)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    """X with A X = B from A's (LU, pivots); ``adjoint`` solves A^T X = B, ``left=False``
    X A = B. Batch dims of LU and B broadcast."""
    name = "linalg.lu_solve"
    check_matrix(name, LU, "LU", square=True)
    check_float(name, B, "B")
    if B._data.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    check_same_dtype(name, LU, B)
    if not isinstance(pivots, Tensor) or pivots._data.dtype != np.int32:
        raise RuntimeError(f"{name}: Expected pivots to be integers. Got "
                           f"{_SCALAR_NAMES.get(pivots._data.dtype.name, '?')}")
    n, sb = LU._data.shape[-1], B._data.shape
    if (sb[-2] if left else sb[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation {eq} "
                           f"({n}x{n} and {sb[-2]}x{sb[-1]})")
    if pivots._data.shape != LU._data.shape[:-1]:
        raise RuntimeError(f"{name}: Incompatible shapes of A and pivots: expected "
                           f"{LU._data.shape[:-1]}, got {pivots._data.shape}")
    return apply(LU_SOLVE, (LU, pivots, B), {"left": bool(left), "adjoint": bool(adjoint)})


def torch_lu_solve(b, LU_data, LU_pivots):
    """torch.lu_solve / Tensor.lu_solve: the older argument order of linalg.lu_solve."""
    return lu_solve(LU_data, LU_pivots, b)


# -- solve_ex -----------------------------------------------------------------------------------
_SOLVE_EX_T = return_type("linalg_solve_ex", ["result", "info"])


def solve_ex(A, B, *, left=True, check_errors=False):
    """(result, info): linalg.solve that reports a singular A in ``info`` (LAPACK's, > 0)
    instead of raising, unless ``check_errors``."""
    check_matrix("linalg.solve_ex", A, square=True)
    info = lu_info(A._data)
    if np.any(info) and not check_errors:
        res = _solve_singular(A, B, left)
        return _SOLVE_EX_T(res, wrap(info, False, None))
    return _SOLVE_EX_T(solve(A, B, left=left), wrap(info, False, None))


def _solve_singular(A, B, left):
    """getrf + getrs, as torch's solve_ex (inf/NaN where a pivot is zero), differentiable."""
    a, b = A._data, B._data
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    lu_, piv, _ = apply_multi(LU_FACTOR, (A,), {})
    out = apply(LU_SOLVE, (lu_, piv, B.unsqueeze(-1) if vector else B),
                {"left": bool(left), "adjoint": False})
    return out.squeeze(-1) if vector else out
