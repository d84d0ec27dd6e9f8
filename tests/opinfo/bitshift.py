"""OpInfos for the bit shifts (``bitwise_left_shift``/``bitwise_right_shift``, ``<<``, ``>>``):
integer and bool operands, amounts past the dtype's width and negative amounts (torch defines
them: 0, or the sign fill), scalar operands on either side, and the dtype errors."""

import operator

import numpy as np

from .core import ErrorInput, OpInfo, SampleInput, make
from .elementwise import BINARY_SHAPES, fn_and_method

I8, U8, I32, I64, B = np.int8, np.uint8, np.int32, np.int64, np.bool_


def shift_samples(dtype, rng):
    hi = np.iinfo(dtype).bits + 2
    for sa, sb in BINARY_SHAPES:
        yield SampleInput(make(sa, dtype, rng, -100, 100), (make(sb, dtype, rng, -2, hi),))
    yield SampleInput(make((5,), dtype, rng, -100, 100), (3,), name="py_int")
    yield SampleInput(make((5,), dtype, rng, -100, 100), (70,), name="py_int_past_width")
    yield SampleInput(make((5,), dtype, rng, -100, 100), (-1,), name="py_int_negative")


def _mixed(rng):
    yield SampleInput(make((4,), U8, rng, 0, 255), (make((4,), U8, rng, 0, 9),), name="u8")
    yield SampleInput(make((4,), I8, rng, -100, 100), (make((4,), I8, rng, -1, 9),), name="i8")
    yield SampleInput(make((4,), I32, rng, -9, 9), (make((4,), I64, rng, 0, 40),), name="i32_i64")
    yield SampleInput(make((4,), U8, rng, 0, 255), (7,), name="u8_py_int")
    yield SampleInput(make((4,), B, rng), (2,), name="bool_py_int")
    yield SampleInput(make((4,), B, rng), (make((4,), I64, rng, 0, 3),), name="bool_i64")


def _errors():
    yield ErrorInput(SampleInput(np.ones(3), (1,)), NotImplementedError, "not implemented")
    yield ErrorInput(SampleInput(np.ones(3, dtype=np.int64), (1.5,)), NotImplementedError,
                     "not implemented")
    yield ErrorInput(SampleInput(np.ones(3, dtype=bool), (np.ones(3, dtype=bool),)),
                     NotImplementedError, "not implemented")
    yield ErrorInput(SampleInput(np.ones(3, dtype=np.int64), (np.ones(2, dtype=np.int64),)),
                     RuntimeError, "size")


def op_db():
    ops = []
    kw = dict(dtypes=(I64, I32), supports_grad=False, mixed=_mixed, errors=_errors)
    for name in ("bitwise_left_shift", "bitwise_right_shift"):
        ops += fn_and_method(name, shift_samples, **kw)
    for pyop in (operator.lshift, operator.rshift):
        ops.append(OpInfo(f"operator.{pyop.__name__}", lambda m, f=pyop: f, shift_samples, **kw))
    return ops
