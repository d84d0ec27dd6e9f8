"""OpInfos for activations and extra elementwise math: logit, softplus, logsigmoid, mish, the ELU
family, gelu, silu, hardtanh/relu6, leaky_relu, hardsigmoid, hardswish, softsign, tanhshrink,
nan_to_num, lerp, hypot, atan2, logaddexp, fmod, xlogy and one_hot, in their ``torch.*``,
``torch.nn.functional.*``, method and in-place spellings.

Samples keep away from each activation's kinks; the kinks are sampled on their own
(``gradcheck=False``) to compare torch's subgradient conventions.
"""

from __future__ import annotations

import numpy as np

from .core import ALL, FLOAT, FLOAT_INT, ErrorInput, NonContig, OpInfo, SampleInput, make
from .elementwise import (
    binary_mixed,
    binary_samples,
    fn_and_method,
    function,
    method,
    remainder_samples,
    unary_samples,
)

F32, F64, I32, I64, B = np.float32, np.float64, np.int32, np.int64, np.bool_
_NAN, _INF = np.nan, np.inf


def functional(name):
    """``torch.nn.functional.name``."""
    return lambda m: getattr(m.nn.functional, name)


def on_clone(get):
    """The in-place callable ``get(m)`` applied to a clone of the input (a non-leaf when the
    input requires grad); it must return the clone itself."""
    def op(m):
        fn = get(m)

        def run(x, *args, **kwargs):
            y = x.clone()
            out = fn(y, *args, **kwargs)
            assert out is y, "an in-place op must return its input"
            return y
        return run
    return op


def inplace_kwarg(name):
    """``F.name(x, ..., inplace=True)``."""
    return lambda m: (lambda x, *a, **k: getattr(m.nn.functional, name)(x, *a, inplace=True, **k))


def on_leaf(get):
    """The in-place callable applied to a leaf that requires grad (torch refuses)."""
    def op(m):
        fn = get(m)
        return lambda x, *a, **k: fn(x.requires_grad_(), *a, **k)
    return op


def with_params(base, *param_sets, low=-3.0, high=3.0, avoid=(), margin=0.1):
    """``base``'s samples, then one (3, 4) sample per keyword set, kept away from ``avoid``
    (a function of the keywords: the points where that setting has a kink)."""

    def gen(dtype, rng):
        yield from base(dtype, rng)
        if np.dtype(dtype).kind != "f":
            return
        for i, kw in enumerate(param_sets):
            points = avoid(**kw) if callable(avoid) else avoid
            x = make((3, 4), dtype, rng, low, high, avoid=points, margin=margin)
            yield SampleInput(x, kwargs=kw, name=f"params{i}")

    return gen


def _float_only_errors(*args, **kwargs):
    """torch's float-only kernels reject integer and bool tensors (NotImplementedError)."""
    def errors():
        for dtype in (I64, B):
            yield ErrorInput(SampleInput(np.array([1, 0, 2]).astype(dtype), args, kwargs),
                             NotImplementedError, np.dtype(dtype).name)
    return errors


# --- unary activations ---------------------------------------------------------------------

def logit_samples(dtype, rng):
    yield from unary_samples(0.05, 0.95, int_low=0, int_high=1)(dtype, rng)
    if np.dtype(dtype).kind != "f":
        yield SampleInput(make((4,), dtype, rng, 0, 1), kwargs=dict(eps=0.25), name="int_eps")
        return
    yield SampleInput(make((3, 4), dtype, rng, 0.0, 1.0, avoid=(0.2, 0.8)), kwargs=dict(eps=0.2),
                      name="eps")
    yield SampleInput(make((5,), dtype, rng, 0.05, 0.95), (0.01,), name="eps_positional")
    yield SampleInput(np.array([0.2, 0.8, 0.5, 0.0, 1.0], dtype=dtype), kwargs=dict(eps=0.2),
                      name="eps_bounds", gradcheck=False)
    # outside [0, 1] the logit and its gradient are NaN
    yield SampleInput(np.array([-0.5, 1.5, 0.3], dtype=dtype), name="outside", gradcheck=False)
    yield SampleInput(np.array([0.0, 1.0, 0.5, _NAN], dtype=dtype), name="special", grad=False)


