"""Linear systems: det, slogdet, inv, solve, solve_triangular and pinv, with torch's checks.

Also the pieces the other linalg families share: ``LinAlgError``, argument checks, named
result tuples, ``apply_multi`` (ops with several differentiable outputs) and the ``_ns_*``
helpers that let a rule call a linear solver in either rules namespace (Note [Rules namespace]).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from .._tensor import Tensor, version_cell, wrap
from ..autograd.function import _output_edge
from ..autograd.grad_mode import state as _mode
from . import _dispatch
from ._dispatch import _new_node, apply
from ._opdef import defop

__all__ = ["LinAlgError", "det", "slogdet", "inv", "solve", "solve_triangular", "pinv",
           "inv_ex", "logdet"]

_SCALAR_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                 "uint8": "Byte", "bool": "Bool", "float16": "Half", "float32": "Float",
                 "float64": "Double"}


class LinAlgError(RuntimeError):
    """A matrix that the requested operation cannot handle (singular, not positive-definite),
    as ``torch.linalg.LinAlgError``; a RuntimeError, so ``except RuntimeError`` catches it."""

    __module__ = "torch.linalg"


def return_type(name, fields):
    """A named tuple printed as torch.return_types.<name>."""
    base = namedtuple(name, fields)

    def __repr__(self):
        body = ",\n".join(f"{f}={getattr(self, f)!r}" for f in fields)
        return f"torch.return_types.{name}(\n{body})"

    return type(name, (base,), {"__slots__": (), "__repr__": __repr__,
                                "__module__": "torch.return_types"})


# -- argument checks ----------------------------------------------------------------------------
def check_float(name, x, arg="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' must be Tensor, not {type(x).__name__}")
    if x._data.dtype.kind != "f":
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {_SCALAR_NAMES.get(x._data.dtype.name, x._data.dtype.name)}")


def check_matrix(name, x, arg="A", square=False):
    check_float(name, x)
    shape = x._data.shape
    if len(shape) < 2:
        raise RuntimeError(f"{name}: The input tensor {arg} must have at least 2 dimensions.")
    if square and shape[-1] != shape[-2]:
        raise RuntimeError(f"{name}: {arg} must be batches of square matrices, but they are "
                           f"{shape[-2]} by {shape[-1]} matrices")


def check_same_dtype(name, a, b):
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"{name}: Expected A and B to have the same dtype, but found A of type "
                           f"{_SCALAR_NAMES[a._data.dtype.name]} and B of type "
                           f"{_SCALAR_NAMES[b._data.dtype.name]} instead")


def lu_info(a):
    """LAPACK's ``info`` of an LU factorization with partial pivoting, per matrix: the 1-based
    index of the first zero pivot, 0 when the matrix is invertible."""
    u = np.array(a, dtype=np.float64).reshape((-1,) + a.shape[-2:])
    n = u.shape[-1]
    info = np.zeros(u.shape[0], np.int32)
    rows = np.arange(u.shape[0])
    for k in range(n):
        p = k + np.argmax(np.abs(u[:, k:, k]), axis=1)
        u[rows, k], u[rows, p] = u[rows, p].copy(), u[rows, k].copy()
        piv = u[:, k, k]
        zero = piv == 0
        info[(info == 0) & zero] = k + 1
        safe = np.where(zero, 1.0, piv)
        u[:, k + 1:] -= (u[:, k + 1:, k] / safe[:, None])[:, :, None] * u[:, k:k + 1, :]
    return info.reshape(a.shape[:-2])


def _singular(name, a, what):
    info = lu_info(a)
    k = int(info.flat[np.flatnonzero(info)[0]]) if np.any(info) else 1
    if what == "inv":
        return LinAlgError(f"{name}: The diagonal element {k} is zero, the inversion could not be "
                           "completed because the input matrix is singular.")
    return LinAlgError(f"{name}: The solver failed because the input matrix is singular.")


# -- several differentiable outputs -------------------------------------------------------------
def apply_multi(op, inputs, params):
    """Applies an op whose forward returns a tuple of arrays; returns a tuple of tensors.

    One node holds the rule; each float output hangs from it through an OutputEdge (as a custom
    Function's outputs do), so the rule gets a Slots of per-output gradients, None where an
    output got none. The op saves ``"aux"``: the output arrays and their edges, so a
    create_graph backward sees the outputs with their history (``saved_outputs``).
    """
    if _dispatch._fwd is not None and not _dispatch._fwd.busy:  # forward AD's tangents
        return _dispatch._fwd.run_multi(apply_multi, op, inputs, params)
    outs = tuple(np.asarray(o) for o in op.forward(np, *(x._data for x in inputs), **params))
    if _dispatch._tracer is not None:  # graphgrad.compile: one instr with several outputs
        _dispatch._tracer.record_multi(op, inputs, params, outs)
    if not (_mode.grad_enabled and not _mode.inference and any(x._rg for x in inputs)):
        return tuple(wrap(o, False, None) for o in outs)
    edges = tuple(x._fn if x._fn is not None else (x._accumulator() if x._rg else None)
                  for x in inputs)
    node = _new_node(op, edges, tuple((x._data.shape, x._data.dtype) for x in inputs), params)
    results, out_edges, versions = [], [], []
    for i, o in enumerate(outs):
        if o.dtype.kind != "f":
            results.append(wrap(o, False, None))
            out_edges.append(None)
            continue
        e = _output_edge(node, i, len(outs))
        t = wrap(o, True, e)
        cell = t._vc = [0]
        versions.append((cell, 0))
        results.append(t)
        out_edges.append(e)
    saved = []
    for s in op.save:
        if s == "aux":
            saved.append((outs, tuple(out_edges)))
        else:
            cell = version_cell(inputs[s])
            versions.insert(0, (cell, cell[0]))
            saved.append(inputs[s])
    node._saved = tuple(saved)
    node._versions = tuple(versions)
    return tuple(results)


def saved_outputs(ns, aux):
    """The outputs an ``apply_multi`` op saved: arrays, or tensors with their history."""
    outs, edges = aux
    if not ns.differentiable:
        return outs
    return tuple(wrap(o, e is not None, e) for o, e in zip(outs, edges))


def slot_grads(g, n):
    """The per-output gradients a multi-output rule receives (None for outputs without)."""
    return tuple(g.grads) if hasattr(g, "grads") else (g,) + (None,) * (n - 1)


# -- helpers for rules, in either namespace -----------------------------------------------------
def eye_like(ns, n, x):
    return ns.const(np.eye(n, dtype=ns.raw(x).dtype))


def diag_embed(ns, v):
    n = ns.raw(v).shape[-1]
    return ns.reshape(v, ns.raw(v).shape[:-1] + (1, n)) * eye_like(ns, n, v)


def row(ns, v):
    """(..., k) as (..., 1, k)."""
    s = ns.raw(v).shape
    return ns.reshape(v, s[:-1] + (1, s[-1]))


def col(ns, v):
    """(..., k) as (..., k, 1)."""
    return ns.reshape(v, ns.raw(v).shape + (1,))


def tri_mask(ns, x, upper, k=0):
    """``x`` times the mask of its upper (triu(k)) or lower (tril(k)) triangle."""
    m, n = ns.raw(x).shape[-2:]
    mask = np.triu(np.ones((m, n)), k) if upper else np.tril(np.ones((m, n)), k)
    return x * ns.const(mask.astype(ns.raw(x).dtype))


def ns_solve(ns, a, b):
    return solve(a, b) if ns.differentiable else np.linalg.solve(a, b)


def ns_solve_tri(ns, a, b, upper, left=True, unit=False):
    if ns.differentiable:
        return solve_triangular(a, b, upper=upper, left=left, unitriangular=unit)
    return _tri_solve_fwd(np, a, b, upper, left, unit)


# -- det, slogdet -------------------------------------------------------------------------------
def _det_fwd(xp, a):
    return xp.linalg.det(a)


def _det_vjp(ns, g, a, out):
    """g * det(A) * A^{-T}; singular matrices use the cofactors from an SVD (as torch)."""
    if np.any(ns.raw(out) == 0):
        return _det_singular_grad(ns, g, a)
    gd = ns.reshape(g * out, ns.raw(out).shape + (1, 1))
    return ns.mT(inv(a) if ns.differentiable else np.linalg.inv(a)) * gd


def _det_singular_grad(ns, g, a):
    """The cofactor matrix U diag(prod_{j != i} s_j) Vh det(U Vh): no division by s."""
    from .linalg_decomp import svd

    u, s, vh = svd(a) if ns.differentiable else np.linalg.svd(a)
    k = ns.raw(s).shape[-1]
    grid = row(ns, s) + ns.const(np.zeros((k, k), ns.raw(s).dtype))
    others = ns.prod(ns.where(ns.const(np.eye(k, dtype=bool)), 1.0, grid), (-1,))
    sign = ns.const(np.linalg.det(ns.raw(u)) * np.linalg.det(ns.raw(vh)))
    scale = ns.reshape(g * sign, ns.raw(sign).shape + (1, 1))
    return ns.matmul(u * row(ns, others), vh) * scale


DET = defop("linalg_det", _det_fwd, _det_vjp, kind="opaque", save=(0, "out"), dtype_rule="same",
            node="LinalgDetBackward0")


def det(A):
    """Determinant of each matrix of ``A`` (..., n, n)."""
    check_matrix("linalg.det", A, square=True)
    return apply(DET, (A,))


def _slogdet_fwd(xp, a):
    return xp.linalg.slogdet(a)


def _slogdet_vjp(ns, g, a):
    _, glog = slot_grads(g, 2)
    if glog is None:
        return None
    gl = ns.reshape(glog, ns.raw(glog).shape + (1, 1))
    return ns.mT(inv(a) if ns.differentiable else np.linalg.inv(a)) * gl


SLOGDET = defop("linalg_slogdet", _slogdet_fwd, _slogdet_vjp, kind="opaque", save=(0,),
                dtype_rule="same", node="LinalgSlogdetBackward0")
_SLOGDET_T = return_type("linalg_slogdet", ["sign", "logabsdet"])
_SLOGDET_OLD = return_type("slogdet", ["sign", "logabsdet"])


def slogdet(A):
    """(sign, log|det|) of each matrix; the sign gets no gradient for real inputs, as in torch."""
    check_matrix("linalg.slogdet", A, square=True)
    return _SLOGDET_T(*apply_multi(SLOGDET, (A,), {}))


def logdet(input):
    """log(det(A)): NaN where the determinant is negative, -inf where it is zero."""
    from .elementwise import where

    check_matrix("logdet", input, square=True)
    sign, logabs = apply_multi(SLOGDET, (input,), {})
    return where(sign == -1, float("nan"), logabs)


# -- inverse ------------------------------------------------------------------------------------
def _inv_fwd(xp, a):
    try:
        return xp.linalg.inv(a)
    except np.linalg.LinAlgError:
        raise _singular("linalg.inv", a, "inv") from None


def _inv_vjp(ns, g, out):
    it = ns.mT(out)
    return -ns.matmul(it, ns.matmul(g, it))


INV = defop("linalg_inv_ex", _inv_fwd, _inv_vjp, kind="opaque", save=("out",), dtype_rule="same",
            node="LinalgInvExBackward0")


def inv(A):
    """Inverse of each matrix; a singular one raises LinAlgError."""
    check_matrix("linalg.inv", A, square=True)
    return apply(INV, (A,))


_INV_EX_T = return_type("linalg_inv_ex", ["inverse", "info"])


def inv_ex(A, *, check_errors=False):
    """(inverse, info): info is LAPACK's (0 when invertible) instead of an error."""
    check_matrix("linalg.inv_ex", A, square=True)
    info = lu_info(A._data)
    if check_errors and np.any(info):
        raise _singular("linalg.inv_ex", A._data, "inv")
    if np.any(info):
        with np.errstate(all="ignore"):
            out = np.full(A._data.shape, np.nan, A._data.dtype)
            ok = info == 0
            out[ok] = np.linalg.inv(A._data[ok])
        return _INV_EX_T(wrap(out, False, None), wrap(info, False, None))
    return _INV_EX_T(apply(INV, (A,)), wrap(info, False, None))


# -- solve --------------------------------------------------------------------------------------
def _solve_fwd(xp, a, b, vector):
    try:
        if vector:
            return xp.linalg.solve(a, b[..., None])[..., 0]
        return xp.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        raise _singular("torch.linalg.solve", a, "solve") from None


def _solve_vjp(ns, g, a, out, vector, needs):
    if vector:
        g, out = col(ns, g), col(ns, out)
    gb = ns_solve(ns, ns.mT(a), g)
    ga = -ns.matmul(gb, ns.mT(out)) if needs[0] else None
    if vector:
        gb = ns.reshape(gb, ns.raw(gb).shape[:-1])
    return ga, (gb if needs[1] else None)


SOLVE = defop("linalg_solve", _solve_fwd, _solve_vjp, kind="opaque", save=(0, "out"),
              dtype_rule="same", node="LinalgSolveExBackward0", needs_mask=True)


def solve(A, B, *, left=True):
    """X with A X = B (``left=False``: X A = B); B may be a (batch of) vector(s)."""
    check_matrix("linalg.solve", A, square=True)
    check_float("linalg.solve", B, "B")
    check_same_dtype("linalg.solve", A, B)
    sa, sb = A._data.shape, B._data.shape
    vector = B._data.ndim == 1 or (B._data.ndim == A._data.ndim - 1 and sb == sa[:-1])
    if not left:
        if vector:
            raise RuntimeError("linalg.solve: Vector broadcasting of the left hand side is not "
                               "supported for left=False. In this case linalg.solve is "
                               "equivalent to B / A.squeeze(-1)")
        return solve(A.transpose(-2, -1), B.transpose(-2, -1)).transpose(-2, -1)
    n = sa[-1]
    rows = sb[-1] if vector else (sb[-2] if B._data.ndim >= 2 else None)
    if rows != n:
        shown = f"{sb[-1]}x1" if vector or B._data.ndim < 2 else f"{sb[-2]}x{sb[-1]}"
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({n}x{n} and {shown})")
    return apply(SOLVE, (A, B), {"vector": vector})


# -- solve_triangular ---------------------------------------------------------------------------
def _tri_solve_fwd(xp, a, b, upper, left, unit):
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return xp.swapaxes(_tri_solve_fwd(xp, xp.swapaxes(a, -1, -2), xp.swapaxes(b, -1, -2),
                                          not upper, True, unit), -1, -2)
    t = xp.triu(a) if upper else xp.tril(a)
    if unit:
        n = a.shape[-1]
        t = t * (1 - xp.eye(n, dtype=a.dtype)) + xp.eye(n, dtype=a.dtype)
    shape = xp.broadcast_shapes(t.shape[:-2], b.shape[:-2])
    t = xp.broadcast_to(t, shape + t.shape[-2:])
    b = xp.broadcast_to(b, shape + b.shape[-2:])
    try:
        return xp.linalg.solve(t, b)
    except np.linalg.LinAlgError:
        return _substitute(xp, t, b, upper)


def _substitute(xp, t, b, upper):
    """Back/forward substitution (a zero on the diagonal gives inf/NaN, as LAPACK's trtrs)."""
    n = t.shape[-1]
    x = xp.zeros(b.shape, dtype=np.result_type(t, b))
    with np.errstate(all="ignore"):
        for i in (range(n - 1, -1, -1) if upper else range(n)):
            acc = xp.einsum("...j,...jk->...k", t[..., i, :], x)
            x[..., i, :] = (b[..., i, :] - acc) / t[..., i, i:i + 1]
    return x


def _tri_solve_vjp(ns, g, a, out, upper, left, unit, needs):
    gb = ns_solve_tri(ns, ns.mT(a), g, not upper, left, unit)
    ga = None
    if needs[0]:
        ga = -ns.matmul(gb, ns.mT(out)) if left else -ns.matmul(ns.mT(out), gb)
        ga = tri_mask(ns, ga, upper, (1 if upper else -1) if unit else 0)
    return ga, (gb if needs[1] else None)


SOLVE_TRIANGULAR = defop("linalg_solve_triangular", _tri_solve_fwd, _tri_solve_vjp,
                         kind="opaque", save=(0, "out"), dtype_rule="same",
                         node="LinalgSolveTriangularBackward0", needs_mask=True)


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """X with A X = B (or X A = B) for triangular A: only its ``upper``/lower triangle is read."""
    check_matrix("linalg.solve_triangular", A, square=True)
    check_float("linalg.solve_triangular", B, "B")
    if B._data.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 "
                           "dimensions.")
    check_same_dtype("linalg.solve_triangular", A, B)
    n, sb = A._data.shape[-1], B._data.shape
    if (sb[-2] if left else sb[-1]) != n:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the "
                           f"equation {'AX = B' if left else 'XA = B'} ({n}x{n} and "
                           f"{sb[-2]}x{sb[-1]})")
    return apply(SOLVE_TRIANGULAR, (A, B), {"upper": bool(upper), "left": bool(left),
                                            "unit": bool(unitriangular)})


