"""Matrix factorizations: cholesky, qr, svd and eigh (and svdvals, eigvalsh, cholesky_ex).

qr, svd and eigh have several differentiable outputs: one node each (``apply_multi``), whose
rule gets every output's gradient at once. The rules are torch's (derivatives.yaml): the SVD
and eigh ones divide by differences of (squared) singular values / eigenvalues (the F-matrix),
so they are exact only where those are distinct, as torch documents.
"""

from __future__ import annotations

import numpy as np

from .._tensor import wrap
from . import _dispatch
from ._dispatch import apply
from ._opdef import defop
from .linalg_solve import (
    LinAlgError,
    apply_multi,
    check_matrix,
    col,
    diag_embed,
    eye_like,
    ns_solve_tri,
    return_type,
    row,
    saved_outputs,
    slot_grads,
    tri_mask,
)

__all__ = ["cholesky", "cholesky_ex", "qr", "svd", "svdvals", "eigh", "eigvalsh"]


def _skew(ns, x):
    return x - ns.mT(x)


# -- cholesky -----------------------------------------------------------------------------------
def _not_pd(name, a):
    """torch's error, naming the first leading minor that is not positive-definite."""
    flat = a.reshape((-1,) + a.shape[-2:])
    for b, m in enumerate(flat):
        for k in range(1, m.shape[-1] + 1):
            try:
                np.linalg.cholesky(m[:k, :k])
            except np.linalg.LinAlgError:
                where = f"(Batch element {b}): " if a.ndim > 2 else ""
                return LinAlgError(f"{name}: {where}The factorization could not be completed "
                                   f"because the input is not positive-definite (the leading "
                                   f"minor of order {k} is not positive-definite).")
    return LinAlgError(f"{name}: The factorization could not be completed because the input is "
                       "not positive-definite.")


def _cholesky_fwd(xp, a, upper):
    try:
        if upper:  # the upper triangle of A is the lower one of A^T
            return xp.swapaxes(xp.linalg.cholesky(xp.swapaxes(a, -1, -2)), -1, -2)
        return xp.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        raise _not_pd("linalg.cholesky", a) from None


def _cholesky_vjp(ns, g, out, upper):
    """gA = L^{-H} Phi(L^H gL) L^{-1}, Phi taking the lower triangle with a halved diagonal,
    made symmetric."""
    L = ns.mT(out) if upper else out
    gL = ns.mT(g) if upper else g
    ga = tri_mask(ns, ns.matmul(ns.mT(L), gL), False)
    ga = 0.5 * (ga + ns.mT(tri_mask(ns, ga, False, -1)))
    ga = ns_solve_tri(ns, ns.mT(L), ga, True, True)
    return ns_solve_tri(ns, L, ga, False, False)


CHOLESKY = defop("linalg_cholesky_ex", _cholesky_fwd, _cholesky_vjp, kind="opaque",
                 save=("out",), dtype_rule="same", node="LinalgCholeskyExBackward0")


def cholesky(A, *, upper=False):
    """L (lower, L L^T = A) or, with ``upper``, U = L^T; only that triangle of A is read."""
    check_matrix("linalg.cholesky", A, square=True)
    return apply(CHOLESKY, (A,), {"upper": bool(upper)})


_CHOLESKY_EX_T = return_type("linalg_cholesky_ex", ["L", "info"])


def cholesky_ex(A, *, upper=False, check_errors=False):
    """(L, info): info > 0 is the order of the first leading minor that is not positive-definite
    (L is then not a factor), instead of an error."""
    check_matrix("linalg.cholesky_ex", A, square=True)
    a = A._data
    try:
        return _CHOLESKY_EX_T(cholesky(A, upper=upper),
                              wrap(np.zeros(a.shape[:-2], np.int32), False, None))
    except LinAlgError:
        if check_errors:
            raise
    flat = a.reshape((-1,) + a.shape[-2:])
    info = np.zeros(len(flat), np.int32)
    out = np.zeros_like(flat)
    for b, m in enumerate(flat):
        t = m.T if upper else m
        for k in range(m.shape[-1], 0, -1):
            try:
                low = np.linalg.cholesky(t[:k, :k])
            except np.linalg.LinAlgError:
                info[b] = k
                continue
            out[b, :k, :k] = low.T if upper else low
            break
    return _CHOLESKY_EX_T(wrap(out.reshape(a.shape), False, None),
                          wrap(info.reshape(a.shape[:-2]), False, None))


