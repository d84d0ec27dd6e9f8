"""OpInfos for gather/scatter family: gather, scatter, scatter_add, index_select, index_add,
masked_fill, masked_select, take, take_along_dim, where(cond), one_hot.

Index arrays are int64 (so never differentiable). Repeated indices are sampled where the op
accumulates (gather's and index_select's gradients, scatter_add, index_add); scatter writes
each position at most once, since torch leaves the winner of a repeated write unspecified.
"""

from __future__ import annotations

import numpy as np

from .core import ALL, FLOAT_INT, ErrorInput, NonContig, OpInfo, SampleInput, make
from .elementwise import fn_and_method, function

F32, F64, I32, I64, B = np.float32, np.float64, np.int32, np.int64, np.bool_


def _arr(dtype, rng, shape):
    if np.dtype(dtype).kind == "f":
        return make(shape, dtype, rng)
    return make(shape, dtype, rng, -5, 5)


def _idx(*rows):
    return np.array(rows, dtype=I64)


def _distinct(rng, shape, axis, size):
    """An index of ``shape`` with distinct values below ``size`` along ``axis`` (a scatter
    along ``axis`` that writes each position at most once)."""
    moved = shape[:axis] + shape[axis + 1:] + (shape[axis],)
    rows = int(np.prod(moved[:-1]))
    picks = rng.permuted(np.tile(np.arange(size), (rows, 1)), axis=1)[:, :shape[axis]]
    return np.moveaxis(picks.reshape(moved), -1, axis).astype(I64)


# --- gather --------------------------------------------------------------------------------

def gather_samples(dtype, rng):
    a = lambda s: _arr(dtype, rng, s)  # noqa: E731
    yield SampleInput(a((3, 4)), (0, _idx([0, 1, 2, 0], [2, 2, 0, 1])), name="dim0_repeats")
    yield SampleInput(a((3, 4)), (1, _idx([3, 0], [1, 1], [0, 2])), name="dim1_narrower")
    yield SampleInput(a((3, 4)), (0, rng.integers(0, 3, (5, 2))), name="longer_along_dim")
    yield SampleInput(a((2, 3, 4)), (-1, rng.integers(0, 4, (2, 2, 6))), name="neg_dim_3d")
    yield SampleInput(a((2, 3, 4)), kwargs=dict(dim=1, index=rng.integers(0, 3, (1, 3, 2))),
                      name="kwargs")
    yield SampleInput(a((3, 4)), (0, _idx([1, 2, 0, 0])), kwargs=dict(sparse_grad=False),
                      name="sparse_grad_false")
    yield SampleInput(a(()), (0, np.array(0)), name="0d")
    yield SampleInput(a(()), (0, _idx(0, 0, 0)), name="0d_input_1d_index")
    yield SampleInput(a((4,)), (0, np.array(2)), name="1d_input_0d_index")
    yield SampleInput(a((3, 4)), (0, np.zeros((0, 4), I64)), name="empty_index")
    yield SampleInput(a((0, 3)), (1, np.zeros((0, 2), I64)), name="empty_input")
    yield SampleInput(NonContig(a((4, 3))), (1, _idx([2, 0], [1, 1], [0, 0], [2, 1])),
                      name="transposed")
    yield SampleInput(a((3, 4)), (1, NonContig(_idx([0, 1, 3], [3, 2, 1]))),
                      name="transposed_index")


def gather_mixed(rng):
    yield SampleInput(make((3, 4), F64, rng), (1, np.array([[0, 3], [1, 1], [2, 0]], I32)),
                      name="int32_index")