# -- pseudo-inverse -----------------------------------------------------------------------------
def _tolerance(s_max, dtype, shape, atol, rtol):
    """max(atol, rtol * s_max), with torch's default rtol (eps * max(m, n)) when both are None."""
    if atol is None and rtol is None:
        rtol = np.finfo(dtype).eps * max(shape[-2:])
    atol = 0.0 if atol is None else np.asarray(atol, dtype)
    rtol = 0.0 if rtol is None else np.asarray(rtol, dtype)
    return np.maximum(atol, rtol * s_max)


def _pinv_fwd(xp, a, atol, rtol, hermitian):
    if a.size == 0:
        return xp.zeros(a.shape[:-2] + (a.shape[-1], a.shape[-2]), a.dtype)
    if hermitian:
        w, v = xp.linalg.eigh(a)
        aw = xp.abs(w)
        keep = aw > _tolerance(aw.max(-1, keepdims=True), a.dtype, a.shape, atol, rtol)
        winv = xp.where(keep, 1 / xp.where(keep, w, 1), 0)
        return (v * winv[..., None, :]) @ xp.swapaxes(v, -1, -2)
    u, s, vh = xp.linalg.svd(a, full_matrices=False)
    tol = _tolerance(s[..., :1], a.dtype, a.shape, atol, rtol)
    keep = s > tol
    sinv = xp.where(keep, 1 / xp.where(keep, s, 1), 0).astype(a.dtype)
    return (xp.swapaxes(vh, -1, -2) * sinv[..., None, :]) @ xp.swapaxes(u, -1, -2)


