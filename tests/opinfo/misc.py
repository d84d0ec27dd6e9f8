"""OpInfos for ops/misc.py and ops/binning.py: addcmul, addcdiv, heaviside, cross
(linalg.cross), cdist, aminmax, tile, repeat_interleave, block_diag, cartesian_prod,
combinations, searchsorted, bucketize, histc, bincount, isin, multinomial (statistically), and
the in-place forms. The scans and indexed writes are in misc_writes.py.
"""

from __future__ import annotations

import numpy as np

from .core import ALL, FLOAT, FLOAT_INT, ErrorInput, NonContig, OpInfo, SampleInput, make
from .elementwise import fn_and_method, function
from .inplace import on_clone

F32, F64, I32, I64, B = np.float32, np.float64, np.int32, np.int64, np.bool_


def _arr(dtype, rng, shape, low=-3.0, high=3.0):
    if dtype is B:
        return rng.random(shape) < 0.5
    if np.dtype(dtype).kind == "f":
        return make(shape, dtype, rng, low, high)
    return make(shape, dtype, rng, -5, 5)


def _is_float(dtype):
    return np.dtype(dtype).kind == "f"


# --- addcmul / addcdiv -------------------------------------------------------------------------

def addc_samples(div):
    def gen(dtype, rng):
        a = lambda s: _arr(dtype, rng, s)  # noqa: E731
        d = (lambda s: make(s, dtype, rng, 0.5, 2.0)) if div else a  # noqa: E731
        v = 0.5 if _is_float(dtype) else 2
        yield SampleInput(a((3, 4)), (a((3, 4)), d((3, 4))), name="same_shape")
        yield SampleInput(a((3, 4)), (a((3, 4)), d((3, 4))), kwargs=dict(value=v), name="value")
        yield SampleInput(a((3, 1)), (a((1, 4)), d((4,))), kwargs=dict(value=-2),
                          name="broadcast")
        yield SampleInput(a((4,)), (a((2, 1, 4)), d(())), name="broadcast_up")
        yield SampleInput(a(()), (a(()), d(())), name="0d")
        yield SampleInput(a((0, 3)), (a((0, 3)), d((3,))), name="empty")
        yield SampleInput(NonContig(a((4, 3))), (a((3,)), NonContig(d((4, 3)))),
                          name="transposed")
        if not div and not _is_float(dtype):
            yield SampleInput(a((3,)), (a((3,)), a((3,))), kwargs=dict(value=2.7),
                              name="float_value_truncated")
    return gen


def addc_mixed(div):
    def gen(rng):
        d = (lambda s, t: make(s, t, rng, 0.5, 2.0)) if div else (  # noqa: E731
            lambda s, t: make(s, t, rng, -3, 3))
        yield SampleInput(make((3,), F32, rng), (make((3,), F64, rng), d((3,), F32)),
                          name="f32_f64")
        # NOTE: no gradient: torch's own backward fails to cast into the int64 divisor
        yield SampleInput(make((2, 3), I64, rng, -5, 5), (make((3,), F32, rng), d((2, 3), I64)),
                          name="int_float", grad=not div)
        yield SampleInput(make((3,), F64, rng), (2, make((3,), F64, rng), d((3,), F64)),
                          name="deprecated_positional_value")
    return gen


def _addcdiv_errors():
    i = np.array([1, 2, 3])
    yield ErrorInput(SampleInput(i, (i, i)), RuntimeError, "integer_division")
    yield ErrorInput(SampleInput(np.ones(3), (np.ones(2), np.ones(3))), RuntimeError, "shape")


def _addcmul_errors():
    b = np.array([True, False])
    yield ErrorInput(SampleInput(b, (b, b)), NotImplementedError, "bool")
    yield ErrorInput(SampleInput(np.ones(3), (np.ones(2), np.ones(3))), RuntimeError, "shape")


def _addc_inplace_samples(div):
    def gen(dtype, rng):
        for s in addc_samples(div)(dtype, rng):
            if s.name not in ("broadcast", "broadcast_up"):
                yield s
    return gen


# --- heaviside ---------------------------------------------------------------------------------

