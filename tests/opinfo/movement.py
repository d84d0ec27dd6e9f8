"""OpInfos for shape ops (reshape, view, permute, cat, split, ...) and basic indexing.

Samples cover -1 sizes, 0-d and size-0 tensors, negative dims and non-contiguous inputs; the
values are arbitrary since these ops only move data.
"""

from __future__ import annotations

import numpy as np

from .core import ALL, ErrorInput, NonContig, OpInfo, SampleInput, make, variant_dtypes
from .elementwise import function, method

F32, F64, I32, I64, B = np.float32, np.float64, np.int32, np.int64, np.bool_


def _gen(cases):
    """Samples from ``cases(a)`` where ``a(shape)`` makes an input of the requested dtype."""

    def gen(dtype, rng):
        yield from cases(lambda shape: make(shape, dtype, rng))

    return gen


def _s(x, *args, name="", **kwargs):
    return SampleInput(x, args, kwargs, name=name)


def _reshape_cases(a):
    yield _s(a((3, 4)), (4, 3))
    yield _s(a((3, 4)), (2, -1), name="infer")
    yield _s(a((2, 3, 4)), (-1,), name="flat")
    yield _s(a(()), (1,), name="0d_to_1")
    yield _s(a((1,)), (), name="to_0d")
    yield _s(a((1, 1)), (-1,), name="ones")
    yield _s(a((0, 3)), (3, 0), name="empty")
    yield _s(a((0, 3)), (-1, 3), name="empty_infer")
    yield _s(NonContig(a((4, 3))), (2, 6), name="transposed")


def _reshape_method_cases(a):
    yield from _reshape_cases(a)
    yield _s(a((3, 4)), 2, 6, name="varargs")
    yield _s(a((3, 4)), 12, name="varargs_1")


def _view_cases(a):
    for s in _reshape_cases(a):
        if not isinstance(s.input, NonContig):
            yield s
    yield _s(a((3, 4)), 2, 2, 3, name="varargs")
    yield _s(NonContig(a((3, 1))), (-1,), name="transposed_trivial")


def _shape_errors():
    yield ErrorInput(_s(np.ones((2, 3)), (4,)), RuntimeError, "numel")
    yield ErrorInput(_s(np.ones((2, 3)), (-1, -1)), RuntimeError, "two_infer")
    yield ErrorInput(_s(np.ones((0, 3)), (-1, 0)), RuntimeError, "empty_ambiguous")


def _view_errors():
    yield from _shape_errors()
    yield ErrorInput(_s(NonContig(np.ones((4, 3))), (-1,)), RuntimeError, "noncontig")


def _flatten_cases(a):
    yield _s(a((2, 3, 4)))
    yield _s(a((2, 3, 4)), 1, name="start")
    yield _s(a((2, 3, 4, 2)), start_dim=1, end_dim=-2, name="middle")
    yield _s(a((2, 3, 4)), 0, -2, name="neg_end")
    yield _s(a(()), name="0d")
    yield _s(a((2, 0, 3)), name="empty")
    yield _s(NonContig(a((4, 3))), name="transposed")


def _flatten_errors():
    yield ErrorInput(_s(np.ones((2, 3)), 1, 0), RuntimeError, "start_after_end")
    yield ErrorInput(_s(np.ones((2, 3)), 0, 2), IndexError, "dim")


def _unflatten_cases(a):
    yield _s(a((2, 12)), 1, (3, 4))
    yield _s(a((2, 12)), -1, (2, -1, 3), name="infer")
    yield _s(a((6,)), 0, (6,), name="trivial")
    yield _s(a((6, 2)), 0, (1, 6, 1), name="ones")
    yield _s(NonContig(a((6, 4))), 0, (2, 3), name="transposed")


def _unflatten_errors():
    yield ErrorInput(_s(np.ones((2, 6)), 1, (4, 2)), RuntimeError, "numel")
    yield ErrorInput(_s(np.ones((2, 6)), 2, (3, 2)), IndexError, "dim")


