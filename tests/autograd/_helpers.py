"""Shared helpers: run one program with torch (the oracle) and with graphgrad, compare the results.

A program is a function of the module ``m``; ``same(prog)`` runs it for both and compares values,
shapes, dtypes (as strings), Python scalar types and raised exception types.
"""

import contextlib
import io
import math
import sys
import warnings

import numpy as np
import torch

import graphgrad as gg

MODULES = (torch, gg)

_TOL = {
    "torch.float16": (1e-3, 1e-5),
    "torch.float32": (1.3e-6, 1e-5),
    "torch.float64": (1e-7, 1e-7),
}


class Raised:
    """The outcome of a program that raised."""

    def __init__(self, exc):
        self.exc = exc

    def __repr__(self):
        return f"Raised({type(self.exc).__name__}: {self.exc})"


def builtin_base(exc):
    """The most derived builtin exception class of ``exc`` (torch raises subclasses at times)."""
    for cls in type(exc).__mro__:
        if cls.__module__ == "builtins":
            return cls
    return Exception


def outcome(prog, m):
    """Run ``prog(m)``; return its result or a ``Raised`` wrapper."""
    try:
        return prog(m)
    except Exception as exc:  # the exception is the observable result
        return Raised(exc)


def is_tensor(x):
    return isinstance(x, (torch.Tensor, gg.Tensor))


def values(t):
    return np.asarray(t.detach().numpy())


def assert_same(a, b, rtol=None, atol=None, path="result"):
    """Assert that ``b`` (graphgrad) is observably the same as ``a`` (torch)."""
    if isinstance(a, Raised):
        assert isinstance(b, Raised), f"{path}: torch raised {a!r}, graphgrad returned {b!r}"
        base = builtin_base(a.exc)
        assert isinstance(b.exc, base), f"{path}: torch raised {a!r}, graphgrad raised {b!r}"
        return
    assert not isinstance(b, Raised), f"{path}: torch returned {a!r}, graphgrad raised {b!r}"
    if isinstance(a, torch.Tensor):
        assert isinstance(b, gg.Tensor), f"{path}: expected a Tensor, got {type(b).__name__}"
        assert str(b.dtype) == str(a.dtype), f"{path}: dtype {b.dtype} != torch's {a.dtype}"
        assert tuple(b.shape) == tuple(a.shape), (
            f"{path}: shape {tuple(b.shape)} != torch's {tuple(a.shape)}"
        )
        av, bv = values(a), values(b)
        if a.dtype.is_floating_point:
            drt, dat = _TOL[str(a.dtype)]
            np.testing.assert_allclose(
                bv.astype(np.float64), av.astype(np.float64),
                rtol=drt if rtol is None else rtol, atol=dat if atol is None else atol,
                err_msg=path,
            )
        else:
            np.testing.assert_array_equal(bv, av, err_msg=path)
        return
    if isinstance(a, torch.dtype):
        assert str(b) == str(a), f"{path}: dtype {b} != torch's {a}"
        return
    if isinstance(a, torch.Size):
        assert isinstance(b, tuple), f"{path}: shape should be a tuple subclass, got {type(b)}"
        assert tuple(b) == tuple(a), f"{path}: shape {tuple(b)} != {tuple(a)}"
        return
    if isinstance(a, (list, tuple)):
        assert type(b) is type(a), f"{path}: {type(b).__name__} != torch's {type(a).__name__}"
        assert len(b) == len(a), f"{path}: length {len(b)} != torch's {len(a)}: {b!r} vs {a!r}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, rtol, atol, f"{path}[{i}]")
        return
    if isinstance(a, dict):
        assert isinstance(b, dict), f"{path}: expected a dict, got {type(b).__name__}"
        assert list(b) == list(a), f"{path}: keys {list(b)} != {list(a)}"
        for k in a:
            assert_same(a[k], b[k], rtol, atol, f"{path}[{k!r}]")
        return
    assert type(b) is type(a), (
        f"{path}: {type(b).__name__} {b!r} != torch's {type(a).__name__} {a!r}"
    )
    if isinstance(a, float):
        r = 1e-6 if rtol is None else rtol
        assert (math.isnan(a) and math.isnan(b)) or math.isclose(b, a, rel_tol=r, abs_tol=1e-7), (
            f"{path}: {b!r} != torch's {a!r}"
        )
    else:
        assert b == a, f"{path}: {b!r} != torch's {a!r}"


def same(prog, rtol=None, atol=None):
    """Run ``prog`` with torch and graphgrad and assert the outcomes match."""
    expected = outcome(prog, torch)
    actual = outcome(prog, gg)
    assert_same(expected, actual, rtol, atol)
    return expected, actual


def raises_like(prog, *phrases):
    """Assert both modules raise the same builtin exception type; messages contain ``phrases``.

    The phrases are checked (case-insensitively) against torch's message too, so the test breaks
    loudly if the oracle's wording ever changes.
    """
    expected = outcome(prog, torch)
    assert isinstance(expected, Raised), f"oracle torch did not raise: {expected!r}"
    actual = outcome(prog, gg)
    assert_same(expected, actual)
    for phrase in phrases:
        assert phrase.lower() in str(expected.exc).lower(), f"torch's message changed: {expected!r}"
        assert phrase.lower() in str(actual.exc).lower(), (
            f"graphgrad's message lacks {phrase!r}: {actual!r} (torch: {expected!r})"
        )
    return expected, actual


def fn(t):
    """The class name of ``t.grad_fn`` (None when there is none)."""
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def graph(node, leaves=()):
    """The graph below ``node`` as nested tuples of class names and input numbers.

    ``leaves`` are the tensors an AccumulateGrad may hold; each AccumulateGrad is described by the
    position of its ``.variable`` in ``leaves`` (identity), or -1.
    """
    if node is None:
        return None
    name = type(node).__name__
    if name == "AccumulateGrad":
        pos = [i for i, t in enumerate(leaves) if node.variable is t]
        return (name, pos[0] if pos else -1, tuple(node.next_functions))
    return (
        name,
        node.name(),
        tuple((graph(n, leaves), i) for n, i in node.next_functions),
    )


def data(shape, seed=0, positive=False):
    """Deterministic float values as nested lists (the same for both modules)."""
    x = np.random.default_rng(seed).standard_normal(shape).round(3)
    if positive:
        x = np.abs(x) + 0.5
    return x.tolist()


def stdout_of(func):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        func()
    return buf.getvalue()


def warnings_of(func):
    """Run ``func``; return (its result, the categories of the warnings it raised)."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        result = func()
    return result, [w.category for w in rec]


def stack_depth():
    frame, n = sys._getframe(), 0
    while frame is not None:
        n, frame = n + 1, frame.f_back
    return n


@contextlib.contextmanager
def recursion_limit(extra):
    """Allow only ``extra`` frames above the current depth."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(stack_depth() + extra)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)
