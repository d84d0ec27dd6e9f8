"""OpInfos for reductions: sum, mean, prod, max/min (full, dim and binary), amax/amin,
argmax/argmin, var/std, logsumexp, norm, all/any.

Each is sampled with no dim, an int dim, a tuple of dims (where torch takes one), negative dims
and keepdim. Tie samples check torch's gradient split: evenly for full and amax-style reductions,
to the returned index for ``max(dim)``.
"""

from __future__ import annotations

import numpy as np

from .core import ALL, FLOAT, FLOAT_INT, DType, ErrorInput, NonContig, OpInfo, SampleInput, make
from .elementwise import _broadcast_error, binary_mixed, binary_samples, fn_and_method

F32, F64, I32, I64, B = np.float32, np.float64, np.int32, np.int64, np.bool_
_NAN, _INF = np.nan, np.inf


def _arr(dtype, rng, shape, low=-3.0, high=3.0):
    if np.dtype(dtype).kind == "f":
        return make(shape, dtype, rng, low, high)
    return make(shape, dtype, rng, -5, 5)


def reduce_samples(*, tuple_dims=True, full=True, empty=True, zero_d=True, low=-3.0, high=3.0,
                   empty_dim_ok=True):
    """Full, int-dim, tuple-dim, negative-dim and keepdim reductions over small shapes."""

    def gen(dtype, rng):
        a = lambda s: _arr(dtype, rng, s, low, high)  # noqa: E731
        if full:
            yield SampleInput(a((3, 4)), name="full")
            yield SampleInput(a((5,)), name="full_1d")
            if zero_d:
                yield SampleInput(a(()), name="full_0d")
        yield SampleInput(a((3, 4)), (1,), name="dim")
        yield SampleInput(a((2, 3, 4)), (-1,), name="neg_dim")
        yield SampleInput(a((2, 3, 4)), kwargs=dict(dim=0, keepdim=True), name="keepdim")
        yield SampleInput(a((3, 1, 2)), kwargs=dict(dim=1), name="size1_dim")
        if zero_d:
            yield SampleInput(a(()), (0,), name="0d_dim")
            yield SampleInput(a(()), kwargs=dict(dim=-1, keepdim=True), name="0d_keepdim")
        if tuple_dims:
            yield SampleInput(a((2, 3, 4)), kwargs=dict(dim=(0, 2)), name="tuple")
            yield SampleInput(a((2, 3, 4)), kwargs=dict(dim=(-1, 0), keepdim=True),
                              name="tuple_keepdim")
            yield SampleInput(a((2, 3)), kwargs=dict(dim=[0, 1]), name="list_all")
        yield SampleInput(NonContig(a((4, 3))), kwargs=dict(dim=1), name="transposed")
        yield SampleInput(NonContig(a((6,))), kwargs=dict(dim=0), name="strided")
        if empty:
            if empty_dim_ok:
                yield SampleInput(a((0, 3)), kwargs=dict(dim=0), name="empty_reduced")
                if full:
                    yield SampleInput(a((2, 0)), name="empty_full")
            yield SampleInput(a((0, 3)), kwargs=dict(dim=1), name="empty_kept")

    return gen


def _dim_errors():
    def errors():
        yield ErrorInput(SampleInput(np.ones((2, 3)), kwargs=dict(dim=2)), IndexError, "dim")
        yield ErrorInput(SampleInput(np.ones((2, 3)), kwargs=dict(dim=-3)), IndexError, "neg_dim")

    return errors


def _float_only_errors():
    def errors():
        yield from _dim_errors()()
        yield ErrorInput(SampleInput(np.array([1, 2, 3])), RuntimeError, "int")

    return errors


def sum_samples(dtype, rng):
    yield from reduce_samples()(dtype, rng)
    target = "float64" if np.dtype(dtype).kind == "f" else "float32"
    yield SampleInput(_arr(dtype, rng, (3, 4)), kwargs=dict(dtype=DType(target)), name="dtype")
    yield SampleInput(_arr(dtype, rng, (3, 4)), kwargs=dict(dim=0, dtype=DType(target)),
                      name="dim_dtype")


