"""Special-value samples: each op's inputs with NaN, +-inf, +-0 and kink values written in.

``special_value_samples(op)`` takes the first float64 samples of an OpInfo and, for each
differentiable float leaf, makes one copy per value set in ``SPECIAL_SETS`` with the set's
values written over the leaf's first elements; the op's own ``special`` generator adds
op-specific points (ties with a NaN, the kinks of piecewise functions). Only the
special-value sweep (tests/ops/test_special_values.py) reads them: the finite-difference,
compile and ONNX consumers assume finite inputs.

``KNOWN_DIFFERENCES`` lists the ops whose results at these points differ from torch's on
purpose or for a reason outside graphgrad, with that reason; the sweep skips them by name.
"""

from __future__ import annotations

import os
import re

import numpy as np

from .core import NonContig, OpInfo, SampleInput, _walk, leaves_of, rng_for

__all__ = ["SPECIAL_SETS", "special_value_samples", "known_difference"]

# One NaN alone (a NaN poisons a reduction, so it gets its own copy), both infinities, both
# zeros, and the kinks at 0 and +-1 (relu, abs, hardtanh, clamp, ...).
SPECIAL_SETS = {
    "nan": (np.nan,),
    "inf": (np.inf, -np.inf),
    "zero": (0.0, -0.0),
    "kink": (0.0, 1.0, -1.0),
}

# How many of an op's float64 samples are turned into special-value copies: 1 keeps the sweep
# near 10 s of CPU; GRAPHGRAD_SPECIAL_SAMPLES=2 (about twice that) also passed when written.
_BASE_SAMPLES = int(os.environ.get("GRAPHGRAD_SPECIAL_SAMPLES", "1"))

# pattern -> why the sweep leaves it out, checked with re.search against an op's name (the
# whole op) and against "op name/sample name" (one sample)
KNOWN_DIFFERENCES = {
    r"linalg|logdet|^det$|svd|pinv|matrix_(power|exp|rank|norm)|lstsq|eig|cholesky|^lu|qr|"
    r"slogdet|inverse|ormqr|geqrf|householder|triangular|chain_matmul|ldl":
        "LAPACK's results on NaN/inf inputs are unspecified (torch's svd on a NaN matrix did "
        "not finish in minutes here); both sides only agree that the result is not finite",
    r"^(searchsorted|bucketize)$": "NaN ordering inside a sorted sequence: torch's binary "
                                   "search and NumPy's place NaN differently",
    r"^topk\.unsorted$": "which of two tied elements (0.0 and -0.0) an unsorted topk returns "
                         "is unspecified in torch",
    r"^nn\.functional\.(hardtanh|relu6)[\w.]*/(.*nan|kinks)$": "the gradient at "
        "NaN: torch's vectorised CPU loop gives 0, its scalar loop (a tensor's last few "
        "elements) the gradient, so torch's answer depends on the NaN's position; graphgrad "
        "gives the gradient everywhere",
    r"^rnn_layer/relu-leaf3-(nan|inf)$": "a non-finite recurrent weight: torch's fused "
        "RNN backward keeps some weight-gradient entries finite that graphgrad's step-by-step "
        "accumulation turns NaN",
    r"^istft$|^polar$|^nn\.functional\.pdist$|ctc_loss":
        "backward at NaN/inf inputs: torch's fused kernels propagate NaN/inf in other orders",
    r"^nn\.functional\.(batch_norm|instance_norm|group_norm)$": "an infinite weight or bias: "
        "torch's fused kernels give inf where graphgrad's decomposition gives NaN (inf * 0)",
    r"^special\.(i1|i1e|zeta)|mvlgamma": "special functions (owned by the numerics issue)",
}
_KNOWN = [(re.compile(k), v) for k, v in KNOWN_DIFFERENCES.items()]


_V = np.array([np.nan, -np.inf, np.inf, 0.0, -0.0, 1.0, -1.0, 3.0, -3.0, 6.0, 0.5, -0.5])


