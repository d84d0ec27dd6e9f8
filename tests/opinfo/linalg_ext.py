"""OpInfos for torch.linalg: decompositions, solvers, norms, products, and the older aliases.

Samples are well conditioned (A A^T + n I for cholesky/eigh, distinct singular values for the
SVD); the SVD, eigh and QR outputs are compared through sign-invariant functions of them (|U|,
U S Vh), as torch's own OpInfos do, since each LAPACK may pick other signs.
"""

from __future__ import annotations

import numpy as np

from .core import FLOAT, DType, ErrorInput, OpInfo, SampleInput

F32, F64, I64 = np.float32, np.float64, np.int64
_DECOMP_TOL = {F32: (1e-4, 1e-4), F64: (1e-7, 1e-7)}
_GRAD_TOL = (1e-6, 1e-7)


def _mat(rng, shape, dtype):
    return rng.uniform(-1.0, 1.0, shape).astype(dtype)


def _spd(rng, n, batch, dtype):
    a = rng.uniform(-1.0, 1.0, batch + (n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)


def _well(rng, n, batch, dtype):
    """A square matrix far from singular: a random one plus n on the diagonal."""
    return (rng.uniform(-1.0, 1.0, batch + (n, n)) + n * np.eye(n)).astype(dtype)


def _distinct_sv(rng, m, n, batch, dtype):
    """A matrix whose singular values are 1, 2, ... (distinct, so the SVD is differentiable)."""
    k = min(m, n)
    u, _ = np.linalg.qr(rng.standard_normal(batch + (m, k)))
    v, _ = np.linalg.qr(rng.standard_normal(batch + (n, k)))
    s = np.arange(1, k + 1, dtype=np.float64)[::-1] + 0.5
    return ((u * s[..., None, :]) @ np.swapaxes(v, -1, -2)).astype(dtype)


def _shapes_square(gen):
    def samples(dtype, rng):
        yield SampleInput(gen(rng, 3, (), dtype), name="3x3")
        yield SampleInput(gen(rng, 3, (2,), dtype), name="batched")
        yield SampleInput(gen(rng, 2, (2, 1), dtype), name="batched_2d")
        yield SampleInput(gen(rng, 1, (), dtype), name="1x1")

    return samples


def _err(shape, error=RuntimeError, name="", dtype=F64, args=(), kwargs=None, value=None):
    a = np.ones(shape, dtype) if value is None else np.asarray(value, dtype)
    return ErrorInput(SampleInput(a, args, kwargs or {}), error, name)


def _square_errors(extra=()):
    def errors():
        yield _err((3,), name="1d")
        yield _err((2, 3), name="not_square")
        yield _err((3, 3), dtype=I64, name="int")
        yield from extra

    return errors


# torch.linalg.LinAlgError and graphgrad.linalg.LinAlgError are both RuntimeErrors; the test runs
# one error type on both libraries, so it names that common base.
def _singular_errors():
    return _square_errors([_err(None, RuntimeError, "singular",
                                value=[[1.0, 2.0], [2.0, 4.0]])])


# -- determinants, inverse ----------------------------------------------------------------------
def _det_samples(dtype, rng):
    yield from _shapes_square(_well)(dtype, rng)
    # NOTE: forward only. At an exactly singular matrix torch 2.13 returns a zero gradient;
    # graphgrad returns the cofactor matrix (via the SVD), which finite differences confirm.
    yield SampleInput(np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], dtype),
                      name="singular", grad=False)


def _logdet_samples(dtype, rng):
    yield from _shapes_square(_spd)(dtype, rng)
    yield SampleInput(-np.eye(3, dtype=dtype), name="negative_det", grad=False)


# -- solvers ------------------------------------------------------------------------------------
def _solve_samples(dtype, rng):
    yield SampleInput(_well(rng, 3, (), dtype), (_mat(rng, (3, 2), dtype),), name="matrix")
    yield SampleInput(_well(rng, 3, (), dtype), (_mat(rng, (3,), dtype),), name="vector")
    yield SampleInput(_well(rng, 3, (2,), dtype), (_mat(rng, (2, 3), dtype),),
                      name="batched_vector")
    yield SampleInput(_well(rng, 3, (2,), dtype), (_mat(rng, (3, 2), dtype),), name="broadcast_b")
    yield SampleInput(_well(rng, 3, (), dtype), (_mat(rng, (2, 3, 2), dtype),),
                      name="broadcast_a")
    yield SampleInput(_well(rng, 3, (2,), dtype), (_mat(rng, (2, 2, 3), dtype),),
                      {"left": False}, name="right")


