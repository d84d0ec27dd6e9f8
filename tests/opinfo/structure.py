"""OpInfos for structural ops: tril, triu (and tril_/triu_), diag, diagonal (and in-place writes
through it), trace, roll, rot90, nn.functional.pad (every mode), meshgrid, broadcast_to,
broadcast_tensors, kron.

These ops only move, select or multiply values, so random inputs are smooth everywhere.
"""

from __future__ import annotations

import numpy as np

from .core import (
    ALL,
    FLOAT_INT,
    ErrorInput,
    NonContig,
    OpInfo,
    SampleInput,
    make,
)
from .elementwise import fn_and_method, function
from .inplace import on_clone, on_view

F32, F64, I32, I64, U8, B = np.float32, np.float64, np.int32, np.int64, np.uint8, np.bool_


def _gen(cases):
    """Samples from ``cases(a, dtype)`` where ``a(shape)`` makes an input of that dtype."""

    def gen(dtype, rng):
        yield from cases(lambda shape: make(shape, dtype, rng), dtype)

    return gen


def _s(x, *args, name="", **kwargs):
    return SampleInput(x, args, kwargs, name=name)


def _err(x, *args, error=RuntimeError, name="", **kwargs):
    return ErrorInput(SampleInput(x, args, kwargs), error, name)


def _is_float(dtype):
    return np.dtype(dtype).kind == "f"


# --- tril / triu -------------------------------------------------------------------------------

def _triangle_cases(a, dtype):
    yield _s(a((3, 4)))
    yield _s(a((3, 4)), 1, name="above")
    yield _s(a((4, 3)), diagonal=-1, name="below_kwarg")
    yield _s(a((3, 4)), 5, name="past_end")
    yield _s(a((3, 4)), -4, name="before_start")
    yield _s(a((2, 3, 4)), -1, name="batched")
    yield _s(a((1, 1)), name="1x1")
    yield _s(a((0, 3)), name="empty")
    yield _s(a((2, 0, 3)), 1, name="empty_batched")
    yield _s(NonContig(a((4, 3))), 1, name="transposed")
    yield _s(NonContig(a((2, 4, 3))), -1, name="transposed_batched")


def _triangle_inplace_cases(a, dtype):
    yield _s(a((3, 4)))
    yield _s(a((3, 4)), -1, name="below")
    yield _s(a((2, 3, 4)), diagonal=1, name="batched_kwarg")
    yield _s(NonContig(a((4, 3))), 1, name="transposed")


def _triangle_view_cases(a, dtype):
    # on_view applies the op to rows 1: of a clone
    yield _s(a((3, 4)))
    yield _s(a((4, 3)), 1, name="above")


def _triangle_errors():
    yield _err(np.ones(()), name="0d")
    yield _err(np.ones(3), name="1d")


# --- diag / diagonal / trace ---------------------------------------------------------------------

def _diag_cases(a, dtype):
    yield _s(a((4,)), name="vector")
    yield _s(a((4,)), 2, name="vector_above")
    yield _s(a((3,)), diagonal=-1, name="vector_below_kwarg")
    yield _s(a((1,)), name="vector_1")
    yield _s(a((0,)), name="vector_empty")
    yield _s(a((0,)), 1, name="vector_empty_offset")
    yield _s(NonContig(a((4,))), -2, name="vector_strided")
    yield _s(a((3, 4)), name="matrix")
    yield _s(a((3, 4)), 1, name="matrix_above")
    yield _s(a((4, 3)), -2, name="matrix_below")
    yield _s(a((3, 4)), 5, name="matrix_past_end")
    yield _s(a((3, 4)), -3, name="matrix_before_start")
    yield _s(a((0, 3)), name="matrix_empty")
    yield _s(NonContig(a((4, 3))), 1, name="matrix_transposed")


def _diag_errors():
    yield _err(np.ones(()), name="0d")
    yield _err(np.ones((2, 3, 4)), name="3d")


