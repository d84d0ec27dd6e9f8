"""OpInfos for shaping.py: movedim/moveaxis, ravel, atleast_nd, column_stack/dstack/row_stack,
tensor_split and h/v/dsplit, split_with_sizes, unsafe_split/chunk, narrow_copy, fliplr/flipud,
diag_embed, diagflat, the *_scatter ops, Tensor.unfold, as_strided, index_put, put,
fill_diagonal_, tril/triu_indices, unravel_index, vander, and the in-place metadata ops.
"""

from __future__ import annotations

import numpy as np

from .core import ALL, FLOAT_INT, ErrorInput, NonContig, OpInfo, SampleInput, make
from .elementwise import fn_and_method, function, method

F32, F64, I32, I64, B = np.float32, np.float64, np.int32, np.int64, np.bool_


def _gen(cases):
    def gen(dtype, rng):
        yield from cases(lambda shape, **kw: make(shape, dtype, rng, **kw), dtype)
    return gen


def _s(x, *args, name="", **kwargs):
    return SampleInput(x, args, kwargs, name=name)


def _err(x, *args, error=RuntimeError, name="", **kwargs):
    return ErrorInput(SampleInput(x, args, kwargs), error, name)


def _no_input(fn_name):
    """Ops whose arguments are all plain numbers: the first sample field is ignored."""
    return lambda m: (lambda _unused, *a, **k: getattr(m, fn_name)(*a, **k))


# --- movedim / ravel / atleast / stacking --------------------------------------------------------

def _movedim_cases(a, dtype):
    yield _s(a((2, 3, 4)), 0, 2)
    yield _s(a((2, 3, 4)), -1, 0, name="neg")
    yield _s(a((2, 3, 4, 5)), (0, 1), (3, 2), name="tuples")
    yield _s(a((2, 3, 4)), [2, 0], [0, 1], name="lists")
    yield _s(a(()), 0, 0, name="0d")
    yield _s(NonContig(a((3, 4))), 0, 1, name="transposed")


def _movedim_errors():
    yield _err(np.ones((2, 3)), (0, 1), (1,), name="lengths")
    yield _err(np.ones((2, 3)), (0, 0), (0, 1), name="repeated_source")
    yield _err(np.ones((2, 3)), 2, 0, error=IndexError, name="dim")


def _ravel_cases(a, dtype):
    yield _s(a((2, 3)))
    yield _s(a(()), name="0d")
    yield _s(NonContig(a((3, 4))), name="transposed")


def _atleast_cases(a, dtype):
    yield _s(a(()), name="0d")
    yield _s(a((3,)), name="1d")
    yield _s(a((2, 3)), name="2d")
    yield _s(a((2, 3, 4)), name="3d")
    yield _s(a(()), a((3,)), a((2, 3)), name="varargs")
    yield _s([a((3,)), a(())], name="list")
    yield _s(NonContig(a((3,))), name="strided")


def _atleast(nd):
    return lambda m: getattr(m, f"atleast_{nd}d")


def _column_stack_cases(a, dtype):
    yield _s([a((3,)), a((3, 2)), a((3,))])
    yield _s((a(()), a(())), name="0d")
    yield _s([NonContig(a((3,))), a((3, 1))], name="strided")


def _dstack_cases(a, dtype):
    yield _s([a((2, 3)), a((2, 3))])
    yield _s([a((3,)), a((3,))], name="1d")
    yield _s([a((2, 3, 2)), a((2, 3, 1))], name="3d")
    yield _s([a(()), a(())], name="0d")


def _row_stack_cases(a, dtype):
    yield _s([a((3,)), a((2, 3))])
    yield _s((a((2, 3)), a((1, 3))), name="tuple")


# --- splits --------------------------------------------------------------------------------------

def _tensor_split_cases(a, dtype):
    yield _s(a((7, 3)), 3)
    yield _s(a((7, 3)), 2, 1, name="dim1")
    yield _s(a((3, 4)), 5, 1, name="more_sections")
    yield _s(a((8,)), [2, 5], name="indices")
    yield _s(a((8,)), (3, 3, 10), name="indices_past_end")
    yield _s(a((8,)), [-2], name="negative_index")
    yield _s(a((3, 6)), np.asarray([1, 4]), dim=1, name="tensor_indices")
    yield _s(a((6, 2)), np.asarray(4), name="tensor_sections")
    yield _s(NonContig(a((5, 4))), 2, -1, name="transposed")


