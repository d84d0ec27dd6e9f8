"""OpInfos for statistics.py: nansum, nanmean, nanmedian, quantile/nanquantile (every
interpolation), std_mean/var_mean, cov (weights, correction), corrcoef, histogram, msort,
unique_consecutive, argwhere, dist, vdot, trapezoid/trapz/cumulative_trapezoid, renorm.

NaN samples are forward-only where finite differences through a NaN make no sense.
"""

from __future__ import annotations

import numpy as np

from .core import FLOAT_INT, ErrorInput, NonContig, OpInfo, SampleInput, make
from .elementwise import fn_and_method, function

F32, F64, I64, B = np.float32, np.float64, np.int64, np.bool_


def _gen(cases):
    def gen(dtype, rng):
        yield from cases(lambda shape, **kw: make(shape, dtype, rng, **kw), dtype)
    return gen


def _s(x, *args, name="", **kwargs):
    return SampleInput(x, args, kwargs, name=name)


def _err(x, *args, error=RuntimeError, name="", **kwargs):
    return ErrorInput(SampleInput(x, args, kwargs), error, name)


def _with_nans(a, every=3):
    a = a.copy()
    a.reshape(-1)[::every] = np.nan
    return a


def _is_float(dtype):
    return np.dtype(dtype).kind == "f"


# --- nansum / nanmean / nanmedian ----------------------------------------------------------------

def _nan_reduce_cases(a, dtype):
    yield _s(a((3, 4)))
    yield _s(a((3, 4)), 1, name="dim")
    yield _s(a((2, 3, 4)), (0, 2), True, name="dims_keepdim")
    yield _s(a(()), name="0d")
    yield _s(NonContig(a((4, 3))), 0, name="transposed")
    if _is_float(dtype):
        yield _s(_with_nans(a((3, 4))), name="nans")
        yield _s(_with_nans(a((3, 4)), 2), 1, keepdim=True, name="nans_dim")


def _nansum_mixed(rng):
    yield _s(make((3, 4), F32, rng), dtype=_dt("float64"), name="dtype")


def _dt(name):
    from .core import DType
    return DType(name)


def _nanmean_errors():
    yield _err(np.ones((2, 3), I64), name="int")


def _nanmedian_cases(a, dtype):
    yield _s(a((3, 5)))
    yield _s(a((3, 4)), 1, name="dim_even")
    yield _s(a((3, 5)), 0, True, name="dim_keepdim")
    yield _s(a(()), name="0d")
    yield _s(a(()), 0, name="0d_dim")
    yield _s(NonContig(a((4, 3))), -1, name="transposed")
    if _is_float(dtype):
        yield _s(_with_nans(a((3, 5))), name="nans")
        yield _s(_with_nans(a((4, 5)), 2), 1, name="nans_dim")
        allnan = a((2, 3))
        allnan[0] = np.nan
        yield SampleInput(allnan, (1,), name="all_nan_row", gradcheck=False)


def _nanmedian_errors():
    yield _err(np.ones((2, 0)), 1, error=IndexError, name="empty_dim")


# --- quantile ------------------------------------------------------------------------------------

def _quantile_cases(nan):
    def cases(a, dtype):
        def q(vals):
            return np.asarray(vals, dtype=dtype)
        def s(x, *args, name, **kwargs):  # q is a constant unless a sample says otherwise
            return SampleInput(x, args, kwargs, name=name, nondiff=(1,))
        for mode in ("linear", "lower", "higher", "midpoint", "nearest"):
            yield s(a((7,)), 0.4, interpolation=mode, name=f"{mode}_scalar_q")
            yield s(a((3, 5)), q([0.0, 0.3, 0.5, 1.0]), 1, interpolation=mode,
                    name=f"{mode}_dim")
        yield _s(a((3, 5)), q([0.3, 0.65]), 1, name="q_requires_grad")
        yield s(a((3, 4)), 0.25, name="flat")
        yield s(a((3, 4)), q(0.75), 0, True, name="0d_q_keepdim")
        yield s(a((2, 3, 4)), q([0.1, 0.9]), -1, keepdim=True, name="3d_keepdim")
        yield s(a((2, 3)), q([0.5]), None, True, name="flat_keepdim")
        yield s(a(()), 0.5, name="0d")
        yield s(NonContig(a((5, 3))), q([0.2, 0.6]), 0, name="transposed")
        yield SampleInput(_with_nans(a((3, 5))), (0.5, 1), name="nans", gradcheck=False)
        if nan:
            allnan = a((2, 4))
            allnan[1] = np.nan
            yield SampleInput(allnan, (q([0.3, 0.5]), 1), name="all_nan_row", gradcheck=False,
                              nondiff=(1,))
    return cases