def heaviside_samples(dtype, rng):
    def a(shape):
        x = _arr(dtype, rng, shape)
        if dtype is not B:
            x[..., ::2] = 0  # zeros take the values
        return x
    yield SampleInput(a((3, 4)), (_arr(dtype, rng, (3, 4)),), nondiff=(0, 1))
    yield SampleInput(a((3, 4)), (_arr(dtype, rng, ()),), name="0d_values", nondiff=(0, 1))
    yield SampleInput(a((4,)), (_arr(dtype, rng, (2, 1)),), name="broadcast", nondiff=(0, 1))
    yield SampleInput(_arr(dtype, rng, ()), (_arr(dtype, rng, ()),), name="0d", nondiff=(0, 1))
    yield SampleInput(a((0, 2)), (_arr(dtype, rng, (2,)),), name="empty", nondiff=(0, 1))
    yield SampleInput(NonContig(a((4, 3))), (_arr(dtype, rng, (4, 3)),), name="transposed",
                      nondiff=(0, 1))
    if _is_float(dtype):
        x = np.array([np.nan, 0.0, -0.0, np.inf, -np.inf], dtype)
        yield SampleInput(x, (_arr(dtype, rng, (5,)),), name="specials", nondiff=(0, 1))


def _heaviside_errors():
    yield ErrorInput(SampleInput(np.ones(3, F32), (np.ones(3, F64),)), RuntimeError, "dtypes")
    yield ErrorInput(SampleInput(np.ones(3), (0.5,)), TypeError, "scalar_values")


# --- cross ---------------------------------------------------------------------------------------

def cross_samples(dtype, rng):
    a = lambda s: _arr(dtype, rng, s)  # noqa: E731
    yield SampleInput(a((4, 3)), (a((4, 3)),), kwargs=dict(dim=1), name="dim1")
    yield SampleInput(a((3, 2)), (a((3, 2)), 0), name="dim0")
    yield SampleInput(a((2, 3, 3)), (a((2, 3, 3)),), kwargs=dict(dim=-2), name="neg_dim")
    yield SampleInput(a((1, 3)), (a((4, 3)),), kwargs=dict(dim=1), name="broadcast")
    yield SampleInput(a((3,)), (a((3,)), 0), name="1d")
    yield SampleInput(a((2, 3, 3)), (a((2, 3, 3)),), name="no_dim_first_size3")
    yield SampleInput(a((0, 3)), (a((0, 3)), 1), name="empty")
    yield SampleInput(NonContig(a((4, 3))), (a((4, 3)), 1), name="transposed")


def linalg_cross_samples(dtype, rng):
    a = lambda s: _arr(dtype, rng, s)  # noqa: E731
    yield SampleInput(a((4, 3)), (a((4, 3)),), name="default_dim")
    yield SampleInput(a((3, 2)), (a((3, 2)),), kwargs=dict(dim=0), name="dim0")
    yield SampleInput(a((2, 1, 3)), (a((5, 3)).reshape(1, 5, 3),), name="broadcast")


def _cross_errors():
    yield ErrorInput(SampleInput(np.ones((2, 4)), (np.ones((2, 4)), 1)), RuntimeError, "len4")
    yield ErrorInput(SampleInput(np.ones((2, 3)), (np.ones(3), 1)), RuntimeError, "rank")
    yield ErrorInput(SampleInput(np.ones(3, I64), (np.ones(3), 0)), RuntimeError, "dtypes")
    yield ErrorInput(SampleInput(np.ones(3, B), (np.ones(3, B), 0)), NotImplementedError, "bool")
    yield ErrorInput(SampleInput(np.ones((2, 3)), (np.ones((2, 3)), 2)), IndexError, "dim")


def _linalg_cross(m):
    return m.linalg.cross


# --- cdist ---------------------------------------------------------------------------------------

def cdist_samples(dtype, rng):
    a = lambda s: make(s, dtype, rng)  # noqa: E731
    yield SampleInput(a((4, 3)), (a((5, 3)),), name="p2")
    for p in (0.0, 0.5, 1.0, 1.5, 3.0, float("inf")):
        yield SampleInput(a((4, 3)), (a((2, 3)), p), name=f"p{p}", gradcheck=p != 0.0)
    yield SampleInput(a((30, 3)), (a((4, 3)),), name="p2_matmul")
    yield SampleInput(a((3, 2)), (a((4, 2)),), kwargs=dict(compute_mode="use_mm_for_euclid_dist"),
                      name="p2_forced_matmul")
    yield SampleInput(a((30, 3)), (a((4, 3)),),
                      kwargs=dict(compute_mode="donot_use_mm_for_euclid_dist"), name="p2_no_mm")
    yield SampleInput(a((2, 1, 3, 2)), (a((4, 5, 2)),), name="batch_broadcast")
    yield SampleInput(a((2, 3, 2)), (a((2, 4, 2)), 1.0), name="batch_p1")
    yield SampleInput(a((0, 3)), (a((4, 3)),), name="empty_rows")
    yield SampleInput(a((2, 0)), (a((4, 0)),), name="empty_cols", grad=False)
    yield SampleInput(NonContig(a((4, 3))), (a((2, 3)),), name="transposed")
    x = a((3, 2))
    yield SampleInput(x, (x[[0, 2]].copy(),), name="zero_distance", gradcheck=False)


