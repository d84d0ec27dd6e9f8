"""OpInfos for contractions beyond matmul: einsum, tensordot, and the fused add-products (addmm,
baddbmm, addmv, addbmm, addr) in function, method and in-place forms.

Einsum equations cover explicit and implicit outputs, ellipses, diagonals and traces, size-1
broadcasting, one to four operands and torch's three calling forms; errors are checked against
the exception types torch raises.
"""

from __future__ import annotations

import numpy as np

from .core import FLOAT, ErrorInput, NonContig, OpInfo, SampleInput, make
from .elementwise import fn_and_method
from .inplace import on_clone

F32, F64, I32, I64, B = np.float32, np.float64, np.int32, np.int64, np.bool_
_DTYPES = FLOAT + (I64,)
_NAN = np.nan


def _arr(dtype, rng):
    def a(shape):
        if np.dtype(dtype).kind == "f":
            return make(shape, dtype, rng, -2.0, 2.0)
        return make(shape, dtype, rng, -4, 4)
    return a


# --- einsum ----------------------------------------------------------------------------------

EINSUM_CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)], "matmul"),
    ("ij,jk", [(3, 4), (4, 5)], "implicit"),
    ("i,i->", [(4,), (4,)], "dot"),
    ("i,j->ij", [(3,), (4,)], "outer"),
    ("ij->ji", [(3, 4)], "transpose"),
    ("ba", [(3, 4)], "implicit_sorted"),
    ("ii->i", [(3, 3)], "diagonal"),
    ("ii", [(3, 3)], "trace"),
    ("iii->i", [(2, 2, 2)], "diagonal3"),
    ("iij->ji", [(3, 3, 2)], "diagonal_extra"),
    ("ij->", [(3, 4)], "sum"),
    ("ij->j", [(3, 4)], "sum_dim"),
    ("ii,ij->j", [(3, 3), (3, 4)], "trace_times"),
    ("ij,ij->ij", [(3, 4), (3, 4)], "hadamard"),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)], "bmm"),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)], "ellipsis"),
    ("...ij,...jk", [(2, 1, 3, 4), (5, 4, 2)], "ellipsis_broadcast"),
    ("i...->...", [(3, 2, 4)], "ellipsis_sum"),
    ("ba...,c", [(2, 3, 4), (4,)], "ellipsis_implicit"),
    ("...i->i", [(2, 3, 4)], "ellipsis_dropped"),
    ("i->...i", [(3,)], "ellipsis_empty"),
    ("ij,ij->ij", [(1, 3), (2, 1)], "broadcast"),
    ("ij,jk->ik", [(2, 1), (3, 4)], "broadcast_contracted"),
    ("ii,i->i", [(1, 1), (3,)], "broadcast_repeated"),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)], "three"),
    ("i,j,k->ijk", [(2,), (3,), (2,)], "outer_three"),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 2), (2, 2)], "bilinear"),
    ("ij,jk,kl,lm->mi", [(2, 3), (3, 2), (2, 4), (4, 2)], "four"),
    ("ij,ij,ij->", [(2, 3), (2, 3), (1, 3)], "three_broadcast"),
    ("ii,ij,jk->k", [(2, 2), (2, 3), (3, 2)], "three_diagonal"),
    (",i->i", [(), (3,)], "scalar"),
    ("", [()], "scalar_only"),
    ("ij,jk->ik", [(2, 0), (0, 3)], "empty_inner"),
    ("ij->i", [(0, 3)], "empty"),
    ("Ab,bC->CA", [(2, 3), (3, 2)], "uppercase"),
    (" ij , jk -> ik ", [(2, 3), (3, 2)], "spaces"),
]


def _einsum_samples(dtype, rng):
    a = _arr(dtype, rng)
    for eq, shapes, name in EINSUM_CASES:
        yield SampleInput(eq, tuple(a(s) for s in shapes), name=name)
    yield SampleInput("ij,jk->ik", (NonContig(a((3, 4))), NonContig(a((4, 2)))),
                      name="transposed")
    yield SampleInput("ij,jk", ([a((3, 4)), a((4, 2))],), name="list")
    yield SampleInput("ij,jk,kl", ((a((2, 3)), a((3, 4)), a((4, 2))),), name="tuple")
    yield SampleInput(a((3, 4)), ([0, 1], a((4, 2)), [1, 2], [2, 0]), name="sublist")
    yield SampleInput(a((2, 3, 4)), ([Ellipsis, 0, 1], a((4,)), [1], [Ellipsis, 0]),
                      name="sublist_ellipsis")
    yield SampleInput(a((3, 4)), ([30, 0], a((4, 2)), [0, 51]), name="sublist_implicit")