# -- qr -----------------------------------------------------------------------------------------
def _qr_fwd(xp, a, mode):
    if mode == "r":
        return xp.zeros((0,), a.dtype), xp.linalg.qr(a, mode="r")
    return tuple(xp.linalg.qr(a, mode=mode))


def _copyltu(ns, m):
    return tri_mask(ns, m, False) + ns.mT(tri_mask(ns, m, False, -1))


def _qr_square_grad(ns, gq, gr, q, r):
    """m >= n: gA = (gQ + Q copyltu(M)) R^{-T}, M = R gR^T - gQ^T Q."""
    mm = ns.matmul
    m = mm(r, ns.mT(gr)) - mm(ns.mT(gq), q)
    b = gq + mm(q, _copyltu(ns, m))
    return ns.mT(ns_solve_tri(ns, r, ns.mT(b), True, True))


def _qr_vjp(ns, g, aux, mode):
    gq, gr = slot_grads(g, 2)
    q, r = saved_outputs(ns, aux)
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when "
                           "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to "
                           "differentiate through linalg.qr.")
    m, n = ns.raw(q).shape[-2], ns.raw(r).shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                           "nrows > ncols.")
    gq = ns.zeros_like(q) if gq is None else gq
    gr = ns.zeros_like(r) if gr is None else gr
    if m >= n:
        return _qr_square_grad(ns, gq, gr, q, r)
    # A = Q [R1 | R2] with [X | Y] = A: X = Q R1 is square, R2 = Q^T Y.
    r1 = ns.getitem(r, (Ellipsis, slice(None), slice(0, m)))
    gr1 = ns.getitem(gr, (Ellipsis, slice(None), slice(0, m)))
    gr2 = ns.getitem(gr, (Ellipsis, slice(None), slice(m, None)))
    y = ns.matmul(q, ns.getitem(r, (Ellipsis, slice(None), slice(m, None))))
    gx = _qr_square_grad(ns, gq + ns.matmul(y, ns.mT(gr2)), gr1, q, r1)
    return ns.cat([gx, ns.matmul(q, gr2)], -1)


QR = defop("linalg_qr", _qr_fwd, _qr_vjp, kind="opaque", save=("aux",), dtype_rule="same",
           node="LinalgQrBackward0")
_QR_T = return_type("linalg_qr", ["Q", "R"])


def qr(A, mode="reduced"):
    """(Q, R) with A = Q R; ``mode`` 'reduced', 'complete', or 'r' (Q is then empty)."""
    check_matrix("linalg.qr", A)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    return _QR_T(*apply_multi(QR, (A,), {"mode": mode}))


# -- svd ----------------------------------------------------------------------------------------
def _svd_fwd(xp, a, full_matrices):
    return tuple(xp.linalg.svd(a, full_matrices=full_matrices))


def _svd_grad(ns, gu, gs, gvh, u, s, vh):
    """torch's svd_backward for real inputs (A = U diag(S) Vh, reduced factors)."""
    mm, t = ns.matmul, ns.mT
    m, n = ns.raw(u).shape[-2], ns.raw(vh).shape[-1]
    if gu is None and gvh is None:
        return mm(u * row(ns, gs), vh)
    k = ns.raw(s).shape[-1]
    s_r, s_c = row(ns, s), col(ns, s)
    e = s_r * s_r - s_c * s_c + eye_like(ns, k, s)  # E_ij = s_j^2 - s_i^2, 1 on the diagonal
    gv = None if gvh is None else t(gvh)
    if gu is not None and gv is not None:
        ga = _skew(ns, mm(t(u), gu)) * s_r + s_c * _skew(ns, mm(vh, gv))
    elif gu is not None:
        ga = _skew(ns, mm(t(u), gu)) * s_r
    else:
        ga = s_c * _skew(ns, mm(vh, gv))
    ga = ga / e
    if gs is not None:
        ga = ga + diag_embed(ns, gs)
    if m > n and gu is not None:
        gus = gu / s_r
        ga = mm(mm(u, ga) + gus - mm(u, mm(t(u), gus)), vh)
    elif n > m and gv is not None:
        gvs = t(gv / s_r)
        ga = mm(u, mm(ga, vh) + gvs - mm(mm(gvs, t(vh)), vh))
    else:
        ga = mm(u, mm(ga, vh))
    return ga