def _squeeze_cases(a):
    yield _s(a((1, 3, 1, 2)), name="all")
    yield _s(a((1, 3, 1, 2)), 2, name="dim")
    yield _s(a((1, 3, 1, 2)), -4, name="neg_dim")
    yield _s(a((1, 3, 1, 2)), 1, name="not_size1")
    yield _s(a((1, 3, 1, 2)), (0, 2), name="tuple")
    yield _s(a(()), name="0d")
    yield _s(a(()), 0, name="0d_dim")
    yield _s(a((1, 1)), name="to_0d")
    yield _s(a((0, 1)), name="empty")
    yield _s(NonContig(a((1, 3))), 1, name="transposed")


def _squeeze_errors():
    yield ErrorInput(_s(np.ones((2, 3)), 2), IndexError, "dim")
    yield ErrorInput(_s(np.ones((2, 3)), -3), IndexError, "neg_dim")


def _unsqueeze_cases(a):
    yield _s(a((3, 4)), 0)
    yield _s(a((3, 4)), 1, name="middle")
    yield _s(a((3, 4)), 2, name="last")
    yield _s(a((3, 4)), -1, name="neg")
    yield _s(a((3, 4)), -3, name="neg_first")
    yield _s(a(()), 0, name="0d")
    yield _s(a((0,)), 1, name="empty")
    yield _s(NonContig(a((4, 3))), 1, name="transposed")


def _unsqueeze_errors():
    yield ErrorInput(_s(np.ones((2, 3)), 3), IndexError, "dim")
    yield ErrorInput(_s(np.ones((2, 3)), -4), IndexError, "neg_dim")


def _permute_fn_cases(a):
    yield _s(a((2, 3, 4)), (2, 0, 1))
    yield _s(a((2, 3, 4)), (-1, 0, -2), name="neg")
    yield _s(a((3, 4)), (0, 1), name="identity")
    yield _s(a(()), (), name="0d")
    yield _s(a((2, 0, 3)), (1, 2, 0), name="empty")
    yield _s(NonContig(a((4, 3))), (1, 0), name="transposed")


def _permute_method_cases(a):
    yield from _permute_fn_cases(a)
    yield _s(a((2, 3, 4)), 1, 2, 0, name="varargs")


def _permute_errors():
    yield ErrorInput(_s(np.ones((2, 3)), (0,)), RuntimeError, "too_few")
    yield ErrorInput(_s(np.ones((2, 3)), (0, 0)), RuntimeError, "repeated")
    yield ErrorInput(_s(np.ones((2, 3)), (0, 2)), IndexError, "dim")


def _transpose_cases(a):
    yield _s(a((3, 4)), 0, 1)
    yield _s(a((2, 3, 4)), -1, 0, name="neg")
    yield _s(a((2, 3, 4)), 1, 1, name="same")
    yield _s(a(()), 0, -1, name="0d")
    yield _s(a((2, 0)), 0, 1, name="empty")
    yield _s(NonContig(a((4, 3))), 0, 1, name="transposed")


def _transpose_errors():
    yield ErrorInput(_s(np.ones((2, 3)), 0, 2), IndexError, "dim")


def _expand_fn_cases(a):
    yield _s(a((3, 1)), (3, 4))
    yield _s(a((3, 1)), (-1, 4), name="minus1")
    yield _s(a((3, 1)), (2, 3, 4), name="new_dims")
    yield _s(a(()), (3,), name="0d")
    yield _s(a((1, 3)), (0, 3), name="to_empty")
    yield _s(a((3, 4)), (3, 4), name="same")
    yield _s(NonContig(a((3, 1))), (2, 3, 4), name="transposed")


def _expand_method_cases(a):
    yield from _expand_fn_cases(a)
    yield _s(a((3, 1)), 2, -1, 5, name="varargs")


