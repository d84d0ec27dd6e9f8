"""OpInfos for matrix_exp, the Householder family (geqrf, householder_product, orgqr, ormqr),
cholesky_solve / cholesky_inverse, triangular_solve, tensorinv / tensorsolve, linalg.vander,
chain_matmul and the LDL^T family.

cholesky_solve and cholesky_inverse read one triangle of the factor while torch's gradient is a
full matrix, so finite differences only agree through a wrapper that takes that triangle first;
the raw ops are compared with torch's gradient without finite differences.
"""

from __future__ import annotations

import numpy as np

from .core import FLOAT, ErrorInput, OpInfo, SampleInput
from .linalg_ext import _DECOMP_TOL, _GRAD_TOL, _err, _mat, _spd, _well

F64, I64 = np.float64, np.int64


# -- matrix_exp ---------------------------------------------------------------------------------
def _exp_samples(dtype, rng):
    yield SampleInput(_mat(rng, (3, 3), dtype), name="3x3")
    yield SampleInput(_mat(rng, (2, 3, 3), dtype) * 4, name="batched_scaled")
    yield SampleInput(_mat(rng, (2, 1, 2, 2), dtype) * 1e-3, name="small_norm")
    yield SampleInput(_mat(rng, (1, 1), dtype), name="1x1")


def _exp_errors():
    yield _err((2, 3), name="not_square")
    yield _err((3, 3), dtype=I64, name="int")


# -- Householder --------------------------------------------------------------------------------
def _geqrf_samples(dtype, rng):
    for shape, name in (((4, 3), "tall"), ((3, 4), "wide"), ((2, 3, 3), "batched")):
        yield SampleInput(_mat(rng, shape, dtype), name=name)


def _hh_samples(dtype, rng):
    for shape, k, name in (((4, 3), 3, "tall"), ((3, 3), 2, "square_k2"),
                           ((2, 4, 2), 2, "batched")):
        yield SampleInput(_mat(rng, shape, dtype), (_mat(rng, shape[:-2] + (k,), dtype),),
                          name=name)


def _hh_errors():
    yield ErrorInput(SampleInput(np.ones((2, 3)), (np.ones(2),)), RuntimeError, "wide")
    yield ErrorInput(SampleInput(np.ones((3, 2)), (np.ones(3),)), RuntimeError, "tau_long")


def _ormqr_samples(dtype, rng):
    for left in (True, False):
        for transpose in (False, True):
            c = _mat(rng, (2, 4, 2) if left else (2, 2, 4), dtype)
            yield SampleInput(_mat(rng, (2, 4, 3), dtype), (_mat(rng, (2, 3), dtype), c, left,
                                                           transpose),
                              name=f"l{left:d}_t{transpose:d}")


def _ormqr_errors():
    yield ErrorInput(SampleInput(np.ones((4, 3)), (np.ones(3), np.ones((3, 2)))), RuntimeError,
                     "rows")


# -- Cholesky solves ----------------------------------------------------------------------------
def _chol(rng, n, batch, dtype, upper=False):
    low = np.linalg.cholesky(_spd(rng, n, batch, F64))
    return (np.swapaxes(low, -1, -2) if upper else low).astype(dtype)


def _chol_solve_samples(dtype, rng, gradcheck=True):
    for upper in (False, True):
        yield SampleInput(_mat(rng, (2, 3, 2), dtype), (_chol(rng, 3, (2,), dtype, upper), upper),
                          name=f"upper{upper:d}", gradcheck=gradcheck)
    yield SampleInput(_mat(rng, (2, 3, 1), dtype), (_chol(rng, 3, (), dtype),),
                      name="broadcast", gradcheck=gradcheck)


def _tri_arg(m, upper):
    return (lambda x: m.triu(x)) if upper else (lambda x: m.tril(x))


def _chol_solve_tri(m):
    def fn(B, L, upper=False):
        return m.cholesky_solve(B, _tri_arg(m, upper)(L), upper)

    return fn


def _chol_solve_errors():
    yield ErrorInput(SampleInput(np.ones((3, 1)), (np.eye(2),)), RuntimeError, "sizes")
    yield ErrorInput(SampleInput(np.ones(3), (np.eye(3),)), RuntimeError, "b_1d")
    yield ErrorInput(SampleInput(np.ones((2, 1), np.float32), (np.eye(2),)), RuntimeError,
                     "dtype")