def _tensor_split_errors():
    yield _err(np.ones(()), 2, name="0d")
    yield _err(np.ones(4), 0, name="zero_sections")
    yield _err(np.ones(4), np.asarray([1.0]), name="float_tensor")
    yield _err(np.ones(4), np.ones((1, 1), I64), name="2d_tensor")


def _hsplit_cases(a, dtype):
    yield _s(a((3, 4)), 2)
    yield _s(a((6,)), 3, name="1d")
    yield _s(a((2, 5, 3)), [1, 3], name="indices")


def _vsplit_cases(a, dtype):
    yield _s(a((4, 3)), 2)
    yield _s(a((5, 3)), [1, 4], name="indices")


def _dsplit_cases(a, dtype):
    yield _s(a((2, 3, 4)), 2)
    yield _s(a((2, 3, 5)), [2], name="indices")


def _hsplit_errors():
    yield _err(np.ones((3, 5)), 2, name="not_divisible")
    yield _err(np.ones(()), 1, name="0d")


def _vsplit_errors():
    yield _err(np.ones(4), 2, name="1d")
    yield _err(np.ones((5, 2)), 2, name="not_divisible")


def _dsplit_errors():
    yield _err(np.ones((2, 4)), 2, name="2d")


def _split_with_sizes_cases(a, dtype):
    yield _s(a((6, 2)), [1, 2, 3])
    yield _s(a((2, 5)), (4, 1), 1, name="dim1")
    yield _s(a((2, 5)), [5, 0], dim=-1, name="empty_part")


def _split_with_sizes_errors():
    yield _err(np.ones(5), [2, 2], name="sum")


def _unsafe_split_cases(a, dtype):
    yield _s(a((7, 2)), 3)
    yield _s(a((2, 5)), 2, 1, name="dim1")


def _unsafe_chunk_cases(a, dtype):
    yield _s(a((7, 2)), 3)
    yield _s(a((2, 5)), 2, 1, name="dim1")


def _narrow_copy_cases(a, dtype):
    yield _s(a((5, 3)), 0, 1, 3)
    yield _s(a((5, 3)), -1, 0, 2, name="neg_dim")
    yield _s(NonContig(a((4, 3))), 1, 1, 2, name="transposed")


def _unsafe_split_write(m):
    """unsafe_split's parts may be changed in place, unlike split's."""
    def run(x):
        y = x * 1
        parts = y.unsafe_split(2)
        parts[0].mul_(2)
        return y
    return run


# --- flips and diagonals -------------------------------------------------------------------------

def _fliplr_cases(a, dtype):
    yield _s(a((3, 4)))
    yield _s(a((2, 3, 2)), name="3d")
    yield _s(NonContig(a((3, 4))), name="transposed")


def _flipud_cases(a, dtype):
    yield _s(a((3,)))
    yield _s(a((3, 4)), name="2d")
    yield _s(NonContig(a((3, 4))), name="transposed")


def _fliplr_errors():
    yield _err(np.ones(3), name="1d")


def _flipud_errors():
    yield _err(np.ones(()), name="0d")


def _diag_embed_cases(a, dtype):
    yield _s(a((2, 3)))
    yield _s(a((3,)), 1, name="offset")
    yield _s(a((2, 3)), -2, name="neg_offset")
    yield _s(a((2, 3)), 0, 0, 2, name="dims")
    yield _s(a((2, 3)), 1, -1, 0, name="dims_reversed")
    yield _s(a((2, 2, 3)), offset=-1, dim1=1, dim2=3, name="4d_out")
    yield _s(a((0,)), name="empty")
    yield _s(NonContig(a((3, 2))), name="transposed")


def _diag_embed_errors():
    yield _err(np.ones((2, 3)), 0, 1, 1, name="same_dims")
    yield _err(np.ones((2, 3)), 0, 0, 3, error=IndexError, name="dim")


def _diagflat_cases(a, dtype):
    yield _s(a((3,)))
    yield _s(a((2, 2)), 1, name="2d_offset")
    yield _s(a(()), -1, name="0d")
    yield _s(NonContig(a((2, 3))), name="transposed")


def _diagonal_scatter_cases(a, dtype):
    yield _s(a((3, 3)), a((3,)))
    yield _s(a((3, 4)), a((3,)), 1, name="offset")
    yield _s(a((2, 3, 4)), a((2, 3)), 0, 1, 2, name="batched")
    yield _s(NonContig(a((4, 3))), a((2,)), -2, name="transposed")