def _expand_errors():
    yield ErrorInput(_s(np.ones((2, 3)), (3, 3)), RuntimeError, "size")
    yield ErrorInput(_s(np.ones((2, 3)), (3,)), RuntimeError, "fewer_dims")


def _expand_as_cases(a):
    yield SampleInput(a((3, 1)), (a((3, 4)),), nondiff=(1,))
    yield SampleInput(a(()), (a((2, 3)),), name="0d", nondiff=(1,))
    yield SampleInput(a((1, 3)), (a((2, 1, 3)),), name="new_dims", nondiff=(1,))
    yield SampleInput(a((1, 3)), (a((0, 3)),), name="to_empty", nondiff=(1,))


def _repeat_cases(a):
    yield _s(a((2, 3)), 2, 1)
    yield _s(a((2, 3)), 1, 2, 2, name="new_dims")
    yield _s(a((2, 3)), (2, 2), name="tuple")
    yield _s(a(()), 3, name="0d")
    yield _s(a((2, 3)), 0, 1, name="zero")
    yield _s(NonContig(a((4, 3))), 2, 1, name="transposed")


def _repeat_errors():
    yield ErrorInput(_s(np.ones((2, 3)), 2), RuntimeError, "fewer_dims")


def _cat_cases(a):
    yield _s([a((2, 3)), a((4, 3))])
    yield _s([a((2, 3)), a((2, 1)), a((2, 2))], 1, name="dim1")
    yield _s([a((2, 3)), a((2, 2))], dim=-1, name="neg_dim")
    yield _s([a((2, 0, 3)), a((2, 4, 3)), a((2, 0, 3))], 1, name="zero_size_pieces")
    yield _s([a((0, 3)), a((0, 3))], name="all_empty")
    yield _s([a((3,))], name="single")
    yield _s([NonContig(a((4, 3))), a((2, 3))], name="transposed")


def _cat_mixed(rng):
    yield _s([make((2,), F32, rng), make((3,), F64, rng)], name="f32_f64")
    yield _s([make((2,), I64, rng), make((3,), F32, rng)], name="i64_f32")
    yield _s([make((2,), I32, rng), make((2,), I64, rng)], name="i32_i64")
    yield _s([make((2,), B, rng), make((2,), I32, rng)], name="bool_i32")


def _cat_errors():
    yield ErrorInput(_s([]), ValueError, "empty_list")
    yield ErrorInput(_s([np.ones(2), np.ones((2, 2))]), RuntimeError, "ndim")
    yield ErrorInput(_s([np.ones((2, 3)), np.ones((2, 4))]), RuntimeError, "size")
    yield ErrorInput(_s([np.ones(2), np.ones(2)], 1), IndexError, "dim")
    yield ErrorInput(_s([np.ones(())]), RuntimeError, "0d")


def _stack_cases(a):
    yield _s([a((2, 3)), a((2, 3))])
    yield _s([a((2, 3)), a((2, 3)), a((2, 3))], 1, name="dim1")
    yield _s([a((2, 3)), a((2, 3))], dim=-1, name="neg_dim")
    yield _s([a((2, 3)), a((2, 3))], 2, name="new_last")
    yield _s([a(()), a(())], name="0d")
    yield _s([a((0, 3)), a((0, 3))], 1, name="empty")
    yield _s([a((3,))], name="single")
    yield _s([NonContig(a((4, 3))), a((4, 3))], name="transposed")


def _stack_mixed(rng):
    yield _s([make((2,), F32, rng), make((2,), F64, rng)], name="f32_f64")
    yield _s([make((2,), I64, rng), make((2,), F32, rng)], name="i64_f32")


def _stack_errors():
    yield ErrorInput(_s([]), RuntimeError, "empty_list")
    yield ErrorInput(_s([np.ones(2), np.ones(3)]), RuntimeError, "size")
    yield ErrorInput(_s([np.ones(2), np.ones(2)], 2), IndexError, "dim")