def _dim_index_errors(name):
    """Errors shared by gather, scatter_add and scatter (with a src made by ``extra``)."""
    def errors():
        x = np.ones((3, 4))
        extra = (np.ones((2, 4)),) if name in ("scatter", "scatter_add") else ()
        i = _idx([0, 1, 2, 0], [1, 2, 0, 1])
        yield ErrorInput(SampleInput(x, (2, i) + extra), IndexError, "dim")
        yield ErrorInput(SampleInput(x, (0, i.astype(F64)) + extra), RuntimeError, "float_index")
        yield ErrorInput(SampleInput(x, (0, i + 1) + extra), RuntimeError, "out_of_range")
        yield ErrorInput(SampleInput(x, (0, i - 1) + extra), RuntimeError, "negative")
        src_1d = (np.ones(4),) if extra else ()
        yield ErrorInput(SampleInput(x, (0, i[0]) + src_1d), RuntimeError, "rank")
        wide = np.zeros((2, 5), I64)
        src_wide = (np.ones((2, 5)),) if extra else ()
        yield ErrorInput(SampleInput(x, (0, wide) + src_wide), RuntimeError, "too_wide")
    return errors


# --- scatter / scatter_add -------------------------------------------------------------------

def scatter_samples(dtype, rng):
    a = lambda s: _arr(dtype, rng, s)  # noqa: E731
    d = lambda shape, axis, size: _distinct(rng, shape, axis, size)  # noqa: E731
    yield SampleInput(a((3, 4)), (0, d((2, 4), 0, 3), a((2, 4))), name="src")
    yield SampleInput(a((4, 3)), (1, d((4, 2), 1, 3), a((4, 2))), name="dim1")
    yield SampleInput(a((2, 3, 4)), (-1, d((2, 3, 3), 2, 4), a((2, 3, 3))), name="neg_dim_3d")
    # torch's backward rejects a src larger than the index (it returns an index-sized grad)
    yield SampleInput(a((3, 4)), (0, d((2, 2), 0, 3), a((3, 5))), name="src_larger",
                      grad=False)
    yield SampleInput(a((3, 4)), (0, d((2, 4), 0, 3)), kwargs=dict(src=a((2, 4))),
                      name="src_kwarg")
    yield SampleInput(a((3, 4)), (0, d((2, 4), 0, 3), 2.5), name="value_float")
    yield SampleInput(a((3, 4)), (1, d((3, 2), 1, 4), -2), name="value_int")
    yield SampleInput(a((3, 4)), (0, d((1, 4), 0, 3)), kwargs=dict(value=1.5), name="value_kwarg")
    yield SampleInput(a(()), (0, np.array(0), a(())), name="0d")
    yield SampleInput(a(()), (0, np.array(0), 3.0), name="0d_value")
    yield SampleInput(a((3,)), (0, _idx(2), a(())), name="0d_src")
    yield SampleInput(a((3, 4)), (0, np.zeros((0, 4), I64), a((2, 4))), name="empty_index",
                      grad=False)
    yield SampleInput(NonContig(a((4, 3))), (1, d((4, 2), 1, 3), NonContig(a((4, 2)))),
                      name="transposed")


def scatter_reduce_samples(dtype, rng):
    """``reduce=``: repeated indices combine, so they are fine here."""
    a = lambda s: _arr(dtype, rng, s)  # noqa: E731
    i = _idx([0, 1, 2, 0], [0, 0, 2, 1])
    yield SampleInput(a((3, 4)), (0, i, a((2, 4))), kwargs=dict(reduce="add"), name="add")
    yield SampleInput(a((3, 4)), (0, i, a((2, 4))), kwargs=dict(reduce="multiply"),
                      name="multiply")
    yield SampleInput(a((3, 4)), (0, i, 2.0), kwargs=dict(reduce="multiply"),
                      name="value_multiply")
    yield SampleInput(a((3, 4)), (1, i[:, :2], 3), kwargs=dict(reduce="add"), name="value_add")


def _scatter_errors():
    yield from _dim_index_errors("scatter")()
    x, i = np.ones((3, 4)), _idx([0, 1, 2, 0])
    yield ErrorInput(SampleInput(x, (0, i, np.ones((1, 4), F32))), RuntimeError, "src_dtype")
    yield ErrorInput(SampleInput(x, (0, np.zeros((2, 4), I64), np.ones((1, 4)))), RuntimeError,
                     "src_too_small")
    yield ErrorInput(SampleInput(x, (0, i, 1.0), kwargs=dict(reduce="sum")), RuntimeError,
                     "bad_reduce")


