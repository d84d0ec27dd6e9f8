"""autograd.grad compared with torch: return type, no .grad side effects, unused and non-grad
inputs, non-leaf inputs, several outputs, grad_outputs, retain_graph, materialize_grads and
higher order derivatives through create_graph.
"""

import importlib.util
import math
import pathlib

import pytest

_spec = importlib.util.spec_from_file_location(
    "_gg_test_helpers", pathlib.Path(__file__).parent / "_helpers.py"
)
h = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(h)

same = h.same
raises_like = h.raises_like


def pair(m):
    a = m.tensor([0.5, -1.0, 2.0], requires_grad=True)
    b = m.tensor([1.5, 0.25, -0.75], requires_grad=True)
    return a, b


def test_returns_tuple_and_leaves_grad_alone():
    def prog(m):
        a, b = pair(m)
        out = m.autograd.grad((a * b).sum(), [a, b])
        return type(out), out, a.grad, b.grad, [g.requires_grad for g in out]

    same(prog)


def test_single_tensor_input_and_output():
    def prog(m):
        a, _ = pair(m)
        out = m.autograd.grad((a.exp()).sum(), a)
        return type(out), len(out), out[0]

    same(prog)


def test_tuple_of_inputs_keyword_arguments():
    def prog(m):
        a, b = pair(m)
        return m.autograd.grad(outputs=(a * b * b).sum(), inputs=(a, b))

    same(prog)


def test_unused_input_raises():
    def prog(m):
        a, b = pair(m)
        m.autograd.grad((a * 2).sum(), [a, b])

    raises_like(prog, "appears to not have been used in the graph", "allow_unused=True")


def test_unused_input_with_allow_unused_gives_none():
    def prog(m):
        a, b = pair(m)
        return m.autograd.grad((a * 2).sum(), [a, b], allow_unused=True)

    same(prog)


def test_materialize_grads_gives_zeros():
    def prog(m):
        a, b = pair(m)
        return m.autograd.grad((a * 2).sum(), [a, b], materialize_grads=True)

    same(prog)


def test_materialize_grads_with_allow_unused_false_raises():
    def prog(m):
        a, b = pair(m)
        m.autograd.grad((a * 2).sum(), [a, b], allow_unused=False, materialize_grads=True)

    raises_like(prog, "allow_unused")


def test_input_not_requiring_grad_raises():
    def prog(m):
        a, _ = pair(m)
        c = m.tensor([1.0, 2.0, 3.0])
        m.autograd.grad((a * c).sum(), [a, c])

    raises_like(prog, "does not require grad")


def test_output_not_requiring_grad_raises():
    def prog(m):
        a, _ = pair(m)
        m.autograd.grad(m.ones(3).sum(), [a])

    raises_like(prog, "does not require grad")


def test_non_scalar_output_without_grad_outputs_raises():
    def prog(m):
        a, _ = pair(m)
        m.autograd.grad(a * 2, [a])

    raises_like(prog, "grad can be implicitly created only for scalar outputs")


def test_non_leaf_input():
    def prog(m):
        a, b = pair(m)
        hid = a * b
        out = (hid.sin() * a).sum()
        g_hid, g_a = m.autograd.grad(out, [hid, a])
        return g_hid, g_a, a.grad

    same(prog)


def test_multiple_outputs_sum_their_gradients():
    def prog(m):
        a, b = pair(m)
        return m.autograd.grad([(a * b).sum(), (a * a).sum()], [a, b])

    same(prog)


def test_grad_outputs_for_non_scalar_output():
    def prog(m):
        a, b = pair(m)
        y = a * b
        return m.autograd.grad(y, [a, b], grad_outputs=m.tensor([1.0, 2.0, -3.0]))

    same(prog)


def test_grad_outputs_list_with_none_for_scalar():
    def prog(m):
        a, _ = pair(m)
        return m.autograd.grad(
            [(a * 2).sum(), a * a], a, grad_outputs=[None, m.tensor([1.0, 0.0, 2.0])]
        )

    same(prog)


def test_grad_outputs_none_for_non_scalar_raises():
    def prog(m):
        a, _ = pair(m)
        m.autograd.grad([a * 2], a, grad_outputs=[None])

    raises_like(prog, "grad can be implicitly created only for scalar outputs")