def _split_cases(a):
    yield _s(a((5, 3)), 2, name="int_uneven")
    yield _s(a((6, 2)), 3, name="int_even")
    yield _s(a((2, 5)), [1, 4], 1, name="list")
    yield _s(a((2, 5)), [2, 0, 3], dim=-1, name="list_with_zero")
    yield _s(a((4,)), 10, name="int_larger")
    yield _s(a((0, 3)), 2, name="empty")
    yield _s(NonContig(a((4, 3))), 1, 1, name="transposed")


def _split_errors():
    yield ErrorInput(_s(np.ones((2, 3)), [1, 1], 1), RuntimeError, "sizes_sum")
    yield ErrorInput(_s(np.ones((2, 3)), 0, 1), RuntimeError, "zero_size")
    yield ErrorInput(_s(np.ones((2, 3)), 1, 2), IndexError, "dim")


def _chunk_cases(a):
    yield _s(a((5, 3)), 3, name="uneven")
    yield _s(a((6, 2)), 2, name="even")
    yield _s(a((2, 5)), 2, 1, name="dim")
    yield _s(a((2, 3)), 5, dim=-1, name="more_than_size")
    yield _s(a((1, 3)), 2, name="size1")
    yield _s(NonContig(a((4, 3))), 2, 1, name="transposed")


def _chunk_errors():
    yield ErrorInput(_s(np.ones((2, 3)), 0), RuntimeError, "zero_chunks")
    yield ErrorInput(_s(np.ones((2, 3)), 2, 2), IndexError, "dim")


def _flip_fn_cases(a):
    yield _s(a((3, 4)), (0,))
    yield _s(a((2, 3, 4)), (0, 2), name="two_dims")
    yield _s(a((2, 3, 4)), [-1], name="neg")
    yield _s(a((3, 4)), (), name="none")
    yield _s(a(()), (0,), name="0d")
    yield _s(a((0, 3)), (1,), name="empty")
    yield _s(NonContig(a((4, 3))), (0, 1), name="transposed")


def _flip_method_cases(a):
    yield from _flip_fn_cases(a)
    yield _s(a((3, 4)), 0, 1, name="varargs")


def _flip_errors():
    yield ErrorInput(_s(np.ones((2, 3)), (2,)), IndexError, "dim")


def _narrow_cases(a):
    yield _s(a((5, 3)), 0, 1, 3)
    yield _s(a((3, 5)), -1, 2, 2, name="neg_dim")
    yield _s(a((5, 3)), 0, -2, 2, name="neg_start")
    yield _s(a((5, 3)), 1, 1, 0, name="zero_length")
    yield _s(a((5,)), 0, 0, 5, name="whole")
    yield _s(NonContig(a((4, 3))), 1, 0, 2, name="transposed")


def _narrow_errors():
    yield ErrorInput(_s(np.ones((2, 3)), 1, 2, 2), RuntimeError, "past_end")
    yield ErrorInput(_s(np.ones(()), 0, 0, 1), RuntimeError, "0d")
    yield ErrorInput(_s(np.ones((2, 3)), 2, 0, 1), IndexError, "dim")


def _plain_cases(a):
    yield _s(a((3, 4)))
    yield _s(a(()), name="0d")
    yield _s(a((0, 3)), name="empty")
    yield _s(NonContig(a((4, 3))), name="transposed")
    yield _s(NonContig(a((5,))), name="strided")


def _T_cases(a):
    yield _s(a((3, 4)))
    yield _s(a((1, 4)), name="row")
    yield _s(a((0, 3)), name="empty")
    yield _s(NonContig(a((4, 3))), name="transposed")


def _mT_cases(a):
    yield _s(a((3, 4)))
    yield _s(a((2, 3, 4)), name="batched")
    yield _s(a((2, 1, 0, 3)), name="empty")
    yield _s(NonContig(a((4, 3))), name="transposed")


def _mT_errors():
    yield ErrorInput(_s(np.ones(3)), RuntimeError, "1d")


