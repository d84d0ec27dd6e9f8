"""The autograd graph and engine, compared with torch: requires_grad/is_leaf, grad_fn names,
.grad accumulation, retain_grad, detach, Tensor.backward and its arguments, higher order
derivatives, the iterative engine on deep graphs, and gradients of broadcasting ops.
"""

import importlib.util
import pathlib
import threading

import pytest

_spec = importlib.util.spec_from_file_location(
    "_gg_test_helpers", pathlib.Path(__file__).parent / "_helpers.py"
)
h = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(h)

same = h.same
raises_like = h.raises_like

# torch warns that backward(create_graph=True) makes a parameter/gradient reference cycle.
create_graph_warning = pytest.mark.filterwarnings(
    "ignore:Using backward\\(\\) with create_graph=True"
)


def leaf(m, shape=(3,), seed=0, positive=False):
    return m.tensor(h.data(shape, seed, positive), requires_grad=True)


# --------------------------------------------------------------------------- requires_grad, leaves


def test_requires_grad_and_is_leaf():
    def prog(m):
        a = m.tensor([1.0, 2.0])
        w = m.tensor([1.0, 2.0], requires_grad=True)
        y = w * a
        z = a * 2
        return [(t.requires_grad, t.is_leaf, h.fn(t)) for t in (a, w, y, z)]

    same(prog)


def test_result_requires_grad_if_any_input_does():
    def prog(m):
        a = m.tensor([1.0, 2.0])
        w = m.tensor([1.0, 2.0], requires_grad=True)
        return [t.requires_grad for t in (a + a, a + w, w + a, m.cat([a, w]), (a * w).sum())]

    same(prog)


GRAD_FN_EXPRS = {
    "add": lambda m, a, b: a + b,
    "add_scalar": lambda m, a, b: a + 1,
    "radd_scalar": lambda m, a, b: 1 + a,
    "sub": lambda m, a, b: a - b,
    "sub_scalar": lambda m, a, b: a - 1,
    "rsub_scalar": lambda m, a, b: 1 - a,
    "mul": lambda m, a, b: a * b,
    "mul_scalar": lambda m, a, b: a * 2,
    "div": lambda m, a, b: a / b,
    "div_scalar": lambda m, a, b: a / 2,
    "rdiv_scalar": lambda m, a, b: 2 / a,
    "neg": lambda m, a, b: -a,
    "pow_scalar": lambda m, a, b: a**2,
    "pow_float": lambda m, a, b: a**0.5,
    "pow_tensor": lambda m, a, b: a**b,
    "rpow_scalar": lambda m, a, b: 2**a,
    "exp": lambda m, a, b: a.exp(),
    "log": lambda m, a, b: a.log(),
    "sin": lambda m, a, b: a.sin(),
    "cos": lambda m, a, b: a.cos(),
    "tanh": lambda m, a, b: a.tanh(),
    "sigmoid": lambda m, a, b: a.sigmoid(),
    "relu": lambda m, a, b: a.relu(),
    "abs": lambda m, a, b: a.abs(),
    "sqrt": lambda m, a, b: a.sqrt(),
    "clamp": lambda m, a, b: a.clamp(0.5, 1.5),
    "sum": lambda m, a, b: a.sum(),
    "sum_dim": lambda m, a, b: a.sum(0),
    "mean": lambda m, a, b: a.mean(),
    "max": lambda m, a, b: a.max(),
    "max_dim": lambda m, a, b: a.max(0).values,
    "mm": lambda m, a, b: a.reshape(1, 3) @ b.reshape(3, 1),
    "torch_mm": lambda m, a, b: m.mm(a.reshape(1, 3), b.reshape(3, 1)),
    "dot": lambda m, a, b: a @ b,
    "mv": lambda m, a, b: a.reshape(1, 3) @ b,
    "reshape": lambda m, a, b: a.reshape(3, 1),
    "view": lambda m, a, b: a.view(1, 3),
    "flatten": lambda m, a, b: a.reshape(1, 3).flatten(),
    "unsqueeze": lambda m, a, b: a.unsqueeze(0),
    "squeeze_dim": lambda m, a, b: a.reshape(1, 3).squeeze(0),
    "transpose": lambda m, a, b: a.reshape(1, 3).transpose(0, 1),
    "t": lambda m, a, b: a.reshape(1, 3).t(),
    "T": lambda m, a, b: a.reshape(1, 3).T,
    "mT": lambda m, a, b: a.reshape(1, 1, 3).mT,
    "permute": lambda m, a, b: a.reshape(1, 3).permute(1, 0),
    "expand": lambda m, a, b: a.reshape(1, 3).expand(2, 3),
    "select": lambda m, a, b: a[0],
    "slice": lambda m, a, b: a[1:],
    "index_list": lambda m, a, b: a[[0, 2]],
    "cat": lambda m, a, b: m.cat([a, b]),
    "stack": lambda m, a, b: m.stack([a, b]),
    "softmax": lambda m, a, b: a.softmax(0),
    "log_softmax": lambda m, a, b: a.log_softmax(0),
    "where": lambda m, a, b: m.where(a > 1, a, b),
    "maximum": lambda m, a, b: m.maximum(a, b),
}