def _quantile_errors(name):
    def errors():
        yield _err(np.ones(3), 1.5, name="q_range")
        yield _err(np.ones(3), np.asarray([0.5, -0.1]), name="q_tensor_range")
        yield _err(np.ones(3), np.asarray(0.5, F32), name="q_dtype")
        yield _err(np.ones(3, I64), 0.5, name="int")
        yield _err(np.ones(0), 0.5, name="empty")
        yield _err(np.ones(3), np.ones((2, 2)) * 0.5, name="q_2d")
        yield _err(np.ones(3), 0.5, interpolation="cubic", name="mode")
    return errors


# --- std_mean / var_mean -------------------------------------------------------------------------

def _moments_cases(a, dtype):
    yield _s(a((3, 4)))
    yield _s(a((3, 4)), 1, name="dim")
    yield _s(a((3, 4)), (0, 1), keepdim=True, name="dims_keepdim")
    yield _s(a((3, 4)), 1, correction=0, name="correction0")
    yield _s(a((3, 4)), 0, False, True, name="unbiased_false_positional")
    yield _s(a((5,)), False, name="unbiased_only")
    yield _s(a((3, 4)), dim=1, unbiased=True, name="unbiased_kwarg")
    yield _s(NonContig(a((4, 3))), 0, correction=2, name="transposed")


# --- cov / corrcoef ------------------------------------------------------------------------------

def _cov_cases(a, dtype):
    yield _s(a((3, 6)))
    yield _s(a((6,)), name="1d")
    yield _s(a((3, 6)), correction=0, name="correction0")
    yield _s(a((2, 5)), correction=2, name="correction2")
    yield _s(a((2, 5)), fweights=np.asarray([1, 2, 3, 1, 2]), name="fweights")
    yield _s(a((2, 5)), aweights=make((5,), dtype, np.random.default_rng(3), 0.5, 2.0),
             name="aweights")
    yield _s(a((2, 5)), fweights=np.asarray([1, 2, 3, 1, 2]),
             aweights=make((5,), dtype, np.random.default_rng(4), 0.5, 2.0), correction=0,
             name="both_weights_c0")
    yield _s(a((2, 5)), fweights=np.asarray([2, 1, 1, 3, 2]),
             aweights=make((5,), dtype, np.random.default_rng(5), 0.5, 2.0), name="both_weights")
    yield _s(NonContig(a((5, 3))), name="transposed")


def _cov_mixed(rng):
    yield _s(make((2, 5), I64, rng), name="int")


def _cov_errors():
    yield _err(np.ones((2, 3, 4)), name="3d")
    yield _err(np.ones((2, 3)), fweights=np.ones(3), name="float_fweights")
    yield _err(np.ones((2, 3)), fweights=np.ones(4, I64), name="fweights_numel")
    yield _err(np.ones((2, 3)), fweights=-np.ones(3, I64), name="negative_fweights")
    yield _err(np.ones((2, 3)), aweights=np.ones(3, I64), name="int_aweights")
    yield _err(np.ones((2, 3)), aweights=-np.ones(3), name="negative_aweights")


def _corrcoef_cases(a, dtype):
    yield _s(a((3, 6)))
    yield _s(a((2, 4)), name="two_rows")
    yield _s(a((6,)), name="1d")
    yield _s(NonContig(a((5, 3))), name="transposed")


# --- histogram / msort / unique_consecutive / argwhere -------------------------------------------