def _t_cases(a):
    yield _s(a((3, 4)))
    yield _s(a((5,)), name="1d")
    yield _s(a(()), name="0d")
    yield _s(a((0, 3)), name="empty")
    yield _s(NonContig(a((4, 3))), name="transposed")


def _t_errors():
    yield ErrorInput(_s(np.ones((2, 3, 4))), RuntimeError, "3d")


def _unbind_cases(a):
    yield _s(a((3, 4)))
    yield _s(a((3, 4)), 1, name="dim")
    yield _s(a((2, 3, 4)), dim=-1, name="neg_dim")
    yield _s(a((1, 3)), name="size1")
    yield SampleInput(a((0, 3)), name="empty", grad=False)
    yield _s(NonContig(a((4, 3))), 0, name="transposed")


def _unbind_errors():
    yield ErrorInput(_s(np.ones(())), IndexError, "0d")
    yield ErrorInput(_s(np.ones((2, 3)), 2), IndexError, "dim")


# --- indexing ------------------------------------------------------------------------------

_E = Ellipsis


def _index_cases(a):
    x = a((4, 5, 3))
    for idx, name in [
        (1, "int"), (-1, "neg_int"), ((1, -2), "ints"), ((1, 2, 0), "all_ints"),
        (slice(1, 3), "slice"), (slice(None, None, 2), "step"), (slice(-3, None), "neg_start"),
        ((slice(None), slice(1, None, 2)), "slice_step"), (slice(2, 2), "empty_slice"),
        (slice(1, 100), "past_end"), (None, "none"), ((None, 1, None), "none_int_none"),
        (_E, "ellipsis"), ((_E, 1), "ellipsis_int"), ((1, _E), "int_ellipsis"),
        ((_E, None), "ellipsis_none"), ((slice(None, None, 3), _E, slice(0, 2)), "step_ellipsis"),
        ((-2, None, slice(1, 4, 2), _E), "combo"), ((), "empty_tuple"),
    ]:
        yield SampleInput(x, (idx,), name=name)
    yield SampleInput(a(()), ((),), name="0d_empty_tuple")
    yield SampleInput(a(()), (None,), name="0d_none")
    yield SampleInput(a(()), (_E,), name="0d_ellipsis")
    yield SampleInput(a((0, 3)), ((slice(None), 1),), name="empty_dim")
    yield SampleInput(NonContig(a((4, 3))), ((slice(1, None), -1),), name="transposed")


def _index_errors():
    yield ErrorInput(SampleInput(np.ones(3), (5,)), IndexError, "out_of_range")
    yield ErrorInput(SampleInput(np.ones(3), (-4,)), IndexError, "neg_out_of_range")
    yield ErrorInput(SampleInput(np.ones(3), ((0, 0),)), IndexError, "too_many")
    yield ErrorInput(SampleInput(np.ones(3), (slice(None, None, -1),)), ValueError, "neg_step")
    yield ErrorInput(SampleInput(np.ones(3), (slice(None, None, 0),)), ValueError, "zero_step")


def _advanced_index_cases(a):
    """Integer-array, list and boolean-mask keys, alone and mixed with basic ones; repeated
    indices accumulate their gradients."""
    x = a((4, 5, 3))
    for idx, name in [
        (np.array([0, 2]), "int_tensor"), (np.array([3, -1, 0, 3]), "repeated_neg"),
        ([1, 0, 1], "list"), ((slice(None), np.array([4, 0])), "slice_then_tensor"),
        ((np.array([1, 2]), slice(1, 3)), "tensor_then_slice"),
        ((np.array([0, 1]), np.array([2, 3])), "two_tensors"),
        ((np.array([[0, 1], [2, 3]]),), "2d_index"),
        ((Ellipsis, np.array([2, 0, 2])), "ellipsis_tensor"),
        (np.array([True, False, True, True]), "mask_1d"),
        ((np.arange(20).reshape(4, 5) % 3 == 0), "mask_2d"),
        ((slice(None), np.array([False] * 5)), "mask_none_true"),
        ((1, np.array([0, 4])), "int_then_tensor"),
    ]:
        yield SampleInput(x, (idx,), name=name)
    yield SampleInput(a(()), (np.array(True),), name="0d_mask")
    yield SampleInput(NonContig(a((4, 3))), (np.array([2, 0]),), name="transposed")


