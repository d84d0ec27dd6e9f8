"""The special-value sweep: every op of OP_DB at NaN, +-inf, +-0 and kinks, forward and
backward, against torch 2.13 (tests/opinfo/special.py makes the samples).

Values compare with NaN equal to NaN (signs of zeros are not compared); gradients of a fixed
random-weight sum of the outputs compare leaf by leaf. Where torch raises, graphgrad must
raise the same exception class (or a subclass of its builtin base).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from opinfo import OP_DB
from opinfo.core import float_outputs, leaves_of, materialize, rng_for, tol_for
from opinfo.special import known_difference, special_value_samples

_BUILTIN = (IndexError, TypeError, ValueError, NotImplementedError, RuntimeError)


def _ops():
    params = []
    for op in OP_DB:
        if op.variant:  # another spelling of an op swept under its main name
            continue
        reason = known_difference(op.name)
        marks = [pytest.mark.skip(reason=reason)] if reason else []
        params.append(pytest.param(op, id=op.name, marks=marks))
    return params


def _diff(sample):
    return [a.dtype.kind == "f" and i not in sample.nondiff
            for i, a in enumerate(leaves_of(sample))]


def _run(m, op, sample, requires_grad):
    leaves = [m.tensor(a.copy(), requires_grad=requires_grad and d)
              for a, d in zip(leaves_of(sample), _diff(sample))]
    inp, args, kwargs = materialize(sample, m, leaves)
    return leaves, op.op(m)(inp, *args, **kwargs)


def _flat(result):
    if isinstance(result, (tuple, list)):
        return [t for r in result for t in _flat(r)]
    return [result] if hasattr(result, "dtype") else []


def _same(got, want, tol, where):
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, f"{where}: shape {g.shape} != {w.shape}"
    if w.dtype.kind in "fc":
        np.testing.assert_allclose(g, w, rtol=tol[0], atol=tol[1], equal_nan=True, err_msg=where)
    else:
        np.testing.assert_array_equal(g, w, err_msg=where)


def _base(exc_type):
    return next((b for b in _BUILTIN if issubclass(exc_type, b)), exc_type)


def _check(op, sample):
    try:
        _, want = _run(torch, op, sample, False)
    except Exception as exc:  # torch refuses this input: graphgrad must refuse it alike
        with pytest.raises(_base(type(exc))):
            _run(__import__("graphgrad"), op, sample, False)
        return
    import graphgrad as gg

    _, got = _run(gg, op, sample, False)
    wants, gots = _flat(want), _flat(got)
    assert len(gots) == len(wants), "number of outputs"
    for i, (g, w) in enumerate(zip(gots, wants)):
        want_np = w.detach().numpy(force=True)
        _same(g.detach().numpy(), want_np, tol_for(op, want_np.dtype), f"output {i}")
    if not (op.supports_grad and sample.grad and any(_diff(sample))):
        return
    t_leaves, t_out = _run(torch, op, sample, True)
    outs = float_outputs(t_out)
    if not outs or not any(o.requires_grad for o in outs):
        return
    rng = rng_for(op.name, sample.name, "special-weights")
    weights = [rng.uniform(-1.5, 1.5, tuple(o.shape)) for o in outs]
    sum(((o * torch.tensor(w, dtype=o.dtype)).sum() for o, w in zip(outs, weights))).backward()
    g_leaves, g_out = _run(gg, op, sample, True)
    g_outs = float_outputs(g_out)
    sum(((o * gg.tensor(w, dtype=o.dtype)).sum() for o, w in zip(g_outs, weights))).backward()
    for i, (a, e) in enumerate(zip(g_leaves, t_leaves)):
        if e.grad is None:
            assert a.grad is None or not np.any(a.grad.numpy()), f"leaf {i}: grad only here"
            continue
        assert a.grad is not None, f"leaf {i}: no grad"
        _same(a.grad.numpy(), e.grad.numpy(force=True), op.grad_tol, f"grad of leaf {i}")


@pytest.mark.parametrize("op", _ops())
def test_special_values(op):
    failures = []
    for sample in special_value_samples(op):
        if known_difference(f"{op.name}/{sample.name}"):
            continue
        try:
            _check(op, sample)
        except AssertionError as err:
            failures.append(f"{sample.name}: {str(err).strip().splitlines()[0]}")
        except Exception as err:  # noqa: BLE001 - reported with the sample that raised it
            failures.append(f"{sample.name}: {type(err).__name__}: {err}")
    assert not failures, "\n".join(failures)
