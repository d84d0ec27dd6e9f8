"""The autograd diagnostics on realistic mistakes: a saved activation changed in place, a tensor
carried across loop iterations, a NaN from log(0) under anomaly mode.

Each program first runs on torch to show that torch rejects it with the same exception type;
then graphgrad's message must name what torch's does not: the lines involved and a fix.
"""

import math
import warnings

import numpy as np
import pytest
import torch

import graphgrad as gg
from graphgrad.autograd.errors import (
    AnomalyError,
    AutogradError,
    GraphFreedError,
    SavedTensorModifiedError,
)


def _raised(prog, m):
    with pytest.raises(Exception) as info:
        prog(m)
    return info.value


def _same_type(prog):
    """Both raise, and graphgrad's error is an instance of what torch raised."""
    expected = _raised(prog, torch)
    actual = _raised(prog, gg)
    assert isinstance(actual, type(expected))
    return actual


def relu_on_saved_activation(m):
    x = m.tensor([[-1.0, 2.0, 0.5]], requires_grad=True)
    w = m.tensor([[1.0], [-2.0], [3.0]], requires_grad=True)
    h = (x * 2).sigmoid()  # sigmoid saves its output
    h.relu_()  # LINE: relu_
    loss = (h @ w).sum()
    loss.backward()


def test_relu_on_saved_activation():
    err = _same_type(relu_on_saved_activation)
    assert isinstance(err, SavedTensorModifiedError) and isinstance(err, AutogradError)
    msg = str(err)
    # torch's wording first, then the node, both versions and the line that changed the value
    assert msg.startswith("one of the variables needed for gradient computation has been "
                          "modified by an inplace operation: [torch.FloatTensor [1, 3]], which "
                          "is output 0 of Sigmoid, is at version 1; expected version 0")
    assert "saved by: SigmoidBackward0" in msg
    assert "changed at: test_diagnostics.py:" in msg and "h.relu_()" in msg
    assert "(version 0 -> 1)" in msg
    assert err.op == "SigmoidBackward0" and err.shapes == [[1, 3]]
    assert "out-of-place" in err.fix


def test_relu_on_saved_activation_names_saving_line_with_sites():
    with gg.autograd.graph.capture_sites():
        err = _raised(relu_on_saved_activation, gg)
    assert "made at: test_diagnostics.py:" in str(err)
    assert "h = (x * 2).sigmoid()" in str(err)
    assert err.site is not None and err.site.function == "relu_on_saved_activation"
    assert not gg.autograd.graph.is_capture_sites_enabled()


def carried_hidden_state(m):
    """An RNN-style loop that forgets to detach the hidden state between iterations."""
    w = m.tensor([0.5, -0.3, 0.8], requires_grad=True)
    h = m.zeros(3)
    for _ in range(3):
        h = (h * w + 1).tanh()
        loss = (h * h).sum()
        loss.backward()  # LINE: backward


def test_tensor_carried_across_iterations():
    err = _same_type(carried_hidden_state)
    assert isinstance(err, GraphFreedError)
    msg = str(err)
    assert msg.startswith("Trying to backward through the graph a second time")
    assert "freed by the backward() at test_diagnostics.py:" in msg
    assert "loss.backward()" in msg
    assert "carried over from an earlier iteration" in msg
    assert "shape [3]" in msg
    # the suggestion puts .detach() first, before retain_graph=True
    assert err.fix.index(".detach()") < err.fix.index("retain_graph=True")


def test_carried_tensor_fixed_by_detach_matches_torch():
    def prog(m):
        w = m.tensor([0.5, -0.3, 0.8], requires_grad=True)
        h = m.zeros(3)
        for _ in range(3):
            h = (h * w + 1).tanh()
            (h * h).sum().backward()
            h = h.detach()
        return w.grad.numpy()

    np.testing.assert_allclose(prog(gg), prog(torch), rtol=1e-6)


