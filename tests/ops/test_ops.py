"""Generic op tests over OP_DB, with torch as the oracle: forward values, shapes, dtypes and
requires_grad; gradients (parity with torch, second derivatives, graphgrad's gradcheck and an
independent central difference); error types; and coverage of every OpDef in graphgrad.ops.OPS.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from opinfo import OP_DB
from opinfo.core import float_outputs, leaves_of, materialize, rng_for, tol_for

EPS = 1e-6
NUMERIC_RTOL, NUMERIC_ATOL = 1e-3, 1e-5


def _sample_id(op, dtype_name, i, sample):
    base = f"{op.name}-{dtype_name}-{i}"
    return f"{base}-{sample.name}" if sample.name else base


def _all_samples(op):
    """(dtype name, index, sample) for every forward sample of ``op``; made once per op."""
    if op.name not in _SAMPLES:
        found = []
        for dtype in op.dtypes:
            name = np.dtype(dtype).name
            found += [(name, i, s) for i, s in enumerate(op.sample_inputs(dtype))]
        found += [("mixed", i, s) for i, s in enumerate(op.mixed_inputs())]
        _SAMPLES[op.name] = found
    return _SAMPLES[op.name]


_SAMPLES: dict = {}


def _diff_mask(sample):
    return [a.dtype.kind == "f" and i not in sample.nondiff
            for i, a in enumerate(leaves_of(sample))]


def _grad_eligible(op, dtype_name, sample):
    return (op.supports_grad and sample.grad and dtype_name in ("float64", "mixed")
            and any(_diff_mask(sample)))


def _numeric_eligible(op, dtype_name, sample):
    """Finite differences at smooth float64 points, for each op's main spelling only."""
    if op.variant or not (_grad_eligible(op, dtype_name, sample) and sample.gradcheck):
        return False
    return all(a.dtype == np.float64 for a, d in zip(leaves_of(sample), _diff_mask(sample)) if d)


def _gradcheck_eligible(op, dtype_name, sample):
    # torch's gradcheck, whose signature graphgrad's copies, rejects size-0 inputs
    return _numeric_eligible(op, dtype_name, sample) and all(
        a.size for a, d in zip(leaves_of(sample), _diff_mask(sample)) if d)


def _params(select=lambda op, dtype_name, sample: True):
    out = []
    for op in OP_DB:
        for dtype_name, i, s in _all_samples(op):
            if select(op, dtype_name, s):
                out.append(pytest.param(op, s, id=_sample_id(op, dtype_name, i, s)))
    return out


FORWARD = _params()
GRAD = _params(_grad_eligible)
NUMERIC = _params(_numeric_eligible)
GRADCHECK = _params(_gradcheck_eligible)
GRADGRAD = [p for p in NUMERIC if p.values[0].supports_gradgrad]
ERRORS = [pytest.param(op, e, id=f"{op.name}-{i}-{e.name}" if e.name else f"{op.name}-{i}")
          for op in OP_DB for i, e in enumerate(op.error_inputs())]


# --- helpers -------------------------------------------------------------------------------

def _leaf_tensors(m, sample, requires_grad=False):
    mask = _diff_mask(sample)
    return [m.tensor(a.copy(), requires_grad=requires_grad and d)
            for a, d in zip(leaves_of(sample), mask)]


def _call(m, op, sample, leaves):
    inp, args, kwargs = materialize(sample, m, leaves)
    return op.op(m)(inp, *args, **kwargs)


def _tensor_outputs(result):
    if isinstance(result, (tuple, list)):
        return [t for r in result for t in _tensor_outputs(r)]
    return [result]