def _histogram_cases(a, dtype):
    x = np.round(a((20,)) * 4) / 4  # values on a grid: some fall exactly on edges
    yield _s(x)
    yield _s(x, 5, name="bins")
    yield _s(x, bins=4, range=(-1.0, 2.0), name="range")
    yield _s(x, 6, density=True, name="density")
    yield _s(x.reshape(4, 5), 3, weight=np.abs(a((4, 5))), name="weight_2d")
    yield _s(x, np.asarray([-3.0, -1.0, 0.0, 0.5, 3.0], dtype), name="edges")
    yield _s(x, np.asarray([-2.0, 0.0, 2.5], dtype), density=True, name="edges_density")
    yield _s(np.full(4, 1.5, dtype), 4, name="constant")


def _histogram_errors():
    yield _err(np.ones(3), 0, name="zero_bins")
    yield _err(np.ones(3), 3, range=(2.0, 1.0), name="range_reversed")
    yield _err(np.ones(3, I64), 3, error=NotImplementedError, name="int")


def _msort_cases(a, dtype):
    yield _s(a((5,)))
    yield _s(a((4, 3)), name="2d")
    yield _s(NonContig(a((4, 3))), name="transposed")


def _runs(shape):
    """An integer-valued array with runs of equal values."""
    rng = np.random.default_rng(0)
    return np.repeat(rng.integers(0, 3, size=shape), 2, axis=0)


def _unique_consecutive_cases(a, dtype):
    x = _runs((4, 3)).astype(dtype)
    yield _s(x.reshape(-1))
    yield _s(x, return_inverse=True, return_counts=True, name="inverse_counts_flat")
    yield _s(x, return_counts=True, dim=0, name="dim0_counts")
    yield _s(x, return_inverse=True, dim=1, name="dim1_inverse")
    yield _s(np.zeros((0,), dtype), return_inverse=True, return_counts=True, name="empty")
    yield _s(np.asarray(x[0, 0]), return_inverse=True, name="0d")


def _argwhere_cases(a, dtype):
    yield _s(a((3, 4), low=-1, high=1) if dtype != B else a((3, 4)))
    yield _s(np.zeros((2, 3), dtype), name="none")
    yield _s(np.asarray(1, dtype), name="0d")


# --- dist / vdot ---------------------------------------------------------------------------------

def _dist_cases(a, dtype):
    yield _s(a((3, 4)), a((3, 4)))
    yield _s(a((3, 4)), a((4,)), name="broadcast")
    for p in (1, 3, 0.5, float("inf"), -float("inf")):
        yield _s(a((5,)), a((5,)), p, name=f"p{p}")
    # p=0: torch's result requires grad but its backward raises ("undefined Tensor")
    yield SampleInput(a((5,)), (a((5,)), 0), name="p0", grad=False)
    yield _s(NonContig(a((4, 3))), a((4, 3)), name="transposed")


def _vdot_cases(a, dtype):
    yield _s(a((5,)), a((5,)))
    yield _s(a((0,)), a((0,)), name="empty")
    yield _s(NonContig(a((4,))), a((4,)), name="strided")


def _vdot_errors():
    yield _err(np.ones(3), np.ones(3, F32), name="dtypes")
    yield _err(np.ones((2, 3)), np.ones(3), name="2d")
    yield _err(np.ones(3), np.ones(4), name="sizes")


# --- trapezoid -----------------------------------------------------------------------------------

def _trapezoid_cases(a, dtype):
    yield _s(a((3, 5)))
    yield _s(a((3, 5)), dx=0.5, name="dx")
    yield _s(a((3, 5)), dim=0, name="dim0")
    yield _s(a((3, 5)), np.sort(a((5,))), name="x_1d")
    yield _s(a((3, 5)), np.sort(a((3, 5)), axis=1), name="x_same_shape")
    yield _s(a((4, 3)), np.sort(a((4,))), dim=0, name="x_dim0")
    yield _s(a((3, 1)), name="one_point")
    yield SampleInput(a((3, 0)), name="empty", grad=False)  # torch's result has no history
    yield _s(NonContig(a((5, 3))), dx=2.0, name="transposed")