def _chol_inv_samples(dtype, rng, gradcheck=True):
    for upper in (False, True):
        yield SampleInput(_chol(rng, 3, (2,), dtype, upper), (upper,), name=f"upper{upper:d}",
                          gradcheck=gradcheck)
    yield SampleInput(_chol(rng, 1, (), dtype), name="1x1", gradcheck=gradcheck)


def _chol_inv_tri(m):
    def fn(L, upper=False):
        return m.cholesky_inverse(_tri_arg(m, upper)(L), upper)

    return fn


def _chol_inv_errors():
    yield _err((3,), name="1d")
    yield _err((2, 3), name="not_square")
    yield _err((2, 2), NotImplementedError, "int", dtype=I64)


def _tri_solve_samples(dtype, rng):
    for upper in (True, False):
        for transpose in (False, True):
            yield SampleInput(_mat(rng, (2, 3, 2), dtype), (_well(rng, 3, (2,), dtype), upper,
                                                           transpose),
                              name=f"u{upper:d}_t{transpose:d}")
    yield SampleInput(_mat(rng, (2, 3, 2), dtype), (_well(rng, 3, (), dtype),),
                      {"unitriangular": True}, name="unit_broadcast")


def _tri_solve_errors():
    yield ErrorInput(SampleInput(np.ones((3, 1)), (np.eye(2),)), RuntimeError, "sizes")


# -- tensor-shaped solvers, vander, chain_matmul ------------------------------------------------
def _tensorinv_samples(dtype, rng):
    yield SampleInput(_well(rng, 6, (), dtype).reshape(6, 2, 3), kwargs={"ind": 1}, name="ind1")
    yield SampleInput(_well(rng, 4, (), dtype).reshape(2, 2, 4), name="ind2")


def _tensorinv_errors():
    yield _err((2, 3), kwargs={"ind": 0}, name="ind0")
    yield _err((2, 3), name="not_square")


def _tensorsolve_samples(dtype, rng):
    yield SampleInput(_well(rng, 6, (), dtype).reshape(2, 3, 6), (_mat(rng, (2, 3), dtype),),
                      name="default")
    yield SampleInput(_well(rng, 6, (), dtype).reshape(6, 2, 3), (_mat(rng, (2, 3), dtype),),
                      {"dims": (0,)}, name="dims")


def _tensorsolve_errors():
    yield _err((2, 3, 6), args=(np.ones((2, 2)),), name="shapes")


def _vander_samples(dtype, rng):
    if np.dtype(dtype).kind != "f":
        yield SampleInput(rng.integers(-3, 4, (2, 3)).astype(dtype), name="int")
        return
    yield SampleInput(_mat(rng, (3,), dtype), name="default")
    yield SampleInput(_mat(rng, (2, 3), dtype), kwargs={"N": 5}, name="batched_N5")


def _vander_errors():
    yield _err((3,), kwargs={"N": 1}, name="N1")


def _chain_samples(dtype, rng):
    yield SampleInput(_mat(rng, (2, 3), dtype), (_mat(rng, (3, 4), dtype),
                                                 _mat(rng, (4, 2), dtype)), name="three")
    yield SampleInput(_mat(rng, (2, 3), dtype), name="one")


def _chain_errors():
    yield ErrorInput(SampleInput(np.ones((2, 2, 2)), (np.ones((2, 2)),)), RuntimeError, "3d")


# -- LDL^T (not differentiable in torch: its LD requires grad but backward raises) ------------
def _ldl_samples(dtype, rng):
    yield SampleInput(_mat(rng, (4, 4), dtype), name="4x4")
    small = _mat(rng, (2, 5, 5), dtype)
    idx = np.arange(5)
    small[..., idx, idx] *= 1e-3  # small diagonals: Bunch-Kaufman takes 2x2 pivots
    yield SampleInput(small, name="batched_2x2_pivots")
    yield SampleInput(_mat(rng, (1, 1), dtype), kwargs={"hermitian": True}, name="1x1")


def _ldl_singular_errors():
    yield _err((2, 3), name="not_square")
    yield _err((2, 2), name="singular", value=np.zeros((2, 2)))


def _ldl_solve_op(m):
    def fn(A, B, hermitian=False):
        LD, pivots = m.linalg.ldl_factor(A, hermitian=hermitian)
        return m.linalg.ldl_solve(LD, pivots, B, hermitian=hermitian)

    return fn