def _assert_same(actual, expected, op, where="result"):
    """Same type structure, shape, dtype and values (within the op's tolerance)."""
    if isinstance(expected, torch.Tensor):
        assert not isinstance(actual, (tuple, list)), f"{where}: got a {type(actual).__name__}"
        assert str(actual.dtype) == str(expected.dtype), f"{where}: dtype"
        assert tuple(actual.shape) == tuple(expected.shape), f"{where}: shape"
        got, want = np.asarray(actual.numpy()), expected.numpy()
        assert got.dtype == want.dtype, f"{where}: numpy dtype"
        assert got.shape == want.shape, f"{where}: numpy shape"
        if want.dtype.kind == "f":
            rtol, atol = tol_for(op, want.dtype)
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True,
                                       err_msg=where)
        else:
            np.testing.assert_array_equal(got, want, err_msg=where)
        return
    assert isinstance(expected, (tuple, list)), f"unexpected torch result {type(expected)}"
    assert isinstance(actual, (tuple, list)), f"{where}: expected a tuple, got {type(actual)}"
    assert len(actual) == len(expected), f"{where}: length"
    for i, (a, e) in enumerate(zip(actual, expected)):
        _assert_same(a, e, op, f"{where}[{i}]")
    for field in ("values", "indices"):
        if hasattr(expected, field):
            assert hasattr(actual, field), f"{where}: no .{field}"
            _assert_same(getattr(actual, field), getattr(expected, field), op, f"{where}.{field}")


def _weights(op, sample, outputs):
    """Fixed random weights, one array per floating output, in that output's dtype."""
    rng = rng_for(op.name, sample.name, "weights")
    return [rng.uniform(-1.5, 1.5, tuple(o.shape)).astype(str(o.dtype).removeprefix("torch."))
            for o in outputs]


def _weighted_sum(m, outputs, weights):
    loss = None
    for o, w in zip(outputs, weights):
        term = (o * m.tensor(w)).sum()
        loss = term if loss is None else loss + term
    return loss


def _backward(m, op, sample, weights=None):
    """Grads of the weighted output sum w.r.t. each leaf (None for non-differentiable leaves)."""
    leaves = _leaf_tensors(m, sample, requires_grad=True)
    outputs = float_outputs(_call(m, op, sample, leaves))
    if weights is None:
        weights = _weights(op, sample, outputs)
    assert len(outputs) == len(weights), "number of floating-point outputs"
    for o, w in zip(outputs, weights):
        assert tuple(o.shape) == w.shape, "output shape"
    _weighted_sum(m, outputs, weights).backward()
    return [leaf.grad for leaf in leaves], weights


# --- tests ---------------------------------------------------------------------------------

@pytest.mark.parametrize("op,sample", FORWARD)
def test_forward(gg, op, sample):
    """Values, shapes and dtypes; for float samples also which outputs require grad."""
    expected = _call(torch, op, sample, _leaf_tensors(torch, sample))
    actual = _call(gg, op, sample, _leaf_tensors(gg, sample))
    _assert_same(actual, expected, op)
    if op.requires_grad_parity and any(_diff_mask(sample)):
        # outputs require grad exactly when torch's do (never for bool/int results)
        want = _tensor_outputs(_call(torch, op, sample, _leaf_tensors(torch, sample, True)))
        got = _tensor_outputs(_call(gg, op, sample, _leaf_tensors(gg, sample, True)))
        assert [bool(t.requires_grad) for t in got] == [t.requires_grad for t in want], \
            "requires_grad of the outputs"


@pytest.mark.parametrize("op,sample", GRAD)
def test_grad(gg, op, sample):
    """Grads of a fixed random-weight sum of the outputs match torch's, leaf by leaf."""
    expected, weights = _backward(torch, op, sample)
    actual, _ = _backward(gg, op, sample, weights)
    _assert_same_grads(actual, expected, _grad_tol(op, sample))


def _grad_tol(op, sample):
    """The op's float64 tolerance, or a float32 one when any input is float32."""
    if any(a.dtype == np.float32 for a in leaves_of(sample)):
        return 1e-4, 1e-5
    return op.grad_tol


