"""OpInfos for hardshrink, softshrink, threshold (and threshold_), rrelu (and rrelu_), prelu, glu
and softmin, in their ``torch.*``, ``torch.nn.functional.*``, method and in-place spellings.

rrelu in training mode draws its slopes at random: those OpInfos return boolean checks of the
draws (slopes in ``[lower, upper]``, gradient equal to the slope, a uniform-looking spread, a
seeded generator repeating itself), which torch's rrelu must pass as well.
"""

from __future__ import annotations

import numpy as np

from .activation import (
    _float_only_errors,
    backward_of,
    functional,
    inplace_kwarg,
    on_clone,
    with_params,
)
from .core import FLOAT_INT, DType, ErrorInput, NonContig, OpInfo, SampleInput, make
from .elementwise import fn_and_method, function, unary_samples

F32, F64, I8, I64, B = np.float32, np.float64, np.int8, np.int64, np.bool_
_NAN, _INF = np.nan, np.inf


# --- hardshrink, softshrink ----------------------------------------------------------------

def shrink_samples(dtype, rng):
    # the kinks sit at +-lambd (0.5 by default)
    yield from with_params(
        unary_samples(avoid=(-0.5, 0.5), kinks=(-0.5, 0.5, 0.0, -1.0, 1.0),
                      extra=(_NAN, _INF, -_INF, -0.0)),
        {"lambd": 1.5}, {"lambd": 0.0}, {"lambd": 2}, avoid=lambda lambd: (-lambd, lambd))(
        dtype, rng)
    yield SampleInput(make((4,), dtype, rng, avoid=(-1.0, 1.0)), (1.0,), name="positional")


def _hardshrink_samples(dtype, rng):
    yield from shrink_samples(dtype, rng)
    # a negative lambd leaves every value alone
    yield SampleInput(make((3, 4), dtype, rng), kwargs=dict(lambd=-1.0), name="negative_lambd")


def _softshrink_errors():
    yield from _float_only_errors()()
    yield ErrorInput(SampleInput(np.ones(3), (-1.0,)), RuntimeError, "negative_lambd")
    yield ErrorInput(SampleInput(np.ones(3, F32), (1e39,)), RuntimeError, "lambd_above_max")


# --- threshold -----------------------------------------------------------------------------

def threshold_samples(dtype, rng):
    """``threshold(x, threshold, value)``: ``value`` where ``x <= threshold``."""
    is_float = np.dtype(dtype).kind == "f"
    lo, hi = (-3.0, 3.0) if is_float else (-5, 5)
    for i, (t, v) in enumerate(((0.1, 20.0), (-1.0, 0.5), (0.0, 0.0), (1, -2), (-0.5, 1.5))):
        for shape in ((3, 4), (), (0, 3), (2, 1, 3)):
            yield SampleInput(make(shape, dtype, rng, lo, hi, avoid=(t,)), (t, v),
                              name=f"args{i}")
    yield SampleInput(NonContig(make((4, 3), dtype, rng, lo, hi, avoid=(0.5,))), (0.5, 2.0),
                      name="transposed")
    yield SampleInput(make((5,), dtype, rng, lo, hi, avoid=(1.0,)),
                      kwargs=dict(threshold=1.0, value=-4.0), name="kwargs")
    if is_float:
        # at x == threshold the value replaces x: zero gradient there
        yield SampleInput(np.array([0.5, -1.0, 2.0, 0.0], dtype=dtype), (0.5, 3.0), name="kink",
                          gradcheck=False)
        yield SampleInput(np.array([_NAN, _INF, -_INF, 0.5], dtype=dtype), (0.5, 3.0),
                          name="special", grad=False)
    else:
        # an integer tensor truncates both numbers to integers
        yield SampleInput(np.array([-1, 0, 1, 2], dtype=dtype), (-0.5, 7.9), name="truncate")
        yield SampleInput(np.array([-1, 0, 1, 2], dtype=dtype), (1.5, -7.9), name="truncate2")