def cdist_mm_samples(dtype, rng):
    """The matrix-product path (p = 2, over 25 rows), which torch differentiates twice."""
    a = lambda s: make(s, dtype, rng)  # noqa: E731
    yield SampleInput(a((26, 2)), (a((3, 2)),), name="rows")
    yield SampleInput(a((2, 3)), (a((2, 26, 3)),), name="batched_other")


def _cdist_errors():
    yield ErrorInput(SampleInput(np.ones(3), (np.ones((2, 3)),)), RuntimeError, "1d")
    yield ErrorInput(SampleInput(np.ones((2, 3)), (np.ones((2, 2)),)), RuntimeError, "cols")
    yield ErrorInput(SampleInput(np.ones((2, 3)), (np.ones((2, 3)), -1.0)), RuntimeError,
                     "neg_p")
    yield ErrorInput(SampleInput(np.ones((2, 3), I64), (np.ones((2, 3), I64),)), RuntimeError,
                     "int")
    yield ErrorInput(SampleInput(np.ones((2, 3), F32), (np.ones((2, 3)),)), RuntimeError,
                     "dtypes")
    yield ErrorInput(SampleInput(np.ones((5, 2, 3)), (np.ones((4, 4, 3)),)), RuntimeError,
                     "batch")
    yield ErrorInput(SampleInput(np.ones((2, 3)), (np.ones((2, 3)),),
                                 kwargs=dict(compute_mode="bad")), ValueError, "mode")


# --- aminmax -----------------------------------------------------------------------------------