def softplus_samples(dtype, rng):
    yield from unary_samples(-5.0, 5.0, extra=(-100.0, 100.0, 19.9, 20.1, -_INF, _INF))(
        dtype, rng)
    # the identity takes over where beta * x > threshold: keep away from x = threshold / beta
    for i, kw in enumerate((dict(beta=2.0), dict(beta=2, threshold=3.0), dict(threshold=1),
                            dict(beta=-1.5, threshold=2.0), dict(beta=0.5, threshold=40.0))):
        point = kw.get("threshold", 20.0) / kw.get("beta", 1.0)
        yield SampleInput(make((3, 4), dtype, rng, -4.0, 4.0, avoid=(point,), margin=0.2),
                          kwargs=kw, name=f"params{i}")
    yield SampleInput(make((4,), dtype, rng), (2.0, 3.0), name="positional")


def _logsigmoid_samples():
    return unary_samples(-6.0, 6.0, extra=(-1000.0, 1000.0, -30.0, 30.0, -_INF, _INF))


def elu_samples(alphas):
    return with_params(unary_samples(avoid=(0.0,), kinks=(0.0, -1.0, 2.0),
                                     extra=(-100.0, 100.0, -_INF, _INF)),
                       *({"alpha": a} for a in alphas), avoid=(0.0,))


def gelu_samples(dtype, rng):
    # NOTE: no infinities: torch's float32 kernel gives NaN for gelu(inf), float64 gives inf
    yield from unary_samples(-4.0, 4.0, extra=(-30.0, 30.0))(dtype, rng)
    yield SampleInput(make((3, 4), dtype, rng, -4.0, 4.0), kwargs=dict(approximate="none"),
                      name="none_kwarg")


def gelu_tanh_samples(dtype, rng):
    for s in unary_samples(-4.0, 4.0, extra=(-30.0, 30.0, -_INF, _INF))(dtype, rng):
        s.kwargs = dict(approximate="tanh")
        yield s


def hardtanh_samples(dtype, rng):
    yield from unary_samples(avoid=(-1.0, 1.0), kinks=(-1.0, 1.0, 0.0, -2.0, 2.0))(dtype, rng)
    if np.dtype(dtype).kind != "f":
        yield SampleInput(make((3, 4), dtype, rng, -5, 5), (-1.5, 2.5), name="float_bounds")
        yield SampleInput(make((3, 4), dtype, rng, -5, 5), kwargs=dict(min_val=-2, max_val=3),
                          name="int_bounds")
        return
    yield SampleInput(make((3, 4), dtype, rng, avoid=(-2.0, 0.5)), (-2.0, 0.5), name="bounds")
    yield SampleInput(make((3, 4), dtype, rng, avoid=(0.0, 2.0)),
                      kwargs=dict(min_val=0, max_val=2), name="int_bounds")
    yield SampleInput(np.array([-1.0, 0.0, 1.0, 2.0], dtype=dtype),
                      kwargs=dict(min_val=0.0, max_val=0.0), name="equal_bounds", gradcheck=False)


def relu6_samples():
    return unary_samples(-3.0, 9.0, avoid=(0.0, 6.0), int_low=-3, int_high=9,
                         kinks=(0.0, 6.0, -1.0, 7.0, 3.0))


def leaky_relu_samples():
    return with_params(unary_samples(avoid=(0.0,), kinks=(0.0, -1.0, 2.0)),
                       {"negative_slope": 0.2}, {"negative_slope": -0.5},
                       {"negative_slope": 2}, avoid=(0.0,))


def _hard_samples():
    return unary_samples(-5.0, 5.0, avoid=(-3.0, 3.0), kinks=(-3.0, 3.0, 0.0, -4.0, 4.0))


def _hardtanh_errors():
    yield ErrorInput(SampleInput(np.array([True, False])), RuntimeError, "bool")
    yield ErrorInput(SampleInput(np.ones(3), (2.0, 1.0)), ValueError, "min_above_max")


def _gelu_errors():
    yield from _float_only_errors()()
    yield ErrorInput(SampleInput(np.ones(3), kwargs=dict(approximate="tanhh")), RuntimeError,
                     "approximate")


def _celu_errors():
    yield from _float_only_errors()()
    yield ErrorInput(SampleInput(np.ones(3), kwargs=dict(alpha=0.0)), RuntimeError, "alpha_0")


def _bool_errors():
    yield ErrorInput(SampleInput(np.array([True, False])), RuntimeError, "bool")


