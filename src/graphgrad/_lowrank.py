"""``torch.svd_lowrank`` and ``torch.pca_lowrank``: randomized low-rank SVD (Halko, Martinsson
and Tropp, 2009) as torch writes it, on graphgrad's own ``randn``, ``linalg.qr`` and
``linalg.svd``, so it is differentiable and draws from graphgrad's generator."""

from __future__ import annotations

from . import _dtype
from .ops.random import randn

__all__ = ["svd_lowrank", "pca_lowrank"]


def _floating_dtype(A):
    return A.dtype if A.is_floating_point() else _dtype.float32


def get_approximate_basis(A, q, niter=2, M=None):
    """An orthonormal (m, q) basis ``Q`` with ``A ~= Q Q^H A`` after ``niter`` subspace
    iterations (``M`` is subtracted from ``A`` without forming ``A - M``)."""
    from .linalg import qr

    niter = 2 if niter is None else niter
    R = randn(A.shape[-1], q, dtype=_floating_dtype(A))
    X = A @ R
    if M is not None:
        X = X - M @ R
    Q = qr(X).Q
    for _ in range(niter):
        X = A.mH @ Q
        if M is not None:
            X = X - M.mH @ Q
        Q = qr(X).Q
        X = A @ Q
        if M is not None:
            X = X - M @ Q
        Q = qr(X).Q
    return Q


def svd_lowrank(A, q=6, niter=2, M=None):
    """``(U, S, V)`` with ``A - M ~= U diag(S) V^H`` of rank ``q``.

    >>> import graphgrad as torch
    >>> A = torch.randn(20, 3) @ torch.randn(3, 10)
    >>> U, S, V = torch.svd_lowrank(A, q=3)
    >>> bool(((U @ torch.diag(S) @ V.mT) - A).abs().max() < 1e-3)
    True
    """
    from .linalg import svd

    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.size())
    if m < n:
        A = A.mH
        if M is not None:
            M = M.mH
    Q = get_approximate_basis(A, q, niter=niter, M=M)
    B = Q.mH @ A
    if M is not None:
        B = B - Q.mH @ M
    U, S, Vh = svd(B, full_matrices=False)
    V = Vh.mH
    U = Q @ U
    if m < n:
        U, V = V, U
    return U, S, V


def pca_lowrank(A, q=None, center=True, niter=2):
    """``(U, S, V)``: the principal components of the rows of ``A`` (centred by default), as a
    rank-``q`` SVD; ``q`` defaults to ``min(6, m, n)``."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter=niter, M=None)
    C = A.mean(dim=(-2,), keepdim=True)
    return svd_lowrank(A - C, q, niter=niter, M=None)