@pytest.mark.parametrize("name", list(GRAD_FN_EXPRS))
def test_grad_fn_names(name):
    def prog(m):
        a = m.tensor([0.7, 1.3, 2.1], requires_grad=True)
        b = m.tensor([1.1, 0.4, 1.9], requires_grad=True)
        y = GRAD_FN_EXPRS[name](m, a, b)
        return h.fn(y), y.grad_fn.name(), y.is_leaf, y.requires_grad

    same(prog)


@pytest.mark.parametrize("name", list(GRAD_FN_EXPRS))
def test_backward_through_each_expression(name):
    def prog(m):
        a = m.tensor([0.7, 1.3, 2.1], requires_grad=True)
        b = m.tensor([1.1, 0.4, 1.9], requires_grad=True)
        y = GRAD_FN_EXPRS[name](m, a, b)
        (y * m.arange(1, y.numel() + 1, dtype=y.dtype).reshape(y.shape)).sum().backward()
        return y, a.grad, b.grad

    same(prog)


def test_no_grad_fn_without_requires_grad():
    def prog(m):
        a = m.tensor([1.0, 2.0])
        return [h.fn(t) for t in (a + a, a * 2, a.exp(), a.sum())]

    same(prog)


# --------------------------------------------------------------------------------- .grad handling


def test_grad_accumulates_across_backward_calls():
    def prog(m):
        w = m.tensor([1.0, -2.0, 3.0], requires_grad=True)
        (w * w).sum().backward()
        first = w.grad.clone()
        (w * 3).sum().backward()
        return first, w.grad, w.grad.requires_grad, w.grad.is_leaf

    same(prog)


def test_grad_is_none_before_backward_and_can_be_reset():
    def prog(m):
        w = m.tensor([1.0, 2.0], requires_grad=True)
        before = w.grad
        (w * 2).sum().backward()
        w.grad = None
        (w * 5).sum().backward()
        return before, w.grad

    same(prog)


def test_grad_dtype_and_shape_match_the_leaf():
    def prog(m):
        w = m.tensor(h.data((2, 3)), dtype=m.float64, requires_grad=True)
        (w.sum() * 2).backward()
        return w.grad, str(w.grad.dtype), tuple(w.grad.shape)

    same(prog)


def test_non_leaf_grad_is_none_and_warns():
    def prog(m):
        w = m.tensor([1.0, 2.0], requires_grad=True)
        y = w * 2
        y.sum().backward()
        grad, categories = h.warnings_of(lambda: y.grad)
        return grad, UserWarning in categories, y.retains_grad

    same(prog)


def test_retain_grad_on_non_leaf():
    def prog(m):
        w = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = w * w
        y.retain_grad()
        z = (y * 3).sum()
        z.backward()
        grad, categories = h.warnings_of(lambda: y.grad)
        return grad, categories, w.grad, y.retains_grad, w.retains_grad

    same(prog)


def test_retain_grad_accumulates():
    def prog(m):
        w = m.tensor([1.0, 2.0], requires_grad=True)
        y = w * 2
        y.retain_grad()
        z = y.sum() + (y * y).sum()
        z.backward()
        return y.grad, w.grad

    same(prog)