def _solve_errors():
    yield _err((3, 3), args=(np.ones((4, 2)),), name="shapes")
    yield _err((2, 3), args=(np.ones((2, 2)),), name="not_square")
    yield ErrorInput(SampleInput(np.ones((2, 2), F32), (np.ones((2, 1), F64),)), RuntimeError,
                     "dtype")
    yield _err(None, RuntimeError, "singular", value=[[1.0, 2.0], [2.0, 4.0]],
               args=(np.ones((2, 1)),))


def _tri(rng, n, batch, dtype):
    return _well(rng, n, batch, dtype)  # the other triangle is noise solve_triangular ignores


def _solve_tri_samples(dtype, rng):
    for upper in (True, False):
        for left in (True, False):
            b = _mat(rng, (2, 3, 2) if left else (2, 2, 3), dtype)
            yield SampleInput(_tri(rng, 3, (2,), dtype), (b,),
                              {"upper": upper, "left": left}, name=f"u{upper:d}_l{left:d}")
    yield SampleInput(_tri(rng, 3, (), dtype), (_mat(rng, (2, 3, 2), dtype),),
                      {"upper": True, "unitriangular": True}, name="unit_broadcast")


def _solve_tri_errors():
    yield _err((3, 3), args=(np.ones(3),), kwargs={"upper": True}, name="b_1d")
    yield _err((3, 3), args=(np.ones((4, 2)),), kwargs={"upper": True}, name="shapes")


def _cholesky_errors():
    return _square_errors([_err(None, RuntimeError, "not_pd",
                                value=-np.eye(3))])()


# -- decompositions, through sign-invariant functions -------------------------------------------
def _svd_fn(m):
    def fn(A, full_matrices=True):
        U, S, Vh = m.linalg.svd(A, full_matrices=full_matrices)
        k = S.shape[-1]
        u, vh = U[..., :k], Vh[..., :k, :]
        return u.abs(), S, vh.abs(), (u * S.unsqueeze(-2)) @ vh

    return fn


def _legacy_svd_fn(m):
    def fn(A, some=True):
        U, S, V = m.svd(A, some=some)
        k = S.shape[-1]
        return U[..., :k].abs(), S, V[..., :k].abs()

    return fn


def _rect_samples(gen=_distinct_sv, kwargs=({},)):
    def samples(dtype, rng):
        for shape, name in (((4, 3), "tall"), ((3, 4), "wide"), ((3, 3), "square")):
            for kw in kwargs:
                yield SampleInput(gen(rng, *shape, (), dtype), kwargs=dict(kw),
                                  name=name + "".join(f"_{k}{v}" for k, v in kw.items()))
        yield SampleInput(gen(rng, 3, 2, (2,), dtype), name="batched")

    return samples


def _sym(A):
    """cholesky/eigh read one triangle while torch's gradient is symmetric, which is not the
    partial derivative in the entries they ignore; a symmetric input makes them agree."""
    return (A + A.mT) / 2


def _eigh_fn(m):
    def fn(A, UPLO="L"):
        L, V = m.linalg.eigh(_sym(A), UPLO)
        return L, V.abs()

    return fn


def _on_sym(get):
    def op(m):
        fn = get(m)
        return lambda A, *args, **kwargs: fn(_sym(A), *args, **kwargs)

    return op


def _eigh_samples(dtype, rng):
    yield from _shapes_square(_spd)(dtype, rng)
    a = _spd(rng, 3, (), dtype)
    yield SampleInput(a + np.triu(np.ones((3, 3), dtype), 1), ("U",), name="upper")


def _qr_samples(dtype, rng):
    for shape, mode in (((4, 3), "reduced"), ((3, 4), "reduced"), ((3, 3), "complete"),
                        ((3, 4), "complete")):
        yield SampleInput(_distinct_sv(rng, *shape, (), dtype), (mode,), name=f"{shape}_{mode}")
    yield SampleInput(_distinct_sv(rng, 3, 2, (2,), dtype), name="batched")
    yield SampleInput(_distinct_sv(rng, 4, 3, (), dtype), ("r",), name="mode_r", grad=False)
    yield SampleInput(_distinct_sv(rng, 4, 3, (), dtype), ("complete",), name="complete_tall",
                      grad=False)


def _qr_fn(m):
    def fn(A, mode="reduced"):
        Q, R = m.linalg.qr(A, mode)
        if mode == "r":
            return Q, R.abs()
        return Q.abs(), R.abs(), Q @ R

    return fn