def _assert_same_grads(actual, expected, tol, none_is_zero=False):
    """Leaf by leaf: the same dtype, shape and values, and None where torch gives None; with
    ``none_is_zero`` (second derivatives) a None on one side may be all zeros on the other."""
    for i, (a, e) in enumerate(zip(actual, expected)):
        if none_is_zero and (a is None) != (e is None):
            present = a if e is None else e
            np.testing.assert_array_equal(_grad_numpy(present), 0,
                                          err_msg=f"leaf {i}: no grad on one side only")
            continue
        if e is None:
            assert a is None, f"leaf {i}: torch gives no grad, graphgrad gives one"
            continue
        assert a is not None, f"leaf {i}: no grad"
        assert str(a.dtype) == str(e.dtype), f"leaf {i}: grad dtype"
        assert tuple(a.shape) == tuple(e.shape), f"leaf {i}: grad shape"
        np.testing.assert_allclose(_grad_numpy(a), _grad_numpy(e), rtol=tol[0], atol=tol[1],
                                   err_msg=f"grad of leaf {i}")


def _grad_numpy(t):
    # torch may hand back a ZeroTensor (abs's second derivative), which needs force=True
    return t.numpy(force=True) if isinstance(t, torch.Tensor) else t.numpy()


def _double_backward(m, op, sample, weights=None):
    """Grads of <w2, d<w1, out**2>/dx> w.r.t. the leaves; first grads taken with create_graph."""
    leaves = _leaf_tensors(m, sample, requires_grad=True)
    diff = [t for t, d in zip(leaves, _diff_mask(sample)) if d]
    outputs = float_outputs(_call(m, op, sample, leaves))
    if weights is None:
        weights = _weights(op, sample, outputs)
        rng = rng_for(op.name, sample.name, "weights2")
        weights.append([rng.uniform(-1.5, 1.5, tuple(t.shape)) for t in diff])
    *w1, w2 = weights
    # squared outputs: the first grads then depend on the outputs, so the second backward also
    # differentiates each rule w.r.t. its incoming gradient (e.g. for linear ops)
    first = m.autograd.grad(_weighted_sum(m, [o * o for o in outputs], w1), diff,
                            create_graph=True)
    live = [(g, w) for g, w in zip(first, w2) if g.requires_grad]
    if live:
        _weighted_sum(m, [g for g, _ in live], [w for _, w in live]).backward()
    return [t.grad for t in diff], weights


@pytest.mark.parametrize("op,sample", GRADGRAD)
def test_gradgrad(gg, op, sample):
    """Second derivatives match torch's (first grads taken with create_graph=True)."""
    expected, weights = _double_backward(torch, op, sample)
    actual, _ = _double_backward(gg, op, sample, weights)
    _assert_same_grads(actual, expected, _grad_tol(op, sample), none_is_zero=True)


def _as_function(gg, op, sample):
    """(fn, inputs): the op as a function of its differentiable leaves, as gradcheck takes it."""
    leaves = _leaf_tensors(gg, sample, requires_grad=True)
    diff = [i for i, d in enumerate(_diff_mask(sample)) if d]

    def fn(*xs):
        args = list(leaves)
        for i, x in zip(diff, xs):
            args[i] = x
        return tuple(float_outputs(_call(gg, op, sample, args)))

    return fn, tuple(leaves[i] for i in diff)


@pytest.mark.parametrize("op,sample", GRADCHECK)
def test_gradcheck(gg, op, sample):
    """graphgrad.autograd.gradcheck, called as torch's, passes at smooth float64 points."""
    fn, inputs = _as_function(gg, op, sample)
    assert gg.autograd.gradcheck(fn, inputs, eps=EPS, atol=NUMERIC_ATOL,
                                 rtol=NUMERIC_RTOL) is True


# Full Jacobians of the first gradient cost a backward per output element and two forwards
# per input element; past this many elements the directional (fast) mode is used.
_FULL_GRADGRADCHECK_ELEMENTS = 24