def _threshold_errors():
    yield ErrorInput(SampleInput(np.array([True, False]), (0, 1)), NotImplementedError, "bool")
    yield ErrorInput(SampleInput(np.ones(3), (0.5,)), TypeError, "missing_value")
    yield ErrorInput(SampleInput(np.array([1, 2], I8), (1, 300)), RuntimeError, "value_overflow")
    yield ErrorInput(SampleInput(np.array([1, 2], I8), (300, 1)), RuntimeError,
                     "threshold_overflow")
    yield ErrorInput(SampleInput(np.ones(2, F32), (1.0, 1e300)), RuntimeError, "float_overflow")


def _threshold_inplace_samples(dtype, rng):
    yield from threshold_samples(dtype, rng)
    if np.dtype(dtype).kind == "f":
        # a value above the threshold: the gradient still follows the input, not the result
        yield SampleInput(np.array([-1.0, 0.0, 0.5, 2.0], dtype=dtype), (0.0, 5.0),
                          name="value_above", gradcheck=False)


# --- rrelu ---------------------------------------------------------------------------------

_MID = (1.0 / 8 + 1.0 / 3) / 2


def rrelu_samples(dtype, rng):
    """Eval mode (a fixed slope), and training with ``lower == upper`` (no randomness)."""
    yield from unary_samples(avoid=(0.0,), kinks=(0.0, -1.0, 2.0), extra=(_NAN, _INF, -_INF))(
        dtype, rng)
    for i, (lo, up) in enumerate(((0.1, 0.3), (0.5, 0.5), (-0.5, 0.2), (0, 2))):
        yield SampleInput(make((3, 4), dtype, rng, avoid=(0.0,)), (lo, up), name=f"bounds{i}")
    yield SampleInput(make((3, 4), dtype, rng, avoid=(0.0,)),
                      kwargs=dict(lower=0.2, upper=0.4, training=False), name="kwargs")
    yield SampleInput(make((3, 4), dtype, rng, avoid=(0.0,)), (0.2, 0.2, True),
                      name="training_fixed_slope")
    yield SampleInput(np.array([0.0, -1.0, 1.0], dtype=dtype), (0.3, 0.3),
                      kwargs=dict(training=True), name="training_fixed_kink", gradcheck=False)


def _rrelu_inplace_samples(dtype, rng):
    for s in rrelu_samples(dtype, rng):
        # in place, the derivative is read off the result's sign: a negative slope is refused
        if not s.name.startswith("bounds2"):
            yield s


def _rrelu_errors():
    yield ErrorInput(SampleInput(np.array([1, -2])), NotImplementedError, "int_eval")
    yield ErrorInput(SampleInput(np.array([1, -2]), kwargs=dict(training=True)),
                     NotImplementedError, "int_training")
    yield ErrorInput(SampleInput(np.ones(3), (0.5, 0.1)), RuntimeError, "lower_above_upper")
    yield ErrorInput(SampleInput(np.ones(3), (0.5, 0.1, True)), RuntimeError,
                     "lower_above_upper_training")


def _negative_mean_slope_errors():
    """In-place rrelu saves its result: torch refuses a negative mean slope in backward."""
    yield ErrorInput(SampleInput(np.ones(3), (-0.5, -0.1)), RuntimeError, "negative_slope")


def _rrelu_training_checks(get, inplace):
    """Runs rrelu in training mode on a copy of ``x`` and returns boolean checks of the draws:
    positive entries kept, slopes within [lower, upper], gradient equal to the slope."""
    def op(m):
        fn = get(m)

        def run(x, lower=1.0 / 8, upper=1.0 / 3):
            leaf = x.detach().clone().requires_grad_()
            out = fn(leaf * 1 if inplace else leaf, lower, upper, training=True)
            (grad,) = m.autograd.grad(out.sum(), leaf)
            x, out = x.detach(), out.detach()
            slope = out / x
            tol = 1e-5
            negative = x < 0
            kept = m.where(negative, m.ones_like(x, dtype=m.bool), out == x)
            in_range = m.where(negative, (slope >= lower - tol) & (slope <= upper + tol),
                               m.ones_like(x, dtype=m.bool))
            grad_is_slope = m.where(negative, (grad - slope).abs() <= tol, grad == 1)
            return kept, in_range, grad_is_slope
        return run
    return op