# -- norms --------------------------------------------------------------------------------------
def _vector_norm_samples(dtype, rng):
    x = _mat(rng, (2, 3, 4), dtype)
    for ord in (2, 1, 3.5, -1.5, float("inf"), float("-inf")):
        yield SampleInput(x, (ord,), name=f"ord{ord}")
    yield SampleInput(x, (2, (0, 2), True), name="dims_keepdim")
    yield SampleInput(x, (1, -1), name="dim_int")
    yield SampleInput(x, (0,), name="ord0", grad=False)
    yield SampleInput(np.zeros((3,), dtype), name="zeros", gradcheck=False)
    yield SampleInput(x, kwargs={"dtype": DType("float64")},
                      name="dtype")


def _matrix_norm_samples(dtype, rng):
    a = _distinct_sv(rng, 4, 3, (2,), dtype) + 0.05 * _mat(rng, (2, 4, 3), dtype)
    for ord in ("fro", "nuc", 1, -1, 2, -2, float("inf"), float("-inf")):
        yield SampleInput(a, (ord,), name=f"ord{ord}")
    yield SampleInput(a, ("nuc", (0, 2), True), name="nuc_dims_keepdim")
    yield SampleInput(a, (1, (2, 0)), name="ord1_dims")
    yield SampleInput(a, (float("inf"), (0, 1), True), name="inf_keepdim")


def _norm_samples(dtype, rng):
    x = _mat(rng, (2, 3, 4), dtype)
    yield SampleInput(x, name="default")
    yield SampleInput(x[0], (2,), name="matrix_ord2")
    yield SampleInput(x[0, 0], (3,), name="vector_ord3")
    yield SampleInput(x, ("fro", (1, 2)), name="fro_dims")
    yield SampleInput(x, (None, (0, 2)), name="none_2dims")
    yield SampleInput(x, (float("inf"), 1), name="inf_dim")


def _norm_errors():
    yield _err((3, 3, 3), args=(2,), name="3d_ord")
    yield _err((3, 3), args=("fro", 0), name="fro_dim_int")
    yield _err((3, 3), args=(3, (0, 1)), name="matrix_ord3")
    yield _err((3, 3), dtype=I64, name="int")


# -- ops ----------------------------------------------------------------------------------------
def _lin(name):
    def get(m):
        fn = m.linalg
        for part in name.split("."):
            fn = getattr(fn, part)
        return fn

    return get


def linalg_ext_ops() -> list[OpInfo]:
    D = dict(tol=_DECOMP_TOL, grad_tol=_GRAD_TOL)
    ops = [
        OpInfo("linalg.det", _lin("det"), _det_samples, errors=_square_errors(), **D),
        OpInfo("det", lambda m: m.det, _shapes_square(_well), variant=True, **D),
        OpInfo("linalg.slogdet", _lin("slogdet"), _shapes_square(_well), errors=_square_errors(),
               **D),
        OpInfo("logdet", lambda m: m.logdet, _logdet_samples, **D),
        OpInfo("Tensor.logdet", lambda m: m.Tensor.logdet, _shapes_square(_spd), variant=True,
               **D),
        OpInfo("linalg.inv", _lin("inv"), _shapes_square(_well), errors=_singular_errors(), **D),
        OpInfo("inverse", lambda m: m.inverse, _shapes_square(_well), variant=True, **D),
        OpInfo("linalg.inv_ex", _lin("inv_ex"), _shapes_square(_well), **D),
        OpInfo("linalg.solve", _lin("solve"), _solve_samples, errors=_solve_errors, **D),
        OpInfo("linalg.solve_triangular", _lin("solve_triangular"), _solve_tri_samples,
               errors=_solve_tri_errors, **D),
        OpInfo("linalg.cholesky", _on_sym(_lin("cholesky")), _shapes_square(_spd),
               errors=_cholesky_errors, **D),
        OpInfo("linalg.cholesky.upper", _on_sym(lambda m: lambda a: m.linalg.cholesky(
            a, upper=True)), _shapes_square(_spd), **D),
        OpInfo("linalg.cholesky_ex", _on_sym(_lin("cholesky_ex")), _shapes_square(_spd), **D),
        OpInfo("linalg.qr", _qr_fn, _qr_samples, errors=_qr_errors, **D),
        OpInfo("linalg.svd", _svd_fn, _rect_samples(kwargs=({}, {"full_matrices": False})),
               **D),
        OpInfo("svd", _legacy_svd_fn, _rect_samples(kwargs=({}, {"some": False})), **D),
        OpInfo("linalg.svdvals", _lin("svdvals"), _rect_samples(), **D),
        OpInfo("linalg.eigh", _eigh_fn, _eigh_samples, errors=_eigh_errors, **D),
        OpInfo("linalg.eigvalsh", _on_sym(_lin("eigvalsh")), _eigh_samples, **D),
        OpInfo("linalg.pinv", _lin("pinv"), _rect_samples(), **D),
        OpInfo("linalg.pinv.hermitian", _on_sym(lambda m: lambda a: m.linalg.pinv(
            a, hermitian=True)), _shapes_square(_spd), **D),
        OpInfo("pinverse", lambda m: m.pinverse, _rect_samples(), variant=True, **D),
        OpInfo("linalg.matrix_rank", _lin("matrix_rank"), _rank_samples, supports_grad=False),
        OpInfo("linalg.lstsq", _lin("lstsq"), _lstsq_samples, errors=_lstsq_errors, **D),
        OpInfo("linalg.vector_norm", _lin("vector_norm"), _vector_norm_samples, **D),
        OpInfo("linalg.matrix_norm", _lin("matrix_norm"), _matrix_norm_samples, **D),
        OpInfo("linalg.norm", _lin("norm"), _norm_samples, errors=_norm_errors, **D),
        OpInfo("linalg.cond", _lin("cond"), _rect_samples(), **D),
        OpInfo("linalg.matrix_power", _lin("matrix_power"), _power_samples,
               dtypes=FLOAT + (I64,), **D),
        OpInfo("linalg.multi_dot", _lin("multi_dot"), _multi_dot_samples, **D),
        OpInfo("linalg.vecdot", _lin("vecdot"), _vecdot_samples, **D),
        OpInfo("linalg.diagonal", _lin("diagonal"), _diagonal_samples, **D),
        OpInfo("linalg.matmul", _lin("matmul"), _matmul_samples, **D),
    ]
    return ops