def nan_to_num_samples(dtype, rng):
    yield from unary_samples()(dtype, rng)
    if np.dtype(dtype).kind != "f":
        yield SampleInput(make((3,), dtype, rng), kwargs=dict(nan=1.5, posinf=2.0), name="args")
        return
    special = np.array([_NAN, _INF, -_INF, 1.0, -2.0, 0.0], dtype=dtype)
    yield SampleInput(special, name="special", gradcheck=False)
    yield SampleInput(special, (1.5, 2.0, -3.0), name="positional", gradcheck=False)
    yield SampleInput(special, kwargs=dict(neginf=-7), name="neginf", gradcheck=False)
    yield SampleInput(special, kwargs=dict(posinf=1e300), name="posinf_overflow", grad=False)
    yield SampleInput(make((3, 4), dtype, rng), kwargs=dict(nan=0.5), name="finite")


UNARY = [
    # (name, spelling, samples, dtypes, errors)
    ("softplus", ("F",), softplus_samples, FLOAT, _float_only_errors()),
    ("logsigmoid", ("F",), _logsigmoid_samples(), FLOAT, _float_only_errors()),
    ("mish", ("F",), unary_samples(-4.0, 4.0, extra=(-30.0, 30.0, _INF)), FLOAT,
     _float_only_errors()),
    ("silu", ("F",), unary_samples(-5.0, 5.0, extra=(-100.0, 100.0, -_INF, _INF)), FLOAT,
     _float_only_errors()),
    ("gelu", ("F",), gelu_samples, FLOAT, _gelu_errors),
    ("elu", ("F",), elu_samples((0.5, 2, -0.5)), FLOAT, _float_only_errors()),
    ("selu", ("torch", "F"), elu_samples(()), FLOAT, _float_only_errors()),
    ("celu", ("torch", "F"), elu_samples((0.5, 2, -1.5)), FLOAT, _celu_errors),
    ("hardtanh", ("F",), hardtanh_samples, FLOAT_INT, _hardtanh_errors),
    ("relu6", ("F",), relu6_samples(), FLOAT_INT, _bool_errors),
    ("leaky_relu", ("F",), leaky_relu_samples(), FLOAT, _float_only_errors()),
    ("hardsigmoid", ("F",), _hard_samples(), FLOAT, _float_only_errors()),
    ("hardswish", ("F",), _hard_samples(), FLOAT, _float_only_errors()),
    ("softsign", ("F",), unary_samples(extra=(-_INF, _INF, 1e30)), FLOAT_INT, _bool_errors),
    ("tanhshrink", ("F",), unary_samples(), FLOAT_INT, _bool_errors),
    ("relu", ("F",), unary_samples(avoid=(0.0,), kinks=(0.0, -1.0, 2.0)), FLOAT_INT,
     _bool_errors),
    ("sigmoid", ("F",), unary_samples(-5.0, 5.0), FLOAT, None),
    ("tanh", ("F",), unary_samples(-4.0, 4.0), FLOAT, None),
]


def unary_ops() -> list[OpInfo]:
    ops = []
    for name, spellings, samples, dtypes, errors in UNARY:
        for spelling in spellings:
            get = function(name) if spelling == "torch" else functional(name)
            prefix = "" if spelling == "torch" else "nn.functional."
            # a second spelling of the same kernel: fewer dtypes, no finite differences
            variant = spelling != spellings[0] or name in ("relu", "sigmoid", "tanh")
            # torch has no second derivative of hardsigmoid to compare with
            kw = dict(dtypes=dtypes, errors=errors, variant=variant,
                      supports_gradgrad=name != "hardsigmoid")
            if variant:
                kw["dtypes"] = tuple(d for d in dtypes if d in (F64, I64))
            ops.append(OpInfo(prefix + name, get, samples, **kw))
    ops.append(OpInfo("nn.functional.gelu.tanh", functional("gelu"), gelu_tanh_samples))
    ops += fn_and_method("logit", logit_samples, dtypes=ALL)
    ops += fn_and_method("nan_to_num", nan_to_num_samples, dtypes=ALL)
    return ops


# --- in-place forms ------------------------------------------------------------------------