def scatter_add_samples(dtype, rng):
    a = lambda s: _arr(dtype, rng, s)  # noqa: E731
    yield SampleInput(a((3, 4)), (0, _idx([0, 1, 2, 0], [0, 0, 2, 1]), a((2, 4))),
                      name="repeats")
    yield SampleInput(a((3, 4)), (0, rng.integers(0, 3, (5, 4)), a((5, 4))),
                      name="longer_along_dim")
    yield SampleInput(a((2, 3, 4)), (-2, rng.integers(0, 3, (2, 4, 4)), a((2, 4, 4))),
                      name="neg_dim_3d")
    yield SampleInput(a((3, 4)), (1, _idx([0, 0], [3, 1]), a((3, 3))), name="src_larger",
                      grad=False)
    yield SampleInput(a(()), (0, np.array(0), a(())), name="0d")
    yield SampleInput(a((3, 4)), (0, np.zeros((0, 4), I64), a((3, 4))), name="empty_index",
                      grad=False)
    yield SampleInput(NonContig(a((4, 3))), (0, NonContig(rng.integers(0, 4, (3, 2))),
                                             NonContig(a((3, 2)))), name="transposed")


def _scatter_add_errors():
    yield from _dim_index_errors("scatter_add")()
    yield ErrorInput(SampleInput(np.ones((3, 4)), (0, _idx([0, 1, 2, 0]), np.ones((1, 4), F32))),
                     RuntimeError, "src_dtype")


# --- index_select / index_add ----------------------------------------------------------------

def index_select_samples(dtype, rng):
    a = lambda s: _arr(dtype, rng, s)  # noqa: E731
    yield SampleInput(a((3, 4)), (1, _idx(3, 0, 3)), name="repeats")
    yield SampleInput(a((3, 4)), (0, _idx(2, 1)), name="dim0")
    yield SampleInput(a((2, 3, 4)), (-2, _idx(0, 2, 1, 2)), name="neg_dim_3d")
    yield SampleInput(a((3, 4)), (1, np.array(2)), name="0d_index")
    yield SampleInput(a(()), (0, _idx(0)), name="0d_input")
    yield SampleInput(a(()), (0, np.array(0)), name="0d_both")
    yield SampleInput(a((3, 4)), (0, np.zeros(0, I64)), name="empty_index")
    yield SampleInput(a((0, 4)), (1, _idx(1, 1)), name="empty_input")
    yield SampleInput(NonContig(a((4, 3))), (1, _idx(2, 0)), name="transposed")
    yield SampleInput(a((5, 2)), (0, NonContig(_idx(4, 0, 2))), name="strided_index")


def index_select_mixed(rng):
    yield SampleInput(make((3, 4), F64, rng), (1, np.array([2, 0], I32)), name="int32_index")


def _index_select_errors():
    x = np.ones((3, 4))
    yield ErrorInput(SampleInput(x, (2, _idx(0))), IndexError, "dim")
    yield ErrorInput(SampleInput(x, (1, _idx([0, 1]))), IndexError, "2d_index")
    yield ErrorInput(SampleInput(x, (1, np.array([1.0]))), RuntimeError, "float_index")
    # torch's type depends on its kernel: RuntimeError along dim 1, IndexError elsewhere
    yield ErrorInput(SampleInput(x, (1, _idx(4))), RuntimeError, "out_of_range")
    yield ErrorInput(SampleInput(x, (1, _idx(-1))), RuntimeError, "negative")
    yield ErrorInput(SampleInput(x, (0, _idx(3))), IndexError, "out_of_range_dim0")
    yield ErrorInput(SampleInput(np.ones(3), (0, _idx(-1))), IndexError, "negative_1d")
    yield ErrorInput(SampleInput(np.ones((2, 3, 4)), (2, _idx(4))), IndexError,
                     "out_of_range_dim2")
    yield ErrorInput(SampleInput(np.ones(()), (0, _idx(0, 0))), RuntimeError, "0d_two_values")