def _rrelu_training_samples(dtype, rng):
    for shape in ((3, 4), (), (0, 3), (2, 1, 3), (50,)):
        yield SampleInput(make(shape, dtype, rng, avoid=(0.0,), margin=0.05), grad=False)
    yield SampleInput(NonContig(make((4, 3), dtype, rng, avoid=(0.0,))), name="transposed",
                      grad=False)
    for i, bounds in enumerate(((0.1, 0.3), (-0.5, 0.2), (0.0, 1.0))):
        yield SampleInput(make((6, 5), dtype, rng, avoid=(0.0,)), bounds, name=f"bounds{i}",
                          grad=False)


def _rrelu_distribution(m):
    """Many negative inputs: the slopes look uniform on [lower, upper] (mean, variance, both
    ends reached), and a seeded generator, or the reseeded default one, repeats its draws."""
    def run(x, lower, upper):
        width = upper - lower
        slope = m.rrelu(x, lower, upper, training=True) / x
        mean, var = slope.mean(), slope.var()
        checks = [(mean - (lower + upper) / 2).abs() < 0.03 * width,
                  (var / (width * width / 12) - 1).abs() < 0.1,
                  slope.min() < lower + 0.01 * width, slope.max() > upper - 0.01 * width]
        a = m.rrelu(x, lower, upper, True, generator=m.Generator().manual_seed(7))
        b = m.rrelu(x, lower, upper, True, generator=m.Generator().manual_seed(7))
        checks.append(m.equal(a, b) and not m.equal(a, m.rrelu(x, lower, upper, True)))
        state = m.get_rng_state()
        m.manual_seed(11)
        c = m.nn.functional.rrelu(x, lower, upper, training=True)
        m.manual_seed(11)
        d = m.nn.functional.rrelu(x, lower, upper, training=True)
        m.set_rng_state(state)
        checks.append(m.equal(c, d))
        return m.tensor([bool(c) for c in checks])
    return run


def _rrelu_distribution_samples(dtype, rng):
    for i, bounds in enumerate(((0.1, 0.3), (1.0 / 8, 1.0 / 3), (-1.0, 2.0))):
        yield SampleInput(make((4000,), dtype, rng, -3.0, -0.1), bounds, name=f"bounds{i}",
                          grad=False)


# --- prelu ---------------------------------------------------------------------------------

def prelu_samples(dtype, rng):
    def x(shape):
        return make(shape, dtype, rng, avoid=(0.0,))

    def w(shape):
        return make(shape, dtype, rng, -0.5, 1.5)

    for xs, ws in (((3, 4), (1,)), ((3, 4), (4,)), ((2, 3, 4), (3,)), ((2, 3, 2, 2), (3,)),
                   ((2, 3, 2, 2), (1,)), ((), (1,)), ((), ()), ((5,), (1,)), ((5,), ()),
                   ((3, 4), ()), ((0, 3), (3,)), ((2, 0, 3), (1,))):
        yield SampleInput(x(xs), (w(ws),), name=f"{len(xs)}d_w{len(ws)}d")
    yield SampleInput(NonContig(x((4, 3))), (w((3,)),), name="transposed")
    yield SampleInput(x((3, 4)), (NonContig(w((4,))),), name="strided_weight")
    yield SampleInput(np.array([[0.0, -1.0], [2.0, 0.0]], dtype=dtype), (w((2,)),),
                      name="kinks", gradcheck=False)
    yield SampleInput(np.array([_NAN, _INF, -_INF], dtype=dtype), (w((1,)),), name="special",
                      grad=False)