def _inplace_samples(low=-3.0, high=3.0, avoid=(0.0,), kinks=(), kwargs=None):
    def gen(dtype, rng):
        def a(shape):
            return make(shape, dtype, rng, low, high, avoid=avoid, margin=0.1)

        kw = dict(kwargs or {})
        yield SampleInput(a((3, 4)), kwargs=kw)
        yield SampleInput(a(()), kwargs=kw, name="0d")
        yield SampleInput(a((0, 3)), kwargs=kw, name="empty")
        yield SampleInput(NonContig(a((4, 3))), kwargs=kw, name="transposed")
        if kinks and np.dtype(dtype).kind == "f":
            yield SampleInput(np.array(kinks, dtype=dtype), kwargs=kw, name="kinks",
                              gradcheck=False)
    return gen


_HARD = dict(low=-5.0, high=5.0, avoid=(-3.0, 3.0), kinks=(-3.0, 3.0, 0.0))

INPLACE = [
    # (name, F keywords for the in-place spelling, sample options, F.<name>_ exists)
    ("relu", {}, dict(kinks=(0.0, 1.0)), True),
    ("elu", {}, dict(kinks=(0.0, -1.0)), True),
    ("elu", {"alpha": 0.5}, {}, True),
    ("selu", {}, dict(kinks=(0.0, 2.0)), True),
    ("celu", {}, dict(kinks=(0.0, -2.0)), True),
    ("celu", {"alpha": 2.0}, {}, True),
    ("silu", {}, dict(avoid=()), False),
    ("mish", {}, dict(avoid=()), False),
    ("hardtanh", {}, dict(avoid=(-1.0, 1.0), kinks=(-1.0, 1.0, 0.5)), True),
    ("hardtanh", {"min_val": -0.5, "max_val": 2.0}, dict(avoid=(-0.5, 2.0)), True),
    ("relu6", {}, dict(low=-3.0, high=9.0, avoid=(0.0, 6.0), kinks=(0.0, 6.0)), False),
    ("leaky_relu", {}, dict(kinks=(0.0, -1.0)), True),
    ("leaky_relu", {"negative_slope": 0.3}, {}, True),
    ("hardsigmoid", {}, _HARD, False),
    ("hardswish", {}, _HARD, False),
]


def _inplace_int_samples(dtype, rng):
    yield SampleInput(make((3, 4), dtype, rng, -4, 4))
    yield SampleInput(make((3, 4), dtype, rng, -4, 4), (-2, 3), name="bounds")


def _inplace_leaf_errors():
    yield ErrorInput(SampleInput(np.ones((3,))), RuntimeError, "leaf_requires_grad")


def backward_of(get):
    """The callable applied to a non-leaf, then backward through it."""
    def op(m):
        fn = get(m)

        def run(x, *args, **kwargs):
            fn(x.requires_grad_() * 1, *args, **kwargs).sum().backward()
        return run
    return op


def _negative_slope_errors():
    """In-place elu/celu/leaky_relu save their result: torch refuses a negative slope."""
    yield ErrorInput(SampleInput(np.ones(3), (-0.5,)), RuntimeError, "negative_slope")


def inplace_ops() -> list[OpInfo]:
    ops = []
    for name, kw, opts, has_underscore in INPLACE:
        suffix = "." + "_".join(f"{k}" for k in kw) if kw else ""
        samples = _inplace_samples(kwargs=kw, **opts)
        ops.append(OpInfo(f"nn.functional.{name}.inplace{suffix}", on_clone(inplace_kwarg(name)),
                          samples, supports_gradgrad=name != "hardsigmoid"))
        if has_underscore:
            ops.append(OpInfo(f"nn.functional.{name}_{suffix}",
                              on_clone(functional(name + "_")), samples, variant=True,
                              dtypes=(F64,)))
    ops.append(OpInfo("nn.functional.hardtanh_.int", on_clone(functional("hardtanh_")),
                      _inplace_int_samples, dtypes=(I64,)))
    ops.append(OpInfo("nn.functional.relu.inplace.leaf", on_leaf(inplace_kwarg("relu")),
                      lambda dtype, rng: [], dtypes=(), errors=_inplace_leaf_errors))
    ops.append(OpInfo("nn.functional.silu.inplace.int", inplace_kwarg("silu"),
                      lambda dtype, rng: [], dtypes=(), errors=_float_only_errors()))
    for name in ("elu_", "celu_", "leaky_relu_"):
        ops.append(OpInfo(f"nn.functional.{name}.backward", backward_of(functional(name)),
                          lambda dtype, rng: [], dtypes=(), errors=_negative_slope_errors))
    for name in ("selu_", "celu_", "relu_"):
        ops.append(OpInfo(name, on_clone(function(name)), _inplace_samples(kinks=(0.0,)),
                          variant=True, dtypes=(F64,)))
    return ops