def int32_reduce_mixed(rng):
    """int32 inputs: sum and prod accumulate in int64, max-style reductions keep int32."""
    x = make((3, 4), I32, rng, -4, 4)
    yield SampleInput(x, name="int32_full")
    yield SampleInput(x, (1,), name="int32_dim")
    yield SampleInput(make((2, 3), np.uint8, rng, 0, 9), (0,), name="uint8_dim")


def prod_samples(dtype, rng):
    """Full and int-dim products (torch takes no tuple), incl. one and two zeros per slice."""
    yield from reduce_samples(tuple_dims=False, low=0.5, high=1.8)(dtype, rng)
    if np.dtype(dtype).kind != "f":
        yield SampleInput(np.array([[0, 2, 3], [1, 0, 0]], dtype=dtype), (1,), name="zeros")
        return
    one_zero = np.array([[0.0, 2.0, -1.5], [1.2, 0.7, 0.0], [1.1, 0.9, 1.3]], dtype=dtype)
    two_zeros = np.array([[0.0, 2.0, 0.0], [1.2, 0.0, 0.0], [1.1, 0.9, 1.3]], dtype=dtype)
    yield SampleInput(np.array([2.0, 0.0, -1.5, 0.5], dtype=dtype), name="one_zero_full")
    yield SampleInput(np.array([0.0, 2.0, 0.0, 3.0], dtype=dtype), name="two_zeros_full")
    yield SampleInput(one_zero, (1,), name="one_zero_dim")
    yield SampleInput(two_zeros, kwargs=dict(dim=1, keepdim=True), name="two_zeros_dim")
    yield SampleInput(two_zeros.T.copy(), (0,), name="two_zeros_dim0")
    yield SampleInput(np.array(0.0, dtype=dtype), name="zero_0d")


def maxmin_full_samples(dtype, rng):
    """``max()``: a full reduction; ties split the gradient evenly."""
    a = lambda s: _arr(dtype, rng, s)  # noqa: E731
    yield SampleInput(a((3, 4)))
    yield SampleInput(a((5,)))
    yield SampleInput(a(()))
    yield SampleInput(NonContig(a((4, 3))), name="transposed")
    if np.dtype(dtype).kind == "f":
        ties = np.array([[1.0, 3.0, -2.0], [3.0, -2.0, 3.0]], dtype=dtype)
        yield SampleInput(ties, name="ties", gradcheck=False)
        yield SampleInput(np.array([[1.0, _NAN], [2.0, 0.0]], dtype=dtype), name="nan", grad=False)
    else:
        yield SampleInput(np.array([[1, 3, -2], [3, -2, 3]], dtype=dtype), name="ties")


def maxmin_dim_samples(dtype, rng):
    """``max(dim)``: (values, indices); on ties the gradient goes to the returned index."""
    a = lambda s: _arr(dtype, rng, s)  # noqa: E731
    yield SampleInput(a((3, 4)), (1,))
    yield SampleInput(a((2, 3, 4)), (-1,))
    yield SampleInput(a((2, 3, 4)), kwargs=dict(dim=0, keepdim=True), name="keepdim")
    yield SampleInput(a((2, 3, 4)), (1, True), name="positional_keepdim")
    yield SampleInput(a(()), (0,), name="0d")
    yield SampleInput(a((3, 1)), (1,), name="size1")
    yield SampleInput(a((3, 0)), (0,), name="empty_kept")
    yield SampleInput(NonContig(a((4, 3))), (0,), name="transposed")
    if np.dtype(dtype).kind == "f":
        ties = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, -1.0], [0.5, 0.5, 0.5]], dtype=dtype)
        yield SampleInput(ties, (1,), name="ties", gradcheck=False)
        yield SampleInput(ties.T.copy(), kwargs=dict(dim=0, keepdim=True), name="ties_keepdim",
                          gradcheck=False)
    else:
        yield SampleInput(np.array([[1, 3, 3], [2, 2, -1]], dtype=dtype), (1,), name="ties")