def test_requires_grad_underscore():
    def prog(m):
        a = m.tensor([1.0, 2.0])
        r = a.requires_grad_()
        y = (a * a).sum()
        y.backward()
        b = m.tensor([1.0], requires_grad=True).requires_grad_(False)
        return r is a, a.requires_grad, a.is_leaf, a.grad, b.requires_grad, h.fn(y)

    same(prog)


def test_requires_grad_setter_on_leaf():
    def prog(m):
        a = m.tensor([1.0, 2.0])
        a.requires_grad = True
        (a * 3).sum().backward()
        a.requires_grad = False
        return a.grad, a.requires_grad, h.fn(a * 3)

    same(prog)


@pytest.mark.parametrize("value", [False, True])
def test_setting_requires_grad_on_non_leaf_raises(value):
    def prog(m):
        w = m.tensor([1.0, 2.0], requires_grad=True)
        y = w * 2
        y.requires_grad = value

    raises_like(prog, "you can only change requires_grad flags of leaf variables")


def test_requires_grad_underscore_false_on_non_leaf_raises():
    def prog(m):
        y = m.tensor([1.0, 2.0], requires_grad=True) * 2
        y.requires_grad_(False)

    raises_like(prog, "leaf variables")


INT_REQUIRES_GRAD = {
    "tensor_kwarg": lambda m: m.tensor([1, 2], requires_grad=True),
    "requires_grad_": lambda m: m.tensor([1, 2]).requires_grad_(),
    "setter": lambda m: setattr(m.tensor([1, 2]), "requires_grad", True),
    "bool_requires_grad_": lambda m: m.tensor([True, False]).requires_grad_(),
    "zeros_int64": lambda m: m.zeros(2, dtype=m.int64, requires_grad=True),
    "arange": lambda m: m.arange(3, requires_grad=True),
    "int32_tensor": lambda m: m.tensor([1], dtype=m.int32, requires_grad=True),
}


@pytest.mark.parametrize("name", list(INT_REQUIRES_GRAD))
def test_requires_grad_on_integer_tensor_raises(name):
    raises_like(INT_REQUIRES_GRAD[name], "floating point")


def test_requires_grad_false_on_integer_tensor_is_fine():
    same(lambda m: m.tensor([1, 2]).requires_grad_(False).requires_grad)


def test_detach_shares_data():
    def prog(m):
        w = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = w * 2
        d = y.detach()
        dw = w.detach()
        dw[0] = 10.0
        return (d.requires_grad, h.fn(d), d.is_leaf, y.requires_grad, dw.requires_grad,
                w.detach().clone(), d)

    same(prog)


def test_detach_cuts_the_graph():
    def prog(m):
        w = m.tensor([1.0, 2.0], requires_grad=True)
        y = w * w
        z = (y.detach() * w).sum()
        z.backward()
        return w.grad

    same(prog)


def test_detach_underscore_on_non_leaf():
    def prog(m):
        w = m.tensor([1.0, 2.0], requires_grad=True)
        y = w * 2
        r = y.detach_()
        return r is y, y.requires_grad, y.is_leaf, h.fn(y), y

    same(prog)


# ------------------------------------------------------------------------------- in-place checks


def test_in_place_on_leaf_requiring_grad_raises():
    def prog(m):
        w = m.tensor([1.0, 2.0], requires_grad=True)
        w.add_(1)

    raises_like(prog, "a leaf Variable that requires grad is being used in an in-place operation")


def test_in_place_on_non_leaf_is_recorded():
    def prog(m):
        w = m.tensor([1.0, 2.0], requires_grad=True)
        y = w * 1
        y.add_(1)
        y.mul_(3)
        y.sum().backward()
        return h.fn(y), y, w.grad

    same(prog)


def test_modified_saved_tensor_raises_on_backward():
    def prog(m):
        w = m.tensor([1.0, 2.0], requires_grad=True)
        y = w * 1
        z = y * y
        y.mul_(2)
        z.sum().backward()

    raises_like(prog, "modified by an inplace operation")


# ---------------------------------------------------------------------------------- Tensor.backward


def test_backward_non_scalar_without_gradient_raises():
    raises_like(
        lambda m: (m.tensor([1.0, 2.0], requires_grad=True) * 2).backward(),
        "grad can be implicitly created only for scalar outputs",
    )


