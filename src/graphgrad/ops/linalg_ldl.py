"""LDL^T of symmetric matrices with Bunch-Kaufman pivoting: linalg.ldl_factor(_ex), ldl_solve.

LAPACK's sytf2/sytrs (lower storage) in NumPy, one matrix at a time, so LD, the pivots (1-based,
negative for 2x2 blocks) and info match torch's. As in torch, neither is differentiable.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor, wrap
from ._dispatch import apply
from ._opdef import defop
from .linalg_solve import _SCALAR_NAMES, check_float, check_matrix, check_same_dtype, return_type

__all__ = ["ldl_factor", "ldl_factor_ex", "ldl_solve"]

_ALPHA = (1.0 + np.sqrt(17.0)) / 8.0


def _sym_swap(s, k, a, b):
    """Swaps rows and columns a and b of the trailing block s[k:, k:] (held symmetric)."""
    if a != b:
        s[[a, b], k:] = s[[b, a], k:]
        s[k:, [a, b]] = s[k:, [b, a]]


def _sytf2(a):
    """(LD, ipiv, info) of one symmetric matrix, reading its lower triangle (LAPACK's dsytf2)."""
    n = a.shape[-1]
    s = np.tril(a) + np.tril(a, -1).T  # the trailing block is kept whole and symmetric
    ld = np.zeros_like(s)
    ipiv = np.zeros(n, np.int32)
    info = 0
    k = 0
    while k < n:
        kstep = 1
        absakk = abs(s[k, k])
        imax = k + 1 + int(np.argmax(np.abs(s[k + 1:, k]))) if k < n - 1 else k
        colmax = abs(s[imax, k]) if k < n - 1 else 0.0
        if max(absakk, colmax) == 0 or np.isnan(absakk):
            info = info or k + 1
            kp = k
        else:
            if absakk >= _ALPHA * colmax:
                kp = k
            else:
                rowmax = np.abs(s[imax, k:imax]).max()
                if imax < n - 1:
                    rowmax = max(rowmax, np.abs(s[imax + 1:, imax]).max())
                if absakk >= _ALPHA * colmax * (colmax / rowmax):
                    kp = k
                elif abs(s[imax, imax]) >= _ALPHA * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            _sym_swap(s, k, k + kstep - 1, kp)
            t = s[k + kstep:, k + kstep:]
            if kstep == 1:
                x = s[k + 1:, k].copy()
                if k < n - 1:
                    d11 = 1.0 / s[k, k]
                    t += np.outer(x, -d11 * x)
                    s[k + 1:, k] = x * d11
            elif k < n - 2:
                d21 = s[k + 1, k]
                d11 = s[k + 1, k + 1] / d21
                d22 = s[k, k] / d21
                d21 = (1.0 / (d11 * d22 - 1.0)) / d21
                ak, ak1 = s[k + 2:, k].copy(), s[k + 2:, k + 1].copy()
                wk = d21 * (d11 * ak - ak1)
                wkp1 = d21 * (d22 * ak1 - ak)
                t -= np.outer(ak, wk)
                t -= np.outer(ak1, wkp1)
                s[k + 2:, k], s[k + 2:, k + 1] = wk, wkp1
            if t.size:  # keep the block symmetric from its lower triangle, as LAPACK reads it
                t[...] = np.tril(t) + np.tril(t, -1).T
        ld[k:, k:k + kstep] = s[k:, k:k + kstep]
        if kstep == 1:
            ipiv[k] = kp + 1
        else:
            ipiv[k] = ipiv[k + 1] = -(kp + 1)
        k += kstep
    return np.tril(ld), ipiv, info


def _ldl_fwd(xp, a):
    flat = a.reshape((-1,) + a.shape[-2:])
    ld = np.zeros_like(flat)
    piv = np.zeros(flat.shape[:-1], np.int32)
    info = np.zeros(flat.shape[0], np.int32)
    with np.errstate(all="ignore"):
        for b, m in enumerate(flat):
            ld[b], piv[b], info[b] = _sytf2(m)
    return ld.reshape(a.shape), (piv.reshape(a.shape[:-1]), info.reshape(a.shape[:-2]))


# NOTE: torch marks LD as requiring grad with a grad_fn that raises "not implemented"; here
# the op has no rule, so LD is a constant and backward through it raises earlier.
LDL_FACTOR = defop("linalg_ldl_factor_ex", _ldl_fwd, kind="opaque", save=("aux",),
                   dtype_rule="same")
_LDL_EX_T = return_type("linalg_ldl_factor_ex", ["LD", "pivots", "info"])
_LDL_T = return_type("linalg_ldl_factor", ["LD", "pivots"])


def _factor(name, A, hermitian):
    check_matrix(name, A, square=True)
    ld, (piv, info) = apply(LDL_FACTOR, (A,))
    return ld, wrap(piv, False, None), wrap(info, False, None)


def ldl_factor_ex(A, *, hermitian=False, check_errors=False):
    """(LD, pivots, info) with A = L D L^T (symmetric pivoting; D has 1x1 and 2x2 blocks), from
    A's lower triangle; info > 0 names the first zero diagonal block of D."""
    ld, piv, info = _factor("torch.linalg.ldl_factor_ex", A, hermitian)
    if check_errors:
        _raise_info("torch.linalg.ldl_factor_ex", info._data)
    return _LDL_EX_T(ld, piv, info)


def ldl_factor(A, *, hermitian=False):
    """(LD, pivots) as ldl_factor_ex; a singular D raises."""
    ld, piv, info = _factor("torch.linalg.ldl_factor", A, hermitian)
    _raise_info("torch.linalg.ldl_factor", info._data)
    return _LDL_T(ld, piv)


def _raise_info(name, info):
    if np.any(info):
        flat = info.reshape(-1)
        b = int(np.flatnonzero(flat)[0])
        where = f"(Batch element {b}): " if info.ndim else ""
        raise RuntimeError(f"{name}: {where}The factorization could not be completed because "
                           f"the input is singular (D[{flat[b]},{flat[b]}] is zero).")


# -- ldl_solve ----------------------------------------------------------------------------------
def _sytrs(ld, ipiv, b):
    """X with A X = B from one matrix's (LD, ipiv), LAPACK's dsytrs with lower storage."""
    n = ld.shape[-1]
    b = b.copy()

    def swap(i, j):
        if i != j:
            b[[i, j]] = b[[j, i]]

    k = 0
    while k < n:  # L D Y = B
        if ipiv[k] > 0:
            swap(k, ipiv[k] - 1)
            b[k + 1:] -= np.outer(ld[k + 1:, k], b[k])
            b[k] /= ld[k, k]
            k += 1
        else:
            swap(k + 1, -ipiv[k] - 1)
            b[k + 2:] -= np.outer(ld[k + 2:, k], b[k]) + np.outer(ld[k + 2:, k + 1], b[k + 1])
            akm1k = ld[k + 1, k]
            akm1, ak = ld[k, k] / akm1k, ld[k + 1, k + 1] / akm1k
            denom = akm1 * ak - 1.0
            bkm1, bk = b[k] / akm1k, b[k + 1] / akm1k
            b[k], b[k + 1] = (ak * bkm1 - bk) / denom, (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:  # L^T X = Y
        if ipiv[k] > 0:
            b[k] -= ld[k + 1:, k] @ b[k + 1:]
            swap(k, ipiv[k] - 1)
            k -= 1
        else:
            b[k] -= ld[k + 1:, k] @ b[k + 1:]
            b[k - 1] -= ld[k + 1:, k - 1] @ b[k + 1:]
            swap(k, -ipiv[k] - 1)
            k -= 2
    return b


def _ldl_solve_fwd(xp, ld, piv, b):
    batch = np.broadcast_shapes(ld.shape[:-2], b.shape[:-2])
    lds = np.broadcast_to(ld, batch + ld.shape[-2:]).reshape((-1,) + ld.shape[-2:])
    pivs = np.broadcast_to(piv, batch + piv.shape[-1:]).reshape((-1, piv.shape[-1]))
    bs = np.broadcast_to(b, batch + b.shape[-2:]).reshape((-1,) + b.shape[-2:])
    with np.errstate(all="ignore"):
        out = np.stack([_sytrs(m, p, r) for m, p, r in zip(lds, pivs, bs)]) if len(bs) else bs
    return out.reshape(batch + b.shape[-2:])


LDL_SOLVE = defop("linalg_ldl_solve", _ldl_solve_fwd, kind="opaque", dtype_rule="same")


def ldl_solve(LD, pivots, B, *, hermitian=False):
    """X with A X = B from ldl_factor's (LD, pivots); batch dims broadcast. Not
    differentiable (as in torch)."""
    name = "torch.linalg.ldl_solve"
    check_matrix(name, LD, "LD", square=True)
    check_float(name, B, "B")
    if B._data.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    check_same_dtype(name, LD, B)
    if not isinstance(pivots, Tensor) or pivots._data.dtype != np.int32:
        got = _SCALAR_NAMES.get(getattr(getattr(pivots, "_data", None), "dtype",
                                        np.dtype(object)).name, "?")
        raise RuntimeError(f"{name}: Expected pivots to be integers. Got {got}")
    n = LD._data.shape[-1]
    if B._data.shape[-2] != n:
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation AX = B "
                           f"({n}x{n} and {B._data.shape[-2]}x{B._data.shape[-1]})")
    if pivots._data.shape != LD._data.shape[:-1]:
        raise RuntimeError(f"{name}: Expected LD.shape[:-1] and pivots.shape to be the same, "
                           f"but got pivots with shape {tuple(pivots._data.shape)} instead")
    return apply(LDL_SOLVE, (LD, pivots, B))