def amax_samples(dtype, rng):
    yield from reduce_samples(empty_dim_ok=False, full=False)(dtype, rng)
    yield SampleInput(_arr(dtype, rng, (3, 4)), name="no_dim")
    if np.dtype(dtype).kind == "f":
        ties = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, -1.0], [3.0, 0.5, 0.5]], dtype=dtype)
        yield SampleInput(ties, name="ties_full", gradcheck=False)
        yield SampleInput(ties, (1,), name="ties_dim", gradcheck=False)
        yield SampleInput(ties, kwargs=dict(dim=(0, 1), keepdim=True), name="ties_tuple",
                          gradcheck=False)


def arg_samples(dtype, rng):
    a = lambda s: _arr(dtype, rng, s)  # noqa: E731
    yield SampleInput(a((3, 4)), name="full")
    yield SampleInput(a(()), name="0d")
    yield SampleInput(a((3, 4)), (1,))
    yield SampleInput(a((2, 3, 4)), kwargs=dict(dim=-2, keepdim=True), name="keepdim")
    yield SampleInput(a((2, 3, 4)), kwargs=dict(dim=None, keepdim=True), name="none_keepdim")
    yield SampleInput(a((3, 0)), (0,), name="empty_kept")
    yield SampleInput(NonContig(a((4, 3))), (1,), name="transposed")
    ties = np.array([[1, 3, 3], [2, 2, -1], [-1, -1, -1]]).astype(dtype)
    yield SampleInput(ties, (1,), name="ties")
    yield SampleInput(ties, name="ties_full")


def _empty_reduce_errors(*, argmax=False):
    def errors():
        yield from _dim_errors()()
        full_error = IndexError if argmax else RuntimeError
        yield ErrorInput(SampleInput(np.ones((0, 3))), full_error, "empty_full")
        yield ErrorInput(SampleInput(np.ones((0, 3)), kwargs=dict(dim=0)), IndexError,
                         "empty_dim")

    return errors


def var_samples(dtype, rng):
    a = lambda s: _arr(dtype, rng, s)  # noqa: E731
    yield SampleInput(a((3, 4)), name="full")
    yield SampleInput(a((3, 4)), (1,), name="dim")
    yield SampleInput(a((2, 3, 4)), kwargs=dict(dim=-1, keepdim=True), name="keepdim")
    yield SampleInput(a((2, 3, 4)), kwargs=dict(dim=(0, 2)), name="tuple")
    yield SampleInput(a((3, 4)), kwargs=dict(dim=0, unbiased=False), name="unbiased_false")
    yield SampleInput(a((3, 4)), kwargs=dict(unbiased=True), name="unbiased_true")
    yield SampleInput(a((3, 4)), kwargs=dict(correction=0), name="correction0")
    yield SampleInput(a((2, 3, 4)), kwargs=dict(dim=(0, 1), correction=2, keepdim=True),
                      name="correction2")
    # a zero std has no derivative (sqrt at 0): forward only
    yield SampleInput(a((3, 1)), kwargs=dict(dim=1, correction=0), name="size1_dim", grad=False)
    # no size-0 sample: torch warns for every one (degrees of freedom <= 0)
    yield SampleInput(NonContig(a((4, 3))), kwargs=dict(dim=1), name="transposed")