def _prelu_errors():
    yield ErrorInput(SampleInput(np.ones((2, 3), F32), (np.ones(3, F64),)), RuntimeError,
                     "dtype_mismatch")
    yield ErrorInput(SampleInput(np.ones(()), (np.ones(2),)), RuntimeError, "zero_dim_input")
    yield ErrorInput(SampleInput(np.ones((2, 3)), (np.ones(2),)), RuntimeError, "channels")
    yield ErrorInput(SampleInput(np.ones((3,)), (np.ones(3),)), RuntimeError, "channels_1d")
    yield ErrorInput(SampleInput(np.ones((2, 3)), (np.ones((1, 1)),)), RuntimeError,
                     "weight_2d")
    yield ErrorInput(SampleInput(np.array([1, -2]), (np.array([2]),)), NotImplementedError,
                     "int")
    yield ErrorInput(SampleInput(np.ones(3), (0.25,)), TypeError, "number_weight")


# --- glu, softmin --------------------------------------------------------------------------

def glu_samples(dtype, rng):
    def a(shape):
        return make(shape, dtype, rng)

    yield SampleInput(a((3, 4)))
    yield SampleInput(a((6,)), name="1d")
    yield SampleInput(a((4, 3)), (0,), name="dim0")
    yield SampleInput(a((2, 6, 3)), kwargs=dict(dim=1), name="dim1")
    yield SampleInput(a((2, 3, 4)), (-3,), name="dim_neg")
    yield SampleInput(a((0, 4)), name="empty")
    yield SampleInput(a((3, 0)), (1,), name="empty_halved")
    yield SampleInput(NonContig(a((4, 6))), name="transposed")
    yield SampleInput(np.array([1.0, -2.0, 800.0, -800.0], dtype=dtype), name="saturated",
                      gradcheck=False)


def _glu_errors():
    yield ErrorInput(SampleInput(np.ones(())), RuntimeError, "scalar")
    yield ErrorInput(SampleInput(np.ones((3, 5))), RuntimeError, "odd")
    yield ErrorInput(SampleInput(np.ones((3, 4)), (0,)), RuntimeError, "odd_dim0")
    yield ErrorInput(SampleInput(np.ones((4,)), (2,)), IndexError, "dim_out_of_range")
    yield ErrorInput(SampleInput(np.array([1, 2])), NotImplementedError, "int")
    yield ErrorInput(SampleInput(np.array([True, False])), NotImplementedError, "bool")


def softmin_samples(dtype, rng):
    def a(shape, low=-3.0, high=3.0):
        return make(shape, dtype, rng, low, high)

    yield SampleInput(a((3, 5)), (1,))
    yield SampleInput(a((3, 5)), kwargs=dict(dim=0), name="dim0")
    yield SampleInput(a((2, 3, 4)), (-1,), name="3d_last")
    yield SampleInput(a(()), (0,), name="0d")
    yield SampleInput(a((0, 3)), (1,), name="empty")
    yield SampleInput(NonContig(a((4, 3))), (0,), name="transposed")
    yield SampleInput(a((3, 4), -500.0, 500.0), (1,), name="large")
    yield SampleInput(a((3, 4)), (1,), kwargs=dict(dtype=DType("float64")), name="dtype")
    # no dim: torch warns and picks dim 0 for 0-, 1- and 3-d inputs, else dim 1
    for shape in ((4,), (3, 4), (2, 3, 4), (2, 2, 3, 2)):
        yield SampleInput(a(shape), name=f"implicit_dim_{len(shape)}d")


def _softmin_mixed(rng):
    yield SampleInput(make((3, 4), I64, rng), (1,), kwargs=dict(dtype=DType("float32")),
                      name="int_to_float")
    yield SampleInput(make((3, 4), F32, rng), (0,), kwargs=dict(dtype=DType("float64")),
                      name="float_to_double")


def _softmin_errors():
    yield ErrorInput(SampleInput(np.array([1, 2]), (0,)), NotImplementedError, "int")
    yield ErrorInput(SampleInput(np.array([True, False]), (0,)), RuntimeError, "bool")
    yield ErrorInput(SampleInput(np.ones((2, 3)), (2,)), IndexError, "dim_out_of_range")


