"""Householder reflectors: geqrf (LAPACK's packed QR), householder_product (orgqr) and ormqr.

geqrf is NumPy's ``qr(mode='raw')`` (LAPACK's geqrf; its ``h`` is the transpose of LAPACK's
array). householder_product and ormqr apply H_i = I - tau_i v_i v_i^T one reflector at a time
with differentiable ops, so their gradients are those of the products (torch's are too).
"""

from __future__ import annotations

import numpy as np

from .._tensor import wrap
from ._dispatch import apply
from ._opdef import defop
from .linalg_solve import check_float, check_matrix, check_same_dtype, return_type

__all__ = ["geqrf", "householder_product", "orgqr", "ormqr"]


def _geqrf_fwd(xp, a):
    m, n = a.shape[-2:]
    if a.size == 0:
        return a.copy(), np.zeros(a.shape[:-2] + (min(m, n),), a.dtype)
    h, tau = np.linalg.qr(a, mode="raw")
    return np.ascontiguousarray(np.swapaxes(h, -1, -2)).astype(a.dtype), tau.astype(a.dtype)


# NOTE: torch records a GeqrfBackward0 whose backward raises "not implemented"; here geqrf has no
# rule, so its outputs do not require grad and backward through them raises earlier instead.
GEQRF = defop("geqrf", _geqrf_fwd, kind="opaque", save=("aux",), dtype_rule="same")
_GEQRF_T = return_type("geqrf", ["a", "tau"])


def geqrf(input):
    """(a, tau): R above the diagonal of ``a``, the reflectors' vectors below it, as LAPACK."""
    check_matrix("geqrf", input, "input")
    a, tau = apply(GEQRF, (input,))
    return _GEQRF_T(a, wrap(tau, False, None))


def _reflectors(A):
    """V: column i is v_i (zeros above i, 1 at i, A's column below)."""
    from .structure import tril

    m, n = A._data.shape[-2:]
    return tril(A, -1) + wrap(np.eye(m, n, dtype=A._data.dtype), False, None)


def _apply(V, tau, C, k, left, reverse):
    """C with H_i applied for i in 0..k-1 (``reverse``: k-1..0), from the left or the right."""
    for i in (range(k - 1, -1, -1) if reverse else range(k)):
        v = V[..., :, i:i + 1]
        t = tau[..., i:i + 1].unsqueeze(-1)
        if left:
            C = C - v @ ((v.mT @ C) * t)
        else:
            C = C - ((C @ v) * t) @ v.mT
    return C


def householder_product(A, tau):
    """The first n columns of H_1 ... H_k, from the reflectors below the diagonal of ``A``
    (..., m, n) and their scales ``tau`` (..., k)."""
    name = "torch.linalg.householder_product"
    check_matrix(name, A, "input")
    check_float(name, tau, "tau")
    check_same_dtype(name, A, tau)
    m, n = A._data.shape[-2:]
    k = tau._data.shape[-1] if tau._data.ndim else 0
    if m < n:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if n < k:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    if tau._data.ndim != A._data.ndim - 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but "
                           f"got tau.ndim equal to {tau._data.ndim} and input.ndim is equal to "
                           f"{A._data.ndim}")
    if tau._data.shape[:-1] != A._data.shape[:-2]:
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {tuple(tau._data.shape[:-1])}")
    eye = wrap(np.broadcast_to(np.eye(m, n, dtype=A._data.dtype), A._data.shape[:-2] + (m, n))
               .copy(), False, None)
    return _apply(_reflectors(A), tau, eye, k, True, True)


def orgqr(input, tau):
    """torch.orgqr: linalg.householder_product."""
    return householder_product(input, tau)


def ormqr(input, tau, other, left=True, transpose=False):
    """op(Q) @ other (``left``) or other @ op(Q), Q = H_1 ... H_k the full square product of
    geqrf's reflectors, op transposing with ``transpose``."""
    name = "torch.ormqr"
    check_matrix(name, input, "input")
    check_float(name, other, "other")
    check_same_dtype(name, input, other)
    check_same_dtype(name, input, tau)
    sc = other._data.shape
    if other._data.ndim < 2:
        raise RuntimeError(f"{name}: other must have at least 2 dimensions.")
    mn = sc[-2] if left else sc[-1]
    k = tau._data.shape[-1]
    if input._data.shape[-2] != mn:
        which = "other.shape[-2]" if left else "other.shape[-1]"
        raise RuntimeError(f"{name}: input.shape[-2] must be equal to {which}")
    if k > mn:
        raise RuntimeError(f"{name}: tau.shape[-1] must be less than or equal to "
                           f"{'other.shape[-2]' if left else 'other.shape[-1]'}")
    if input._data.shape[-1] < k:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    V = _reflectors(input)
    # Q C applies H_k first; Q^T C = H_k ... H_1 C applies H_1 first; the right side mirrors it
    return _apply(V, tau, other, k, left, reverse=(left != bool(transpose)))