def _diagonal_cases(a, dtype):
    yield _s(a((3, 4)))
    yield _s(a((3, 4)), 1, name="above")
    yield _s(a((4, 3)), -2, name="below")
    yield _s(a((3, 4)), 5, name="past_end")
    yield _s(a((3, 4)), -4, name="before_start")
    yield _s(a((2, 3, 4)), 1, 2, 0, name="dims_reversed")
    yield _s(a((2, 3, 4)), offset=-1, dim1=-1, dim2=-2, name="neg_dims_kwargs")
    yield _s(a((2, 3, 4)), 0, 0, 2, name="outer_dims")
    yield _s(a((2, 3, 4, 2)), 0, 1, 3, name="4d")
    yield _s(a((2, 0, 3)), 0, 1, 2, name="empty")
    yield _s(NonContig(a((4, 3))), 1, name="transposed")
    yield _s(NonContig(a((2, 4, 3))), 0, -2, -1, name="transposed_batched")


def _diagonal_errors():
    yield _err(np.ones(()), error=IndexError, name="0d")
    yield _err(np.ones(3), error=IndexError, name="1d")
    yield _err(np.ones((2, 3, 4)), 0, 1, -2, name="identical_dims")
    yield _err(np.ones((2, 3, 4)), 0, 0, 3, error=IndexError, name="dim")


def _diagonal_write(m):
    """An in-place op through the diagonal view reaches the base: returns (base, view)."""
    def run(x, w):
        y = x.clone()
        d = y.diagonal()
        d.mul_(w)
        y.diagonal(1).zero_()
        return y, d
    return run


def _diagonal_write_cases(a, dtype):
    yield _s(a((3, 4)), a((3,)))
    yield _s(a((4, 3)), a((1,)), name="broadcast_w")
    yield _s(NonContig(a((4, 3))), a((3,)), name="transposed")


def _trace_cases(a, dtype):
    yield _s(a((3, 3)))
    yield _s(a((3, 4)), name="wide")
    yield _s(a((4, 2)), name="tall")
    yield _s(a((1, 1)), name="1x1")
    yield _s(a((0, 3)), name="empty")
    yield _s(NonContig(a((4, 3))), name="transposed")


def _trace_mixed(rng):
    """Integer traces sum to int64, as torch's."""
    yield _s(make((3, 4), I32, rng), name="int32")
    yield _s(make((3, 3), U8, rng, 0, 9), name="uint8")


def _trace_errors():
    yield _err(np.ones((2, 2), B), error=NotImplementedError, name="bool")
    yield _err(np.ones(()), name="0d")
    yield _err(np.ones(3), name="1d")
    yield _err(np.ones((2, 3, 4)), name="3d")


# --- roll / rot90 --------------------------------------------------------------------------------

def _roll_cases(a, dtype):
    yield _s(a((3, 4)), 1, name="flat")
    yield _s(a((3, 4)), -5, name="flat_neg")
    yield _s(a((3, 4)), 2, 1, name="dim")
    yield _s(a((3, 4)), 7, 0, name="past_size")
    yield _s(a((2, 3, 4)), (1, -2), (0, 2), name="two_dims")
    yield _s(a((2, 3, 4)), shifts=(1, 2), dims=(-1, -1), name="repeated_dim_kwargs")
    yield _s(a((2, 3, 4)), [1], [-2], name="lists")
    yield _s(a(()), 1, name="0d")
    yield _s(a((0, 3)), 1, 0, name="empty")
    yield _s(a((0, 3)), 2, name="empty_flat")
    yield _s(NonContig(a((4, 3))), 1, 1, name="transposed")
    yield _s(NonContig(a((6,))), 2, name="strided_flat")


def _roll_errors():
    yield _err(np.ones((2, 3)), (1, 2), 0, name="misaligned")
    yield _err(np.ones((2, 3)), (1, 2), name="flat_two_shifts")
    yield _err(np.ones((2, 3)), (), (), name="no_shifts")
    yield _err(np.ones((2, 3)), 1, 2, error=IndexError, name="dim")
    yield _err(np.ones(()), 1, 0, error=IndexError, name="0d_dim")


def _rot90_cases(a, dtype):
    yield _s(a((3, 4)))
    for k in (0, 2, 3, -1, 5, -6):
        yield _s(a((3, 4)), k, name=f"k{k}")
    yield _s(a((2, 3, 4)), 1, (2, 0), name="dims")
    yield _s(a((2, 3, 4)), k=-1, dims=[-1, -2], name="neg_dims_kwargs")
    yield _s(a((2, 3, 4, 2)), 3, (1, 2), name="batched")
    yield _s(a((0, 3)), name="empty")
    yield _s(NonContig(a((4, 3))), 1, name="transposed")