def _unary_kinks(*extra):
    """One vector holding every special value and the op's own kinks (``extra``)."""
    def gen(dtype, rng):
        yield SampleInput(np.concatenate([_V, np.asarray(extra, float)]).astype(dtype),
                          name="kinks")
    return gen


def _pair_specials(dtype, rng):
    """Every pair of special values, both ways round (ties, NaN on either side)."""
    a, b = np.meshgrid(_V[:6], _V[:6])
    yield SampleInput(a.astype(dtype), (b.astype(dtype),), name="pairs")


def _reduce_nan(dtype, rng):
    yield SampleInput(np.array([1.0, np.nan, 3.0], dtype), name="one_nan")
    yield SampleInput(np.array([[np.nan, 2.0], [np.nan, np.inf]], dtype), name="two_nans")
    yield SampleInput(np.array([-np.inf, np.inf, 0.0], dtype), name="infs")


def _pow_specials(dtype, rng):
    for p in (0.5, -0.5, 2.0, 3.0, -1.0, -2.0, 0.0, 1.5):
        yield SampleInput(_V.astype(dtype), (p,), name=f"p{p}")


# op name -> extra special samples, for ops whose OpInfo has no ``special`` of its own
EXTRA = {
    "max": _reduce_nan, "min": _reduce_nan, "amax": _reduce_nan, "amin": _reduce_nan,
    "maximum": _pair_specials, "minimum": _pair_specials, "fmax": _pair_specials,
    "atan2": _pair_specials, "hypot": _pair_specials, "max.binary": _pair_specials,
    "pow": _pow_specials,
    "abs": _unary_kinks(), "relu": _unary_kinks(), "sign": _unary_kinks(), "sqrt": _unary_kinks(),
    "rsqrt": _unary_kinks(), "nn.functional.elu": _unary_kinks(),
    "nn.functional.hardtanh": _unary_kinks(), "nn.functional.relu6": _unary_kinks(),
    "nn.functional.hardswish": _unary_kinks(), "nn.functional.hardsigmoid": _unary_kinks(),
    "nn.functional.leaky_relu": _unary_kinks(), "nn.functional.softplus": _unary_kinks(20.0),
}


def known_difference(name: str):
    """The reason an op (``name``) or one sample (``op/sample``) is left out, or None."""
    for pattern, reason in _KNOWN:
        if pattern.search(name):
            return reason
    return None


def _with_values(sample: SampleInput, leaf: int, values, name: str) -> SampleInput:
    """A copy of ``sample`` whose leaf number ``leaf`` starts with ``values``."""
    count = [0]

    def visit(a):
        i = count[0]
        count[0] += 1
        if i != leaf:
            return a
        arr = (a.array if isinstance(a, NonContig) else a).copy()
        flat = arr.reshape(-1)
        for j, v in enumerate(values[:flat.size]):
            flat[j] = v
        return NonContig(arr) if isinstance(a, NonContig) else arr

    inp, args, kwargs = _walk((sample.input, sample.args, sample.kwargs), visit)
    return SampleInput(inp, args, kwargs, name=name, grad=sample.grad, gradcheck=False,
                       nondiff=sample.nondiff)


def special_value_samples(op: OpInfo) -> list[SampleInput]:
    """The special-value copies of ``op``'s first float64 samples, plus ``op.special``'s."""
    out = []
    if np.float64 not in op.dtypes:
        return out
    used = 0
    for s in op.sample_inputs(np.float64):
        leaves = leaves_of(s)
        floats = [i for i, a in enumerate(leaves)
                  if a.dtype == np.float64 and a.size and i not in s.nondiff]
        if not floats:
            continue
        for i in floats:
            for key, values in SPECIAL_SETS.items():
                out.append(_with_values(s, i, values, f"{s.name or 'sample'}-leaf{i}-{key}"))
        used += 1
        if used >= _BASE_SAMPLES:
            break
    extra = op.special or EXTRA.get(op.name)
    if extra is not None:
        for s in extra(np.float64, rng_for(op.name, "special")):
            s.gradcheck = False
            out.append(s)
    return out
