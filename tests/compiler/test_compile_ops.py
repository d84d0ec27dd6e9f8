"""Compiled vs eager parity over the op table: each op's first float64 sample, called inside a
compiled function that also runs backward on a weighted sum of the outputs. The second call
replays the graph (or, after a graph break, runs eagerly); both must match eager graphgrad."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import graphgrad as gg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from opinfo import OP_DB  # noqa: E402
from opinfo.core import float_outputs, leaves_of, materialize, rng_for  # noqa: E402


def _first_sample(op):
    if np.float64 not in [np.dtype(d).type for d in op.dtypes]:
        return None
    for s in op.sample_inputs(np.float64):
        leaves = leaves_of(s)
        if op.supports_grad and s.grad and any(a.dtype.kind == "f" for a in leaves):
            return s
    return None


CASES = [pytest.param(op, s, id=op.name) for op in OP_DB if (s := _first_sample(op)) is not None]


def _program(op, sample, weights):
    def run(*leaves):
        inp, args, kwargs = materialize(sample, gg, list(leaves))
        outs = float_outputs(op.op(gg)(inp, *args, **kwargs))
        total = None
        for o, w in zip(outs, weights):
            term = (o * gg.tensor(w)).sum()
            total = term if total is None else total + term
        if total is not None and total.requires_grad:
            total.backward()
        return outs
    return run


def _leaves(sample):
    return [gg.tensor(a.copy(), requires_grad=a.dtype.kind == "f" and i not in sample.nondiff)
            for i, a in enumerate(leaves_of(sample))]


def _run(fn, sample):
    leaves = _leaves(sample)
    outs = fn(*leaves)
    return [o.detach().numpy().copy() for o in outs], [
        None if t.grad is None else t.grad.numpy().copy() for t in leaves]


@pytest.mark.parametrize("op,sample", CASES)
def test_compiled_matches_eager(op, sample):
    probe = _leaves(sample)
    inp, args, kwargs = materialize(sample, gg, probe)
    outs = float_outputs(op.op(gg)(inp, *args, **kwargs))
    rng = rng_for(op.name, sample.name, "compile")
    weights = [rng.uniform(-1.5, 1.5, tuple(o.shape)) for o in outs]
    fn = _program(op, sample, weights)
    want_out, want_grad = _run(fn, sample)
    compiled = gg.compile(fn, options={"core_only": True})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # graph breaks (index plans, ...) fall back to eager
        for _ in range(2):  # the capture call, then a replay
            got_out, got_grad = _run(compiled, sample)
            for a, b in zip(got_out, want_out):
                np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
            for a, b in zip(got_grad, want_grad):
                assert (a is None) == (b is None)
                if a is not None:
                    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