def test_grad_outputs_shape_mismatch_raises():
    def prog(m):
        a, _ = pair(m)
        m.autograd.grad(a * 2, a, grad_outputs=m.ones(2))

    raises_like(prog, "shape")


def test_grad_outputs_scaling_a_scalar_output():
    def prog(m):
        a, _ = pair(m)
        return m.autograd.grad((a * a).sum(), a, grad_outputs=m.tensor(3.0))

    same(prog)


def test_second_call_without_retain_graph_raises():
    def prog(m):
        a, _ = pair(m)
        y = (a * a).sum()
        m.autograd.grad(y, a)
        m.autograd.grad(y, a)

    raises_like(prog, "Trying to backward through the graph a second time")


def test_retain_graph_allows_second_call():
    def prog(m):
        a, _ = pair(m)
        y = (a * a).sum()
        first = m.autograd.grad(y, a, retain_graph=True)
        second = m.autograd.grad(y, a)
        return first, second, a.grad

    same(prog)


def test_grad_then_backward_with_retain_graph():
    def prog(m):
        a, _ = pair(m)
        y = (a.exp() * a).sum()
        (g,) = m.autograd.grad(y, a, retain_graph=True)
        y.backward()
        return g, a.grad

    same(prog)


def test_create_graph_result_requires_grad():
    def prog(m):
        a, _ = pair(m)
        (g,) = m.autograd.grad((a**3).sum(), a, create_graph=True)
        (g2,) = m.autograd.grad((a**3).sum(), a)
        return g.requires_grad, h.fn(g) is not None, g2.requires_grad, h.fn(g2)

    same(prog)


@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_higher_order_derivatives_of_x_to_the_fifth(order):
    def prog(m):
        x = m.tensor([0.5, -1.25, 2.0], requires_grad=True)
        y = x**5
        out = []
        for _ in range(order):
            (y,) = m.autograd.grad(y.sum(), x, create_graph=True)
            out.append(y)
        return out

    same(prog)


@pytest.mark.parametrize(
    "expr",
    ["sin_times_x", "exp", "tanh", "log", "sigmoid", "div", "sqrt"],
)
def test_second_derivative(expr):
    funcs = {
        "sin_times_x": lambda m, x: m.sin(x) * x,
        "exp": lambda m, x: m.exp(x * 2),
        "tanh": lambda m, x: m.tanh(x),
        "log": lambda m, x: m.log(x),
        "sigmoid": lambda m, x: m.sigmoid(x),
        "div": lambda m, x: 1 / (x + 2),
        "sqrt": lambda m, x: m.sqrt(x),
    }

    def prog(m):
        x = m.tensor([0.3, 1.2, 2.5], requires_grad=True)
        (g,) = m.autograd.grad(funcs[expr](m, x).sum(), x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x)
        return g, gg

    same(prog)


def test_mixed_partials_of_exp_xy():
    def prog(m):
        x = m.tensor(0.7, requires_grad=True)
        y = m.tensor(-0.4, requires_grad=True)
        f = m.exp(x * y)
        gx, gy = m.autograd.grad(f, [x, y], create_graph=True)
        dxx, dxy = m.autograd.grad(gx, [x, y], retain_graph=True)
        dyx, dyy = m.autograd.grad(gy, [x, y])
        return gx, gy, dxx, dxy, dyx, dyy

    expected, _ = same(prog)
    x, y = 0.7, -0.4
    assert abs(expected[3].item() - math.exp(x * y) * (1 + x * y)) < 1e-5


def test_hessian_vector_product_with_matmul():
    def prog(m):
        w = m.tensor(h.data((3, 3)), requires_grad=True)
        v = m.tensor(h.data((3,), seed=3))
        x = m.tensor(h.data((3,), seed=4), requires_grad=True)
        f = ((w @ x).tanh() ** 2).sum()
        (gx,) = m.autograd.grad(f, x, create_graph=True)
        hv = m.autograd.grad((gx * v).sum(), [x, w])
        return gx, hv

    same(prog)


def test_gradient_penalty_style_backward_through_grad():
    def prog(m):
        w = m.tensor([0.5, -1.0], requires_grad=True)
        x = m.tensor([1.0, 2.0], requires_grad=True)
        out = ((w * x).sin()).sum()
        (gx,) = m.autograd.grad(out, x, create_graph=True)
        penalty = (gx**2).sum()
        penalty.backward()
        return gx, w.grad, x.grad

    same(prog)
