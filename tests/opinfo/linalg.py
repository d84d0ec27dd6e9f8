"""OpInfos for products: matmul (function, method and ``@``), mm, bmm, dot, outer.

Shapes cover every matmul case (1-d and 2-d operands, batched times 2-d, broadcast batch dims,
empty inner and outer dims); shape and dtype mismatches raise RuntimeError as in torch.
"""

from __future__ import annotations

import operator

import numpy as np

from .core import FLOAT, ErrorInput, NonContig, OpInfo, SampleInput, make
from .elementwise import fn_and_method

F32, F64, I64 = np.float32, np.float64, np.int64
_DTYPES = FLOAT + (I64,)


def _pairs(cases):
    def gen(dtype, rng):
        def a(shape):
            return make(shape, dtype, rng, -2.0, 2.0) if np.dtype(dtype).kind == "f" else \
                make(shape, dtype, rng, -4, 4)

        for sa, sb, name in cases:
            x = NonContig(a(sa)) if name == "transposed" else a(sa)
            y = NonContig(a(sb)) if name == "transposed" else a(sb)
            yield SampleInput(x, (y,), name=name)

    return gen


MATMUL_CASES = [
    ((3, 4), (4, 5), "2d_2d"),
    ((4,), (4, 5), "1d_2d"),
    ((3, 4), (4,), "2d_1d"),
    ((4,), (4,), "1d_1d"),
    ((2, 3, 4), (4, 5), "batched_2d"),
    ((3, 4), (2, 4, 5), "2d_batched"),
    ((2, 3, 4), (2, 4, 5), "batched"),
    ((2, 1, 3, 4), (3, 4, 2), "broadcast_batch"),
    ((4,), (2, 4, 3), "1d_batched"),
    ((2, 3, 4), (4,), "batched_1d"),
    ((3, 0), (0, 2), "empty_inner"),
    ((0, 3), (3, 2), "empty_outer"),
    ((1, 4), (4, 1), "size1"),
    ((4, 3), (3, 4), "transposed"),
]
MM_CASES = [((3, 4), (4, 5), "basic"), ((1, 4), (4, 1), "size1"), ((3, 0), (0, 2), "empty_inner"),
            ((0, 3), (3, 2), "empty_outer"), ((4, 3), (3, 4), "transposed")]
BMM_CASES = [((2, 3, 4), (2, 4, 5), "basic"), ((1, 1, 4), (1, 4, 1), "size1"),
             ((2, 3, 0), (2, 0, 2), "empty_inner"), ((0, 3, 4), (0, 4, 2), "empty_batch"),
             ((2, 4, 3), (2, 3, 4), "transposed")]
VEC_CASES = [((4,), (4,), "basic"), ((1,), (1,), "size1"), ((0,), (0,), "empty"),
             ((5,), (5,), "transposed")]
OUTER_CASES = [((3,), (4,), "basic"), ((1,), (4,), "size1"), ((0,), (3,), "empty"),
               ((5,), (3,), "transposed")]


def _err(a, b, name, error=RuntimeError):
    return ErrorInput(SampleInput(np.ones(a), (np.ones(b),)), error, name)


def _matmul_errors():
    yield _err((2, 3), (2, 3), "inner")
    yield _err((3,), (4,), "1d_1d")
    yield _err((2, 3, 4), (3, 4, 5), "batch")
    yield _err((3,), (2, 4), "1d_2d")
    yield _err((), (3,), "0d")
    yield ErrorInput(SampleInput(np.ones((2, 3), F32), (np.ones(3, F64),)), RuntimeError, "dtype")
    yield ErrorInput(SampleInput(np.ones((2, 3), F32), (np.ones((3, 2), I64),)), RuntimeError,
                     "dtype_int")


def _mm_errors():
    yield _err((2, 3), (2, 3), "inner")
    yield _err((3,), (3, 2), "1d")
    yield _err((2, 2, 3), (3, 2), "3d")
    yield ErrorInput(SampleInput(np.ones((2, 3), F64), (np.ones((3, 2), F32),)), RuntimeError,
                     "dtype")


def _bmm_errors():
    yield _err((2, 3), (3, 2), "2d")
    yield _err((2, 3, 4), (3, 4, 5), "batch")
    yield _err((2, 3, 4), (2, 3, 5), "inner")


def _dot_errors():
    yield _err((2, 2), (2,), "2d")
    yield _err((2,), (3,), "size")
    yield ErrorInput(SampleInput(np.ones(3, F32), (np.ones(3, F64),)), RuntimeError, "dtype")


def _outer_errors():
    yield _err((2, 2), (2,), "2d")


def _outer_mixed(rng):
    yield SampleInput(make((3,), I64, rng, -3, 3), (make((2,), F32, rng),), name="i64_f32")
    yield SampleInput(make((3,), F32, rng), (make((2,), F64, rng),), name="f32_f64")


def linalg_ops() -> list[OpInfo]:
    ops = fn_and_method("matmul", _pairs(MATMUL_CASES), dtypes=_DTYPES, errors=_matmul_errors)
    ops.append(OpInfo("operator.matmul", lambda m: operator.matmul, _pairs(MATMUL_CASES),
                      dtypes=_DTYPES, errors=_matmul_errors))
    ops += fn_and_method("mm", _pairs(MM_CASES), dtypes=_DTYPES, errors=_mm_errors)
    ops += fn_and_method("bmm", _pairs(BMM_CASES), dtypes=_DTYPES, errors=_bmm_errors)
    ops += fn_and_method("dot", _pairs(VEC_CASES), dtypes=_DTYPES, errors=_dot_errors)
    ops += fn_and_method("outer", _pairs(OUTER_CASES), dtypes=_DTYPES, mixed=_outer_mixed,
                         errors=_outer_errors)
    return ops


def op_db() -> list[OpInfo]:
    return linalg_ops()