def _pinv_vjp(ns, g, a, out, atol, rtol, hermitian):
    """torch's pinv_backward, arranged so the products have the smallest inner dims."""
    m, n = ns.raw(a).shape[-2:]
    mm, t = ns.matmul, ns.mT
    ph, gh = t(out), t(g)
    if m <= n:
        k = mm(gh, out)
        kph = mm(k, ph)
        return (-t(mm(out, k)) + kph - mm(mm(a, out), kph)
                + mm(mm(ph, out), gh - mm(k, a)))
    k = mm(out, gh)
    phk = mm(ph, k)
    return -t(mm(k, out)) + mm(mm(gh - mm(a, k), out), ph) + phk - mm(mm(phk, out), a)


PINV = defop("linalg_pinv", _pinv_fwd, _pinv_vjp, kind="opaque", save=(0, "out"),
             dtype_rule="same", node="LinalgPinvBackward0")


def _tol_arg(x):
    if x is None:
        return None
    return x._data if isinstance(x, Tensor) else float(x)


def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None):
    """Moore-Penrose pseudo-inverse; singular values at or below max(atol, rtol * s_max) are
    dropped (``rcond`` is the older name of ``rtol``)."""
    check_matrix("linalg.pinv", A)
    if rcond is not None:
        rtol = rcond
    atol, rtol = _tol_arg(atol), _tol_arg(rtol)
    if isinstance(rtol, np.ndarray):
        rtol = rtol[..., None] if rtol.ndim else rtol
    if isinstance(atol, np.ndarray):
        atol = atol[..., None] if atol.ndim else atol
    return apply(PINV, (A,), {"atol": atol, "rtol": rtol, "hermitian": bool(hermitian)})