def _advanced_index_errors():
    yield ErrorInput(SampleInput(np.ones(3), (np.array([0.5]),)), IndexError, "float_index")
    yield ErrorInput(SampleInput(np.ones(3), (np.array([3]),)), IndexError, "out_of_range")
    yield ErrorInput(SampleInput(np.ones(3), (np.array([True, False]),)), IndexError,
                     "mask_shape")


def _index(x, idx):
    return x[idx]


def movement_ops() -> list[OpInfo]:
    ops = []

    def add(name, form, cases, errors=None, **kw):
        if form == "fn":
            ops.append(OpInfo(name, function(name), _gen(cases), dtypes=ALL, errors=errors, **kw))
            return
        # a method whose function form is in the table is a variant
        variant = any(o.name == name for o in ops)
        ops.append(OpInfo(f"Tensor.{name}", method(name), _gen(cases), errors=errors,
                          dtypes=variant_dtypes(ALL) if variant else ALL, variant=variant, **kw))

    add("reshape", "fn", _reshape_cases, _shape_errors)
    add("reshape", "method", _reshape_method_cases, _shape_errors)
    add("view", "method", _view_cases, _view_errors)
    add("flatten", "fn", _flatten_cases, _flatten_errors)
    add("flatten", "method", _flatten_cases, _flatten_errors)
    add("unflatten", "fn", _unflatten_cases, _unflatten_errors)
    add("unflatten", "method", _unflatten_cases, _unflatten_errors)
    for form in ("fn", "method"):
        add("squeeze", form, _squeeze_cases, _squeeze_errors)
        add("unsqueeze", form, _unsqueeze_cases, _unsqueeze_errors)
        add("transpose", form, _transpose_cases, _transpose_errors)
        add("swapaxes", form, _transpose_cases, _transpose_errors)
        add("split", form, _split_cases, _split_errors)
        add("chunk", form, _chunk_cases, _chunk_errors)
        add("narrow", form, _narrow_cases, _narrow_errors)
        add("clone", form, _plain_cases)
    add("permute", "fn", _permute_fn_cases, _permute_errors)
    add("permute", "method", _permute_method_cases, _permute_errors)
    add("expand", "method", _expand_method_cases, _expand_errors)
    add("expand_as", "method", _expand_as_cases)
    add("repeat", "method", _repeat_cases, _repeat_errors)
    add("flip", "fn", _flip_fn_cases, _flip_errors)
    add("flip", "method", _flip_method_cases, _flip_errors)
    add("contiguous", "method", _plain_cases)
    add("cat", "fn", _cat_cases, _cat_errors, mixed=_cat_mixed)
    add("stack", "fn", _stack_cases, _stack_errors, mixed=_stack_mixed)
    ops.append(OpInfo("Tensor.T", lambda m: (lambda x: x.T), _gen(_T_cases), dtypes=ALL))
    ops.append(OpInfo("Tensor.mT", lambda m: (lambda x: x.mT), _gen(_mT_cases), dtypes=ALL,
                      errors=_mT_errors))
    for form in ("fn", "method"):
        add("t", form, _t_cases, _t_errors)
        add("unbind", form, _unbind_cases, _unbind_errors)
    ops.append(OpInfo("Tensor.__getitem__", lambda m: _index, _gen(_index_cases), dtypes=ALL,
                      errors=_index_errors))
    ops.append(OpInfo("Tensor.__getitem__.advanced", lambda m: _index,
                      _gen(_advanced_index_cases), dtypes=ALL, errors=_advanced_index_errors))
    return ops


def op_db() -> list[OpInfo]:
    return movement_ops()