def test_backward_with_explicit_gradient():
    def prog(m):
        w = m.tensor(h.data((2, 3)), requires_grad=True)
        y = w * w
        y.backward(gradient=m.tensor(h.data((2, 3), seed=1)))
        return w.grad

    same(prog)


def test_backward_with_positional_gradient_on_scalar():
    def prog(m):
        w = m.tensor([1.0, 2.0], requires_grad=True)
        (w * 3).sum().backward(m.tensor(2.0))
        return w.grad

    same(prog)


@pytest.mark.parametrize("shape", [(3,), (1, 2), (2, 1)])
def test_backward_gradient_shape_mismatch_raises(shape):
    def prog(m):
        w = m.tensor([1.0, 2.0], requires_grad=True)
        (w * 2).backward(m.ones(shape))

    raises_like(prog, "shape")


def test_backward_gradient_for_scalar_with_wrong_shape_raises():
    def prog(m):
        w = m.tensor([1.0, 2.0], requires_grad=True)
        (w * 2).sum().backward(m.ones(2))

    raises_like(prog, "shape")


def test_backward_gradient_float64_for_float32_output():
    def prog(m):
        w = m.tensor([1.0, 2.0], requires_grad=True)
        (w * 2).backward(m.tensor([1.0, 3.0], dtype=m.float64))
        return w.grad

    same(prog)


def test_second_backward_through_freed_graph_raises():
    def prog(m):
        w = m.tensor([1.0, 2.0], requires_grad=True)
        y = (w * w).sum()
        y.backward()
        y.backward()

    raises_like(prog, "Trying to backward through the graph a second time")


def test_second_backward_message_starts_like_torch():
    def prog(m):
        w = m.tensor([1.0, 2.0], requires_grad=True)
        y = w.exp().sum()
        y.backward()
        y.backward()

    expected, actual = raises_like(prog)
    start = "Trying to backward through the graph a second time"
    assert str(expected.exc).startswith(start)
    assert str(actual.exc).startswith(start), str(actual.exc)


def test_retain_graph_allows_second_backward_and_accumulates():
    def prog(m):
        w = m.tensor([1.0, 2.0], requires_grad=True)
        y = (w * w).sum()
        y.backward(retain_graph=True)
        first = w.grad.clone()
        y.backward()
        return first, w.grad

    same(prog)


SAVED_NOTHING_OR_SOMETHING = {
    "add": lambda m, a, b: (a + b).sum(),
    "sub": lambda m, a, b: (a - b).sum(),
    "neg": lambda m, a, b: (-a).sum(),
    "add_scalar": lambda m, a, b: (a + 1).sum(),
    "sum": lambda m, a, b: a.sum(),
    "mean": lambda m, a, b: a.mean(),
    "reshape": lambda m, a, b: a.reshape(2, 1).sum(),
    "mul": lambda m, a, b: (a * b).sum(),
    "exp": lambda m, a, b: a.exp().sum(),
    "div": lambda m, a, b: (a / b).sum(),
}