@pytest.mark.parametrize("op,sample", GRADCHECK)
def test_gradgradcheck(gg, op, sample):
    """graphgrad.autograd.gradgradcheck passes at smooth float64 points: second derivatives
    against finite differences of the first gradients (taken with create_graph=True)."""
    fn, inputs = _as_function(gg, op, sample)
    size = sum(x.numel() for x in inputs) + sum(o.numel() for o in fn(*inputs))
    assert gg.autograd.gradgradcheck(fn, inputs, eps=EPS, atol=NUMERIC_ATOL, rtol=NUMERIC_RTOL,
                                     fast_mode=size > _FULL_GRADGRADCHECK_ELEMENTS) is True


@pytest.mark.parametrize("op,sample", NUMERIC)
def test_numerical_grad(gg, op, sample):
    """Central differences of the weighted output sum, perturbing the NumPy inputs directly."""
    analytic, weights = _backward(gg, op, sample)
    arrays = [a.copy() for a in leaves_of(sample)]

    def value():
        outs = float_outputs(_call(gg, op, sample, [gg.tensor(a) for a in arrays]))
        return sum(float(np.sum(o.numpy() * w)) for o, w in zip(outs, weights))

    for i, d in enumerate(_diff_mask(sample)):
        if not d:
            continue
        numeric = np.zeros_like(arrays[i])
        for j in np.ndindex(arrays[i].shape):
            orig = arrays[i][j]
            arrays[i][j] = orig + EPS
            plus = value()
            arrays[i][j] = orig - EPS
            minus = value()
            arrays[i][j] = orig
            numeric[j] = (plus - minus) / (2 * EPS)
        assert analytic[i] is not None, f"leaf {i}: no grad"
        np.testing.assert_allclose(analytic[i].numpy(), numeric, rtol=NUMERIC_RTOL,
                                   atol=NUMERIC_ATOL, err_msg=f"leaf {i}: analytic vs numeric")


@pytest.mark.parametrize("op,err", ERRORS)
def test_error(gg, op, err):
    for m in (torch, gg):
        leaves = _leaf_tensors(m, err.sample)
        inp, args, kwargs = materialize(err.sample, m, leaves)
        fn = op.op(m)
        with pytest.raises(err.error_type):
            fn(inp, *args, **kwargs)


def test_op_table_coverage(gg, op_recorder):
    """Every OpDef's forward, and every differentiable OpDef's vjp, is reached by some sample.

    The sweep runs all samples itself (forward in every dtype, backward and double backward where
    the tests above do), so the result does not depend on test order or on how pytest-xdist
    splits the other tests.
    """
    raised = []
    for op in OP_DB:
        for dtype_name, i, s in _all_samples(op):
            sid = _sample_id(op, dtype_name, i, s)
            try:
                _call(gg, op, s, _leaf_tensors(gg, s))
                if _grad_eligible(op, dtype_name, s):
                    _backward(gg, op, s)
                if _numeric_eligible(op, dtype_name, s):
                    _double_backward(gg, op, s)
            except Exception as exc:  # reported by the per-sample tests; the sweep goes on
                raised.append(f"{sid}: {type(exc).__name__}")
    table = op_recorder.table
    no_forward = sorted(k for k, o in table.items()
                        if o.forward is not None and k not in op_recorder.forward_hits)
    no_vjp = sorted(k for k, o in table.items()
                    if o.vjp is not None and k not in op_recorder.vjp_hits)
    msg = []
    if no_forward:
        msg.append(f"{len(no_forward)} OpDefs whose forward no sample reaches: {no_forward}")
    if no_vjp:
        msg.append(f"{len(no_vjp)} differentiable OpDefs whose vjp no sample reaches: {no_vjp}")
    if msg and raised:
        msg.append(f"({len(raised)} samples raised, e.g. {raised[:10]})")
    assert not msg, "\n".join(msg)