# --- binary math ---------------------------------------------------------------------------

def _tensor_args_errors(name):
    """These ops take two tensors: a Python number as ``other`` is a TypeError."""
    def errors():
        yield ErrorInput(SampleInput(np.ones(3), (2.0,)), TypeError, "scalar_other")
        yield ErrorInput(SampleInput(np.ones((2, 3)), (np.ones((4,)),)), RuntimeError,
                         "broadcast")
        if name in ("hypot", "logaddexp"):
            yield ErrorInput(SampleInput(np.array([1, 2]), (np.array([3, 4]),)),
                             NotImplementedError, "int")
    return errors


def hypot_samples(dtype, rng):
    # away from the origin, where the gradient is undefined
    yield from binary_samples(0.3, 3.0, tensor_only=True)(dtype, rng)
    yield SampleInput(np.array([0.0, 3.0, -2.0], dtype=dtype),
                      (np.array([1.0, 0.0, 0.0], dtype=dtype),), name="axes", gradcheck=False)
    big = 1e200 if dtype == F64 else 1e30  # squares overflow, the hypot does not
    yield SampleInput(np.array([_INF, big, 0.0], dtype=dtype),
                      (np.array([_NAN, big, 0.0], dtype=dtype),), name="special", grad=False)


def atan2_samples(dtype, rng):
    is_float = np.dtype(dtype).kind == "f"
    yield from binary_samples(int_low=1, int_high=5, rhs_avoid=(0.0,), margin=0.3,
                              tensor_only=True)(dtype, rng)
    if is_float:
        yield SampleInput(np.array([0.0, -0.0, 1.0, -1.0, 0.0], dtype=dtype),
                          (np.array([-1.0, -1.0, 0.0, 0.0, 0.0], dtype=dtype),), name="special",
                          grad=False)


def _atan2_mixed(rng):
    yield from binary_mixed(positive=True, scalars=False)(rng)


def logaddexp_samples(dtype, rng):
    yield from binary_samples(-5.0, 5.0, tensor_only=True)(dtype, rng)
    big = np.array([1000.0, -1000.0, 800.0, -_INF, _INF], dtype=dtype)
    yield SampleInput(big, (np.array([999.0, -1001.0, -800.0, -_INF, 1.0], dtype=dtype),),
                      name="large", gradcheck=False)


def _float_mixed(rng):
    """Pairs with at least one floating operand (the float-only kernels' promotion); no bools,
    on which torch's logaddexp backward fails (it subtracts the bool operand)."""
    for s in binary_mixed(scalars=False, positive=True, bool_ok=False)(rng):
        if any(np.asarray(a).dtype.kind == "f" for a in (s.input, *s.args)):
            yield s


def fmod_samples(dtype, rng):
    yield from remainder_samples(dtype, rng)
    if np.dtype(dtype).kind == "f":
        yield SampleInput(np.array([5.0, -5.0, 1.0, _INF, 2.0], dtype=dtype),
                          (np.array([0.0, 3.0, _INF, 2.0, -0.0], dtype=dtype),), name="special",
                          grad=False)
        yield SampleInput(make((3, 4), dtype, rng), (0.0,), name="zero_scalar", grad=False)


def _fmod_errors():
    yield ErrorInput(SampleInput(np.array([3, 4]), (np.array([1, 0]),)), RuntimeError, "int_by_0")
    yield ErrorInput(SampleInput(np.array([3, 4]), (0,)), RuntimeError, "int_by_scalar_0")
    yield ErrorInput(SampleInput(np.array([True]), (np.array([True]),)), RuntimeError, "bool")
    yield ErrorInput(SampleInput(np.ones((2, 3)), (np.ones((4,)),)), RuntimeError, "broadcast")


def _fmod_mixed(rng):
    yield from binary_mixed(bool_ok=False, nonzero_rhs=True)(rng)