# --- the table -----------------------------------------------------------------------------

def _functional_variant(name, samples, **kw):
    return OpInfo(f"nn.functional.{name}", functional(name), samples, variant=True,
                  **dict(kw, dtypes=(F64,) + tuple(d for d in kw.get("dtypes", ()) if d == I64)))


def out_of_place_ops() -> list[OpInfo]:
    ops = fn_and_method("hardshrink", _hardshrink_samples, errors=_float_only_errors())
    ops.append(_functional_variant("hardshrink", _hardshrink_samples))
    ops.append(OpInfo("nn.functional.softshrink", functional("softshrink"), shrink_samples,
                      errors=_softshrink_errors))
    ops.append(OpInfo("threshold", function("threshold"), threshold_samples, dtypes=FLOAT_INT,
                      errors=_threshold_errors))
    ops.append(_functional_variant("threshold", threshold_samples, dtypes=FLOAT_INT,
                                   errors=_threshold_errors))
    ops.append(OpInfo("rrelu", function("rrelu"), rrelu_samples, errors=_rrelu_errors))
    ops.append(_functional_variant("rrelu", rrelu_samples, errors=_rrelu_errors))
    ops += fn_and_method("prelu", prelu_samples, errors=_prelu_errors)
    ops.append(_functional_variant("prelu", prelu_samples))
    ops.append(OpInfo("nn.functional.glu", functional("glu"), glu_samples, errors=_glu_errors))
    ops.append(OpInfo("nn.functional.softmin", functional("softmin"), softmin_samples,
                      mixed=_softmin_mixed, errors=_softmin_errors))
    return ops


def inplace_ops() -> list[OpInfo]:
    ops = []
    for name in ("threshold_",):
        ops.append(OpInfo(name, on_clone(function(name)), _threshold_inplace_samples,
                          dtypes=FLOAT_INT))
        ops.append(OpInfo(f"nn.functional.{name}", on_clone(functional(name)),
                          _threshold_inplace_samples, variant=True, dtypes=(F64,)))
    ops.append(OpInfo("nn.functional.threshold.inplace", on_clone(inplace_kwarg("threshold")),
                      _threshold_inplace_samples, variant=True, dtypes=(F64, I64)))
    ops.append(OpInfo("rrelu_", on_clone(function("rrelu_")), _rrelu_inplace_samples))
    ops.append(OpInfo("nn.functional.rrelu_", on_clone(functional("rrelu_")),
                      _rrelu_inplace_samples, variant=True, dtypes=(F64,)))
    ops.append(OpInfo("nn.functional.rrelu.inplace", on_clone(inplace_kwarg("rrelu")),
                      _rrelu_inplace_samples, variant=True, dtypes=(F64,)))
    ops.append(OpInfo("nn.functional.rrelu_.backward", backward_of(functional("rrelu_")),
                      lambda dtype, rng: [], dtypes=(), errors=_negative_mean_slope_errors))
    return ops


def training_ops() -> list[OpInfo]:
    """rrelu in training mode: checks of the random draws, compared with torch's."""
    spellings = (("rrelu", function("rrelu"), False),
                 ("nn.functional.rrelu", functional("rrelu"), False),
                 ("rrelu_", function("rrelu_"), True),
                 ("nn.functional.rrelu_", functional("rrelu_"), True),
                 ("nn.functional.rrelu.inplace", inplace_kwarg("rrelu"), True))
    ops = [OpInfo(f"{name}.training", _rrelu_training_checks(get, inplace),
                  _rrelu_training_samples, requires_grad_parity=False)
           for name, get, inplace in spellings]
    ops.append(OpInfo("rrelu.training.distribution", _rrelu_distribution,
                      _rrelu_distribution_samples, requires_grad_parity=False))
    return ops


def op_db() -> list[OpInfo]:
    return out_of_place_ops() + inplace_ops() + training_ops()