@pytest.mark.parametrize("name", list(SAVED_NOTHING_OR_SOMETHING))
def test_backward_twice_without_retain_graph(name):
    def prog(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        b = m.tensor([3.0, 4.0], requires_grad=True)
        y = SAVED_NOTHING_OR_SOMETHING[name](m, a, b)
        y.backward()
        y.backward()
        return a.grad, b.grad

    same(prog)


def test_backward_on_tensor_not_requiring_grad_raises():
    raises_like(
        lambda m: m.ones(2).sum().backward(),
        "does not require grad and does not have a grad_fn",
    )


def test_backward_on_leaf_scalar():
    def prog(m):
        w = m.tensor(3.0, requires_grad=True)
        w.backward()
        return w.grad

    same(prog)


def test_backward_inputs_leaf_subset():
    def prog(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        b = m.tensor([3.0, 4.0], requires_grad=True)
        (a * b).sum().backward(inputs=[a])
        return a.grad, b.grad

    same(prog)


def test_backward_inputs_single_tensor():
    def prog(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        b = m.tensor([3.0, 4.0], requires_grad=True)
        (a * b).sum().backward(inputs=b)
        return a.grad, b.grad

    same(prog)


def test_backward_inputs_non_leaf():
    def prog(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        hid = a * a
        out = (hid * 3).sum()
        out.backward(inputs=[hid])
        grad, _ = h.warnings_of(lambda: hid.grad)
        return grad, a.grad

    same(prog)


def test_backward_inputs_non_leaf_and_leaf():
    def prog(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        b = m.tensor([0.5, -1.0], requires_grad=True)
        hid = a * b
        out = (hid.exp() * b).sum()
        out.backward(inputs=[hid, b])
        grad, _ = h.warnings_of(lambda: hid.grad)
        return grad, a.grad, b.grad

    same(prog)


def test_backward_inputs_unused_leaf_stays_none():
    def prog(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        b = m.tensor([3.0, 4.0], requires_grad=True)
        (a * 2).sum().backward(inputs=[b])
        return a.grad, b.grad

    same(prog)


def test_backward_empty_inputs_raises():
    def prog(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        (a * 2).sum().backward(inputs=[])

    raises_like(prog, "cannot be empty")


def test_backward_keyword_arguments():
    def prog(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        y = a * a
        y.backward(gradient=m.ones(2), retain_graph=True, create_graph=False, inputs=None)
        y.backward(m.ones(2))
        return a.grad, a.grad.requires_grad

    same(prog)


# ---------------------------------------------------------------------------- higher order


@create_graph_warning
def test_create_graph_second_derivative_of_cube():
    def prog(m):
        x = m.tensor([0.5, -1.5, 2.0], requires_grad=True)
        (x**3).sum().backward(create_graph=True)
        g = x.grad
        first = (g, g.requires_grad, h.fn(g) is not None)
        x.grad = None
        g.sum().backward()
        return first, x.grad

    same(prog)


@create_graph_warning
def test_create_graph_second_derivative_of_sin_times_x():
    def prog(m):
        x = m.tensor([0.3, 1.2, -2.5], requires_grad=True)
        (m.sin(x) * x).sum().backward(create_graph=True)
        g = x.grad
        x.grad = None
        g.sum().backward()
        return g.detach(), x.grad

    same(prog)


@create_graph_warning
def test_create_graph_mixed_partials_of_exp_xy():
    def prog(m):
        x = m.tensor(0.7, requires_grad=True)
        y = m.tensor(-0.4, requires_grad=True)
        m.exp(x * y).backward(create_graph=True)
        gx, gy = x.grad, y.grad
        x.grad = None
        y.grad = None
        gx.backward()
        dxx, dxy = x.grad, y.grad
        x.grad = None
        y.grad = None
        gy.backward()
        return gx.detach(), gy.detach(), dxx, dxy, x.grad, y.grad

    same(prog)


def test_without_create_graph_grad_has_no_graph():
    def prog(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        (x**3).sum().backward()
        return x.grad.requires_grad, h.fn(x.grad)

    same(prog)


# ------------------------------------------------------------------------------ engine


def test_reused_tensor_accumulates():
    def prog(m):
        a = m.tensor(1.5, requires_grad=True)
        b = a + a
        c = b + b
        c.backward()
        return a.grad, c

    expected, _ = same(prog)
    assert expected[0].item() == 4.0


def test_diamond_graph():
    def prog(m):
        a = m.tensor([1.0, -2.0], requires_grad=True)
        b = a * 2
        c = a.exp()
        d = b * c
        e = (d + b - c).sum()
        e.backward()
        return a.grad

    same(prog)


def test_wide_fan_out():
    def prog(m):
        a = m.tensor([0.5, 1.5], requires_grad=True)
        total = a * 0
        for k in range(50):
            total = total + a * k
        total.sum().backward()
        return a.grad

    same(prog)


def test_topological_order_with_long_and_short_paths():
    def prog(m):
        a = m.tensor(0.3, requires_grad=True)
        long = a
        for _ in range(20):
            long = long * 1.1
        out = long * a + a.sin()
        out.backward()
        return a.grad

    same(prog)


def test_deep_chain_without_recursion_error():
    n = 100_000

    def prog(m):
        x = m.tensor(1.0, dtype=m.float64, requires_grad=True)
        y = x
        with h.recursion_limit(150):
            for _ in range(n):
                y = y * 1.0000001
            y.backward()
        return y.detach(), x.grad

    expected, _ = same(prog, rtol=1e-9)
    assert abs(expected[1].item() - 1.0000001**n) < 1e-9


def test_deep_chain_in_a_thread_with_small_recursion_limit():
    def prog(m):
        out = {}

        def work():
            x = m.tensor(2.0, requires_grad=True)
            y = x
            for _ in range(20_000):
                y = y + 0.0
            (y * y).backward()
            out["grad"] = x.grad

        with h.recursion_limit(150):
            t = threading.Thread(target=work)
            t.start()
            t.join()
        return out.get("grad")

    same(prog)


def test_separate_graphs_sharing_a_leaf():
    def prog(m):
        w = m.tensor([1.0, 2.0], requires_grad=True)
        y1 = (w * 3).sum()
        y2 = (w * w).sum()
        y1.backward()
        y2.backward()
        return w.grad

    same(prog)


# -------------------------------------------------------------------------------- autograd.backward


def test_autograd_backward_with_grad_tensors():
    def prog(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        b = m.tensor([3.0, 4.0], requires_grad=True)
        r = m.autograd.backward([(a * a).sum(), b * 3], [m.tensor(2.0), m.tensor([1.0, -1.0])])
        return r, a.grad, b.grad

    same(prog)


def test_autograd_backward_single_tensor():
    def prog(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        m.autograd.backward((a * a).sum())
        m.autograd.backward(a * 2, grad_tensors=m.ones(2))
        return a.grad

    same(prog)


def test_autograd_backward_non_scalar_without_grad_tensors_raises():
    def prog(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        m.autograd.backward([a * 2])

    raises_like(prog, "grad can be implicitly created only for scalar outputs")


def test_autograd_backward_inputs():
    def prog(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        b = m.tensor([3.0, 4.0], requires_grad=True)
        m.autograd.backward([(a * b).sum()], inputs=[b])
        return a.grad, b.grad

    same(prog)


# ------------------------------------------------------------------------------- broadcasting


BROADCAST_CASES = [
    ((3, 1), (1, 4)),
    ((4,), (2, 3, 4)),
    ((), (5,)),
    ((2, 1, 3), (4, 1)),
    ((2, 3), (2, 3)),
    ((1,), (3, 2)),
]


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize("shapes", BROADCAST_CASES, ids=str)
def test_broadcast_gradients_are_summed_back(op, shapes):
    sa, sb = shapes

    def prog(m):
        a = m.tensor(h.data(sa, seed=1, positive=True), requires_grad=True)
        b = m.tensor(h.data(sb, seed=2, positive=True), requires_grad=True)
        y = getattr(m, op)(a, b)
        (y * y).sum().backward()
        return y, a.grad, b.grad

    same(prog)


def test_broadcast_with_scalar_tensor_and_python_scalar():
    def prog(m):
        s = m.tensor(2.0, requires_grad=True)
        v = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        ((v * s + 1) ** 2).sum().backward()
        return s.grad, v.grad

    same(prog)


def test_expand_gradient():
    def prog(m):
        a = m.tensor(h.data((3, 1)), requires_grad=True)
        (a.expand(3, 4) * m.arange(12.0).reshape(3, 4)).sum().backward()
        return a.grad

    same(prog)


@pytest.mark.parametrize("op", ["add", "mul", "sub"])
def test_broadcast_mismatch_raises_with_shapes_and_op(op):
    def prog(m):
        a = m.ones(5, 3, requires_grad=True)
        b = m.ones(5, 4)
        getattr(m, op)(a, b)

    _, actual = raises_like(prog, "3", "4")
    assert op in str(actual.exc).lower(), f"graphgrad's message does not name {op!r}: {actual!r}"


def test_broadcast_mismatch_with_operator_raises():
    def prog(m):
        m.ones(2, 3) * m.ones(4)

    _, actual = raises_like(prog, "3", "4")
    assert "mul" in str(actual.exc).lower(), actual


def test_mixed_dtype_grads_keep_leaf_dtypes():
    def prog(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        b = m.tensor([3.0, 4.0], dtype=m.float64, requires_grad=True)
        y = a * b
        y.sum().backward()
        return y, a.grad, b.grad

    same(prog)


def test_mixed_dtype_with_constant_float64():
    def prog(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        c = m.tensor([0.5, 0.25], dtype=m.float64)
        ((a * c).exp()).sum().backward()
        return a.grad

    same(prog)
