"""OpInfos for ops/scan.py and ops/writes.py: cummax, cummin, logcumsumexp, diff, index_fill,
index_copy, masked_scatter, scatter_reduce, index_reduce, and the in-place forms (registered
through misc.py).

Indices written more than once are sampled only where the op combines them (scatter_reduce,
index_reduce); index_copy and masked_scatter write each position once, since torch leaves the
winner of a repeated write unspecified. Samples at ties of cummax/amax are not finite-differenced.
"""

from __future__ import annotations

import numpy as np

from .core import ALL, FLOAT_INT, ErrorInput, NonContig, OpInfo, SampleInput, make
from .elementwise import fn_and_method
from .inplace import on_clone

F32, F64, I32, I64, B = np.float32, np.float64, np.int32, np.int64, np.bool_


def _arr(dtype, rng, shape):
    if dtype is B:
        return rng.random(shape) < 0.5
    if np.dtype(dtype).kind == "f":
        return make(shape, dtype, rng)
    return make(shape, dtype, rng, -5, 5)


def _distinct(dtype, rng, shape):
    if np.dtype(dtype).kind == "f":
        return make(shape, dtype, rng)
    n = int(np.prod(shape))
    return (rng.permutation(n) - n // 2).reshape(shape).astype(dtype)


def _is_float(dtype):
    return np.dtype(dtype).kind == "f"


def _idx(*values):
    return np.array(values, dtype=I64)


def _dim_errors(*args):
    def errors():
        yield ErrorInput(SampleInput(np.ones((2, 3)), (2,) + args), IndexError, "dim")
    return errors


# --- cummax / cummin / logcumsumexp ------------------------------------------------------------

def cumextreme_samples(dtype, rng):
    a = lambda s: _distinct(dtype, rng, s)  # noqa: E731
    yield SampleInput(a((3, 5)), (1,), name="dim1")
    yield SampleInput(a((4, 3)), (0,), name="dim0")
    yield SampleInput(a((2, 3, 4)), (-2,), name="neg_dim")
    yield SampleInput(a(()), (0,), name="0d")
    yield SampleInput(a((0, 3)), (0,), name="empty")
    yield SampleInput(NonContig(a((4, 3))), (1,), name="transposed")
    if dtype is B:
        return
    ties = np.array([[1, 3, 3, 2, 3], [2, 2, 0, 0, 5]]).astype(dtype)
    yield SampleInput(ties, (1,), name="ties_latest", gradcheck=False)
    if _is_float(dtype):
        nan = np.array([1.0, 3, np.nan, 5, np.nan, 0], dtype)
        yield SampleInput(nan, (0,), name="nan", gradcheck=False)


def logcumsumexp_samples(dtype, rng):
    a = lambda s: make(s, dtype, rng)  # noqa: E731
    yield SampleInput(a((3, 5)), (1,), name="dim1")
    yield SampleInput(a((4, 3)), (0,), name="dim0")
    yield SampleInput(a((2, 3, 4)), (-1,), name="neg_dim")
    yield SampleInput(a(()), (0,), name="0d")
    yield SampleInput(a((0, 3)), (0,), name="empty")
    yield SampleInput(NonContig(a((4, 3))), (1,), name="transposed")
    yield SampleInput(a((2, 3)) * 200, (1,), name="large_values")
    yield SampleInput(np.array([-np.inf, 1.0, 2.0], dtype), (0,), name="neg_inf", grad=False)


def _logcumsumexp_errors():
    yield ErrorInput(SampleInput(np.arange(3), (0,)), NotImplementedError, "int")
    yield from _dim_errors()()


# --- diff ----------------------------------------------------------------------------------------

def diff_samples(dtype, rng):
    a = lambda s: _arr(dtype, rng, s)  # noqa: E731
    yield SampleInput(a((3, 5)), name="default")
    yield SampleInput(a((5, 3)), (2, 0), name="n2_dim0")
    yield SampleInput(a((2, 4)), kwargs=dict(n=3), name="n3")
    yield SampleInput(a((2, 4)), kwargs=dict(n=0), name="n0")
    yield SampleInput(a((3,)), (5,), name="n_past_size")
    yield SampleInput(a((3, 4)), kwargs=dict(prepend=a((3, 2)), append=a((3, 1))),
                      name="prepend_append")
    yield SampleInput(a((3, 4)), (2, 0), kwargs=dict(append=a((1, 4))), name="append_dim0")
    yield SampleInput(a((0, 3)), (1, 0), name="empty")
    yield SampleInput(NonContig(a((4, 3))), (1, 1), name="transposed")


def diff_mixed(rng):
    yield SampleInput(make((4,), F32, rng), kwargs=dict(prepend=make((2,), I64, rng, -3, 3)),
                      name="int_prepend")
    yield SampleInput(make((4,), np.uint8, rng, 0, 9), name="uint8_wraps")


def _diff_errors():
    yield ErrorInput(SampleInput(np.array(1.0)), RuntimeError, "0d")
    yield ErrorInput(SampleInput(np.ones(3), (-1,)), RuntimeError, "negative_n")
    yield ErrorInput(SampleInput(np.ones(3), kwargs=dict(prepend=np.array(1.0))), RuntimeError,
                     "0d_prepend")
    yield ErrorInput(SampleInput(np.ones((2, 3)), kwargs=dict(dim=2)), IndexError, "dim")


# --- index_fill / index_copy ---------------------------------------------------------------------

def index_fill_samples(dtype, rng):
    a = lambda s: _arr(dtype, rng, s)  # noqa: E731
    v = 1.5 if _is_float(dtype) else 2
    yield SampleInput(a((3, 4)), (1, _idx(0, 2), v), name="scalar")
    yield SampleInput(a((3, 4)), (0, _idx(2, 2, 0), -1), name="repeats_int_value")
    yield SampleInput(a((3, 4)), (-1, _idx(-1, 1), v), name="negative_index")
    yield SampleInput(a((2, 3, 4)), (1, np.array(1), v), name="0d_index")
    yield SampleInput(a((3, 4)), (0, _idx(1), a(())), name="tensor_value")
    yield SampleInput(a((3, 4)), (1, _idx(0, 3, 0), a(())), name="tensor_value_repeats")
    yield SampleInput(a(()), (0, _idx(0), v), name="0d")
    yield SampleInput(a((3, 4)), (0, np.zeros(0, I64), v), name="empty_index")
    yield SampleInput(a((0, 4)), (1, _idx(1), v), name="empty_input")
    yield SampleInput(NonContig(a((4, 3))), (1, _idx(1), v), name="transposed")


def index_fill_mixed(rng):
    yield SampleInput(make((3, 4), F32, rng), (0, _idx(1), make((), F64, rng)),
                      name="f64_value_on_f32")
    yield SampleInput(make((3,), I64, rng, -5, 5), (0, _idx(1), 2.7), name="float_on_int")


def _index_fill_errors():
    x = np.ones((3, 4))
    yield ErrorInput(SampleInput(x, (0, _idx(3), 1.0)), IndexError, "out_of_range")
    yield ErrorInput(SampleInput(x, (0, np.array([0], I32), 1.0)), IndexError, "int32_index")
    yield ErrorInput(SampleInput(x, (0, _idx([0]), 1.0)), RuntimeError, "2d_index")
    yield ErrorInput(SampleInput(x, (0, _idx(0), np.ones(1))), RuntimeError, "1d_value")
    yield ErrorInput(SampleInput(x, (2, _idx(0), 1.0)), IndexError, "dim")


def index_copy_samples(dtype, rng):
    a = lambda s: _arr(dtype, rng, s)  # noqa: E731
    yield SampleInput(a((3, 4)), (0, _idx(2, 0), a((2, 4))), name="dim0")
    yield SampleInput(a((3, 4)), (1, _idx(3, 1, 0), a((3, 3))), name="dim1")
    yield SampleInput(a((2, 3, 4)), (-1, _idx(1,), a((2, 3, 1))), name="neg_dim")
    yield SampleInput(a((3,)), (0, np.array(1), a(())), name="0d_index_0d_source")
    yield SampleInput(a((3,)), (0, np.array(1), a((1,))), name="0d_index")
    yield SampleInput(a(()), (0, _idx(0), a(())), name="0d")
    yield SampleInput(a((3, 4)), (0, np.zeros(0, I64), a((0, 4))), name="empty_index")
    yield SampleInput(NonContig(a((4, 3))), (0, _idx(3, 0), NonContig(a((2, 3)))),
                      name="transposed")


def _index_copy_errors():
    x = np.ones((3, 4))
    yield ErrorInput(SampleInput(x, (0, _idx(-1), np.ones((1, 4)))), IndexError, "negative")
    yield ErrorInput(SampleInput(x, (0, _idx(3), np.ones((1, 4)))), IndexError, "out_of_range")
    yield ErrorInput(SampleInput(x, (0, np.array([0], I32), np.ones((1, 4)))), RuntimeError,
                     "int32_index")
    yield ErrorInput(SampleInput(x, (0, _idx(0), np.ones((1, 4), F32))), RuntimeError, "dtype")
    yield ErrorInput(SampleInput(x, (0, _idx(0), np.ones((2, 4)))), IndexError, "count")
    yield ErrorInput(SampleInput(x, (0, _idx(0), np.ones((1, 3)))), RuntimeError, "slice_shape")
    yield ErrorInput(SampleInput(x, (0, _idx([0]), np.ones((1, 4)))), IndexError, "2d_index")


# --- masked_scatter ------------------------------------------------------------------------------

def _mask(rng, shape):
    return np.asarray(rng.random(shape) < 0.5)


def masked_scatter_samples(dtype, rng):
    a = lambda s: _arr(dtype, rng, s)  # noqa: E731
    yield SampleInput(a((3, 4)), (_mask(rng, (3, 4)), a((12,))), name="same_shape")
    yield SampleInput(a((3, 4)), (_mask(rng, (3, 4)), a((4, 5))), name="larger_2d_source")
    yield SampleInput(a((3, 4)), (_mask(rng, (4,)), a((3, 4))), name="mask_broadcast")
    yield SampleInput(a((4,)), (_mask(rng, (2, 4)), a((8,))), name="input_broadcast")
    yield SampleInput(a((3, 4)), (np.zeros((3, 4), B), a((2,))), name="none_selected")
    yield SampleInput(a(()), (np.array(True), a((1,))), name="0d")
    yield SampleInput(a((0, 3)), (_mask(rng, (0, 3)), a((2,))), name="empty")
    yield SampleInput(NonContig(a((4, 3))), (NonContig(_mask(rng, (4, 3))), a((12,))),
                      name="transposed")


def _masked_scatter_errors():
    x = np.ones((3,))
    m = np.array([True, False, True])
    yield ErrorInput(SampleInput(x, (m, np.ones(1))), RuntimeError, "short_source")
    yield ErrorInput(SampleInput(x, (m, np.ones(3, F32))), RuntimeError, "dtype")
    yield ErrorInput(SampleInput(x, (m.astype(I64), np.ones(3))), RuntimeError, "int_mask")


# --- scatter_reduce / index_reduce ---------------------------------------------------------------

_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def scatter_reduce_samples(dtype, rng):
    """Repeated indices everywhere; float prod samples also put zeros in self and src."""
    a = lambda s: _distinct(dtype, rng, s)  # noqa: E731
    i = _idx([0, 1, 2, 0], [0, 0, 2, 1])
    for reduce in _REDUCES:
        for include_self in (True, False):
            tag = f"{reduce}_{'self' if include_self else 'noself'}"
            yield SampleInput(a((3, 4)), (0, i, a((2, 4)), reduce),
                              kwargs=dict(include_self=include_self), name=tag)
        yield SampleInput(a((2, 5)), (1, rng.integers(0, 5, (2, 7)), a((2, 7)), reduce),
                          name=f"{reduce}_dim1")
    yield SampleInput(a((3, 4)), (0, _idx([0, 1]), a((2, 3)), "amax"), name="src_larger",
                      grad=False)
    yield SampleInput(a(()), (0, np.array(0), a(()), "prod"), name="0d")
    yield SampleInput(a((3, 4)), (0, np.zeros((0, 4), I64), a((2, 4)), "sum"), name="empty_index",
                      grad=False)
    yield SampleInput(NonContig(a((4, 3))), (1, _idx([0, 0], [2, 1], [1, 1], [0, 2]),
                                             NonContig(a((4, 2))), "mean"), name="transposed")
    if _is_float(dtype):
        x = np.array([[2.0, 0.0, 1.5], [0.5, -1.0, 3.0]], dtype)
        src = np.array([[0.0, 2.0, -1.5], [1.5, 0.0, 0.0]], dtype)
        idx = np.array([[0, 1, 1], [0, 1, 0]])
        for include_self in (True, False):
            yield SampleInput(x, (0, idx, src, "prod"), kwargs=dict(include_self=include_self),
                              name=f"prod_zeros_{include_self}")
        ties = np.array([[1.0, 2.0], [2.0, 2.0]], dtype)
        yield SampleInput(ties, (0, _idx([0, 0], [1, 0]), np.array([[2.0, 1.0], [1.0, 2.0]],
                                                                   dtype), "amax"),
                          name="amax_ties", gradcheck=False)
        yield SampleInput(ties, (0, _idx([0, 0], [1, 0]), np.array([[2.0, 1.0], [1.0, 2.0]],
                                                                   dtype), "amin"),
                          kwargs=dict(include_self=False), name="amin_ties", gradcheck=False)


def scatter_reduce_mixed(rng):
    yield SampleInput(make((3, 4), F64, rng), (0, np.array([[0, 2], [1, 0]], I32),
                                               make((2, 2), F64, rng), "sum"), name="int32_index")
    yield SampleInput(np.array([1, -2, 3]), (0, _idx(0, 1, 1), np.array([-2, 5, -4]), "mean"),
                      name="int_mean_floors")
    yield SampleInput(np.array([True, False, False]), (0, _idx(1, 1), np.array([True, False]),
                                                       "sum"), name="bool_sum")


def _scatter_reduce_errors():
    x, i = np.ones((3, 4)), _idx([0, 1, 2, 0])
    yield ErrorInput(SampleInput(x, (0, i, np.ones((1, 4), F32), "sum")), RuntimeError,
                     "src_dtype")
    yield ErrorInput(SampleInput(x, (0, i + 3, np.ones((1, 4)), "sum")), RuntimeError,
                     "out_of_range")
    yield ErrorInput(SampleInput(x, (0, i, 2.0, "sum")), TypeError, "scalar_src")
    yield ErrorInput(SampleInput(x, (2, i, np.ones((1, 4)), "sum")), IndexError, "dim")
    yield ErrorInput(SampleInput(x, (0, i.astype(F64), np.ones((1, 4)), "sum")), RuntimeError,
                     "float_index")


def index_reduce_samples(dtype, rng):
    a = lambda s: _distinct(dtype, rng, s)  # noqa: E731
    for reduce in _REDUCES[1:]:
        for include_self in (True, False):
            yield SampleInput(a((3, 4)), (0, _idx(0, 2, 0), a((3, 4)), reduce),
                              kwargs=dict(include_self=include_self),
                              name=f"{reduce}_{include_self}")
    yield SampleInput(a((3, 4)), (1, _idx(3, 3), a((3, 2)), "amin"), name="dim1")
    yield SampleInput(a(()), (0, _idx(0), a(()), "prod"), name="0d")
    yield SampleInput(a((3, 4)), (0, np.zeros(0, I64), a((0, 4)), "mean"), name="empty_index")
    yield SampleInput(NonContig(a((4, 3))), (0, _idx(3, 3), NonContig(a((2, 3))), "amax"),
                      name="transposed")


def _index_reduce_errors():
    x, i = np.ones((3, 4)), _idx(0, 0)
    yield ErrorInput(SampleInput(x, (0, i, np.ones((2, 4)), "sum")), RuntimeError, "sum")
    yield ErrorInput(SampleInput(x, (0, i, np.ones((3, 4)), "prod")), RuntimeError, "count")
    yield ErrorInput(SampleInput(x, (0, i, np.ones((2, 4), F32), "prod")), RuntimeError,
                     "dtype")
    yield ErrorInput(SampleInput(x, (0, _idx(3, 0), np.ones((2, 4)), "prod")), IndexError,
                     "out_of_range")


# --- the table -----------------------------------------------------------------------------------

def _inplace(name, samples, dtypes=FLOAT_INT, skip=()):
    def gen(dtype, rng):
        return (s for s in samples(dtype, rng) if s.name not in skip)
    return OpInfo(f"Tensor.{name}", on_clone(name), gen, dtypes=dtypes)


def writes_ops() -> list[OpInfo]:
    ops = []
    ops += fn_and_method("cummax", cumextreme_samples, dtypes=ALL, errors=_dim_errors())
    ops += fn_and_method("cummin", cumextreme_samples, dtypes=ALL, errors=_dim_errors())
    ops += fn_and_method("logcumsumexp", logcumsumexp_samples, errors=_logcumsumexp_errors)
    ops += fn_and_method("diff", diff_samples, dtypes=ALL, mixed=diff_mixed,
                         errors=_diff_errors)
    ops += fn_and_method("index_fill", index_fill_samples, dtypes=FLOAT_INT,
                         mixed=index_fill_mixed, errors=_index_fill_errors)
    ops += fn_and_method("index_copy", index_copy_samples, dtypes=ALL,
                         errors=_index_copy_errors)
    ops += fn_and_method("masked_scatter", masked_scatter_samples, dtypes=ALL,
                         errors=_masked_scatter_errors)
    ops += fn_and_method("scatter_reduce", scatter_reduce_samples, dtypes=FLOAT_INT,
                         mixed=scatter_reduce_mixed, errors=_scatter_reduce_errors)
    ops += fn_and_method("index_reduce", index_reduce_samples, dtypes=FLOAT_INT,
                         errors=_index_reduce_errors)
    ops += [_inplace("index_fill_", index_fill_samples),
            _inplace("index_copy_", index_copy_samples),
            _inplace("masked_scatter_", masked_scatter_samples, skip=("input_broadcast",)),
            _inplace("scatter_reduce_", scatter_reduce_samples),
            _inplace("index_reduce_", index_reduce_samples)]
    return ops


def op_db() -> list[OpInfo]:
    return writes_ops()