def index_add_samples(dtype, rng):
    a = lambda s: _arr(dtype, rng, s)  # noqa: E731
    yield SampleInput(a((3, 4)), (0, _idx(0, 2, 0), a((3, 4))), name="repeats")
    yield SampleInput(a((3, 4)), (1, _idx(3, 1), a((3, 2))), kwargs=dict(alpha=2),
                      name="alpha_int")
    if np.dtype(dtype).kind == "f":
        yield SampleInput(a((3, 4)), (1, _idx(3, 1), a((3, 2))), kwargs=dict(alpha=-0.5),
                          name="alpha_float")
    else:
        yield SampleInput(a((3, 4)), (1, _idx(3, 1), a((3, 2))), kwargs=dict(alpha=2.5),
                          name="alpha_float_truncated")
    yield SampleInput(a((2, 3, 4)), (-1, _idx(0, 3, 3, 1, 0), a((2, 3, 5))), name="neg_dim_3d")
    yield SampleInput(a(()), (0, _idx(0), a(())), name="0d")
    yield SampleInput(a((3,)), (0, np.array(1), a((1,))), name="0d_index")
    yield SampleInput(a((3, 4)), (0, np.zeros(0, I64), a((0, 4))), name="empty_index")
    yield SampleInput(NonContig(a((4, 3))), (0, _idx(3, 3), NonContig(a((2, 3)))),
                      name="transposed")


def _index_add_errors():
    x, i = np.ones((3, 4)), _idx(0, 0)
    yield ErrorInput(SampleInput(x, (2, i, np.ones((3, 2)))), IndexError, "dim")
    yield ErrorInput(SampleInput(x, (0, i, np.ones((2, 3)))), RuntimeError, "src_shape")
    yield ErrorInput(SampleInput(x, (0, i, np.ones((3, 4)))), RuntimeError, "count")
    yield ErrorInput(SampleInput(x, (0, _idx(5, 0), np.ones((2, 4)))), RuntimeError,
                     "out_of_range")
    yield ErrorInput(SampleInput(x, (0, _idx(-1, 0), np.ones((2, 4)))), RuntimeError, "negative")
    # torch's type depends on its kernel: IndexError for 1-d and inner dims
    yield ErrorInput(SampleInput(np.ones(3), (0, _idx(3), np.ones(1))), IndexError,
                     "out_of_range_1d")
    yield ErrorInput(SampleInput(np.ones((2, 3, 4)), (1, _idx(-4), np.ones((2, 1, 4)))),
                     IndexError, "negative_inner_dim")
    yield ErrorInput(SampleInput(x, (0, i, np.ones((2, 4), F32))), RuntimeError, "src_dtype")
    yield ErrorInput(SampleInput(x, (0, _idx([0]), np.ones((1, 4)))), IndexError, "2d_index")
    yield ErrorInput(SampleInput(x, (0, np.zeros(1), np.ones((1, 4)))), RuntimeError,
                     "float_index")
    yield ErrorInput(SampleInput(np.ones(()), (0, _idx(0), np.ones(1))), RuntimeError,
                     "0d_src_shape")


# --- masked_fill / masked_select -------------------------------------------------------------

def _mask(rng, shape):
    return np.asarray(rng.random(shape) < 0.5)


def masked_fill_samples(dtype, rng):
    a = lambda s: _arr(dtype, rng, s)  # noqa: E731
    is_float = np.dtype(dtype).kind == "f"
    yield SampleInput(a((3, 4)), (_mask(rng, (3, 4)), 1.5), name="float_value")
    yield SampleInput(a((3, 4)), (_mask(rng, (3, 4)), -2), name="int_value")
    yield SampleInput(a((3, 4)), (_mask(rng, (3, 4)), True), name="bool_value")
    yield SampleInput(a((3, 4)), (_mask(rng, (4,)), 0.0), name="mask_broadcast")
    yield SampleInput(a((4,)), (_mask(rng, (3, 4)), 0.0), name="input_broadcast")
    yield SampleInput(a((2, 3)), (_mask(rng, (2, 3)), a(())), name="tensor_value")
    yield SampleInput(a((3, 1)), (_mask(rng, (3, 4)), a(())), name="tensor_value_broadcast")
    yield SampleInput(a(()), (np.array(True), 2.0), name="0d")
    yield SampleInput(a(()), (np.array(False), a(())), name="0d_tensor_value")
    yield SampleInput(a((0, 3)), (_mask(rng, (0, 3)), 1.0), name="empty")
    yield SampleInput(NonContig(a((4, 3))), (NonContig(_mask(rng, (4, 3))), -1.0),
                      name="transposed")
    if is_float:
        yield SampleInput(a((2, 3)), (_mask(rng, (2, 3)), float("nan")), name="nan_value",
                          gradcheck=False)
        yield SampleInput(a((2, 3)), (_mask(rng, (2, 3)), float("inf")), name="inf_value",
                          gradcheck=False)