def _select_scatter_cases(a, dtype):
    yield _s(a((3, 4)), a((4,)), 0, 1)
    yield _s(a((3, 4)), a((3,)), 1, -1, name="dim1_neg")
    yield _s(a((2, 3, 4)), a((2, 4)), 1, 0, name="3d")
    yield _s(NonContig(a((4, 3))), a((4,)), 1, 2, name="transposed")


def _slice_scatter_cases(a, dtype):
    yield _s(a((5, 3)), a((2, 3)), 0, 1, 3)
    yield _s(a((4, 6)), a((4, 3)), 1, None, None, 2, name="step")
    yield _s(a((4, 6)), a((4, 2)), dim=1, start=-2, name="neg_start_kwargs")
    yield _s(a((4, 3)), a((4, 3)), name="all")
    yield _s(NonContig(a((4, 3))), a((4, 1)), 1, 2, name="transposed")


def _scatter_errors(name):
    def errors():
        if name == "diagonal_scatter":
            yield _err(np.ones((3, 3)), np.ones(2), name="size")
        elif name == "select_scatter":
            yield _err(np.ones((3, 3)), np.ones(2), 0, 0, name="size")
        else:
            yield _err(np.ones((3, 4)), np.ones((1, 4)), name="size")
    return errors


# --- unfold / as_strided -------------------------------------------------------------------------

def _unfold_cases(a, dtype):
    yield _s(a((7,)), 0, 3, 1)
    yield _s(a((2, 9)), 1, 4, 2, name="step2")
    yield _s(a((2, 10)), -1, 4, 4, name="frames")
    yield _s(a((6, 3)), 0, 2, 3, name="step_past_size")
    yield _s(a((3, 5, 2)), 1, 5, 1, name="whole_dim")
    yield _s(a((4,)), 0, 0, 1, name="size0")
    yield _s(a(()), 0, 1, 1, name="0d")
    yield _s(NonContig(a((5, 3))), 0, 2, 1, name="transposed")


def _unfold_errors():
    yield _err(np.ones(4), 0, 5, 1, name="too_big")
    yield _err(np.ones(4), 0, 2, 0, name="step0")
    yield _err(np.ones(4), 1, 2, 1, error=IndexError, name="dim")


def _unfold_write(m):
    """An in-place op through a window view reaches the base."""
    def run(x):
        y = x * 1
        w = y.unfold(0, 2, 2)
        w.mul_(3)
        return y, w
    return run


def _unfold_write_cases(a, dtype):
    yield _s(a((6,)))
    yield _s(a((4, 3)), name="2d")


def _as_strided_cases(a, dtype):
    yield _s(a((3, 4)), (2, 2), (1, 2))
    yield _s(a((3, 4)), (3, 3), (1, 1), name="overlapping")
    yield _s(a((3, 4)), (2,), (3,), 2, name="offset")
    yield _s(a((12,)), (2, 3, 2), (6, 2, 1), name="3d")
    yield _s(a((3, 4)), (4,), (0,), 5, name="broadcast")


def _as_strided_errors():
    yield _err(np.ones((2, 3)), (4, 4), (4, 1), name="out_of_bounds")


# --- indexed writes -------------------------------------------------------------------------------

def _index_put_cases(a, dtype):
    yield _s(a((4, 3)), (np.asarray([0, 2]),), a((2, 3)))
    yield _s(a((4, 3)), (np.asarray([0, 3]), np.asarray([1, 2])), a((2,)), name="pairs")
    yield _s(a((4, 3)), (np.asarray([1, 1, 2]), np.asarray([0, 0, 2])), a((3,)), True,
             name="accumulate_repeats")
    yield _s(a((4, 3)), [np.asarray([0, 3])], a((3,)), accumulate=True, name="list_kwarg")


def _put_cases(a, dtype):
    yield _s(a((3, 4)), np.asarray([0, 5, 11]), a((3,)))
    yield _s(a((3, 4)), np.asarray([[1, -1]]), a((1, 2)), name="negative_2d_index")
    yield _s(a((3, 4)), np.asarray([2, 2, 7]), a((3,)), True, name="accumulate")
    yield _s(a((3, 4)), np.asarray([0, 3]), a((2,)), accumulate=True, name="accumulate_kwarg")


def _put_errors():
    yield _err(np.ones((2, 2)), np.asarray([4]), np.ones(1), error=IndexError, name="range")
    yield _err(np.ones((2, 2)), np.asarray([1, 2]), np.ones(1), error=IndexError,
               name="numel")