def aminmax_samples(dtype, rng):
    def a(shape):
        if dtype is B:
            return rng.random(shape) < 0.5
        n = int(np.prod(shape))
        return (rng.permutation(n) - n // 2).reshape(shape).astype(dtype)
    yield SampleInput(a((3, 4)), name="all")
    yield SampleInput(a((3, 4)), kwargs=dict(dim=1), name="dim1")
    yield SampleInput(a((3, 4)), kwargs=dict(dim=0, keepdim=True), name="keepdim")
    yield SampleInput(a((2, 3, 4)), kwargs=dict(dim=-2), name="neg_dim")
    yield SampleInput(a(()), name="0d")
    yield SampleInput(a(()), kwargs=dict(dim=0, keepdim=True), name="0d_dim")
    yield SampleInput(a((0, 3)), kwargs=dict(dim=1), name="empty_other_dim")
    yield SampleInput(NonContig(a((4, 3))), kwargs=dict(dim=0), name="transposed")
    if dtype is not B:
        ties = np.array([[1, 3, 3], [0, 0, 2]]).astype(dtype)
        yield SampleInput(ties, name="ties_all", gradcheck=False)
        yield SampleInput(ties, kwargs=dict(dim=1), name="ties_dim", gradcheck=False)


def _aminmax_errors():
    yield ErrorInput(SampleInput(np.ones(0)), RuntimeError, "empty")
    yield ErrorInput(SampleInput(np.ones((2, 0)), kwargs=dict(dim=1)), IndexError, "empty_dim")
    yield ErrorInput(SampleInput(np.ones((2, 3)), kwargs=dict(dim=2)), IndexError, "dim")


# --- tile / repeat_interleave --------------------------------------------------------------------

def tile_samples(dtype, rng):
    a = lambda s: _arr(dtype, rng, s)  # noqa: E731
    yield SampleInput(a((2, 3)), ((2, 2),), name="same_rank")
    yield SampleInput(a((2, 3)), ((3,),), name="short_dims")
    yield SampleInput(a((3,)), ((2, 1, 2),), name="long_dims")
    yield SampleInput(a(()), ((),), name="0d")
    yield SampleInput(a(()), ((3,),), name="0d_to_1d")
    yield SampleInput(a((0, 2)), ((2, 2),), name="empty")
    yield SampleInput(a((2, 3)), ((0, 1),), name="zero_reps")
    yield SampleInput(NonContig(a((3, 2))), ([2, 1],), name="transposed_list")


def tile_method(m):
    return lambda x, dims: x.tile(dims)


def _tile_errors():
    yield ErrorInput(SampleInput(np.ones(3), (2,)), TypeError, "int_dims")
    yield ErrorInput(SampleInput(np.ones(3), ((-1,),)), RuntimeError, "negative")


def repeat_interleave_samples(dtype, rng):
    a = lambda s: _arr(dtype, rng, s)  # noqa: E731
    yield SampleInput(a((2, 3)), (2,), name="int_flat")
    yield SampleInput(a((2, 3)), (3, 1), name="int_dim1")
    yield SampleInput(a((2, 3)), (2,), kwargs=dict(dim=-2, output_size=4), name="output_size")
    yield SampleInput(a((2, 3)), (np.array([1, 0, 3]), 1), name="tensor_dim1")
    yield SampleInput(a((3, 2)), (np.array([2, 1, 2]),), kwargs=dict(dim=0, output_size=5),
                      name="tensor_output_size")
    yield SampleInput(a((4,)), (np.array(2),), name="tensor_0d")
    yield SampleInput(a((4,)), (np.array([3]),), name="tensor_one_value")
    yield SampleInput(a((2, 3)), (np.array([1, 2, 1, 0, 2, 1]),), name="tensor_flat")
    yield SampleInput(a(()), (3,), name="0d")
    yield SampleInput(a((0, 3)), (2, 0), name="empty")
    yield SampleInput(a((2, 3)), (0, 1), name="zero_repeats")
    yield SampleInput(NonContig(a((3, 2))), (2, 1), name="transposed")


def repeat_interleave_mixed(rng):
    yield SampleInput(make((3,), F64, rng), (np.array([1, 2, 3], I32),), name="int32_repeats")


def repeats_only_samples(dtype, rng):
    yield SampleInput(np.array([1, 0, 3, 2], dtype), name="counts")
    yield SampleInput(np.array([2, 2], dtype), kwargs=dict(output_size=4), name="output_size")
    yield SampleInput(np.zeros(0, dtype), name="empty")


def _repeat_interleave_errors():
    x = np.ones((2, 3))
    yield ErrorInput(SampleInput(x, (-1,)), RuntimeError, "negative")
    yield ErrorInput(SampleInput(x, (np.array([1, -1, 1]), 1)), RuntimeError, "negative_tensor")
    yield ErrorInput(SampleInput(x, (np.array([1, 1]), 1)), RuntimeError, "length")
    yield ErrorInput(SampleInput(x, (np.array([1.0, 1, 1]), 1)), NotImplementedError,
                     "float_repeats")
    yield ErrorInput(SampleInput(x, (np.ones((1, 3), I64), 1)), RuntimeError, "2d_repeats")
    yield ErrorInput(SampleInput(x, (2,), kwargs=dict(output_size=5)), RuntimeError,
                     "output_size")
    yield ErrorInput(SampleInput(x, (np.array([1, 1, 1]), 1), kwargs=dict(output_size=2)),
                     RuntimeError, "tensor_output_size")
    yield ErrorInput(SampleInput(np.ones(()), (2, 0)), IndexError, "0d_dim")
    yield ErrorInput(SampleInput(x, (2, 2)), IndexError, "dim")


# --- block_diag / cartesian_prod / combinations --------------------------------------------------

def block_diag_samples(dtype, rng):
    a = lambda s: _arr(dtype, rng, s)  # noqa: E731
    yield SampleInput(a((2, 3)), (a((1, 2)), a((3, 1))), name="matrices")
    yield SampleInput(a(()), (a((3,)), a((2, 2))), name="0d_and_1d")
    yield SampleInput(a((2, 2)), name="one")
    yield SampleInput(a((0, 2)), (a((2, 0)), a((1, 1))), name="empty_blocks")
    yield SampleInput(NonContig(a((3, 2))), (a((2,)),), name="transposed")


def block_diag_mixed(rng):
    yield SampleInput(make((2, 2), F32, rng), (make((2,), F64, rng),), name="f32_f64")
    yield SampleInput(make((2, 2), I64, rng), (np.array([True, False]),), name="int_bool")


def _block_diag_errors():
    yield ErrorInput(SampleInput(np.ones((1, 1, 1))), RuntimeError, "3d")


def cartesian_prod_samples(dtype, rng):
    a = lambda s: _arr(dtype, rng, s)  # noqa: E731
    yield SampleInput(a((3,)), (a((2,)),), name="two")
    yield SampleInput(a((2,)), (a((3,)), a((2,))), name="three")
    yield SampleInput(a((4,)), name="one")
    yield SampleInput(a((0,)), (a((2,)),), name="empty")
    yield SampleInput(NonContig(a((3,))), (a((2,)),), name="strided")


def _cartesian_prod_errors():
    yield ErrorInput(SampleInput(np.ones((2, 2))), RuntimeError, "2d")
    yield ErrorInput(SampleInput(np.ones(()), (np.ones(2),)), RuntimeError, "0d")
    yield ErrorInput(SampleInput(np.ones(2), (np.ones(2, I64),)), RuntimeError, "dtypes")


def combinations_samples(dtype, rng):
    a = lambda s: _arr(dtype, rng, s)  # noqa: E731
    yield SampleInput(a((4,)), name="pairs")
    yield SampleInput(a((4,)), (3,), name="triples")
    yield SampleInput(a((3,)), kwargs=dict(r=2, with_replacement=True), name="replacement")
    yield SampleInput(a((3,)), (1,), name="r1")
    yield SampleInput(a((3,)), (0,), name="r0", grad=False)
    yield SampleInput(a((2,)), (3,), name="r_too_large")
    yield SampleInput(a((0,)), name="empty")
    yield SampleInput(NonContig(a((4,))), (2, True), name="strided")


def _combinations_errors():
    yield ErrorInput(SampleInput(np.ones((2, 2))), RuntimeError, "2d")
    yield ErrorInput(SampleInput(np.ones(3), (-1,)), RuntimeError, "negative_r")


# --- searchsorted / bucketize ------------------------------------------------------------------

def _sorted(dtype, rng, shape):
    return np.sort(_arr(dtype, rng, shape), axis=-1)


def searchsorted_samples(dtype, rng):
    s = lambda sh: _sorted(dtype, rng, sh)  # noqa: E731
    a = lambda sh: _arr(dtype, rng, sh)  # noqa: E731
    seq = s((6,))
    hits = seq[[0, 2, 2, 5]]  # values equal to boundaries: left and right differ
    yield SampleInput(seq, (a((3, 4)),), name="1d_seq")
    yield SampleInput(seq, (hits,), name="ties_left")
    yield SampleInput(seq, (hits,), kwargs=dict(right=True), name="ties_right")
    yield SampleInput(seq, (hits,), kwargs=dict(side="right"), name="side_right")
    yield SampleInput(seq, (hits,), kwargs=dict(side="left", right=False), name="side_left")
    yield SampleInput(s((3, 5)), (a((3, 4)),), name="batched")
    yield SampleInput(s((2, 3, 5)), (np.sort(a((2, 3, 2)), -1),), kwargs=dict(right=True),
                      name="batched_right")
    batched = s((2, 4))
    yield SampleInput(batched, (batched[:, [3, 0, 1]].copy(),), name="batched_ties")
    yield SampleInput(batched, (batched[:, [3, 0, 1]].copy(),), kwargs=dict(side="right"),
                      name="batched_ties_right")
    yield SampleInput(seq, (a(()),), name="0d_values")
    yield SampleInput(seq, (2,), name="scalar_value")
    yield SampleInput(seq, (a((3,)),), kwargs=dict(out_int32=True), name="out_int32")
    shuffled = a((5,))
    yield SampleInput(shuffled, (a((4,)),),
                      kwargs=dict(sorter=np.argsort(shuffled, kind="stable")), name="sorter")
    rows = a((2, 5))
    yield SampleInput(rows, (a((2, 3)),),
                      kwargs=dict(sorter=np.argsort(rows, -1, kind="stable")),
                      name="batched_sorter")
    yield SampleInput(np.zeros(0, dtype), (a((3,)),), name="empty_seq")
    yield SampleInput(seq, (a((0, 2)),), name="empty_values")
    yield SampleInput(NonContig(s((4, 3))), (NonContig(a((4, 2))),), name="transposed")


def searchsorted_mixed(rng):
    yield SampleInput(np.sort(make((5,), F64, rng)), (make((3,), I64, rng, -3, 3),),
                      name="float_seq_int_values")
    yield SampleInput(np.arange(5, dtype=I32), (make((3,), F32, rng, 0, 4),),
                      name="int32_seq_float_values")


def _searchsorted_errors():
    seq = np.arange(3.0)
    yield ErrorInput(SampleInput(seq, (seq,), kwargs=dict(right=True, side="left")),
                     RuntimeError, "opposites")
    yield ErrorInput(SampleInput(seq, (seq,), kwargs=dict(side="middle")), RuntimeError, "side")
    yield ErrorInput(SampleInput(seq.reshape(1, 3), (seq,)), RuntimeError, "rank")
    yield ErrorInput(SampleInput(np.zeros((2, 3)), (np.zeros((3, 3)),)), RuntimeError, "batch")
    yield ErrorInput(SampleInput(np.array(1.0), (seq,)), RuntimeError, "0d_seq")
    yield ErrorInput(SampleInput(seq, (seq,), kwargs=dict(sorter=np.array([0, 1, 2], I32))),
                     RuntimeError, "sorter_int32")
    yield ErrorInput(SampleInput(seq, (seq,), kwargs=dict(sorter=np.array([0, 1]))),
                     RuntimeError, "sorter_shape")
    yield ErrorInput(SampleInput(seq, (seq,), kwargs=dict(sorter=np.array([0, 1, 3]))),
                     RuntimeError, "sorter_range")
    b = np.array([False, True])
    yield ErrorInput(SampleInput(b, (b,)), NotImplementedError, "bool")


def bucketize_samples(dtype, rng):
    bounds = _sorted(dtype, rng, (5,))
    a = lambda sh: _arr(dtype, rng, sh)  # noqa: E731
    yield SampleInput(a((3, 4)), (bounds,), name="2d")
    yield SampleInput(bounds[[1, 1, 4]], (bounds,), name="ties_left")
    yield SampleInput(bounds[[1, 1, 4]], (bounds,), kwargs=dict(right=True), name="ties_right")
    yield SampleInput(a(()), (bounds,), kwargs=dict(out_int32=True), name="0d")
    yield SampleInput(a((0,)), (bounds,), name="empty")
    yield SampleInput(NonContig(a((4, 3))), (bounds,), name="transposed")


def _bucketize_errors():
    yield ErrorInput(SampleInput(np.ones(3), (np.arange(4.0).reshape(2, 2),)), RuntimeError,
                     "2d_boundaries")


# --- histc / bincount / isin ---------------------------------------------------------------------

def histc_samples(dtype, rng):
    a = lambda sh: make(sh, dtype, rng)  # noqa: E731
    yield SampleInput(a((50,)), name="default")
    yield SampleInput(a((4, 5)), (7,), name="data_range")
    yield SampleInput(a((30,)), (6, -2, 2), name="range_drops_outside")
    yield SampleInput(np.array([0, 1, 2, 3, 3, 0.5], dtype), kwargs=dict(bins=3, min=0, max=3),
                      name="edges")
    yield SampleInput(np.array([0.1, 0.2, 0.3, 0.7, 1.0], dtype), (10, 0, 1), name="decimals")
    yield SampleInput(np.full(4, 2.5, dtype), (4,), name="constant")
    yield SampleInput(a(()), (3,), name="0d")
    yield SampleInput(a((0,)), (3,), name="empty")
    yield SampleInput(NonContig(a((4, 3))), (5,), name="transposed")


def _histc_errors():
    yield ErrorInput(SampleInput(np.arange(3)), NotImplementedError, "int")
    yield ErrorInput(SampleInput(np.ones(3), (0,)), RuntimeError, "bins0")
    yield ErrorInput(SampleInput(np.ones(3), (3, 2, 1)), RuntimeError, "min_gt_max")
    yield ErrorInput(SampleInput(np.array([1.0, np.nan]), (3,)), RuntimeError, "nan_range")
    yield ErrorInput(SampleInput(np.array([1.0, np.inf]), (3,)), RuntimeError, "inf_range")


def bincount_samples(dtype, rng):
    x = rng.integers(0, 6, 20).astype(dtype)
    yield SampleInput(x, name="counts")
    yield SampleInput(x, kwargs=dict(minlength=10), name="minlength")
    yield SampleInput(x, (make((20,), F64, rng),), name="weights_f64", nondiff=(1,))
    yield SampleInput(x, (make((20,), F32, rng),), kwargs=dict(minlength=2), name="weights_f32",
                      nondiff=(1,))
    yield SampleInput(x, (rng.integers(-3, 3, 20),), name="weights_int")
    yield SampleInput(np.zeros(0, dtype), kwargs=dict(minlength=3), name="empty")
    yield SampleInput(np.zeros(0, dtype), name="empty_no_bins")
    yield SampleInput(NonContig(x[:10]), name="strided")


def bincount_mixed(rng):
    yield SampleInput(np.array([1, 0, 3], np.uint8), name="uint8")


def _bincount_errors():
    yield ErrorInput(SampleInput(np.array([-1, 2])), RuntimeError, "negative")
    yield ErrorInput(SampleInput(np.array([[1, 2]])), RuntimeError, "2d")
    yield ErrorInput(SampleInput(np.array([1.0])), NotImplementedError, "float")
    yield ErrorInput(SampleInput(np.array([True])), NotImplementedError, "bool")
    yield ErrorInput(SampleInput(np.array([1, 2]), kwargs=dict(minlength=-1)), RuntimeError,
                     "minlength")
    yield ErrorInput(SampleInput(np.array([1, 2]), (np.ones(3),)), RuntimeError, "weights_len")


def isin_samples(dtype, rng):
    a = lambda sh: rng.integers(-3, 4, sh).astype(dtype)  # noqa: E731
    yield SampleInput(a((3, 4)), (a((5,)),), name="2d")
    yield SampleInput(a((3, 4)), (a((2, 2)),), kwargs=dict(invert=True), name="invert")
    yield SampleInput(a((6,)), (np.unique(a((4,))),), kwargs=dict(assume_unique=True),
                      name="assume_unique")
    yield SampleInput(a((4,)), (2,), name="scalar_test")
    yield SampleInput(a(()), (a((3,)),), name="0d")
    yield SampleInput(a((0, 2)), (a((3,)),), name="empty")
    yield SampleInput(a((3,)), (a((0,)),), name="empty_test")
    yield SampleInput(NonContig(a((4, 3))), (a((3,)),), name="transposed")
    if _is_float(dtype):
        yield SampleInput(np.array([np.nan, 1.0], dtype), (np.array([np.nan, 1.0], dtype),),
                          name="nan_never_found")


def isin_scalar_elements(m):
    return lambda test, element: m.isin(element, test)


def _isin_scalar_samples(dtype, rng):
    yield SampleInput(np.array([1, 2, 3], dtype), (2,), name="found")
    yield SampleInput(np.array([1, 2, 3], dtype), (5,), name="missing")


def isin_mixed(rng):
    yield SampleInput(np.array([1, 2, 3]), (np.array([2.0, 2.5]),), name="int_in_float")


def _isin_errors():
    yield ErrorInput(SampleInput(np.array([True]), (np.array([True]),)), RuntimeError, "bool")


# --- multinomial (statistics only: the generators differ) ----------------------------------------

_DRAWS = 20000


def multinomial_frequencies(m):
    """Frequencies of the categories over many draws (with replacement), or of each category
    among the first draws without replacement; torch's and graphgrad's agree within noise."""
    def run(p, replacement):
        idx = m.multinomial(p, _DRAWS if replacement else 2, replacement)
        if not replacement:  # one draw of two without replacement, repeated
            rows = p.expand(_DRAWS // 4, p.shape[-1])
            idx = m.multinomial(rows, 2, False)
            return (m.bincount(idx[:, 0], minlength=p.shape[-1]).double() / rows.shape[0],
                    m.bincount(idx[:, 1], minlength=p.shape[-1]).double() / rows.shape[0])
        flat = idx.reshape(-1)
        return m.bincount(flat, minlength=p.shape[-1]).double() / flat.shape[0]
    return run


def multinomial_samples(dtype, rng):
    yield SampleInput(np.array([0.1, 0.2, 0.3, 0.4], dtype), (True,), name="replacement",
                      nondiff=(0,))
    yield SampleInput(np.array([2.0, 0.0, 1.0, 1.0], dtype), (True,), name="unnormalised",
                      nondiff=(0,))
    yield SampleInput(np.array([0.5, 0.3, 0.2, 0.0], dtype), (False,), name="no_replacement",
                      nondiff=(0,))


def multinomial_exact(method):
    """Draws that are certain: one-hot rows, and every category without replacement (compared
    sorted)."""
    def op(m):
        def run(p, n, replacement=False):
            out = p.multinomial(n, replacement) if method else m.multinomial(p, n, replacement)
            return out if replacement else m.sort(out, -1).values
        return run
    return op


def multinomial_exact_samples(dtype, rng):
    yield SampleInput(np.array([0.0, 1.0, 0.0], dtype), (5, True), name="one_hot")
    yield SampleInput(np.array([[0.0, 0.0, 2.0], [3.0, 0.0, 0.0]], dtype), (4, True),
                      name="rows_one_hot")
    yield SampleInput(np.array([[0.2, 0.5, 0.3], [1.0, 1.0, 1.0]], dtype), (3, False),
                      name="all_without_replacement")
    yield SampleInput(np.ones((0, 3), dtype), (2, False), name="no_rows")


def _multinomial_errors():
    yield ErrorInput(SampleInput(np.array([-1.0, 1.0]), (1,)), RuntimeError, "negative")
    yield ErrorInput(SampleInput(np.array([np.nan, 1.0]), (1,)), RuntimeError, "nan")
    yield ErrorInput(SampleInput(np.zeros(3), (1,)), RuntimeError, "zero_sum")
    yield ErrorInput(SampleInput(np.ones(3), (4,)), RuntimeError, "too_many")
    yield ErrorInput(SampleInput(np.ones(3), (0,)), RuntimeError, "zero_samples")
    yield ErrorInput(SampleInput(np.ones((2, 2, 2)), (1,)), RuntimeError, "3d")
    yield ErrorInput(SampleInput(np.array([1, 1]), (1,)), RuntimeError, "int")


# --- the table -----------------------------------------------------------------------------------

def misc_ops() -> list[OpInfo]:
    ops = []
    ops += fn_and_method("addcmul", addc_samples(False), dtypes=FLOAT_INT,
                         mixed=addc_mixed(False), errors=_addcmul_errors)
    ops += fn_and_method("addcdiv", addc_samples(True), dtypes=FLOAT, mixed=addc_mixed(True),
                         errors=_addcdiv_errors)
    ops.append(OpInfo("Tensor.addcmul_", on_clone("addcmul_"), _addc_inplace_samples(False),
                      dtypes=FLOAT_INT))
    ops.append(OpInfo("Tensor.addcdiv_", on_clone("addcdiv_"), _addc_inplace_samples(True)))
    # NOTE: torch's result requires grad but has no derivative; the samples keep grad off
    ops += fn_and_method("heaviside", heaviside_samples, dtypes=ALL, errors=_heaviside_errors)
    ops.append(OpInfo("Tensor.heaviside_", on_clone("heaviside_"),
                      lambda d, r: (s for s in heaviside_samples(d, r) if s.name != "broadcast"),
                      dtypes=FLOAT_INT))
    ops += fn_and_method("cross", cross_samples, dtypes=FLOAT_INT, errors=_cross_errors)
    ops.append(OpInfo("linalg.cross", _linalg_cross, linalg_cross_samples, dtypes=FLOAT_INT))
    # NOTE: torch has no second derivative of cdist outside its matmul path (_cdist_backward)
    ops.append(OpInfo("cdist", function("cdist"), cdist_samples, errors=_cdist_errors,
                      supports_gradgrad=False, tol={F32: (1e-4, 1e-5)}))
    ops.append(OpInfo("cdist.mm", function("cdist"), cdist_mm_samples, tol={F32: (1e-4, 1e-5)}))
    ops += fn_and_method("aminmax", aminmax_samples, dtypes=ALL, errors=_aminmax_errors)
    ops.append(OpInfo("tile", function("tile"), tile_samples, dtypes=ALL, errors=_tile_errors))
    ops.append(OpInfo("Tensor.tile", tile_method, tile_samples, dtypes=(F64, I64),
                      variant=True))
    ops += fn_and_method("repeat_interleave", repeat_interleave_samples, dtypes=ALL,
                         mixed=repeat_interleave_mixed, errors=_repeat_interleave_errors)
    ops.append(OpInfo("repeat_interleave.self_Tensor", function("repeat_interleave"),
                      repeats_only_samples, dtypes=(I64, I32)))
    ops.append(OpInfo("block_diag", function("block_diag"), block_diag_samples, dtypes=ALL,
                      mixed=block_diag_mixed, errors=_block_diag_errors))
    ops.append(OpInfo("cartesian_prod", function("cartesian_prod"), cartesian_prod_samples,
                      dtypes=ALL, errors=_cartesian_prod_errors))
    ops.append(OpInfo("combinations", function("combinations"), combinations_samples,
                      dtypes=ALL, errors=_combinations_errors))
    ops.append(OpInfo("searchsorted", function("searchsorted"), searchsorted_samples,
                      dtypes=FLOAT_INT, supports_grad=False, mixed=searchsorted_mixed,
                      errors=_searchsorted_errors))
    ops.append(OpInfo("bucketize", function("bucketize"), bucketize_samples, dtypes=FLOAT_INT,
                      supports_grad=False, errors=_bucketize_errors))
    ops += fn_and_method("histc", histc_samples, supports_grad=False, errors=_histc_errors)
    ops += fn_and_method("bincount", bincount_samples, dtypes=(I64, I32), supports_grad=False,
                         mixed=bincount_mixed, errors=_bincount_errors)
    ops.append(OpInfo("isin", function("isin"), isin_samples, dtypes=FLOAT_INT,
                      supports_grad=False, mixed=isin_mixed, errors=_isin_errors))
    ops.append(OpInfo("isin.scalar_elements", isin_scalar_elements, _isin_scalar_samples,
                      dtypes=FLOAT_INT, supports_grad=False))
    # Two independent estimates, each with a standard error up to 0.007 (5000 rows without
    # replacement): their difference stays within 0.05 (5 standard errors) but for ~1e-6 of runs.
    # 0.03 (3 of them) failed about one CI run in a few hundred tests' worth of draws.
    ops.append(OpInfo("multinomial.frequencies", multinomial_frequencies, multinomial_samples,
                      supports_grad=False, tol={F64: (0.0, 0.05)}))
    ops.append(OpInfo("multinomial", multinomial_exact(False), multinomial_exact_samples,
                      supports_grad=False, errors=_multinomial_errors))
    ops.append(OpInfo("Tensor.multinomial", multinomial_exact(True), multinomial_exact_samples,
                      dtypes=(F64,), supports_grad=False, variant=True))
    return ops


def op_db() -> list[OpInfo]:
    from . import misc_writes

    return misc_ops() + misc_writes.op_db()