def test_plain_second_backward_is_not_called_carried_over():
    def prog(m):
        w = m.tensor([1.0, 2.0], requires_grad=True)
        loss = (w * w).sum()
        loss.backward()
        loss.backward()

    err = _same_type(prog)
    assert isinstance(err, GraphFreedError)
    assert "carried over" not in str(err)
    assert "retain_graph=True" in err.fix


def nan_from_log_zero(m):
    x = m.tensor([0.0, 1.0, 2.0], requires_grad=True)
    y = x.log() * x  # x*log(x) at 0: forward 0*-inf = nan, gradient nan too
    z = m.where(x > 0, y, m.zeros_like(y))
    z.sum().backward()


def test_anomaly_nan_from_log_zero():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.autograd.detect_anomaly():
            expected = _raised(nan_from_log_zero, torch)
        with gg.autograd.detect_anomaly():
            actual = _raised(nan_from_log_zero, gg)
    assert type(expected) is RuntimeError and isinstance(actual, AnomalyError)
    # torch names the node and the output that produced nan; so do we, with the same sentence
    node = str(expected).split("'")[1]
    assert str(actual).splitlines()[0] == str(expected).splitlines()[0]
    assert "y = x.log() * x" in str(actual)
    texts = [str(w.message) for w in caught]
    assert any(t.startswith(f"Error detected in {node}. Traceback of forward call") and
               "y = x.log() * x" in t for t in texts)
    assert not gg.autograd.is_anomaly_enabled()


def test_without_anomaly_mode_nan_passes_silently_as_in_torch():
    def prog(m):
        x = m.tensor([0.0, 1.0], requires_grad=True)
        m.where(x > 0, x.log() * x, m.zeros(2)).sum().backward()
        return x.grad.numpy()

    a, e = prog(gg), prog(torch)
    assert math.isnan(a[0]) and math.isnan(e[0])
    np.testing.assert_allclose(a[1:], e[1:])


def test_set_detect_anomaly_function_and_context():
    gg.autograd.set_detect_anomaly(True)
    try:
        assert gg.autograd.is_anomaly_enabled() and gg.autograd.is_anomaly_check_nan_enabled()
    finally:
        gg.autograd.set_detect_anomaly(False)
    assert not gg.autograd.is_anomaly_enabled()
    with gg.autograd.set_detect_anomaly(True, check_nan=False):
        assert not gg.autograd.is_anomaly_check_nan_enabled()
        x = gg.tensor([0.0], requires_grad=True)
        (x.log() * 0).sum().backward()  # check_nan off: no error
        assert math.isnan(x.grad.item())
    assert not gg.autograd.is_anomaly_enabled() and gg.autograd.is_anomaly_check_nan_enabled()


def test_detect_anomaly_as_decorator():
    @gg.autograd.detect_anomaly()
    def step():
        x = gg.tensor([0.0], requires_grad=True)
        x.sqrt().sum().backward()  # d sqrt at 0 = inf, not nan: no error

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        step()
    assert not gg.autograd.is_anomaly_enabled()


@pytest.mark.parametrize("name,fn", [
    ("smooth", lambda t: (t * t * t).sin()),
    # the first gradient uses a detached factor, so its own derivative is wrong
    ("detached", lambda t: t * t.detach() * t.detach()),
])
def test_gradgradcheck_verdicts_match_torch(name, fn):
    values = np.random.default_rng(3).standard_normal(4)
    verdicts = []
    for m in (torch, gg):
        x = m.tensor(values, dtype=m.float64, requires_grad=True)
        verdicts.append(m.autograd.gradgradcheck(fn, (x,), raise_exception=False))
    assert verdicts[0] == verdicts[1] == (name == "smooth")


def test_gradgradcheck_raises_gradcheck_error():
    x = gg.randn(3, dtype=gg.float64, requires_grad=True)
    with pytest.raises(gg.autograd.GradcheckError):
        gg.autograd.gradgradcheck(lambda t: t * t.detach() * t.detach(), (x,))