def _trapz_cases(a, dtype):
    yield _s(a((3, 5)))
    yield _s(a((3, 5)), np.sort(a((5,))), name="x")
    yield _s(a((3, 5)), dx=0.25, dim=0, name="dx_dim")


def _trapezoid_errors():
    yield _err(np.ones((2, 3)), np.ones(4), name="x_length")


# --- renorm --------------------------------------------------------------------------------------

def _renorm_cases(a, dtype):
    yield _s(a((3, 4)), 2, 0, 1.0)
    yield _s(a((3, 4)), 1, 1, 2.0, name="p1_dim1")
    yield _s(a((2, 3, 4)), 3, -1, 0.5, name="3d")
    yield _s(a((3, 4)) * 0.01, 2, 0, 5.0, name="below_max")
    yield _s(NonContig(a((4, 3))), 2.5, 0, 1.5, name="transposed")


def _renorm_errors():
    yield _err(np.ones((2, 3)), 0, 0, 1.0, name="p0")
    yield _err(np.ones((2, 3)), 2, 0, -1.0, name="negative_maxnorm")
    yield _err(np.ones(3), 2, 0, 1.0, name="1d")
    yield _err(np.ones((2, 3), I64), 2, 0, 1.0, name="int")


def _renorm_inplace(m):
    def run(x, *args):
        y = x.clone()
        out = y.renorm_(*args)
        assert out is y
        return y
    return run


# --- the table -----------------------------------------------------------------------------------

def statistics_ops() -> list[OpInfo]:
    ops = []
    ops += fn_and_method("nansum", _gen(_nan_reduce_cases), dtypes=FLOAT_INT,
                         mixed=_nansum_mixed)
    ops += fn_and_method("nanmean", _gen(_nan_reduce_cases), errors=_nanmean_errors)
    ops += fn_and_method("nanmedian", _gen(_nanmedian_cases), dtypes=FLOAT_INT,
                         errors=_nanmedian_errors)
    ops += fn_and_method("quantile", _gen(_quantile_cases(False)),
                         errors=_quantile_errors("quantile"))
    ops += fn_and_method("nanquantile", _gen(_quantile_cases(True)),
                         errors=_quantile_errors("nanquantile"))
    ops.append(OpInfo("std_mean", function("std_mean"), _gen(_moments_cases)))
    ops.append(OpInfo("var_mean", function("var_mean"), _gen(_moments_cases)))
    ops += fn_and_method("cov", _gen(_cov_cases), mixed=_cov_mixed, errors=_cov_errors)
    ops += fn_and_method("corrcoef", _gen(_corrcoef_cases))
    ops += fn_and_method("histogram", _gen(_histogram_cases), supports_grad=False,
                         requires_grad_parity=False,
                         errors=_histogram_errors)
    ops += fn_and_method("msort", _gen(_msort_cases), dtypes=FLOAT_INT)
    ops += fn_and_method("unique_consecutive", _gen(_unique_consecutive_cases),
                         dtypes=FLOAT_INT + (B,), supports_grad=False,
                         requires_grad_parity=False)
    ops += fn_and_method("argwhere", _gen(_argwhere_cases), dtypes=FLOAT_INT + (B,),
                         supports_grad=False)
    ops += fn_and_method("dist", _gen(_dist_cases))
    ops += fn_and_method("vdot", _gen(_vdot_cases), dtypes=FLOAT_INT, errors=_vdot_errors)
    ops.append(OpInfo("trapezoid", function("trapezoid"), _gen(_trapezoid_cases),
                      errors=_trapezoid_errors))
    ops.append(OpInfo("trapz", function("trapz"), _gen(_trapz_cases)))
    ops.append(OpInfo("cumulative_trapezoid", function("cumulative_trapezoid"),
                      _gen(_trapezoid_cases), errors=_trapezoid_errors))
    ops += fn_and_method("renorm", _gen(_renorm_cases), errors=_renorm_errors)
    ops.append(OpInfo("Tensor.renorm_", _renorm_inplace, _gen(_renorm_cases)))
    return ops


def op_db() -> list[OpInfo]:
    return statistics_ops()