def _rot90_errors():
    yield _err(np.ones(()), name="0d")
    yield _err(np.ones(3), name="1d")
    yield _err(np.ones((2, 3, 4)), 1, (0, 1, 2), name="three_dims")
    yield _err(np.ones((2, 3, 4)), 1, (1, -2), name="same_dims")
    yield _err(np.ones((2, 3, 4)), 1, (0, 3), error=IndexError, name="dim")


# --- pad -----------------------------------------------------------------------------------------

def _pad_fn(m):
    return m.nn.functional.pad


def _constant_pad_cases(a, dtype):
    value = 1.5 if _is_float(dtype) else True if dtype is B else 2
    yield _s(a((2, 3)), (1, 2))
    yield _s(a((2, 3, 4)), (1, 0, 2, 1), value=value, name="2d_value")
    yield _s(a((2, 3, 4)), (1, 1, 0, 2, 2, 1), name="3d")
    yield _s(a((3, 4)), (1, 2), "constant", value, name="positional")
    yield _s(a((3, 4)), (-1, 2), name="crop")
    yield _s(a((3, 4)), (-1, -1, 0, -2), name="crop_both")
    yield _s(a((3, 4)), (-2, -2), name="crop_to_empty")
    yield _s(a((3, 4)), (), name="no_pad")
    yield _s(a(()), (), name="0d")
    yield _s(a((0, 3)), (1, 1, 1, 1), name="empty")
    yield _s(NonContig(a((4, 3))), (1, 2, 0, 1), name="transposed")


def _constant_pad_mixed(rng):
    yield _s(make((2, 3), I64, rng), (1, 1), value=2.5, name="int_float_value")


def _constant_pad_errors():
    yield _err(np.ones((2, 3)), (1,), name="odd")
    yield _err(np.ones((2, 3)), (1,) * 6, name="too_long")
    yield _err(np.ones((2, 3)), (-3, -2), name="crop_past")
    yield _err(np.ones((2, 3, 4)), (1, 1), mode="wrap", error=NotImplementedError, name="mode")


def _gather_pad_cases(mode):
    def cases(a, dtype):
        yield _s(a((2, 3, 4)), (1, 2), mode=mode, name="1d")
        yield _s(a((3, 4)), (2, 1), mode=mode, name="1d_unbatched")
        yield _s(a((2, 3, 4)), (1, 2, 1, 0), mode=mode, name="2d_unbatched")
        yield _s(a((1, 2, 3, 4)), (0, 3, 2, 1), mode=mode, name="2d")
        yield _s(a((2, 3, 4, 3)), (1, 1, 2, 1, 0, 1), mode=mode, name="3d_unbatched")
        yield _s(a((1, 1, 2, 3, 4)), (2, 1, 1, 0, 1, 1), mode=mode, name="3d")
        yield _s(a((2, 3, 4)), (-1, 2), mode=mode, name="crop")
        yield _s(a((2, 3, 4)), (2, -1, -1, 1), mode=mode, name="crop_2d")
        yield _s(a((2, 3, 4)), (-1, -2), mode=mode, name="crop_both")
        yield _s(a((0, 3, 4)), (1, 2), mode=mode, name="empty_batch")
        yield _s(NonContig(a((2, 4, 3))), (1, 2), mode, name="transposed_positional")
        yield _s(a((2, 3, 4)), (-3, 1), mode=mode, name="crop_most")
        if mode != "circular":
            yield _s(a((2, 3, 4)), (1, 1, -2, -1), mode=mode, name="crop_one_dim_to_empty")
        if mode == "replicate":
            yield _s(a((2, 3, 4)), (5, 6), mode=mode, name="wider_than_input")
            yield _s(a((2, 3, 4)), (-5, 6), mode=mode, name="crop_past_edge")
        if mode == "circular":
            yield _s(a((2, 3, 4)), (4, 3, 3, 0), mode=mode, name="whole_input")
            yield _s(a((2, 3, 4)), (2, -2), mode=mode, name="wrap_cropped")
            yield _s(a((2, 3, 4)), (-2, -2), mode=mode, name="crop_to_empty")
            yield _s(a((2, 0, 4)), (1, 2), mode=mode, name="empty_channels")
    return cases