def logsumexp_samples(dtype, rng):
    a = lambda s: _arr(dtype, rng, s)  # noqa: E731
    yield SampleInput(a((3, 4)), (1,))
    yield SampleInput(a((2, 3, 4)), (-1,), name="neg_dim")
    yield SampleInput(a((2, 3, 4)), kwargs=dict(dim=(0, 2)), name="tuple")
    yield SampleInput(a((2, 3, 4)), kwargs=dict(dim=1, keepdim=True), name="keepdim")
    yield SampleInput(a(()), (0,), name="0d")
    yield SampleInput(a((0, 3)), (1,), name="empty_kept")
    yield SampleInput(a((0, 3)), (0,), name="empty_reduced", grad=False)
    yield SampleInput(NonContig(a((4, 3))), (0,), name="transposed")
    yield SampleInput((a((3, 4)) + 500).astype(dtype), (1,), name="large")
    yield SampleInput((a((3, 4)) - 500).astype(dtype), (1,), name="very_negative")
    yield SampleInput(np.array([[-_INF, 0.0], [-_INF, -_INF]], dtype=dtype), (1,), name="neg_inf",
                      grad=False)


def norm_samples(dtype, rng):
    """2-, 1-, inf- and Frobenius norms; entries stay away from 0, where |x| has a kink."""
    a = lambda s: make(s, dtype, rng, -3.0, 3.0, avoid=(0.0,), margin=0.2)  # noqa: E731
    inf = float("inf")
    yield SampleInput(a((3, 4)), name="default")
    yield SampleInput(a((5,)), (2,), name="p2")
    yield SampleInput(a((3, 4)), (1,), name="p1")
    yield SampleInput(a((3, 4)), kwargs=dict(p=inf), name="pinf")
    yield SampleInput(a((3, 4)), ("fro",), name="fro")
    yield SampleInput(a((3, 4)), kwargs=dict(p=3), name="p3")
    yield SampleInput(a((2, 3, 4)), kwargs=dict(dim=1), name="dim")
    yield SampleInput(a((2, 3, 4)), kwargs=dict(p=1, dim=-1, keepdim=True), name="p1_dim")
    yield SampleInput(a((2, 3, 4)), kwargs=dict(p=2, dim=(0, 2)), name="p2_tuple")
    yield SampleInput(a((2, 3, 4)), kwargs=dict(p="fro", dim=(1, 2), keepdim=True),
                      name="fro_tuple")
    yield SampleInput(a((3, 4)), kwargs=dict(p=inf, dim=0), name="pinf_dim")
    yield SampleInput(a(()), name="0d")
    yield SampleInput(a((0, 3)), kwargs=dict(dim=1), name="empty_kept")
    yield SampleInput(NonContig(a((4, 3))), kwargs=dict(dim=1), name="transposed")
    ties = np.array([[1.0, -3.0, 3.0], [2.0, -2.0, 0.5]], dtype=dtype)
    yield SampleInput(ties, kwargs=dict(p=inf), name="pinf_ties", gradcheck=False)
    yield SampleInput(ties, kwargs=dict(p=inf, dim=1), name="pinf_dim_ties", gradcheck=False)


def logical_reduce_samples(dtype, rng):
    if dtype is np.bool_:
        def a(s):
            return rng.random(s) < 0.7
    else:
        def a(s):
            return make(s, dtype, rng, -1, 1) if np.dtype(dtype).kind != "f" else \
                np.where(rng.random(s) < 0.3, 0.0, rng.standard_normal(s)).astype(dtype)
    yield SampleInput(a((3, 4)), name="full")
    yield SampleInput(a(()), name="0d")
    yield SampleInput(a((3, 4)), (1,), name="dim")
    yield SampleInput(a((2, 3, 4)), kwargs=dict(dim=-1, keepdim=True), name="keepdim")
    yield SampleInput(a((2, 3, 4)), kwargs=dict(dim=(0, 2)), name="tuple")
    yield SampleInput(a((0, 3)), name="empty_full")
    yield SampleInput(a((0, 3)), (0,), name="empty_reduced")
    yield SampleInput(NonContig(a((4, 3))), (0,), name="transposed")
    yield SampleInput(np.ones((2, 3), dtype=dtype), (1,), name="all_true")
    yield SampleInput(np.zeros((2, 3), dtype=dtype), (1,), name="all_false")


