"""OpInfos for in-place ops and indexed assignment, applied to a clone of the leaf.

Each in-place op runs three ways: on a clone (the tensor's history moves to the op's node), on a
view of a clone (the base's history becomes CopySlices, the view's AsStridedBackward0; both are
returned so both are compared), and for indexed assignment with every kind of key. Random fills
use parameters that make the result deterministic (``uniform_(a, a)``, ``normal_(m, 0)``), so
values can be compared with torch's although the generators differ.
"""

from __future__ import annotations

import numpy as np

from .core import FLOAT, FLOAT_INT, ErrorInput, NonContig, OpInfo, SampleInput, make


def on_clone(name):
    def op(m):
        def run(x, *args, **kwargs):
            y = x.clone()
            out = getattr(y, name)(*args, **kwargs)
            assert out is y, f"{name} must return self"
            return y
        return run
    return op


def on_view(name):
    """The op applied to rows 1: of a clone; returns (base, view)."""
    def op(m):
        def run(x, *args, **kwargs):
            y = x.clone()
            v = y[1:]
            getattr(v, name)(*args, **kwargs)
            return y, v
        return run
    return op


def _unary_samples(low=-2.0, high=2.0, avoid=()):
    def gen(dtype, rng):
        def a(shape):
            return make(shape, dtype, rng, low, high, avoid=avoid)

        yield SampleInput(a((3, 4)))
        yield SampleInput(a(()), name="0d")
        yield SampleInput(a((0, 3)), name="empty")
        yield SampleInput(NonContig(a((4, 3))), name="transposed")
    return gen


def _unary_view_samples(low=-2.0, high=2.0, avoid=()):
    def gen(dtype, rng):
        yield SampleInput(make((3, 4), dtype, rng, low, high, avoid=avoid))
        yield SampleInput(NonContig(make((4, 3), dtype, rng, low, high, avoid=avoid)),
                          name="transposed")
    return gen


_UNARY = {
    "neg_": {}, "exp_": {}, "sin_": {}, "tanh_": {}, "sigmoid_": {},
    "sqrt_": {"low": 0.2, "high": 3.0}, "log_": {"low": 0.2, "high": 3.0},
    "abs_": {"avoid": (0.0,)}, "relu_": {"avoid": (0.0,)}, "square_": {},
    "reciprocal_": {"low": 0.3, "high": 3.0},
}


def _binary_samples(rhs_low=-2.0, rhs_high=2.0):
    def gen(dtype, rng):
        def a(shape, low=-2.0, high=2.0):
            return make(shape, dtype, rng, low, high)

        yield SampleInput(a((3, 4)), (a((3, 4), rhs_low, rhs_high),))
        yield SampleInput(a((3, 4)), (a((4,), rhs_low, rhs_high),), name="broadcast_rhs")
        yield SampleInput(a((3, 4)), (1.5 if np.dtype(dtype).kind == "f" else 2,), name="scalar")
        yield SampleInput(a(()), (a((), rhs_low, rhs_high),), name="0d")
        yield SampleInput(NonContig(a((4, 3))), (a((4, 3), rhs_low, rhs_high),),
                          name="transposed")
    return gen


def _binary_view_samples(rhs_low=-2.0, rhs_high=2.0):
    low = 0.5 if rhs_low > 0 else -2.0  # pow_ and div_ get positive bases too

    def gen(dtype, rng):
        yield SampleInput(make((3, 4), dtype, rng, low, 2),
                          (make((2, 4), dtype, rng, rhs_low, rhs_high),))
        yield SampleInput(make((3, 4), dtype, rng, low, 2),
                          (make((4,), dtype, rng, rhs_low, rhs_high),), name="broadcast_rhs")
    return gen


_BINARY = {
    "add_": {}, "sub_": {}, "mul_": {}, "div_": {"rhs_low": 0.5, "rhs_high": 2.0},
    "pow_": {"rhs_low": 1.0, "rhs_high": 2.0}, "clamp_": {}, "clamp_min_": {}, "clamp_max_": {},
}