def xlogy_samples(dtype, rng):
    is_float = np.dtype(dtype).kind == "f"
    yield from binary_samples(rhs_low=0.2, rhs_high=4.0, int_low=0, int_high=5,
                              scalars=(2, 3.5))(dtype, rng)
    if not is_float:
        return
    # x == 0 fixes the value at 0 and the x-gradient at log(y) or (for y <= 0) 0
    x = np.array([0.0, 0.0, 0.0, 0.0, 1.0, -2.0], dtype=dtype)
    y = np.array([0.0, -1.0, 2.0, _NAN, 0.0, -1.0], dtype=dtype)
    yield SampleInput(x, (y,), name="zeros", gradcheck=False)
    yield SampleInput(np.array([0.0, 1.0, 2.0], dtype=dtype), (0.0,), name="scalar_zero",
                      gradcheck=False)


def xlogy_scalar_self_samples(dtype, rng):
    """``xlogy(number, tensor)``."""
    is_float = np.dtype(dtype).kind == "f"
    lo, hi = (0.2, 4.0) if is_float else (1, 5)
    for s, shape in ((2.5, (3, 4)), (3, ()), (0, (5,)), (-1.5, (0, 2))):
        yield SampleInput(s, (make(shape, dtype, rng, lo, hi),), name=type(s).__name__)
    yield SampleInput(2.0, (NonContig(make((4, 3), dtype, rng, lo, hi)),), name="transposed")
    if is_float:
        yield SampleInput(0.0, (np.array([0.0, -1.0, _NAN, 2.0], dtype=dtype),), name="zero",
                          gradcheck=False)


def _xlogy_mixed(rng):
    yield from binary_mixed(positive=True)(rng)


def _xlogy_errors():
    yield ErrorInput(SampleInput(np.ones((2, 3)), (np.ones((4,)),)), RuntimeError, "broadcast")


def lerp_samples(dtype, rng):
    def a(shape):
        return make(shape, dtype, rng)

    for (sa, sb), w in zip(((((3, 4), (3, 4))), ((3, 4), (4,)), ((2, 1, 3), (4, 1)),
                            ((), (3,)), ((3, 1), ()), ((), ()), ((0, 3), (1, 3))),
                           (0.3, 0.7, 0.0, 1.0, -0.5, 1.5, 0.5)):
        yield SampleInput(a(sa), (a(sb), w), name=f"weight_{w}")
    yield SampleInput(a((3, 4)), (a((3, 4)), 2), name="int_weight")
    yield SampleInput(NonContig(a((4, 3))), (NonContig(a((4, 3))), 0.25), name="transposed")
    # a tensor weight: it broadcasts with both ends and gets its own gradient
    for sa, sb, sw in (((3, 4), (3, 4), (3, 4)), ((3, 4), (4,), (3, 1)), ((3,), (3,), ()),
                       ((), (), ()), ((2, 1), (1, 3), (2, 3)), ((0, 3), (3,), (1,))):
        yield SampleInput(a(sa), (a(sb), make(sw, dtype, rng, -0.5, 1.5)), name="tensor_weight")
    yield SampleInput(NonContig(a((4, 3))), (a((4, 3)), NonContig(make((4, 3), dtype, rng, 0, 1))),
                      name="tensor_weight_transposed")


def _lerp_mixed(rng):
    x, y = make((3,), F32, rng), make((3,), F32, rng)
    # a 0-d weight may have any dtype; it is cast to the ends' dtype
    yield SampleInput(x, (y, make((), F64, rng, 0.0, 1.0)), name="f64_0d_weight")
    yield SampleInput(x, (y, np.array(1, I64)), name="int_0d_weight")


def _lerp_errors():
    yield ErrorInput(SampleInput(np.array([1, 2]), (np.array([3, 4]), 0.5)), NotImplementedError,
                     "int")
    yield ErrorInput(SampleInput(np.array([1, 2]), (np.array([3, 4]), np.array([1, 1]))),
                     NotImplementedError, "int_tensor_weight")
    yield ErrorInput(SampleInput(np.ones(2, F32), (np.ones(2), 0.5)), RuntimeError, "end_dtype")
    yield ErrorInput(SampleInput(np.ones((), F64), (np.ones(2, F32), 0.5)), RuntimeError,
                     "end_dtype_0d")
    yield ErrorInput(SampleInput(np.ones(2, F32), (np.ones(2, F32), np.ones(2))), RuntimeError,
                     "weight_dtype")
    yield ErrorInput(SampleInput(np.ones(2), (np.ones(3), 0.5)), RuntimeError, "broadcast")
    yield ErrorInput(SampleInput(np.ones(2), (3.0, 0.5)), TypeError, "end_number")