def _einsum_mixed(rng):
    # torch sums a single bool or narrow-int operand into int64, keeps its dtype otherwise
    yield SampleInput("ij->j", (make((3, 4), I32, rng, -4, 4),), name="int32_sum")
    yield SampleInput("ii", (make((3, 3), I32, rng, -4, 4),), name="int32_trace")
    yield SampleInput("ii->i", (make((3, 3), I32, rng, -4, 4),), name="int32_diagonal")
    yield SampleInput("ij,jk->ik", (make((3, 4), I32, rng, -4, 4), make((4, 2), I32, rng, -4, 4)),
                      name="int32_matmul")
    yield SampleInput("ij->j", (make((3, 4), B, rng),), name="bool_sum")
    yield SampleInput("ij->ji", (make((3, 4), B, rng),), name="bool_transpose")
    yield SampleInput("ij,ij->ij", (make((3, 4), B, rng), make((3, 4), B, rng)), name="bool_mul")
    yield SampleInput("ij,jk->ik", (make((3, 4), F32, rng), make((4, 2), F32, rng)),
                      name="float32_grad")


def _err(eq, shapes, name, error=RuntimeError, dtype=F64):
    return ErrorInput(SampleInput(eq, tuple(np.ones(s, dtype) for s in shapes)), error, name)


def _einsum_errors():
    yield _err("i->ii", [(3,)], "output_repeated")
    yield _err("ij->k", [(3, 3)], "output_unknown")
    yield _err("ij", [(3,)], "ndim")
    yield _err("...ijk", [(3, 2)], "ndim_ellipsis")
    yield _err("ii", [(2, 3)], "diagonal_sizes")
    yield _err("i,i", [(2,), (3,)], "sizes")
    yield _err("i,i", [(2,)], "fewer_operands")
    yield _err("i", [(2,), (2,)], "more_operands")
    yield _err("i1->i", [(2,)], "bad_char")
    yield _err("i->i->i", [(2,)], "two_arrows")
    yield _err("i......j->...", [(2, 3, 4)], "two_ellipses")
    yield _err("i..->i", [(2,)], "stray_dot")
    yield _err("...->......", [(3,)], "output_two_ellipses")
    yield _err("...i,...i", [(2, 3), (4, 3)], "ellipsis_sizes")
    yield ErrorInput(SampleInput("i,i", (np.ones(3, F32), np.ones(3, F64))), RuntimeError,
                     "dtype")
    yield ErrorInput(SampleInput("i,i", (np.ones(3, I64), np.ones(3, F32))), RuntimeError,
                     "dtype_int")
    yield _err("i", [], "no_operands", ValueError)
    yield ErrorInput(SampleInput(3, (np.ones(3),)), TypeError, "equation_not_str")
    yield ErrorInput(SampleInput("i,i", (np.ones(3), [1.0, 2.0, 3.0])), TypeError, "not_tensor")
    yield ErrorInput(SampleInput(np.ones((2, 2)), ([0, 52],)), ValueError, "sublist_range")


# --- tensordot -------------------------------------------------------------------------------

TENSORDOT_CASES = [
    ((2, 3, 4), (3, 4, 5), {}, "default"),
    ((3, 4), (4, 5), {"dims": 1}, "dims1"),
    ((2, 3), (4,), {"dims": 0}, "outer"),
    ((3, 4), (3, 4), {"dims": 2}, "full"),
    ((3, 4, 5), (4, 3, 2), {"dims": ([1, 0], [0, 1])}, "lists"),
    ((3, 4, 2), (2, 5), {"dims": [[2], [0]]}, "list_of_lists"),
    ((2, 3), (4, 3), {"dims": ([-1], [-1])}, "negative"),
    ((2, 1), (3, 3), {"dims": ([1], [0])}, "broadcast"),
    ((2, 0), (0, 3), {"dims": 1}, "empty_inner"),
]


def _tensordot_samples(dtype, rng):
    a = _arr(dtype, rng)
    for sa, sb, kw, name in TENSORDOT_CASES:
        yield SampleInput(a(sa), (a(sb),), dict(kw), name=name)
    yield SampleInput(NonContig(a((4, 3))), (a((4, 2)),), {"dims": ([0], [0])},
                      name="transposed")
    yield SampleInput(a((3, 4)), (a((4, 2)),), {"dims": np.array([[1], [0]])},
                      name="dims_tensor")
    yield SampleInput(a((3, 4)), (a((4, 2)),), {"dims": np.array(1)}, name="dims_tensor_0d")


def _td_err(sa, sb, dims, name, error=RuntimeError, da=F64, db=F64):
    return ErrorInput(SampleInput(np.ones(sa, da), (np.ones(sb, db),), {"dims": dims}), error,
                      name)


