"""grad_fn._saved_self / _saved_other / _saved_result, compared with torch 2.13 on the same
programs (the saved-tensors-hooks tutorial reads them)."""

import pytest
import torch

import graphgrad as gg


def _program(lib):
    a = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
    b = lib.tensor([0.5, 4.0, -1.0], requires_grad=True)
    y = a * b
    e = lib.exp(a)
    return {
        "self_is_a": y.grad_fn._saved_self is a,
        "other_is_b": y.grad_fn._saved_other is b,
        "result_values": [round(v, 5) for v in e.grad_fn._saved_result.tolist()],
        "result_is_e": e.grad_fn._saved_result is e,
        "result_equal": bool(e.grad_fn._saved_result.equal(e)),
    }


def test_saved_attributes_match_torch():
    assert _program(gg) == _program(torch)


@pytest.mark.parametrize("lib", [torch, gg], ids=["torch", "graphgrad"])
def test_missing_and_freed_saved_values_raise_as_torch(lib):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    y = lib.exp(a)
    with pytest.raises(AttributeError):
        _ = y.grad_fn._saved_other  # exp saves its result only
    y.sum().backward()
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        _ = y.grad_fn._saved_result


def test_saved_values_go_through_unpack_hooks_on_each_access():
    calls = {"gg": 0, "torch": 0}

    def run(lib, key):
        def unpack(x):
            calls[key] += 1
            return x
        x = lib.ones(3, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
            y = x.pow(2)
        _ = y.grad_fn._saved_self
        _ = y.grad_fn._saved_self
    run(gg, "gg")
    run(torch, "torch")
    assert calls["gg"] == calls["torch"] == 2