def binary_ops() -> list[OpInfo]:
    ops = []
    ops += fn_and_method("lerp", lerp_samples, mixed=_lerp_mixed, errors=_lerp_errors)
    ops += fn_and_method("hypot", hypot_samples, mixed=_float_mixed,
                         errors=_tensor_args_errors("hypot"))
    for name in ("atan2", "arctan2"):
        ops += fn_and_method(name, atan2_samples, dtypes=ALL, mixed=_atan2_mixed,
                             errors=_tensor_args_errors(name))
    ops += fn_and_method("logaddexp", logaddexp_samples, mixed=_float_mixed,
                         errors=_tensor_args_errors("logaddexp"))
    ops += fn_and_method("fmod", fmod_samples, dtypes=FLOAT_INT, mixed=_fmod_mixed,
                         errors=_fmod_errors)
    ops += fn_and_method("xlogy", xlogy_samples, dtypes=ALL, mixed=_xlogy_mixed,
                         errors=_xlogy_errors)
    ops.append(OpInfo("xlogy.Scalar_Self", function("xlogy"), xlogy_scalar_self_samples,
                      dtypes=FLOAT_INT, errors=lambda: [
                          ErrorInput(SampleInput(2.0, (3.0,)), TypeError, "two_numbers")]))
    return ops


# --- in-place methods of the binary math and of logit / nan_to_num -------------------------

def _method_inplace_samples(base, keep=None):
    """``base``'s samples whose output has the input's shape and dtype (in-place targets)."""
    def gen(dtype, rng):
        for s in base(dtype, rng):
            if keep is None or keep(s):
                yield s
    return gen


def _same_shape(s):
    """The result fits the input: its shape, and no float scalar next to an integer tensor."""
    x = s.input.array if isinstance(s.input, NonContig) else np.asarray(s.input)
    others = [a.array if isinstance(a, NonContig) else a for a in s.args
              if isinstance(a, (np.ndarray, NonContig))]
    if x.dtype.kind != "f" and any(isinstance(a, float) for a in s.args):
        return False
    return np.broadcast_shapes(x.shape, *(o.shape for o in others)) == x.shape


def _inplace_cast_error(*args):
    def errors():
        yield ErrorInput(SampleInput(np.array([1, 2]), args), RuntimeError, "float_into_int")
    return errors


def method_inplace_ops() -> list[OpInfo]:
    specs = [
        ("logit_", logit_samples, FLOAT, _inplace_cast_error()),
        ("nan_to_num_", nan_to_num_samples, FLOAT_INT, None),
        ("lerp_", lerp_samples, FLOAT, None),
        ("hypot_", hypot_samples, FLOAT, None),
        ("atan2_", atan2_samples, FLOAT, _inplace_cast_error(np.array([1, 1]))),
        ("arctan2_", atan2_samples, (F64,), None),
        ("fmod_", fmod_samples, FLOAT_INT, _inplace_cast_error(1.5)),
        ("xlogy_", xlogy_samples, FLOAT, _inplace_cast_error(2.0)),
    ]
    return [OpInfo(f"Tensor.{name}", on_clone(method(name)),
                   _method_inplace_samples(samples, _same_shape), dtypes=dtypes, errors=errors)
            for name, samples, dtypes, errors in specs]


# --- one_hot (its samples are in gather.py; these are the refusals that file leaves out) ----

def _one_hot_errors():
    yield ErrorInput(SampleInput(np.zeros((0,), I64), (0,)), RuntimeError, "empty_zero_classes")
    yield ErrorInput(SampleInput(np.zeros((0,), I64), (-2,)), RuntimeError, "empty_neg_classes")
    yield ErrorInput(SampleInput(np.array([0, 0]), (0,)), RuntimeError, "zero_classes")
    yield ErrorInput(SampleInput(np.array([0, 0]), (-2,)), RuntimeError, "negative_classes")
    yield ErrorInput(SampleInput(np.array([[1, 5]]), (3,)), RuntimeError, "too_large_2d")


def op_db() -> list[OpInfo]:
    return (unary_ops() + inplace_ops() + binary_ops() + method_inplace_ops() + [
        OpInfo("nn.functional.one_hot.errors", functional("one_hot"), lambda dtype, rng: [],
               dtypes=(), supports_grad=False, errors=_one_hot_errors)])