def _shape_error():
    yield ErrorInput(SampleInput(np.ones((3,)), (np.ones((2, 3)),)), RuntimeError, "broadcast")


def _cast_error():
    yield ErrorInput(SampleInput(np.ones((3,), np.int64), (np.ones(3),)), RuntimeError,
                     "float_into_int")


def _pow_positive(dtype, rng):
    for s in _binary_samples(1.0, 2.0)(dtype, rng):
        s.input = np.abs(np.asarray(s.input.array if isinstance(s.input, NonContig)
                                    else s.input)) + 0.5
        yield s


def elementwise_ops() -> list[OpInfo]:
    ops = []
    for name, kw in _UNARY.items():
        ops.append(OpInfo(f"Tensor.{name}", on_clone(name), _unary_samples(**kw)))
        ops.append(OpInfo(f"Tensor.{name}.view", on_view(name), _unary_view_samples(**kw)))
    for name, kw in _BINARY.items():
        samples = _pow_positive if name == "pow_" else _binary_samples(**kw)
        errors = _shape_error if name != "div_" else _cast_error
        dtypes = FLOAT if name in ("div_", "pow_") else FLOAT_INT
        ops.append(OpInfo(f"Tensor.{name}", on_clone(name), samples, dtypes=dtypes,
                          errors=errors))
        ops.append(OpInfo(f"Tensor.{name}.view", on_view(name), _binary_view_samples(**kw)))
    return ops


# -- overwrites --------------------------------------------------------------------------------
def _fill_samples(dtype, rng):
    yield SampleInput(make((3, 4), dtype, rng), (2.5 if np.dtype(dtype).kind == "f" else 2,))
    yield SampleInput(make((), dtype, rng), (1,), name="0d")
    if np.dtype(dtype).kind == "f":
        yield SampleInput(make((3, 4), dtype, rng), (make((), dtype, rng),), name="tensor_value")


def _copy_samples(dtype, rng):
    yield SampleInput(make((3, 4), dtype, rng), (make((3, 4), dtype, rng),))
    yield SampleInput(make((3, 4), dtype, rng), (make((4,), dtype, rng),), name="broadcast")
    yield SampleInput(make((3, 4), dtype, rng), (make((3, 4), np.float64, rng),), name="cast")
    yield SampleInput(make((3, 4), dtype, rng), (make((3, 4), np.int64, rng),),
                      name="from_int")
    yield SampleInput(NonContig(make((4, 3), dtype, rng)), (make((4, 3), dtype, rng),),
                      name="transposed")


def _copy_errors():
    yield ErrorInput(SampleInput(np.ones((3,)), (np.ones((2,)),)), RuntimeError, "shape")


def _plain(dtype, rng):
    yield SampleInput(make((3, 4), dtype, rng))
    yield SampleInput(make((), dtype, rng), name="0d")


def _deterministic_random(args):
    def gen(dtype, rng):
        yield SampleInput(make((3, 4), dtype, rng), args)
    return gen


def overwrite_ops() -> list[OpInfo]:
    return [
        OpInfo("Tensor.zero_", on_clone("zero_"), _plain, dtypes=FLOAT_INT),
        OpInfo("Tensor.zero_.view", on_view("zero_"), _unary_view_samples()),
        OpInfo("Tensor.fill_", on_clone("fill_"), _fill_samples, dtypes=FLOAT_INT),
        OpInfo("Tensor.fill_.view", on_view("fill_"), _deterministic_random((0.5,))),
        OpInfo("Tensor.copy_", on_clone("copy_"), _copy_samples, dtypes=FLOAT_INT,
               errors=_copy_errors),
        OpInfo("Tensor.copy_.view", on_view("copy_"), _binary_view_samples()),
        OpInfo("Tensor.uniform_", on_clone("uniform_"), _deterministic_random((0.25, 0.25))),
        OpInfo("Tensor.normal_", on_clone("normal_"), _deterministic_random((0.5, 0.0))),
        OpInfo("Tensor.bernoulli_", on_clone("bernoulli_"), _deterministic_random((1.0,))),
        OpInfo("Tensor.random_", on_clone("random_"), _deterministic_random((3, 4))),
        OpInfo("Tensor.exponential_", on_clone("exponential_"),
               _deterministic_random((float("inf"),))),
    ]