def _fill_diagonal_cases(a, dtype):
    value = 2.5 if np.dtype(dtype).kind == "f" else 2
    yield _s(a((3, 3)), value)
    yield _s(a((5, 3)), value, name="tall")
    yield _s(a((7, 3)), value, True, name="tall_wrap")
    yield _s(a((3, 5)), value, wrap=True, name="wide_wrap")
    yield _s(a((3, 3, 3)), value, name="cube")


def _fill_diagonal_errors():
    yield _err(np.ones(3), 1.0, name="1d")
    yield _err(np.ones((2, 3, 3)), 1.0, name="unequal")


# --- index arithmetic and vander -----------------------------------------------------------------

def _triangle_indices_cases(a, dtype):
    yield _s(None, 3, 3)
    yield _s(None, 4, 3, 1, name="offset")
    yield _s(None, 3, 5, -2, name="neg_offset")
    yield _s(None, 0, 3, name="empty")
    yield _s(None, 3, 3, dtype=_dt("int32"), name="int32")


def _triangle_indices_errors():
    yield ErrorInput(SampleInput(None, (3, 3), {"dtype": _dt("float32")}), NotImplementedError,
                     "float_dtype")


def _dt(name):
    from .core import DType
    return DType(name)


def _unravel_index_cases(a, dtype):
    yield _s(np.asarray([0, 5, 11]), (3, 4))
    yield _s(np.asarray(7), (2, 2, 2), name="0d")
    yield _s(np.asarray([[1, -1]]), (3, 4), name="negative_2d")
    yield _s(np.asarray([3]), 5, name="int_shape")
    yield _s(np.asarray([12, -13, 100]), (3, 4), name="out_of_range_wraps")


def _unravel_index_errors():
    yield _err(np.asarray([1.0]), (3, 4), error=TypeError, name="float")


def _vander_cases(a, dtype):
    yield _s(a((4,)))
    yield _s(a((3,)), 5, name="N")
    yield _s(a((3,)), N=2, increasing=True, name="increasing")
    yield _s(a((3,)), 1, name="N1")
    yield _s(a((3,)), 0, name="N0")


def _vander_errors():
    yield _err(np.ones((2, 2)), name="2d")


# --- in-place metadata changes -------------------------------------------------------------------

def _meta_inplace(name):
    def op(m):
        def run(x, *args):
            y = x * 1
            out = getattr(y, name)(*args)
            assert out is y, f"{name} must return self"
            return y * 2  # a later op sees the new shape and the new history
        return run
    return op


def _t_cases(a, dtype):
    yield _s(a((2, 3)))
    yield _s(a((3,)), name="1d")


def _transpose_cases(a, dtype):
    yield _s(a((2, 3, 4)), 0, 2)
    yield _s(a((2, 3)), -1, 0, name="neg")


def _squeeze_cases(a, dtype):
    yield _s(a((2, 1, 3, 1)))
    yield _s(a((2, 1, 3)), 1, name="dim")
    yield _s(a((2, 1, 3)), 0, name="dim_not_one")


def _unsqueeze_cases(a, dtype):
    yield _s(a((2, 3)), 0)
    yield _s(a((2, 3)), -1, name="last")


def _leaf_meta_inplace(m):
    """torch refuses a shape change in place on a leaf that requires grad."""
    def run(x):
        leaf = x.clone().detach().requires_grad_(True)
        return leaf.t_()
    return run


def _leaf_errors():
    yield _err(np.ones((2, 3)), name="leaf")


# --- the table -----------------------------------------------------------------------------------