def _svd_vjp(ns, g, aux, full_matrices):
    gu, gs, gvh = slot_grads(g, 3)
    u, s, vh = saved_outputs(ns, aux)
    if full_matrices:  # the extra columns of U (rows of Vh) are arbitrary: only k count
        k = ns.raw(s).shape[-1]
        cols, rows = (Ellipsis, slice(None), slice(0, k)), (Ellipsis, slice(0, k), slice(None))
        u, vh = ns.getitem(u, cols), ns.getitem(vh, rows)
        gu = None if gu is None else ns.getitem(gu, cols)
        gvh = None if gvh is None else ns.getitem(gvh, rows)
    return _svd_grad(ns, gu, gs, gvh, u, s, vh)


SVD = defop("linalg_svd", _svd_fwd, _svd_vjp, kind="opaque", save=("aux",), dtype_rule="same",
            node="LinalgSvdBackward0")
_SVD_T = return_type("linalg_svd", ["U", "S", "Vh"])
_SVD_OLD = return_type("svd", ["U", "S", "V"])


def svd(A, full_matrices=True, *, driver=None):
    """(U, S, Vh) with A = U diag(S) Vh, S descending; ``driver`` is ignored (CUDA only)."""
    check_matrix("linalg.svd", A)
    return _SVD_T(*apply_multi(SVD, (A,), {"full_matrices": bool(full_matrices)}))


def svdvals(A, *, driver=None):
    """The singular values, descending; differentiable through the reduced SVD."""
    check_matrix("linalg.svdvals", A)
    if A.requires_grad or _dispatch._fwd is not None:  # forward AD needs the op's rule
        return apply_multi(SVD, (A,), {"full_matrices": False})[1]
    return wrap(np.linalg.svd(A._data, compute_uv=False), False, None)


def svd_legacy(input, some=True, compute_uv=True):
    """torch.svd: (U, S, V) with V (not Vh); ``some=False`` gives full U and V."""
    check_matrix("svd", input)
    if not compute_uv:
        s = svdvals(input)
        m, n = input._data.shape[-2:]
        u = np.zeros(input._data.shape[:-2] + (m, m if not some else min(m, n)), input._data.dtype)
        v = np.zeros(input._data.shape[:-2] + (n, n if not some else min(m, n)), input._data.dtype)
        return _SVD_OLD(wrap(u, False, None), s, wrap(v, False, None))
    u, s, vh = svd(input, full_matrices=not some)
    return _SVD_OLD(u, s, vh.transpose(-2, -1))


# -- eigh ---------------------------------------------------------------------------------------
def _eigh_fwd(xp, a, uplo):
    return tuple(xp.linalg.eigh(a, UPLO=uplo))


def _eigh_vjp(ns, g, aux, uplo):
    """gA = V (skew(V^T gV) / E + diag(gL)) V^T with E_ij = L_j - L_i (torch's rule)."""
    gl, gv = slot_grads(g, 2)
    w, v = saved_outputs(ns, aux)
    mm, t = ns.matmul, ns.mT
    if gv is None:
        return mm(v * row(ns, gl), t(v))
    n = ns.raw(w).shape[-1]
    vgv = mm(t(v), gv)
    inner = 0.5 * _skew(ns, vgv) / (row(ns, w) - col(ns, w) + eye_like(ns, n, w))
    if gl is not None:
        inner = inner + diag_embed(ns, gl)
    return mm(v, mm(inner, t(v)))


EIGH = defop("linalg_eigh", _eigh_fwd, _eigh_vjp, kind="opaque", save=("aux",),
             dtype_rule="same", node="LinalgEighBackward0")
_EIGH_T = return_type("linalg_eigh", ["eigenvalues", "eigenvectors"])


def _uplo(uplo):
    if uplo not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {uplo}")
    return uplo.upper()


def eigh(A, UPLO="L"):
    """(eigenvalues ascending, eigenvectors) of symmetric matrices; reads the ``UPLO`` triangle."""
    check_matrix("linalg.eigh", A, square=True)
    return _EIGH_T(*apply_multi(EIGH, (A,), {"uplo": _uplo(UPLO)}))


def eigvalsh(A, UPLO="L"):
    """The eigenvalues of symmetric matrices, ascending."""
    check_matrix("linalg.eigvalsh", A, square=True)
    uplo = _uplo(UPLO)
    if A.requires_grad or _dispatch._fwd is not None:  # forward AD needs the op's rule
        return apply_multi(EIGH, (A,), {"uplo": uplo})[0]
    return wrap(np.linalg.eigvalsh(A._data, UPLO=uplo), False, None)
