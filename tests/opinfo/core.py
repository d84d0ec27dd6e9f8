"""OpInfo records, sample and error inputs, and the helpers that make their arrays.

Samples hold NumPy arrays; ``materialize`` turns them into tensors of a given module
(``graphgrad`` or ``torch``), so that one table drives both the subject and the oracle.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "OpInfo", "SampleInput", "ErrorInput", "NonContig", "DType", "make", "rng_for",
    "FLOAT", "INT", "FLOAT_INT", "ALL", "variant_dtypes", "leaves_of", "materialize",
    "float_outputs", "tol_for",
]

FLOAT = (np.float32, np.float64)
INT = (np.int64,)
FLOAT_INT = FLOAT + INT
ALL = FLOAT_INT + (np.bool_,)
# int32 (and the other mixed pairs) come in through OpInfo.mixed, where promotion decides.

# (rtol, atol) by result dtype; torch's own defaults for assert_close.
_DEFAULT_TOL = {
    np.dtype(np.float16): (1e-3, 1e-5),
    np.dtype(np.float32): (1.3e-6, 1e-5),
    np.dtype(np.float64): (1e-7, 1e-7),
}


class NonContig:
    """An array given to the op as a non-contiguous view (a transpose, or a strided slice)."""

    def __init__(self, array):
        self.array = np.asarray(array)
        if self.array.ndim == 0:
            raise ValueError("a 0-d array cannot be non-contiguous")

    def base(self) -> np.ndarray:
        """The contiguous array the leaf tensor is made from."""
        a = self.array
        if a.ndim >= 2:
            return np.ascontiguousarray(np.swapaxes(a, -1, -2))
        return np.ascontiguousarray(np.repeat(a, 2))

    def view(self, t):
        """The view of the leaf tensor ``t`` that holds ``self.array``."""
        if self.array.ndim >= 2:
            return t.transpose(-1, -2)
        return t[::2]


class DType:
    """A dtype argument by name, resolved against the module under test (``m.float64``)."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"DType({self.name!r})"


@dataclass
class SampleInput:
    """One call: ``op(input, *args, **kwargs)``; arrays anywhere in them become tensors.

    ``grad``: used by the gradient-parity test; ``gradcheck``: the point is smooth enough for
    finite differences (False at ties and kinks, where only torch's subgradient is compared);
    ``nondiff``: leaf positions that never get ``requires_grad``.
    """

    input: Any
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    name: str = ""
    grad: bool = True
    gradcheck: bool = True
    nondiff: tuple = ()


@dataclass
class ErrorInput:
    """A call that torch rejects with ``error_type``; graphgrad must raise the same type."""

    sample: SampleInput
    error_type: type
    name: str = ""


@dataclass
class OpInfo:
    """One entry of the op table.

    ``op(m)`` returns the callable for module ``m``; ``samples(dtype, rng)`` yields the samples
    for one dtype; ``mixed(rng)`` yields samples with fixed (mixed) dtypes; ``errors()`` yields
    ErrorInputs. ``tol`` maps a result NumPy dtype to (rtol, atol) overrides. A ``variant`` is
    another spelling (method form) of an op tested in full elsewhere: it runs fewer dtypes and
    skips the finite-difference tests, which would exercise the same derivative rule again.
    ``supports_gradgrad=False``: torch has no second derivative to compare with (hardsigmoid).
    ``special(dtype, rng)``: extra float64 samples at NaN, +-inf, +-0 and kinks for the
    special-value sweep only (tests/opinfo/special.py; never fed to the finite-input tests).
    """

    name: str
    op: Callable
    samples: Callable
    dtypes: tuple = FLOAT
    supports_grad: bool = True
    mixed: Callable | None = None
    errors: Callable | None = None
    tol: dict = field(default_factory=dict)
    grad_tol: tuple = (1e-6, 1e-8)
    requires_grad_parity: bool = True
    variant: bool = False
    supports_gradgrad: bool = True
    special: Callable | None = None

    def sample_inputs(self, dtype) -> list[SampleInput]:
        return list(self.samples(np.dtype(dtype).type, rng_for(self.name, np.dtype(dtype).name)))

    def mixed_inputs(self) -> list[SampleInput]:
        return list(self.mixed(rng_for(self.name, "mixed"))) if self.mixed else []

    def error_inputs(self) -> list[ErrorInput]:
        return list(self.errors()) if self.errors else []