def _gather_pad_errors(mode):
    def errors():
        yield _err(np.ones(4), (1, 2), mode=mode, error=NotImplementedError, name="1d_input")
        yield _err(np.ones((1, 2, 3, 4)), (1, 2), mode=mode, error=NotImplementedError,
                   name="4d_input_pad2")
        yield _err(np.ones((2, 3, 4)), (1, 1), mode=mode, value=1.0, name="value")
        if mode != "replicate":  # replicate repeats the edge any number of times
            yield _err(np.ones((2, 3, 4)), (5, 1), mode=mode, name="too_wide")
        yield _err(np.ones((2, 3, 0)), (1, 1), mode=mode, name="empty_width")
        if mode == "circular":
            yield _err(np.ones((2, 3, 4)), (-3, -2), mode=mode, name="crop_past")
            # torch detects its slice copies overlapping on contiguous storage only
            yield _err(np.ones((1, 1, 4)), (3, -2), mode=mode, name="wider_than_cropped")
        else:
            yield _err(np.ones((2, 3, 4)), (-2, -2), mode=mode, name="crop_to_empty")
            yield _err(np.ones((2, 3, 4)), (-2, -2, -2, -1), mode=mode, name="crop_to_empty_2d")
        if mode != "circular":
            yield _err(np.ones((2, 0, 4)), (1, 1), mode=mode, name="empty_channels")
            yield _err(np.ones((2, 3, 4), B), (1, 1), mode=mode, error=NotImplementedError,
                       name="bool")
    return errors


# --- meshgrid / broadcasting ------------------------------------------------------------------

def _meshgrid_cases(a, dtype):
    yield _s([a((3,)), a((2,))], indexing="ij", name="ij")
    yield _s([a((3,)), a((2,))], indexing="xy", name="xy")
    yield _s((a((3,)), a((2,)), a((4,))), indexing="xy", name="three_xy")
    yield _s((a((3,)), a((2,)), a((4,))), indexing="ij", name="three_ij")
    yield _s(a((3,)), a((2,)), indexing="xy", name="varargs")
    yield _s([a((3,))], indexing="xy", name="single")
    yield _s([a(()), a((3,))], indexing="xy", name="0d")
    yield _s([a((0,)), a((3,))], indexing="ij", name="empty")
    yield _s([NonContig(a((3,))), a((2,))], indexing="xy", name="strided")


def _meshgrid_errors():
    yield _err([np.ones(3), np.ones(2, F32)], indexing="ij", name="dtypes")
    yield _err([np.ones((3, 2))], indexing="ij", name="2d")
    yield _err([np.ones(3)], indexing="xx", name="indexing")
    yield _err([], indexing="ij", name="empty_list")
    yield _err([np.ones(3), 3], indexing="ij", error=TypeError, name="not_tensor")


def _broadcast_to_cases(a, dtype):
    yield _s(a((3, 1)), (3, 4))
    yield _s(a((3, 1)), (-1, 4), name="minus1")
    yield _s(a((3, 1)), (2, 3, 4), name="new_dims")
    yield _s(a(()), (3,), name="0d")
    yield _s(a(()), (), name="0d_to_0d")
    yield _s(a((1, 3)), (0, 3), name="to_empty")
    yield _s(a((3, 4)), size=(3, 4), name="same_kwarg")
    yield _s(NonContig(a((3, 1))), (2, 3, 4), name="transposed")


def _broadcast_to_errors():
    yield _err(np.ones((2, 3)), (3, 3), name="size")
    yield _err(np.ones((2, 3)), (3,), name="fewer_dims")
    yield _err(np.ones((3, 1)), (-1, 3, 4), name="minus1_new_dim")


def _broadcast_tensors(m):
    return lambda *tensors: m.broadcast_tensors(*tensors)


def _broadcast_tensors_cases(a, dtype):
    yield _s(a((3, 1)), a((4,)))
    yield _s(a((2, 1, 3)), a((4, 1)), a(()), name="three")
    yield _s(a((3, 4)), a((3, 4)), name="same_shape")
    yield _s(a((3,)), name="single")
    yield _s(a((0, 1)), a((3,)), name="empty")
    yield _s(NonContig(a((3, 1))), a((2, 1, 1)), name="transposed")


