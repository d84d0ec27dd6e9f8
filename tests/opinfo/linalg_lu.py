"""OpInfos for the LU family: linalg.lu_factor(_ex), linalg.lu, lu_unpack, lu_solve, solve_ex and
the older torch.lu / torch.lu_solve spellings.

Pivots given as inputs are any valid row swaps (p_j >= j, 1-based int32), and LU inputs have a
U far from singular (n added to the diagonal), so the solves are well conditioned.
"""

from __future__ import annotations

import numpy as np

from .core import ErrorInput, OpInfo, SampleInput
from .linalg_ext import _DECOMP_TOL, _GRAD_TOL, _err, _mat, _well

F64, I32 = np.float64, np.int32


def _pivots(rng, n, batch):
    j = np.arange(n)
    return (j + 1 + np.floor(rng.random(batch + (n,)) * (n - j))).astype(I32)


def _factor_samples(dtype, rng):
    for shape, name in (((3, 3), "square"), ((3, 5), "wide"), ((5, 3), "tall"),
                        ((2, 3, 3), "batched"), ((2, 1, 2, 4), "batched_wide"),
                        ((1, 1), "1x1")):
        yield SampleInput(_mat(rng, shape, dtype), name=name)


def _factor_errors():
    yield _err((3,), name="1d")
    yield _err((3, 3), dtype=np.int64, name="int")


def _singular_errors():
    yield from _factor_errors()
    yield _err(None, RuntimeError, "singular", value=[[1.0, 2.0], [2.0, 4.0]])
    yield _err(None, RuntimeError, "singular_batch",
               value=[np.eye(2), [[1.0, 2.0], [2.0, 4.0]]])


def _lu_fn(m):
    return lambda A, *args, **kwargs: m.linalg.lu(A, *args, **kwargs)


def _torch_lu_samples(dtype, rng):
    yield SampleInput(_mat(rng, (2, 3, 3), dtype), name="default")
    yield SampleInput(_mat(rng, (3, 4), dtype), kwargs={"get_infos": True}, name="infos")
    yield SampleInput(np.array([[1.0, 2.0], [2.0, 4.0]], dtype), kwargs={"get_infos": True},
                      name="singular_infos", grad=False)


def _unpack_samples(dtype, rng):
    for shape, name in (((3, 3), "square"), ((3, 5), "wide"), ((5, 3), "tall"),
                        ((2, 4, 4), "batched")):
        m, n = shape[-2:]
        piv = _pivots(rng, m, shape[:-2])[..., :min(m, n)]
        yield SampleInput(_mat(rng, shape, dtype), (piv,), name=name)
    # NOTE: forward only: torch 2.13's backward through the empty L and U raises (triu of 1-D)
    yield SampleInput(_mat(rng, (3, 3), dtype), (_pivots(rng, 3, ()), False, True),
                      name="no_data", grad=False)
    yield SampleInput(_mat(rng, (3, 3), dtype), (_pivots(rng, 3, ()), True, False),
                      name="no_pivots")


def _unpack_errors():
    a = np.ones((3, 3), F64)
    yield ErrorInput(SampleInput(a, (np.ones(3, np.int64),)), RuntimeError, "pivots_dtype")


def _lu_solve_samples(dtype, rng):
    for left in (True, False):
        for adjoint in (False, True):
            b = _mat(rng, (2, 3, 2) if left else (2, 2, 3), dtype)
            yield SampleInput(_well(rng, 3, (2,), dtype), (_pivots(rng, 3, (2,)), b),
                              {"left": left, "adjoint": adjoint},
                              name=f"l{left:d}_a{adjoint:d}")
    yield SampleInput(_well(rng, 3, (), dtype), (_pivots(rng, 3, ()), _mat(rng, (2, 3, 2), dtype)),
                      name="broadcast_b")
    yield SampleInput(_well(rng, 3, (2, 1), dtype),
                      (_pivots(rng, 3, (2, 1)), _mat(rng, (3, 3, 1), dtype)), name="broadcast_both")


def _lu_solve_errors():
    lu, piv = np.eye(3), np.array([1, 2, 3], I32)
    yield ErrorInput(SampleInput(lu, (piv, np.ones(3))), RuntimeError, "b_1d")
    yield ErrorInput(SampleInput(lu, (piv, np.ones((4, 1)))), RuntimeError, "shapes")
    yield ErrorInput(SampleInput(lu, (piv.astype(np.int64), np.ones((3, 1)))), RuntimeError,
                     "pivots_dtype")
    yield ErrorInput(SampleInput(np.ones((2, 3)), (piv, np.ones((2, 1)))), RuntimeError,
                     "not_square")


def _old_lu_solve_samples(dtype, rng):
    yield SampleInput(_mat(rng, (2, 3, 2), dtype),
                      (_well(rng, 3, (2,), dtype), _pivots(rng, 3, (2,))), name="batched")


def _solve_ex_samples(dtype, rng):
    yield SampleInput(_well(rng, 3, (2,), dtype), (_mat(rng, (2, 3, 2), dtype),), name="matrix")
    yield SampleInput(_well(rng, 3, (), dtype), (_mat(rng, (3,), dtype),), name="vector")
    yield SampleInput(_well(rng, 3, (2,), dtype), (_mat(rng, (2, 2, 3), dtype),),
                      {"left": False}, name="right")
    sing = np.array([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 0.0], [0.0, 1.0]]], dtype)
    # NOTE: forward only: the singular batch element's result is inf/NaN (getrs divides by 0)
    yield SampleInput(sing, (np.ones((2, 2, 1), dtype),), name="singular_info", grad=False)


def _solve_ex_errors():
    yield _err(None, RuntimeError, "singular_check", value=[[1.0, 2.0], [2.0, 4.0]],
               args=(np.ones((2, 1)),), kwargs={"check_errors": True})
    yield _err((2, 3), args=(np.ones((2, 1)),), name="not_square")


def op_db() -> list[OpInfo]:
    D = dict(tol=_DECOMP_TOL, grad_tol=_GRAD_TOL)
    return [
        OpInfo("linalg.lu_factor", lambda m: m.linalg.lu_factor, _factor_samples,
               errors=_singular_errors, **D),
        OpInfo("linalg.lu_factor_ex", lambda m: m.linalg.lu_factor_ex, _factor_samples,
               errors=_factor_errors, **D),
        OpInfo("linalg.lu", _lu_fn, _factor_samples, errors=_factor_errors, **D),
        OpInfo("lu", lambda m: m.lu, _torch_lu_samples, **D),
        OpInfo("Tensor.lu", lambda m: m.Tensor.lu, _torch_lu_samples, variant=True, **D),
        OpInfo("lu_unpack", lambda m: m.lu_unpack, _unpack_samples, errors=_unpack_errors, **D),
        OpInfo("linalg.lu_solve", lambda m: m.linalg.lu_solve, _lu_solve_samples,
               errors=_lu_solve_errors, **D),
        OpInfo("lu_solve", lambda m: m.lu_solve, _old_lu_solve_samples, **D),
        OpInfo("Tensor.lu_solve", lambda m: m.Tensor.lu_solve, _old_lu_solve_samples,
               variant=True, **D),
        OpInfo("linalg.solve_ex", lambda m: m.linalg.solve_ex, _solve_ex_samples,
               errors=_solve_ex_errors, **D),
    ]