def _qr_errors():
    yield _err((3, 3), args=("x",), name="mode")
    yield _err((3,), name="1d")


def _eigh_errors():
    yield _err((3, 3), args=("X",), name="uplo")
    yield _err((2, 3), name="not_square")


def _rank_samples(dtype, rng):
    yield SampleInput(_mat(rng, (2, 4, 3), dtype), name="full")
    yield SampleInput(np.array([[1.0, 2.0], [2.0, 4.0]], dtype), name="rank1")
    yield SampleInput(_spd(rng, 3, (), dtype), kwargs={"hermitian": True}, name="hermitian")
    yield SampleInput(np.diag([1.0, 1e-3, 0.0]).astype(dtype), kwargs={"atol": 1e-2},
                      name="atol")


def _lstsq_samples(dtype, rng):
    a = _distinct_sv(rng, 5, 3, (2,), dtype)
    yield SampleInput(a, (_mat(rng, (2, 5, 2), dtype),), name="matrix")
    yield SampleInput(a, (_mat(rng, (2, 5), dtype),), name="vector")
    # the singular values torch returns have no gradient: finite differences would see them
    yield SampleInput(a, (_mat(rng, (2, 5, 2), dtype),), {"driver": "gelsd"}, name="gelsd",
                      gradcheck=False)
    yield SampleInput(a, (_mat(rng, (2, 5, 2), dtype),), {"driver": "gels"}, name="gels")


def _lstsq_errors():
    yield _err((3, 3), args=(np.ones((3, 1)),), kwargs={"driver": "x"}, name="driver")
    yield _err((3, 3), args=(np.ones((4, 1)),), name="rows")


def _power_samples(dtype, rng):
    if np.dtype(dtype).kind != "f":
        yield SampleInput(rng.integers(-2, 3, (2, 3, 3)).astype(dtype), (3,), name="int")
        return
    a = _well(rng, 3, (2,), dtype) / 3
    for n in (0, 1, 2, 5, -1, -2):
        yield SampleInput(a, (n,), name=f"n{n}")


def _multi_dot_samples(dtype, rng):
    yield SampleInput([_mat(rng, (2, 3), dtype), _mat(rng, (3, 4), dtype),
                       _mat(rng, (4, 2), dtype)], name="matrices")
    yield SampleInput([_mat(rng, (3,), dtype), _mat(rng, (3, 4), dtype), _mat(rng, (4,), dtype)],
                      name="vectors_at_ends")


def _vecdot_samples(dtype, rng):
    yield SampleInput(_mat(rng, (3,), dtype), (_mat(rng, (2, 3), dtype),), name="broadcast")


def _matmul_samples(dtype, rng):
    yield SampleInput(_mat(rng, (2, 3, 4), dtype), (_mat(rng, (4, 2), dtype),), name="batched")


def _diagonal_samples(dtype, rng):
    yield SampleInput(_mat(rng, (2, 3, 4), dtype), name="default")
    yield SampleInput(_mat(rng, (2, 3, 4), dtype), kwargs={"offset": 1, "dim1": 0, "dim2": 2},
                      name="offset_dims")


def op_db() -> list[OpInfo]:
    return linalg_ext_ops()
