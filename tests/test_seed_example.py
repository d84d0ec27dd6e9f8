"""The seed example of the project, run with torch and graphgrad side by side.

loss = (x * w + b - 10) ** 2: the grad_fn repr, the printed gradients, repr(loss) and the
next_functions chain down to AccumulateGrad must all look like torch's.
"""

import importlib.util
import pathlib
import re

_spec = importlib.util.spec_from_file_location(
    "_gg_test_helpers", pathlib.Path(__file__).parent / "autograd" / "_helpers.py"
)
h = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(h)


def seed(m):
    x = m.tensor(2.0)
    w = m.tensor(3.0, requires_grad=True)
    b = m.tensor(1.0, requires_grad=True)
    loss = (x * w + b - 10) ** 2
    return x, w, b, loss


def test_grad_fn_repr():
    for m in h.MODULES:
        *_, loss = seed(m)
        assert re.fullmatch(r"<PowBackward0 object at 0x[0-9a-fA-F]+>", repr(loss.grad_fn)), (
            m.__name__, repr(loss.grad_fn))


def test_loss_repr():
    reprs = [repr(seed(m)[3]) for m in h.MODULES]
    assert reprs[1] == reprs[0]


def test_printed_gradients():
    def prog(m):
        _, w, b, loss = seed(m)
        loss.backward()
        return h.stdout_of(lambda: print(w.grad, b.grad))

    expected, actual = h.same(prog)
    assert expected == "tensor(-12.) tensor(-6.)\n"
    assert actual == expected


def test_values_and_grads():
    def prog(m):
        x, w, b, loss = seed(m)
        loss.backward()
        return loss, w.grad, b.grad, x.grad, w.grad.requires_grad, loss.requires_grad

    h.same(prog)


def test_next_functions_chain():
    def prog(m):
        _, w, b, loss = seed(m)
        return h.graph(loss.grad_fn, leaves=(w, b))

    expected, _ = h.same(prog)
    # Sanity: the oracle's chain really ends in AccumulateGrad nodes holding w and b.
    assert "AccumulateGrad" in repr(expected)


def test_accumulate_grad_variable_is_the_leaf():
    def prog(m):
        _, w, b, loss = seed(m)
        sub = loss.grad_fn.next_functions[0][0]
        add = sub.next_functions[0][0]
        mul = add.next_functions[0][0]
        acc_b = add.next_functions[1][0]
        acc_w = mul.next_functions[1][0]
        return (
            h.fn(loss), type(sub).__name__, type(add).__name__, type(mul).__name__,
            sub.next_functions[1], mul.next_functions[0],
            type(acc_w).__name__, acc_w.variable is w, acc_b.variable is b,
            type(loss.grad_fn.next_functions), type(loss.grad_fn.next_functions[0]),
        )

    h.same(prog)


def test_loss_value_printed():
    def prog(m):
        *_, loss = seed(m)
        return h.stdout_of(lambda: print(loss))

    h.same(prog)