# -- indexed assignment --------------------------------------------------------------------------
def setitem(m):
    def run(x, key, value):
        y = x.clone()
        y[key] = value
        return y
    return run


def _setitem_samples(dtype, rng):
    def a(shape):
        return make(shape, dtype, rng)

    idx = np.array([0, 2], dtype=np.int64)
    yield SampleInput(a((3, 4)), (1, a((4,))), name="int_tensor_value")
    yield SampleInput(a((3, 4)), (1, 2.5), name="int_scalar")
    yield SampleInput(a((3, 4)), ((slice(None), slice(1, 3)), a((3, 2))), name="slices")
    yield SampleInput(a((3, 4)), ((slice(None), 0), a(())), name="broadcast_value")
    yield SampleInput(a((3, 4)), (a((3, 4)) > 0, 0.5), name="mask_scalar")
    yield SampleInput(a((3, 4)), (np.array([True, False, True]), a((2, 4))), name="row_mask")
    yield SampleInput(a((3, 4)), (idx, a((2, 4))), name="int_array")
    yield SampleInput(a((3, 4)), ((idx, np.array([1, 3], np.int64)), a((2,))),
                      name="int_arrays_pair")
    yield SampleInput(a((3, 4)), ((slice(None), idx), a((3, 2))), name="slice_and_array")
    yield SampleInput(a((3, 4)), ((Ellipsis, 1), a((3,))), name="ellipsis")
    yield SampleInput(NonContig(a((4, 3))), (0, a((3,))), name="transposed")


def index_put_ops() -> list[OpInfo]:
    def index_put(m):
        def run(x, indices, values, accumulate=False):
            return x.clone().index_put_(indices, values, accumulate)
        return run

    def samples(dtype, rng):
        idx = np.array([0, 2, 0], dtype=np.int64)
        yield SampleInput(make((3, 4), dtype, rng), ((idx,), make((3, 4), dtype, rng), True),
                          name="accumulate_repeats")
        yield SampleInput(make((3, 4), dtype, rng),
                          ((idx[:2], np.array([1, 3], np.int64)), make((2,), dtype, rng)),
                          name="pair")

    return [OpInfo("Tensor.__setitem__", setitem, _setitem_samples, dtypes=FLOAT_INT),
            OpInfo("Tensor.index_put_", index_put, samples)]


def gather_family_ops() -> list[OpInfo]:
    """scatter_, scatter_add_, index_add_, masked_fill_ on a clone, with the out-of-place
    op's samples (the OpInfos in gather.py)."""
    from . import gather as G

    # an in-place op cannot grow self to the broadcast shape: torch raises there
    grows = ("input_broadcast", "tensor_value_broadcast")

    def masked_fill_samples(dtype, rng):
        return (s for s in G.masked_fill_samples(dtype, rng) if s.name not in grows)

    def masked_fill_errors():
        rng = np.random.default_rng(0)
        for s in G.masked_fill_samples(np.float64, rng):
            if s.name in grows:
                yield ErrorInput(s, RuntimeError, s.name)

    table = (("scatter_", G.scatter_samples, None),
             ("scatter_add_", G.scatter_add_samples, None),
             ("index_add_", G.index_add_samples, None),
             ("masked_fill_", masked_fill_samples, masked_fill_errors))
    return [OpInfo(f"Tensor.{name}", on_clone(name), samples, dtypes=FLOAT_INT, errors=errors)
            for name, samples, errors in table]


def op_db() -> list[OpInfo]:
    return elementwise_ops() + overwrite_ops() + index_put_ops() + gather_family_ops()