def _tensordot_errors():
    yield _td_err((2, 2), (2, 2), 1, "dtype", da=F32)
    yield _td_err((2, 2), (2, 2), -1, "negative_dims")
    yield _td_err((2, 2), (2, 2), 3, "too_many_dims")
    yield _td_err((2, 3), (2, 3), ([0, 1], [0]), "lengths")
    yield _td_err((2, 3), (2, 3), ([2], [0]), "out_of_range", IndexError)
    yield _td_err((2, 2), (2, 2), ([0, 0], [0, 1]), "repeated")
    yield _td_err((2, 3), (2, 3), ([1], [0]), "sizes")
    yield _td_err((2, 2), (2, 2), 1.5, "float_dims")
    yield _td_err((2, 2), (2, 2), [0, 1], "int_lists", TypeError)
    yield _td_err((2, 2), (2, 2), np.array([0, 1]), "tensor_1d", TypeError)
    yield _td_err((2, 2), (2, 2), np.array([[0], [1], [0]]), "tensor_rows", AssertionError)


# --- add-products ----------------------------------------------------------------------------

def _add_samples(input_shapes, x_shape, y_shape, empty, truncates=True, inplace=False):
    """``input_shapes[0]`` is the result's shape (the only one an in-place call accepts)."""

    def gen(dtype, rng):
        a = _arr(dtype, rng)
        is_float = np.dtype(dtype).kind == "f"
        shapes = input_shapes[:1] if inplace else input_shapes
        for s in shapes:
            yield SampleInput(a(s), (a(x_shape), a(y_shape)), name=f"input{len(s)}d")
        full = input_shapes[0]
        yield SampleInput(a(full), (a(x_shape), a(y_shape)), {"beta": 0.5, "alpha": 2.0}
                          if is_float else {"beta": 3, "alpha": -2}, name="beta_alpha")
        yield SampleInput(a(full), (NonContig(a(x_shape)), NonContig(a(y_shape))),
                          {"alpha": 1.5} if is_float else {}, name="transposed")
        if not is_float and truncates:
            # integral results truncate float coefficients, as torch does (addr refuses them)
            yield SampleInput(a(full), (a(x_shape), a(y_shape)), {"beta": 1.7, "alpha": 2.9},
                              name="truncated")
        if not is_float:
            return
        bad = np.full(full, _NAN, dtype)
        yield SampleInput(bad, (a(x_shape), a(y_shape)), {"beta": 0}, name="beta0_nan")
        nan_x = np.full(x_shape, _NAN, dtype)
        # torch's BLAS-backed ops skip a product scaled by 0; the others give NaN * 0 = NaN
        yield SampleInput(a(full), (nan_x, a(y_shape)), {"alpha": 0}, name="alpha0_nan",
                          gradcheck=False)
        if not inplace:
            ei, ex, ey = empty
            yield SampleInput(a(ei), (a(ex), a(ey)), name="empty")

    return gen


_ADD_OPS = {
    # name: (input shapes, x shape, y shape, empty shapes)
    "addmm": ([(3, 5), (5,), (1, 5), (3, 1), ()], (3, 4), (4, 5),
              ((3, 5), (3, 0), (0, 5))),
    "baddbmm": ([(2, 3, 5), (3, 5), (1, 3, 5), (5,), ()], (2, 3, 4), (2, 4, 5),
                ((0, 3, 5), (0, 3, 4), (0, 4, 5))),
    "addmv": ([(3,), (1,), ()], (3, 4), (4,), ((3,), (3, 0), (0,))),
    "addbmm": ([(3, 5), (5,), (3, 1), ()], (2, 3, 4), (2, 4, 5),
               ((3, 5), (0, 3, 4), (0, 4, 5))),
    "addr": ([(3, 4), (4,), (3, 1), ()], (3,), (4,), ((0, 4), (0,), (4,))),
}


def _o(shapes, dtype=F64):
    return tuple(np.ones(s, dtype) for s in shapes)