def masked_fill_mixed(rng):
    """A 0-d value of another dtype takes the input's dtype (its gradient keeps its own)."""
    yield SampleInput(make((2, 3), F32, rng), (_mask(rng, (2, 3)), make((), F64, rng)),
                      name="f64_value_on_f32")
    yield SampleInput(make((2, 3), F64, rng), (_mask(rng, (2, 3)), np.array(3)),
                      name="int_value_tensor")
    yield SampleInput(make((2, 3), I64, rng, -5, 5), (_mask(rng, (2, 3)), np.array(2.7)),
                      name="float_value_on_int", nondiff=(2,))


def _masked_fill_errors():
    x = np.ones((3, 4))
    yield ErrorInput(SampleInput(x, (np.ones((3, 4), I64), 1.0)), RuntimeError, "int_mask")
    yield ErrorInput(SampleInput(x, (np.ones((3, 4), B), np.ones(1))), RuntimeError, "1d_value")
    yield ErrorInput(SampleInput(x, (np.ones((3, 2), B), 1.0)), RuntimeError, "mask_shape")


def masked_select_samples(dtype, rng):
    a = lambda s: _arr(dtype, rng, s)  # noqa: E731
    yield SampleInput(a((3, 4)), (_mask(rng, (3, 4)),), name="same_shape")
    yield SampleInput(a((3, 4)), (_mask(rng, (4,)),), name="mask_broadcast")
    yield SampleInput(a((4,)), (_mask(rng, (3, 4)),), name="input_broadcast")
    yield SampleInput(a((2, 1, 3)), (_mask(rng, (4, 1)),), name="both_broadcast")
    yield SampleInput(a((3, 4)), (np.zeros((3, 4), B),), name="none_selected")
    yield SampleInput(a(()), (np.array(True),), name="0d")
    yield SampleInput(a((0, 3)), (_mask(rng, (0, 3)),), name="empty")
    yield SampleInput(NonContig(a((4, 3))), (_mask(rng, (4, 3)),), name="transposed")


def _masked_select_errors():
    x = np.ones((3, 4))
    yield ErrorInput(SampleInput(x, (np.ones((3, 4), I64),)), RuntimeError, "int_mask")
    yield ErrorInput(SampleInput(x, (np.ones((3, 2), B),)), RuntimeError, "mask_shape")


# --- take / take_along_dim -------------------------------------------------------------------

def take_samples(dtype, rng):
    a = lambda s: _arr(dtype, rng, s)  # noqa: E731
    yield SampleInput(a((3, 4)), (_idx([0, 11], [5, 5]),), name="2d_index_repeats")
    yield SampleInput(a((3, 4)), (_idx(-1, -12, 3),), name="negative")
    yield SampleInput(a((2, 3, 2)), (rng.integers(-12, 12, (2, 2, 3)),), name="3d")
    yield SampleInput(a((3, 4)), (np.array(7),), name="0d_index")
    yield SampleInput(a(()), (_idx(0, -1, 0),), name="0d_input")
    yield SampleInput(a((3, 4)), (np.zeros((0, 2), I64),), name="empty_index")
    yield SampleInput(a((0, 3)), (np.zeros(0, I64),), name="empty_both")
    yield SampleInput(NonContig(a((4, 3))), (_idx(1, 7, 2, 11),), name="transposed")