def _ldl_solve_samples(dtype, rng):
    a = _mat(rng, (2, 5, 5), dtype) + 3 * np.eye(5, dtype=dtype)
    a[0, np.arange(5), np.arange(5)] *= 1e-3
    yield SampleInput(a, (_mat(rng, (2, 5, 2), dtype),), name="batched")
    yield SampleInput(a[0], (_mat(rng, (3, 5, 1), dtype),), name="broadcast_b")


def op_db() -> list[OpInfo]:
    D = dict(tol=_DECOMP_TOL, grad_tol=_GRAD_TOL)

    def nofd(samples):
        return lambda dtype, rng: samples(dtype, rng, gradcheck=False)

    return [
        OpInfo("linalg.matrix_exp", lambda m: m.linalg.matrix_exp, _exp_samples,
               errors=_exp_errors, **D),
        OpInfo("matrix_exp", lambda m: m.matrix_exp, _exp_samples, variant=True, **D),
        OpInfo("Tensor.matrix_exp", lambda m: m.Tensor.matrix_exp, _exp_samples, variant=True,
               **D),
        # NOTE: torch's geqrf outputs require grad but its backward raises "not implemented";
        # graphgrad's geqrf records no node, so only the values are compared.
        OpInfo("geqrf", lambda m: m.geqrf, _geqrf_samples, supports_grad=False,
               requires_grad_parity=False, **D),
        OpInfo("Tensor.geqrf", lambda m: m.Tensor.geqrf, _geqrf_samples, supports_grad=False,
               requires_grad_parity=False, variant=True, **D),
        OpInfo("linalg.householder_product", lambda m: m.linalg.householder_product,
               _hh_samples, errors=_hh_errors, **D),
        OpInfo("orgqr", lambda m: m.orgqr, _hh_samples, variant=True, **D),
        OpInfo("Tensor.orgqr", lambda m: m.Tensor.orgqr, _hh_samples, variant=True, **D),
        OpInfo("ormqr", lambda m: m.ormqr, _ormqr_samples, errors=_ormqr_errors, **D),
        OpInfo("Tensor.ormqr", lambda m: m.Tensor.ormqr, _ormqr_samples, variant=True, **D),
        OpInfo("cholesky_solve", _chol_solve_tri, _chol_solve_samples, errors=_chol_solve_errors,
               **D),
        OpInfo("cholesky_solve.full_grad", lambda m: m.cholesky_solve, nofd(_chol_solve_samples),
               **D),
        OpInfo("Tensor.cholesky_solve", lambda m: m.Tensor.cholesky_solve,
               nofd(_chol_solve_samples), variant=True, **D),
        OpInfo("cholesky_inverse", _chol_inv_tri, _chol_inv_samples, errors=_chol_inv_errors,
               **D),
        OpInfo("cholesky_inverse.full_grad", lambda m: m.cholesky_inverse,
               nofd(_chol_inv_samples), **D),
        OpInfo("Tensor.cholesky_inverse", lambda m: m.Tensor.cholesky_inverse,
               nofd(_chol_inv_samples), variant=True, **D),
        OpInfo("triangular_solve", lambda m: m.triangular_solve, _tri_solve_samples,
               errors=_tri_solve_errors, **D),
        OpInfo("Tensor.triangular_solve", lambda m: m.Tensor.triangular_solve,
               _tri_solve_samples, variant=True, **D),
        OpInfo("linalg.tensorinv", lambda m: m.linalg.tensorinv, _tensorinv_samples,
               errors=_tensorinv_errors, **D),
        OpInfo("linalg.tensorsolve", lambda m: m.linalg.tensorsolve, _tensorsolve_samples,
               errors=_tensorsolve_errors, **D),
        OpInfo("linalg.vander", lambda m: m.linalg.vander, _vander_samples,
               dtypes=FLOAT + (I64,), errors=_vander_errors, **D),
        OpInfo("chain_matmul", lambda m: m.chain_matmul, _chain_samples, errors=_chain_errors,
               **D),
        OpInfo("linalg.ldl_factor_ex", lambda m: m.linalg.ldl_factor_ex, _ldl_samples,
               supports_grad=False, requires_grad_parity=False, **D),
        OpInfo("linalg.ldl_factor", lambda m: m.linalg.ldl_factor, _ldl_samples,
               errors=_ldl_singular_errors, supports_grad=False, requires_grad_parity=False, **D),
        OpInfo("linalg.ldl_solve", _ldl_solve_op, _ldl_solve_samples, supports_grad=False,
               requires_grad_parity=False, **D),
    ]