def _add_errors(name):
    def errors():
        def err(shapes, label, error=RuntimeError, kwargs=None, dtypes=None):
            arrays = _o(shapes) if dtypes is None else tuple(
                np.ones(s, d) for s, d in zip(shapes, dtypes))
            return ErrorInput(SampleInput(arrays[0], arrays[1:], kwargs or {}), error, label)

        spec = _ADD_OPS[name]
        full, xs, ys = spec[0][0], spec[1], spec[2]
        if name != "addr":  # addr promotes its dtypes
            yield err((full, xs, ys), "dtype", dtypes=(F64, F32, F32))
            yield err((full, xs, ys), "dtype_mats", dtypes=(F64, F64, F32))
        yield err(((7,) * len(full), xs, ys), "input_shape")
        yield err(((2,) + full, xs, ys), "input_ndim")
        yield ErrorInput(SampleInput(np.ones(full), _o((xs, ys)) + (2.0,)), TypeError,
                         "positional_alpha")
        yield ErrorInput(SampleInput(np.ones(full), (np.ones(xs), [1.0])), TypeError,
                         "not_tensor")
        if name == "addmm":
            yield err(((3, 5), (3,), (4, 5)), "mat1_1d")
            yield err(((3, 5), (1, 3, 4), (4, 5)), "mat1_3d")
            yield err(((3, 5), (3, 4), (4,)), "mat2_1d")
            yield err(((3, 5), (3, 4), (3, 5)), "shapes")
            yield err(((2, 2), (2, 2), (2, 2)), "bool", NotImplementedError,
                      dtypes=(B, B, B))
        elif name in ("baddbmm", "addbmm"):
            yield err((full, (3, 4), ys), "batch1_2d")
            yield err((full, xs, (4, 5)), "batch2_2d", IndexError)
            yield err((full, (1, 2, 3, 4), ys), "batch1_4d")
            yield err((full, (3, 3, 4), ys), "batches")
            yield err((full, (2, 3, 3), ys), "inner")
            yield err((full, xs, ys), "bool", NotImplementedError, dtypes=(B, B, B))
        elif name == "addmv":
            yield err(((3,), (3,), (4,)), "mat_1d")
            yield err(((3,), (3, 4), (3,)), "vec_size")
            yield err(((3,), (3, 4), (4, 1)), "vec_2d")
            yield err(((3,), (3, 4), (4,)), "bool", NotImplementedError, dtypes=(B, B, B))
        else:
            yield err(((3, 4), (3, 1), (4,)), "vec1_2d")
            yield err(((3, 4), (3,), (4, 1)), "vec2_2d")
            yield err(((3, 4), (3,), (4,)), "int_beta", kwargs={"beta": 0.5},
                      dtypes=(I64, I64, I64))
            yield err(((3, 4), (3,), (4,)), "int_alpha", kwargs={"alpha": 0.5},
                      dtypes=(I64, I64, I64))
    return errors


def _inplace_errors(name):
    def errors():
        spec = _ADD_OPS[name]
        full, xs, ys = spec[0][0], spec[1], spec[2]
        small = (1,) * len(full)
        if name != "addbmm":  # torch's addbmm_ resizes a smaller self instead of refusing it
            yield ErrorInput(SampleInput(np.ones(small), _o((xs, ys))), RuntimeError,
                             "broadcast_self")
        yield ErrorInput(SampleInput(np.ones(full, I64), _o((xs, ys), F64)), RuntimeError,
                         "dtype")
    return errors


def _addr_mixed(rng):
    # torch's own backward fails when the vectors' dtypes differ from the result's ("addmv input
    # tensors must have the same dtype"), so those samples compare forward values only
    yield SampleInput(make((3, 4), F32, rng), (make((3,), F64, rng), make((4,), F32, rng)),
                      name="f32_f64_f32", grad=False)
    yield SampleInput(make((3, 4), I64, rng, -3, 3), (make((3,), F32, rng),
                                                      make((4,), F32, rng)), name="i64_f32")
    yield SampleInput(make((3, 4), I64, rng, -3, 3), (make((3,), F64, rng),
                                                      make((4,), F64, rng)),
                      {"beta": 0.5, "alpha": 2.0}, name="i64_float_coefficients")
    yield SampleInput(make((), F64, rng), (make((3,), F32, rng), make((4,), F32, rng)),
                      name="f64_0d_f32", grad=False)
    yield SampleInput(make((3, 4), B, rng), (make((3,), B, rng), make((4,), B, rng)),
                      name="bool")


def _add_ops() -> list[OpInfo]:
    ops = []
    for name, (inputs, xs, ys, empty) in _ADD_OPS.items():
        truncates = name != "addr"
        ops += fn_and_method(name, _add_samples(inputs, xs, ys, empty, truncates),
                             dtypes=_DTYPES,
                             errors=_add_errors(name),
                             mixed=_addr_mixed if name == "addr" else None)
        ops.append(OpInfo(f"Tensor.{name}_", on_clone(name + "_"),
                          _add_samples(inputs, xs, ys, empty, truncates, inplace=True),
                          dtypes=_DTYPES, errors=_inplace_errors(name)))
    return ops


def op_db() -> list[OpInfo]:
    return [
        OpInfo("einsum", lambda m: m.einsum, _einsum_samples, dtypes=_DTYPES,
               mixed=_einsum_mixed, errors=_einsum_errors),
        OpInfo("tensordot", lambda m: m.tensordot, _tensordot_samples, dtypes=_DTYPES,
               errors=_tensordot_errors),
    ] + _add_ops()