def _take_errors():
    x = np.ones((3, 4))
    yield ErrorInput(SampleInput(x, (_idx(12),)), IndexError, "out_of_range")
    yield ErrorInput(SampleInput(x, (_idx(-13),)), IndexError, "negative_out_of_range")
    yield ErrorInput(SampleInput(x, (np.array([1.0]),)), RuntimeError, "float_index")
    yield ErrorInput(SampleInput(x, (np.array([1], I32),)), RuntimeError, "int32_index")
    yield ErrorInput(SampleInput(np.ones(0), (_idx(0),)), IndexError, "empty_input")


def take_along_dim_samples(dtype, rng):
    a = lambda s: _arr(dtype, rng, s)  # noqa: E731
    x = a((3, 4))
    yield SampleInput(x, (np.argsort(x, axis=1, kind="stable"), 1), name="argsort_indices")
    yield SampleInput(a((3, 4)), (_idx([0, 3, 3]), 1), name="index_broadcast")
    yield SampleInput(a((1, 4)), (rng.integers(0, 4, (3, 2)), 1), name="input_broadcast")
    yield SampleInput(a((2, 3, 4)), (rng.integers(0, 3, (2, 5, 1)), -2), name="neg_dim_3d")
    # NOTE: torch wraps indices along dim: -1 is the last position
    yield SampleInput(a((3, 4)), (_idx([-1], [-4], [2]), 1), name="negative_wraps")
    yield SampleInput(a((3, 4)), kwargs=dict(indices=_idx(0, 11, 5)), name="no_dim")
    yield SampleInput(a((3, 4)), (_idx([0, 5], [11, 11]),), name="no_dim_2d_index")
    yield SampleInput(a(()), (_idx(0, 0),), name="0d_no_dim")
    yield SampleInput(a((3, 4)), (np.zeros((3, 0), I64), 1), name="empty_index")
    # NOTE: no transposed input without dim: torch's view(-1) rejects it, graphgrad reshapes
    yield SampleInput(NonContig(a((4, 3))), (_idx([2], [0], [1], [1]), 1), name="transposed")


def _take_along_dim_errors():
    x = np.ones((3, 4))
    yield ErrorInput(SampleInput(x, (np.zeros((3, 1)), 1)), RuntimeError, "float_index")
    yield ErrorInput(SampleInput(x, (np.zeros((3, 1), I32), 1)), RuntimeError, "int32_index")
    yield ErrorInput(SampleInput(x, (np.zeros(2, I64), 1)), RuntimeError, "rank")
    yield ErrorInput(SampleInput(x, (np.zeros((2, 2), I64), 1)), RuntimeError, "broadcast")
    yield ErrorInput(SampleInput(x, (np.zeros((3, 1), I64), 2)), IndexError, "dim")
    yield ErrorInput(SampleInput(x, (_idx(12),)), RuntimeError, "no_dim_out_of_range")
    yield ErrorInput(SampleInput(x, (_idx(-1),)), RuntimeError, "no_dim_negative")
    yield ErrorInput(SampleInput(np.ones(()), (np.array(0), 0)), IndexError, "0d_with_dim")


# --- where(cond) / one_hot -------------------------------------------------------------------

def where_cond_samples(dtype, rng):
    """Conditions of any dtype, about half of them zero (False)."""
    a = lambda s: np.where(_mask(rng, s), _arr(dtype, rng, s), 0).astype(dtype)  # noqa: E731
    yield SampleInput(a((3, 4)), name="2d")
    yield SampleInput(a((5,)), name="1d")
    yield SampleInput(a((2, 3, 2)), name="3d")
    yield SampleInput(np.zeros((2, 3), dtype), name="none")
    yield SampleInput(a((0, 3)), name="empty")
    yield SampleInput(NonContig(a((4, 3))), name="transposed")
    yield SampleInput(np.ones((), dtype), name="0d")