def variant_dtypes(dtypes) -> tuple:
    """float64 (for the gradient tests) plus the first non-float dtype, if any."""
    floats = [d for d in dtypes if np.dtype(d).kind == "f"]
    others = [d for d in dtypes if np.dtype(d).kind != "f"]
    first = [np.float64] if np.float64 in floats else floats[:1]
    return tuple(first + others[:1])


def tol_for(op: OpInfo, np_dtype) -> tuple[float, float]:
    d = np.dtype(np_dtype)
    for k, v in op.tol.items():
        if np.dtype(k) == d:
            return v
    return _DEFAULT_TOL.get(d, (0.0, 0.0))


def rng_for(*keys: str) -> np.random.Generator:
    """A generator seeded from names, stable across processes (pytest-xdist workers)."""
    return np.random.default_rng(zlib.crc32("/".join(keys).encode()))


def make(shape, dtype, rng, low=-3.0, high=3.0, *, avoid=(), margin=0.1) -> np.ndarray:
    """A random array; floats are kept at least ``margin`` away from each point in ``avoid``.

    Integers are drawn from [low, high] (both ends inclusive after rounding inward), bools are
    fair coin flips.
    """
    shape = tuple(shape)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.kind in "iu":
        lo, hi = int(np.ceil(low)), int(np.floor(high))
        out = rng.integers(lo, hi + 1, size=shape)
        for p in avoid:
            bad = out == p
            out = np.where(bad, p + 1 if p + 1 <= hi else p - 1, out)
        return np.asarray(out, dtype=dtype)
    out = rng.uniform(low, high, size=shape)
    avoid = tuple(avoid)
    for _ in range(100):
        bad = np.zeros(shape, dtype=bool)
        for p in avoid:
            bad |= np.abs(out - p) < margin
        if not bad.any():
            break
        out = np.where(bad, rng.uniform(low, high, size=shape), out)
    else:
        raise ValueError(f"could not draw values in [{low}, {high}] away from {avoid}")
    return np.asarray(out, dtype=dtype)


# --- turning samples into tensors ---------------------------------------------------------

def _walk(obj, visit):
    """Rebuilds ``obj`` with each array (or NonContig) replaced by ``visit(it)``.

    NumPy scalars (what arithmetic on 0-d arrays returns) count as 0-d arrays.
    """
    if isinstance(obj, np.generic):
        return visit(np.asarray(obj))
    if isinstance(obj, (np.ndarray, NonContig)):
        return visit(obj)
    if isinstance(obj, list):
        return [_walk(o, visit) for o in obj]
    if isinstance(obj, tuple):
        return tuple(_walk(o, visit) for o in obj)
    if isinstance(obj, dict):
        return {k: _walk(v, visit) for k, v in obj.items()}
    return obj


def leaves_of(sample: SampleInput) -> list[np.ndarray]:
    """The arrays the leaf tensors are made from, in call order (NonContig gives its base)."""
    found = []

    def visit(a):
        found.append(a.base() if isinstance(a, NonContig) else a)
        return a

    _walk((sample.input, sample.args, sample.kwargs), visit)
    return found


def materialize(sample: SampleInput, m, leaf_tensors):
    """(input, args, kwargs) for module ``m``, with arrays replaced by ``leaf_tensors``."""
    it = iter(leaf_tensors)

    def visit(a):
        t = next(it)
        return a.view(t) if isinstance(a, NonContig) else t

    def resolve(obj):
        if isinstance(obj, DType):
            return getattr(m, obj.name)
        if isinstance(obj, list):
            return [resolve(o) for o in obj]
        if isinstance(obj, tuple):
            return tuple(resolve(o) for o in obj)
        if isinstance(obj, dict):
            return {k: resolve(v) for k, v in obj.items()}
        return obj

    inp, args, kwargs = _walk((sample.input, sample.args, sample.kwargs), visit)
    return inp, resolve(args), resolve(kwargs)


def float_outputs(result) -> list:
    """The floating-point tensors of an op's result, flattened in order."""
    if isinstance(result, (tuple, list)):
        out = []
        for r in result:
            out.extend(float_outputs(r))
        return out
    dtype = getattr(result, "dtype", None)
    return [result] if dtype is not None and dtype.is_floating_point else []