def sum_to_size_samples(dtype, rng):
    a = lambda s: _arr(dtype, rng, s)  # noqa: E731
    yield SampleInput(a((3, 4)), (1, 4))
    yield SampleInput(a((3, 4)), ((3, 1),), name="tuple")
    yield SampleInput(a((2, 3, 4)), (3, 1), name="fewer_dims")
    yield SampleInput(a((3, 4)), (3, 4), name="same")
    yield SampleInput(a((2, 3)), ((),), name="to_0d")
    yield SampleInput(a((0, 3)), (1, 3), name="empty")
    yield SampleInput(NonContig(a((4, 3))), (1, 3), name="transposed")


def _sum_to_size_errors():
    yield ErrorInput(SampleInput(np.ones((3, 4)), (2, 4)), RuntimeError, "not_expandable")


def binary_max_samples(dtype, rng):
    yield from binary_samples(tensor_only=True, ties=True)(dtype, rng)


def _float_dim(errors):
    """``errors`` plus a float dim (``x.sum(1.0)``): torch's argument parser's TypeError."""
    def gen():
        yield from errors()
        yield ErrorInput(SampleInput(np.ones((2, 3)), (1.0,)), TypeError, "float_dim")
        yield ErrorInput(SampleInput(np.ones((2, 3)), kwargs=dict(dim="a")), TypeError,
                         "str_dim")

    return gen


def reduce_ops() -> list[OpInfo]:
    ops = []
    ops += fn_and_method("sum", sum_samples, dtypes=ALL, mixed=int32_reduce_mixed,
                         errors=_float_dim(_dim_errors()))
    ops += fn_and_method("mean", reduce_samples(), dtypes=FLOAT,
                         errors=_float_dim(_float_only_errors()))
    ops += fn_and_method("prod", prod_samples, dtypes=FLOAT_INT + (B,), mixed=int32_reduce_mixed,
                         errors=_float_dim(_dim_errors()))
    for name in ("max", "min"):
        ops += fn_and_method(name, maxmin_full_samples, dtypes=FLOAT_INT + (B,),
                             errors=_empty_reduce_errors())
        for o in fn_and_method(name, maxmin_dim_samples, dtypes=FLOAT_INT,
                               errors=_empty_reduce_errors()):
            o.name += ".dim"
            ops.append(o)
        for o in fn_and_method(name, binary_max_samples, dtypes=ALL,
                               mixed=binary_mixed(scalars=False), errors=_broadcast_error()):
            o.name += ".binary"
            ops.append(o)
    for name in ("amax", "amin"):
        ops += fn_and_method(name, amax_samples, dtypes=FLOAT_INT + (B,), mixed=int32_reduce_mixed,
                             errors=_float_dim(_empty_reduce_errors()))
    for name in ("argmax", "argmin"):
        ops += fn_and_method(name, arg_samples, dtypes=FLOAT_INT, supports_grad=False,
                             mixed=int32_reduce_mixed,
                             errors=_empty_reduce_errors(argmax=True))
    for name in ("var", "std"):
        ops += fn_and_method(name, var_samples, errors=_float_dim(_float_only_errors()))
    ops.append(OpInfo("Tensor.sum_to_size", lambda m: (lambda x, *a: x.sum_to_size(*a)),
                      sum_to_size_samples, dtypes=ALL, errors=_sum_to_size_errors))
    ops += fn_and_method("logsumexp", logsumexp_samples, errors=_float_dim(_dim_errors()))
    ops += fn_and_method("norm", norm_samples, errors=_float_only_errors())
    for name in ("all", "any"):
        ops += fn_and_method(name, logical_reduce_samples, dtypes=ALL, supports_grad=False,
                             errors=_dim_errors())
    return ops


def op_db() -> list[OpInfo]:
    return reduce_ops()