def one_hot_samples(dtype, rng):
    yield SampleInput(_idx(0, 2, 1, 2), name="inferred")
    yield SampleInput(_idx(0, 2), (5,), name="num_classes")
    yield SampleInput(_idx([3, 0], [1, 1]), kwargs=dict(num_classes=-1), name="2d")
    yield SampleInput(np.array(2), (3,), name="0d")
    yield SampleInput(np.zeros((0,), I64), (3,), name="empty")
    yield SampleInput(NonContig(_idx([0, 1], [2, 3])), name="transposed")


def _one_hot(m):
    # NOTE: graphgrad.nn.functional gets one_hot from ops.gather; until it is wired there, the
    # op itself is tested.
    functional = m.nn.functional
    return functional.one_hot if hasattr(functional, "one_hot") else m.ops.gather.one_hot


def _one_hot_errors():
    yield ErrorInput(SampleInput(_idx(-1, 2)), RuntimeError, "negative")
    yield ErrorInput(SampleInput(_idx(0, 2), (2,)), RuntimeError, "too_few_classes")
    yield ErrorInput(SampleInput(np.array([1.0])), RuntimeError, "float")
    yield ErrorInput(SampleInput(np.array([1], I32)), RuntimeError, "int32")
    yield ErrorInput(SampleInput(np.zeros(0, I64)), RuntimeError, "empty_inferred")


def nonzero_samples(dtype, rng):
    a = lambda s: _arr(dtype, rng, s)  # noqa: E731
    zeros = np.zeros((3, 4), dtype)
    zeros[0, 1] = zeros[2, 3] = 1
    yield SampleInput(zeros, name="sparse")
    yield SampleInput(a((2, 3, 2)), name="3d")
    yield SampleInput(a((5,)), name="1d")
    yield SampleInput(np.ones((), dtype), name="0d_nonzero")
    yield SampleInput(np.zeros((), dtype), name="0d_zero")
    yield SampleInput(np.zeros((0, 3), dtype), name="empty")
    yield SampleInput(NonContig(zeros.T.copy()), name="transposed")
    yield SampleInput(zeros, kwargs=dict(as_tuple=True), name="as_tuple")
    yield SampleInput(np.ones((), dtype), kwargs=dict(as_tuple=True), name="0d_as_tuple")


def gather_ops() -> list[OpInfo]:
    ops = []
    ops += fn_and_method("gather", gather_samples, dtypes=ALL, mixed=gather_mixed,
                         errors=_dim_index_errors("gather"))
    ops += fn_and_method("scatter", scatter_samples, dtypes=FLOAT_INT, errors=_scatter_errors)
    # NOTE: torch's result requires grad but its backward raises; graphgrad's does not
    ops.append(OpInfo("scatter.reduce", function("scatter"), scatter_reduce_samples,
                      dtypes=FLOAT_INT, supports_grad=False, requires_grad_parity=False))
    ops += fn_and_method("scatter_add", scatter_add_samples, dtypes=FLOAT_INT,
                         errors=_scatter_add_errors)
    ops += fn_and_method("index_select", index_select_samples, dtypes=ALL,
                         mixed=index_select_mixed, errors=_index_select_errors)
    ops += fn_and_method("index_add", index_add_samples, dtypes=FLOAT_INT,
                         errors=_index_add_errors)
    ops += fn_and_method("masked_fill", masked_fill_samples, dtypes=FLOAT_INT,
                         mixed=masked_fill_mixed, errors=_masked_fill_errors)
    ops += fn_and_method("masked_select", masked_select_samples, dtypes=ALL,
                         errors=_masked_select_errors)
    ops += fn_and_method("take", take_samples, dtypes=ALL, errors=_take_errors)
    ops += fn_and_method("take_along_dim", take_along_dim_samples, dtypes=ALL,
                         errors=_take_along_dim_errors)
    ops += fn_and_method("nonzero", nonzero_samples, dtypes=ALL, supports_grad=False)
    ops.append(OpInfo("where.cond", lambda m: (lambda c: m.where(c)), where_cond_samples,
                      dtypes=ALL, supports_grad=False))
    ops.append(OpInfo("one_hot", _one_hot, one_hot_samples, dtypes=(I64,), supports_grad=False,
                      errors=_one_hot_errors))
    return ops


def op_db() -> list[OpInfo]:
    return gather_ops()
