"""detect_nonfinite: the first op that made NaN/Inf out of finite inputs, forward or
backward, named with its line, input condition and the ancestors whose magnitudes grew."""

import inspect

import pytest

import graphgrad as torch
from graphgrad.autograd import NonFiniteError, detect_nonfinite
from graphgrad.ops import OPS, _dispatch


def _lineno(marker):
    for i, text in enumerate(inspect.getsource(inspect.getmodule(_lineno)).splitlines(), 1):
        if f"# <{marker}>" in text:
            return i
    raise AssertionError(marker)


def test_log_of_zero():
    x = torch.tensor([1.0, 0.0, 0.0, 0.0, 2.0], requires_grad=True)
    with pytest.raises(NonFiniteError) as e, detect_nonfinite():
        torch.log(x)  # <log>
    assert e.value.op == "log" and e.value.phase == "forward"
    assert e.value.condition == "log: 3 inputs were 0.0, min 0.0"
    assert e.value.site.lineno == _lineno("log")
    assert isinstance(e.value, RuntimeError)


def test_exp_overflow_names_the_growing_chain():
    w = torch.tensor([3.0], requires_grad=True)
    with pytest.raises(NonFiniteError) as e, detect_nonfinite():
        h = w * 10
        h = h * 9
        h = h * 3
        torch.exp(h)
    assert e.value.condition == "exp: max input 810.0"
    assert [round(m) for _, m, _ in e.value.chain] == [810, 270, 30]


def test_zero_over_zero_in_a_custom_loss():
    def my_loss(p, t):
        return ((p - t) / (p - t)).sum()  # <div>
    with pytest.raises(NonFiniteError) as e, detect_nonfinite():
        my_loss(torch.zeros(3, requires_grad=True), torch.zeros(3))
    assert e.value.op == "div" and "0/0" in e.value.condition
    assert e.value.site.lineno == _lineno("div")


def test_nan_first_appearing_in_backward():
    s = torch.tensor([0.0, 4.0], requires_grad=True)
    with pytest.raises(NonFiniteError) as e, detect_nonfinite():
        y = torch.sqrt(s).sum()  # <sqrt>
        y.backward()
    assert e.value.phase == "backward" and e.value.op == "sqrt"
    assert "1 saved value was 0.0" in e.value.condition
    assert e.value.site.lineno == _lineno("sqrt")


def test_values_non_finite_from_outside_pass_and_hooks_are_restored():
    rules = {op: op.vjp for op in OPS.values()}
    prof = _dispatch._profiler
    with detect_nonfinite():
        q = torch.tensor([float("nan")]) + 1  # not the origin: its input already was NaN
    assert q.isnan().all()
    assert _dispatch._profiler is prof and all(op.vjp is rules[op] for op in OPS.values())


def test_a_normal_training_step_raises_nothing_and_the_decorator_form():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))

    @detect_nonfinite
    def step():
        loss = torch.nn.functional.cross_entropy(model(torch.randn(6, 4)),
                                                 torch.tensor([0, 1, 0, 1, 0, 1]))
        loss.backward()
        return loss

    assert torch.isfinite(step())