def _broadcast_tensors_mixed(rng):
    """No promotion: each output keeps its input's dtype."""
    yield _s(make((3, 1), F32, rng), make((4,), I64, rng), name="f32_i64")
    yield _s(make((3, 1), F64, rng), make((3, 4), B, rng), make((), F32, rng), name="f64_b_f32")


def _broadcast_tensors_errors():
    yield _err(np.ones(3), np.ones(4), name="sizes")
    yield _err([np.ones(3), np.ones(3)], error=TypeError, name="list")


# --- kron ----------------------------------------------------------------------------------------

def _kron_cases(a, dtype):
    yield _s(a((2, 3)), a((2, 2)))
    yield _s(a((2,)), a((3,)), name="vectors")
    yield _s(a((2, 3)), a((4,)), name="ranks_2_1")
    yield _s(a((3,)), a((2, 1, 2)), name="ranks_1_3")
    yield _s(a(()), a((2, 3)), name="0d")
    yield _s(a(()), a(()), name="0d_0d")
    yield _s(a((0, 3)), a((2, 2)), name="empty")
    yield _s(NonContig(a((3, 2))), NonContig(a((2, 2))), name="transposed")


def _kron_mixed(rng):
    yield _s(make((2, 3), F32, rng), make((2, 2), F64, rng), name="f32_f64")
    yield _s(make((2, 3), I64, rng), make((2,), F32, rng), name="i64_f32")
    yield _s(make((2, 2), I32, rng), make((2, 2), I64, rng), name="i32_i64")
    yield _s(make((2, 2), B, rng), make((3,), I32, rng), name="bool_i32")


# --- the table -----------------------------------------------------------------------------------

def structure_ops() -> list[OpInfo]:
    ops = []
    for name in ("tril", "triu"):
        ops += fn_and_method(name, _gen(_triangle_cases), dtypes=ALL, errors=_triangle_errors)
        ops.append(OpInfo(f"Tensor.{name}_", on_clone(name + "_"), _gen(_triangle_inplace_cases),
                          dtypes=ALL, errors=_triangle_errors))
        ops.append(OpInfo(f"Tensor.{name}_.view", on_view(name + "_"),
                          _gen(_triangle_view_cases)))
    ops += fn_and_method("diag", _gen(_diag_cases), dtypes=ALL, errors=_diag_errors)
    ops += fn_and_method("diagonal", _gen(_diagonal_cases), dtypes=ALL, errors=_diagonal_errors)
    ops.append(OpInfo("Tensor.diagonal.inplace_view", _diagonal_write,
                      _gen(_diagonal_write_cases), dtypes=FLOAT_INT))
    ops += fn_and_method("trace", _gen(_trace_cases), dtypes=FLOAT_INT, mixed=_trace_mixed,
                         errors=_trace_errors)
    ops += fn_and_method("roll", _gen(_roll_cases), dtypes=ALL, errors=_roll_errors)
    ops += fn_and_method("rot90", _gen(_rot90_cases), dtypes=ALL, errors=_rot90_errors)
    ops.append(OpInfo("nn.functional.pad", _pad_fn, _gen(_constant_pad_cases), dtypes=ALL,
                      mixed=_constant_pad_mixed, errors=_constant_pad_errors))
    for mode, dtypes in (("reflect", FLOAT_INT), ("replicate", FLOAT_INT), ("circular", ALL)):
        ops.append(OpInfo(f"nn.functional.pad.{mode}", _pad_fn, _gen(_gather_pad_cases(mode)),
                          dtypes=dtypes, errors=_gather_pad_errors(mode)))
    ops.append(OpInfo("meshgrid", function("meshgrid"), _gen(_meshgrid_cases), dtypes=ALL,
                      errors=_meshgrid_errors))
    ops += fn_and_method("broadcast_to", _gen(_broadcast_to_cases), dtypes=ALL,
                         errors=_broadcast_to_errors)
    ops.append(OpInfo("broadcast_tensors", _broadcast_tensors, _gen(_broadcast_tensors_cases),
                      dtypes=ALL, mixed=_broadcast_tensors_mixed,
                      errors=_broadcast_tensors_errors))
    ops += fn_and_method("kron", _gen(_kron_cases), dtypes=ALL, mixed=_kron_mixed)
    return ops


def op_db() -> list[OpInfo]:
    return structure_ops()
