"""OpInfos for sorting, selection and scans: sort, argsort, topk, kthvalue, median, mode, unique,
cumsum, cumprod.

torch leaves the index of equal elements unspecified unless a sort is stable, so the samples
that compare indices hold distinct values, except where torch's choice is fixed: ``stable=True``
sorts, the lower median, and mode's last occurrence (for slices as short as these). Samples at
ties have kinks (``gradcheck=False``).
"""

from __future__ import annotations

import numpy as np

from .core import ALL, FLOAT_INT, DType, ErrorInput, NonContig, OpInfo, SampleInput, make
from .elementwise import fn_and_method, function

F32, F64, I32, I64, B = np.float32, np.float64, np.int32, np.int64, np.bool_
_NAN = np.nan


def _distinct(dtype, rng, shape):
    """Values without ties: random floats, or a shuffled range of integers."""
    if np.dtype(dtype).kind == "f":
        return make(shape, dtype, rng)
    n = int(np.prod(shape))
    return (rng.permutation(n) - n // 2).reshape(shape).astype(dtype)


def _is_float(dtype):
    return np.dtype(dtype).kind == "f"


def _dim_errors(*args):
    def errors():
        yield ErrorInput(SampleInput(np.ones((2, 3)), args, kwargs=dict(dim=2)), IndexError, "dim")
        yield ErrorInput(SampleInput(np.ones((2, 3)), args, kwargs=dict(dim=-3)), IndexError,
                         "neg_dim")
    return errors


# --- sort / argsort / topk -------------------------------------------------------------------

def sort_samples(dtype, rng):
    a = lambda s: _distinct(dtype, rng, s)  # noqa: E731
    yield SampleInput(a((3, 4)), name="default_dim")
    yield SampleInput(a((3, 4)), (0, True), name="dim0_descending")
    yield SampleInput(a((2, 3, 4)), kwargs=dict(dim=-2, descending=False), name="neg_dim_3d")
    yield SampleInput(a((5,)), kwargs=dict(descending=True), name="1d_descending")
    yield SampleInput(a((3, 4)), kwargs=dict(dim=1, stable=True), name="stable_kwarg")
    yield SampleInput(a(()), name="0d")
    yield SampleInput(a(()), (0,), name="0d_dim")
    yield SampleInput(a((3, 1)), (1,), name="size1")
    yield SampleInput(a((0, 3)), (0,), name="empty_sorted_dim")
    yield SampleInput(a((3, 0)), (0,), name="empty_other_dim")
    yield SampleInput(NonContig(a((4, 3))), (0,), name="transposed")
    yield SampleInput(NonContig(a((6,))), kwargs=dict(descending=True), name="strided")
    ties = np.array([[1, 0, 1, 0, 1], [2, 2, -1, 2, -1]]).astype(dtype)
    yield SampleInput(ties, kwargs=dict(stable=True), name="stable_ties", gradcheck=False)
    yield SampleInput(ties, kwargs=dict(stable=True, descending=True), name="stable_ties_desc",
                      gradcheck=False)
    if _is_float(dtype):
        nan = np.array([[3.0, _NAN, 1.0, _NAN], [-1.0, 2.0, _NAN, 0.5]], dtype=dtype)
        yield SampleInput(nan, kwargs=dict(stable=True), name="nan_last", gradcheck=False)
        yield SampleInput(nan, kwargs=dict(stable=True, descending=True), name="nan_first",
                          gradcheck=False)


def bool_sort_samples(dtype, rng):
    """bools always tie: stable sorts only."""
    x = rng.random((3, 5)) < 0.5
    yield SampleInput(x, kwargs=dict(stable=True), name="stable")
    yield SampleInput(x, kwargs=dict(dim=0, descending=True, stable=True), name="stable_desc")


def argsort_samples(dtype, rng):
    a = lambda s: _distinct(dtype, rng, s)  # noqa: E731
    yield SampleInput(a((3, 4)), name="default_dim")
    yield SampleInput(a((3, 4)), (0, True), name="dim0_descending")
    yield SampleInput(a((2, 3, 4)), kwargs=dict(dim=-2), name="neg_dim_3d")
    yield SampleInput(a(()), name="0d")
    yield SampleInput(a((0, 3)), (0,), name="empty")
    yield SampleInput(NonContig(a((4, 3))), (1,), name="transposed")
    ties = np.array([[1, 0, 1, 0, 1], [2, 2, -1, 2, -1]]).astype(dtype)
    yield SampleInput(ties, kwargs=dict(stable=True), name="stable_ties")
    yield SampleInput(ties, kwargs=dict(stable=True, descending=True, dim=1),
                      name="stable_ties_desc")


def topk_samples(dtype, rng):
    a = lambda s: _distinct(dtype, rng, s)  # noqa: E731
    yield SampleInput(a((3, 5)), (2,), name="k2")
    yield SampleInput(a((3, 5)), (3,), kwargs=dict(largest=False), name="smallest")
    yield SampleInput(a((4, 3)), (1, 0), name="dim0")
    yield SampleInput(a((2, 3, 4)), kwargs=dict(k=4, dim=-1), name="k_all")
    yield SampleInput(a((3, 5)), (0,), name="k0")
    yield SampleInput(a(()), (1,), name="0d")
    yield SampleInput(a(()), (0,), name="0d_k0")
    yield SampleInput(a((3, 0)), (0,), name="empty")
    yield SampleInput(a((0, 4)), (2,), name="empty_other_dim")
    yield SampleInput(NonContig(a((4, 3))), (2, 0, True, True), name="transposed_positional")
    if _is_float(dtype):
        nan = np.array([[1.0, _NAN, 3.0, 2.0], [0.5, -1.0, 4.0, _NAN]], dtype=dtype)
        yield SampleInput(nan, (2,), name="nan_largest", gradcheck=False)
        yield SampleInput(nan, (2,), kwargs=dict(largest=False), name="nan_smallest")


def _sorted_topk(m):
    """``topk(sorted=False)`` leaves the order to torch: compare the values and indices sorted."""
    def call(x, k, **kwargs):
        values, indices = m.topk(x, k, sorted=False, **kwargs)
        return m.sort(values).values, m.sort(indices).values
    return call


def unsorted_topk_samples(dtype, rng):
    a = lambda s: _distinct(dtype, rng, s)  # noqa: E731
    yield SampleInput(a((3, 6)), (3,), name="k3")
    yield SampleInput(a((3, 6)), (4,), kwargs=dict(largest=False), name="smallest")


def _topk_errors():
    yield ErrorInput(SampleInput(np.ones((2, 3)), (4,)), RuntimeError, "k_too_large")
    yield ErrorInput(SampleInput(np.ones((2, 3)), (-1,)), RuntimeError, "k_negative")
    yield ErrorInput(SampleInput(np.ones(()), (2,)), RuntimeError, "0d_k2")
    yield ErrorInput(SampleInput(np.ones((2, 3), B), (1,)), RuntimeError, "bool")
    yield from _dim_errors(1)()


# --- kthvalue / median / mode --------------------------------------------------------------

def kthvalue_samples(dtype, rng):
    a = lambda s: _distinct(dtype, rng, s)  # noqa: E731
    yield SampleInput(a((3, 5)), (2,), name="k2")
    yield SampleInput(a((3, 5)), (1,), name="k1")
    yield SampleInput(a((3, 5)), (5,), name="k_last")
    yield SampleInput(a((4, 3)), (3, 0, True), name="dim0_keepdim")
    yield SampleInput(a((2, 3, 4)), kwargs=dict(k=2, dim=-2), name="neg_dim_3d")
    yield SampleInput(a(()), (1,), name="0d")
    yield SampleInput(a(()), (1, 0, True), name="0d_keepdim")
    yield SampleInput(a((0, 3)), (1, 1), name="empty_other_dim")
    yield SampleInput(NonContig(a((4, 3))), (2,), name="transposed")
    if _is_float(dtype):
        nan = np.array([[1.0, _NAN, 3.0, _NAN], [0.5, -1.0, 4.0, 2.0]], dtype=dtype)
        yield SampleInput(nan, (3,), name="nan_sorted_last", gradcheck=False)


def _kthvalue_errors():
    yield ErrorInput(SampleInput(np.ones((2, 3)), (0,)), RuntimeError, "k0")
    yield ErrorInput(SampleInput(np.ones((2, 3)), (4,)), RuntimeError, "k_too_large")
    yield ErrorInput(SampleInput(np.ones((2, 0)), (1,)), IndexError, "empty_dim")
    yield from _dim_errors(1)()


def median_samples(dtype, rng):
    """No dim: a 0-d lower median; equal elements share the gradient evenly."""
    a = lambda s: _distinct(dtype, rng, s)  # noqa: E731
    yield SampleInput(a((3, 5)), name="odd")
    yield SampleInput(a((2, 4)), name="even_lower")
    yield SampleInput(a(()), name="0d")
    yield SampleInput(NonContig(a((4, 3))), name="transposed")
    ties = np.array([[1, 2, 2], [3, 2, 0]]).astype(dtype)
    yield SampleInput(ties, name="ties", gradcheck=False)
    if _is_float(dtype):
        yield SampleInput(a((0, 3)), name="empty_nan")
        nan = np.array([[1.0, _NAN, 3.0], [_NAN, 2.0, 0.0]], dtype=dtype)
        yield SampleInput(nan, name="nan", gradcheck=False)


def median_dim_samples(dtype, rng):
    a = lambda s: _distinct(dtype, rng, s)  # noqa: E731
    yield SampleInput(a((3, 5)), (1,), name="odd")
    yield SampleInput(a((3, 4)), (-1,), name="even_lower")
    yield SampleInput(a((4, 3)), kwargs=dict(dim=0, keepdim=True), name="keepdim")
    yield SampleInput(a((2, 3, 4)), (1,), name="3d")
    yield SampleInput(a(()), (0,), name="0d")
    yield SampleInput(a((0, 3)), (1,), name="empty_other_dim")
    yield SampleInput(NonContig(a((4, 3))), (0,), name="transposed")
    if _is_float(dtype):
        nan = np.array([[1.0, _NAN, 3.0, _NAN], [0.5, -1.0, 4.0, 2.0]], dtype=dtype)
        yield SampleInput(nan, (1,), name="nan_first_index", gradcheck=False)


def _median_errors():
    yield ErrorInput(SampleInput(np.ones((0, 3)), kwargs=dict(dim=0)), IndexError, "empty_dim")
    yield ErrorInput(SampleInput(np.ones((2, 3), B)), NotImplementedError, "bool")
    yield from _dim_errors()()


def mode_samples(dtype, rng):
    """Repeats everywhere: the smallest of the most frequent values, at its last occurrence."""
    def repeats(shape, n_values=3):
        return rng.integers(-1, n_values - 1, shape).astype(dtype)

    yield SampleInput(repeats((3, 6)), name="default_dim", gradcheck=False)
    yield SampleInput(repeats((5, 3)), (0, True), name="dim0_keepdim", gradcheck=False)
    yield SampleInput(repeats((2, 3, 7), 4), kwargs=dict(dim=-1), name="3d", gradcheck=False)
    yield SampleInput(np.array([[4, 4, 1, 1], [3, 3, 1, 1]]).astype(dtype), name="tied_counts",
                      gradcheck=False)
    yield SampleInput(_distinct(dtype, rng, (3, 4)), name="all_distinct")
    yield SampleInput(_distinct(dtype, rng, ()), name="0d")
    yield SampleInput(repeats((0, 3)), (1,), name="empty_other_dim")
    yield SampleInput(NonContig(repeats((5, 3))), (0,), name="transposed", gradcheck=False)
    if _is_float(dtype):
        nan = np.array([[1.0, _NAN, 3.0, _NAN], [_NAN, 2.0, 2.0, _NAN]], dtype=dtype)
        yield SampleInput(nan, name="nan_never_equal", gradcheck=False)


def _mode_errors():
    yield ErrorInput(SampleInput(np.ones((0, 3)), (0,)), IndexError, "empty_dim")
    yield from _dim_errors()()


# --- unique ----------------------------------------------------------------------------------

def unique_samples(dtype, rng):
    def repeats(shape):
        if dtype is B:
            return rng.random(shape) < 0.5
        return rng.integers(-2, 3, shape).astype(dtype)

    yield SampleInput(repeats((8,)), name="values")
    yield SampleInput(repeats((3, 4)), kwargs=dict(return_inverse=True), name="inverse")
    yield SampleInput(repeats((3, 4)), kwargs=dict(return_counts=True), name="counts")
    yield SampleInput(repeats((2, 3, 2)), (True, True, True), name="all_positional")
    yield SampleInput(repeats((6,)), kwargs=dict(sorted=False), name="unsorted_is_sorted")
    yield SampleInput(repeats(()), kwargs=dict(return_inverse=True, return_counts=True),
                      name="0d")
    yield SampleInput(repeats((0, 3)), kwargs=dict(return_inverse=True, return_counts=True),
                      name="empty")
    yield SampleInput(NonContig(repeats((4, 3))), kwargs=dict(return_inverse=True),
                      name="transposed")
    rows = repeats((3, 2))[[0, 1, 0, 2, 1]]
    yield SampleInput(rows, kwargs=dict(dim=0, return_inverse=True, return_counts=True),
                      name="dim0")
    yield SampleInput(rows.T.copy(), kwargs=dict(dim=-1, return_inverse=True), name="dim1")
    yield SampleInput(np.zeros((0, 3), dtype), kwargs=dict(dim=0, return_counts=True),
                      name="dim_empty_selected")
    if _is_float(dtype):
        nan = np.array([_NAN, 1.0, _NAN, 1.0, -0.5], dtype=dtype)
        yield SampleInput(nan, kwargs=dict(return_inverse=True, return_counts=True),
                          name="nan_distinct")


def _unique_errors():
    yield ErrorInput(SampleInput(np.ones((2, 3)), kwargs=dict(dim=2)), IndexError, "dim")
    yield ErrorInput(SampleInput(np.ones(()), kwargs=dict(dim=0)), IndexError, "0d_dim")
    yield ErrorInput(SampleInput(np.ones((0, 3)), kwargs=dict(dim=1)), RuntimeError,
                     "empty_unselected")


# --- cumsum / cumprod ----------------------------------------------------------------------

def scan_samples(low=-3.0, high=3.0):
    def gen(dtype, rng):
        def a(s):
            return make(s, dtype, rng, low, high) if dtype is not B else rng.random(s) < 0.5

        yield SampleInput(a((3, 4)), (1,), name="dim1")
        yield SampleInput(a((3, 4)), (0,), name="dim0")
        yield SampleInput(a((2, 3, 4)), kwargs=dict(dim=-2), name="neg_dim_3d")
        yield SampleInput(a((5,)), (0,), name="1d")
        yield SampleInput(a(()), (0,), name="0d")
        yield SampleInput(a(()), (-1,), name="0d_neg")
        yield SampleInput(a((3, 1)), (1,), name="size1")
        yield SampleInput(a((0, 3)), (0,), name="empty")
        yield SampleInput(NonContig(a((4, 3))), (1,), name="transposed")
        yield SampleInput(NonContig(a((6,))), (0,), name="strided")
        if dtype is F64:  # finite differences are too coarse through a float32 result
            yield SampleInput(a((3, 4)), (1,), kwargs=dict(dtype=DType("float32")),
                              name="dtype_f32", gradcheck=False)
        else:
            yield SampleInput(a((3, 4)), (1,), kwargs=dict(dtype=DType("float64")),
                              name="dtype_f64")
    return gen


def scan_mixed(rng):
    """int32 and uint8 scans accumulate in int64, as torch's."""
    yield SampleInput(make((3, 4), I32, rng, -4, 4), (1,), name="int32")
    yield SampleInput(make((5,), np.uint8, rng, 0, 4), (0,), name="uint8")
    yield SampleInput(make((3, 4), F32, rng), (0,), kwargs=dict(dtype=DType("float64")),
                      name="f32_to_f64")


def cumprod_samples(dtype, rng):
    """Zeros take the rule's other branches: at the first zero of a slice and after it."""
    yield from scan_samples(0.5, 1.8)(dtype, rng)
    if dtype is B:
        return
    rows = [[2, 0, 3, 0.5], [0, 1.5, -2, 1], [1.2, -0.8, 1.5, 0], [0, 0, 2, 3], [1, 2, 3, 4]]
    zeros = np.array(rows).astype(dtype)
    yield SampleInput(zeros, (1,), name="zeros")
    yield SampleInput(zeros.T.copy(), (0,), name="zeros_dim0")
    yield SampleInput(np.array([0, 2, 0, -1.5, 3]).astype(dtype), (0,), name="1d_two_zeros")
    yield SampleInput(np.array(0).astype(dtype), (0,), name="0d_zero")


def sorting_ops() -> list[OpInfo]:
    ops = []
    ops += fn_and_method("sort", sort_samples, dtypes=FLOAT_INT, errors=_dim_errors())
    ops.append(OpInfo("sort.bool", function("sort"), bool_sort_samples, dtypes=(B,)))
    ops += fn_and_method("argsort", argsort_samples, dtypes=FLOAT_INT, supports_grad=False,
                         errors=_dim_errors())
    ops += fn_and_method("topk", topk_samples, dtypes=FLOAT_INT, errors=_topk_errors)
    ops.append(OpInfo("topk.unsorted", _sorted_topk, unsorted_topk_samples, dtypes=FLOAT_INT))
    ops += fn_and_method("kthvalue", kthvalue_samples, dtypes=FLOAT_INT,
                         errors=_kthvalue_errors)
    ops += fn_and_method("median", median_samples, dtypes=FLOAT_INT, errors=_median_errors)
    for o in fn_and_method("median", median_dim_samples, dtypes=FLOAT_INT):
        o.name += ".dim"
        ops.append(o)
    ops += fn_and_method("mode", mode_samples, dtypes=FLOAT_INT, errors=_mode_errors)
    # NOTE: torch's values require grad (its backward raises); graphgrad's are not differentiable
    ops += fn_and_method("unique", unique_samples, dtypes=ALL, supports_grad=False,
                         requires_grad_parity=False, errors=_unique_errors)
    ops += fn_and_method("cumsum", scan_samples(), dtypes=ALL, mixed=scan_mixed,
                         errors=_dim_errors())
    ops += fn_and_method("cumprod", cumprod_samples, dtypes=ALL, mixed=scan_mixed,
                         errors=_dim_errors())
    return ops


def op_db() -> list[OpInfo]:
    return sorting_ops()