def shaping_ops() -> list[OpInfo]:
    ops = []
    for name in ("movedim", "moveaxis"):
        ops += fn_and_method(name, _gen(_movedim_cases), dtypes=ALL, errors=_movedim_errors)
    ops += fn_and_method("ravel", _gen(_ravel_cases), dtypes=ALL)
    for nd in (1, 2, 3):
        ops.append(OpInfo(f"atleast_{nd}d", _atleast(nd), _gen(_atleast_cases), dtypes=ALL))
    ops.append(OpInfo("column_stack", function("column_stack"), _gen(_column_stack_cases),
                      dtypes=ALL))
    ops.append(OpInfo("dstack", function("dstack"), _gen(_dstack_cases), dtypes=ALL))
    ops.append(OpInfo("row_stack", function("row_stack"), _gen(_row_stack_cases)))
    ops += fn_and_method("tensor_split", _gen(_tensor_split_cases), dtypes=ALL,
                         errors=_tensor_split_errors)
    ops += fn_and_method("hsplit", _gen(_hsplit_cases), errors=_hsplit_errors)
    ops += fn_and_method("vsplit", _gen(_vsplit_cases), errors=_vsplit_errors)
    ops += fn_and_method("dsplit", _gen(_dsplit_cases), errors=_dsplit_errors)
    ops += fn_and_method("split_with_sizes", _gen(_split_with_sizes_cases),
                         errors=_split_with_sizes_errors)
    ops += fn_and_method("unsafe_split", _gen(_unsafe_split_cases))
    ops += fn_and_method("unsafe_chunk", _gen(_unsafe_chunk_cases))
    # forward only: torch's gradient ignores the in-place change (the "unsafe" part)
    ops.append(OpInfo("Tensor.unsafe_split.inplace", _unsafe_split_write,
                      _gen(lambda a, d: iter([_s(a((5, 2)))])), supports_grad=False,
                      requires_grad_parity=False))
    ops += fn_and_method("narrow_copy", _gen(_narrow_copy_cases), dtypes=FLOAT_INT)
    ops += fn_and_method("fliplr", _gen(_fliplr_cases), dtypes=ALL, errors=_fliplr_errors)
    ops += fn_and_method("flipud", _gen(_flipud_cases), dtypes=ALL, errors=_flipud_errors)
    ops += fn_and_method("diag_embed", _gen(_diag_embed_cases), dtypes=ALL,
                         errors=_diag_embed_errors)
    ops += fn_and_method("diagflat", _gen(_diagflat_cases), dtypes=ALL)
    for name, cases in (("diagonal_scatter", _diagonal_scatter_cases),
                        ("select_scatter", _select_scatter_cases),
                        ("slice_scatter", _slice_scatter_cases)):
        ops += fn_and_method(name, _gen(cases), dtypes=FLOAT_INT, errors=_scatter_errors(name))
    ops.append(OpInfo("Tensor.unfold", method("unfold"), _gen(_unfold_cases), dtypes=ALL,
                      errors=_unfold_errors))
    ops.append(OpInfo("Tensor.unfold.inplace_view", _unfold_write, _gen(_unfold_write_cases)))
    ops += fn_and_method("as_strided", _gen(_as_strided_cases), dtypes=FLOAT_INT,
                         errors=_as_strided_errors)
    ops.append(OpInfo("index_put", function("index_put"), _gen(_index_put_cases),
                      dtypes=FLOAT_INT))
    ops.append(OpInfo("index_put_", lambda m: lambda x, *a, **k: m.index_put_(x * 1, *a, **k),
                      _gen(_index_put_cases)))
    ops += fn_and_method("put", _gen(_put_cases), dtypes=FLOAT_INT, errors=_put_errors)
    ops.append(OpInfo("Tensor.put_", _inplace_on_copy("put_"), _gen(_put_cases)))
    ops.append(OpInfo("Tensor.fill_diagonal_", _inplace_on_copy("fill_diagonal_"),
                      _gen(_fill_diagonal_cases), dtypes=FLOAT_INT, errors=_fill_diagonal_errors))
    for name in ("tril_indices", "triu_indices"):
        ops.append(OpInfo(name, _no_input(name), _gen(_triangle_indices_cases),
                          dtypes=(F64,), supports_grad=False, errors=_triangle_indices_errors))
    ops.append(OpInfo("unravel_index", function("unravel_index"), _gen(_unravel_index_cases),
                      dtypes=(F64,), supports_grad=False, errors=_unravel_index_errors))
    # torch 2.13's vander backward raises (its cumprod input is changed in place): no
    # gradient to compare with
    ops.append(OpInfo("vander", function("vander"), _gen(_vander_cases), dtypes=FLOAT_INT,
                      supports_grad=False, requires_grad_parity=False, errors=_vander_errors))
    for name, cases in (("t_", _t_cases), ("transpose_", _transpose_cases),
                        ("swapaxes_", _transpose_cases), ("swapdims_", _transpose_cases),
                        ("squeeze_", _squeeze_cases), ("unsqueeze_", _unsqueeze_cases)):
        ops.append(OpInfo(f"Tensor.{name}", _meta_inplace(name), _gen(cases), dtypes=ALL))
    ops.append(OpInfo("Tensor.t_.leaf", _leaf_meta_inplace, _gen(lambda a, d: iter(())),
                      errors=_leaf_errors))
    return ops


def _inplace_on_copy(name):
    def op(m):
        def run(x, *args, **kwargs):
            y = x * 1
            out = getattr(y, name)(*args, **kwargs)
            assert out is y, f"{name} must return self"
            return y
        return run
    return op


def op_db() -> list[OpInfo]:
    return shaping_ops()
