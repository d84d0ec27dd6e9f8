"""torch.autograd.graph's register_multi_grad_hook, GradientEdge / get_gradient_edge,
increment_version, allow_mutation_on_saved_tensors, the legacy torch.autograd.Variable and
torch.utils.hooks.RemovableHandle, compared with torch."""

import importlib.util
import pathlib

import pytest

_spec = importlib.util.spec_from_file_location(
    "_gg_test_helpers", pathlib.Path(__file__).parent / "_helpers.py")
h = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(h)
same = h.same
raises_like = h.raises_like


def _shapes(grads):
    return [None if g is None else g.tolist() for g in grads]


def test_multi_grad_hook_all():
    def prog(m):
        a, b, c = (m.ones(2, requires_grad=True) for _ in range(3))
        ya, yb, yc = a * 1, b * 2, c * 3
        seen = []
        m.autograd.graph.register_multi_grad_hook((ya, yb, yc), lambda g: seen.append(_shapes(g)))
        m.autograd.grad((ya * 5 + yb).sum(), [a], retain_graph=True)  # yb's node is pruned
        (ya * 5 + yc).sum().backward(retain_graph=True)
        (ya * yb * yc).sum().backward()
        return seen
    same(prog)


def test_multi_grad_hook_any_and_remove():
    def prog(m):
        a, b = m.ones(2, requires_grad=True), m.ones(3, requires_grad=True)
        seen = []
        handle = m.autograd.graph.register_multi_grad_hook(
            (a, b), lambda g: seen.append(g.shape), mode="any")
        (a.sum() * b.sum()).backward()
        (a.sum() * 2).backward()
        handle.remove()
        (a.sum() * b.sum()).backward()
        return len(seen), isinstance(handle, m.utils.hooks.RemovableHandle)
    same(prog)


def test_multi_grad_hook_errors():
    raises_like(lambda m: m.autograd.graph.register_multi_grad_hook(
        (m.ones(1, requires_grad=True),), print, mode="x"), "Expects mode to be one of")
    raises_like(lambda m: m.autograd.graph.register_multi_grad_hook(
        (m.ones(1), m.ones(1, requires_grad=True)), print))


def test_gradient_edge():
    def prog(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        e = m.autograd.graph.get_gradient_edge(a)
        y = a * 3
        ey = m.autograd.graph.get_gradient_edge(y)
        as_input = m.autograd.grad((y * y).sum(), ey, retain_graph=True)
        as_output = m.autograd.grad(ey, a, grad_outputs=m.ones(2))
        leaf = m.autograd.grad((a * a).sum(), e)
        return (type(e.node).__name__, e.output_nr, type(ey.node).__name__, ey.node is y.grad_fn,
                as_input, as_output, leaf)
    same(prog)
    raises_like(lambda m: m.autograd.graph.get_gradient_edge(m.ones(2)),
                "not possible to get the gradient edge")


def test_increment_version():
    def prog(m):
        a = m.ones(2, requires_grad=True)
        b = a * 1
        out = (b * b).sum()
        m.autograd.graph.increment_version(b)
        m.autograd.graph.increment_version([a, b])
        return a._version, b._version, out
    same(prog)
    raises_like(lambda m: _bumped_backward(m), "modified by an inplace operation")


def _bumped_backward(m):
    a = m.ones(2, requires_grad=True)
    b = a * 1
    out = (b * b).sum()
    m.autograd.graph.increment_version(b)
    out.backward()


def test_allow_mutation_on_saved_tensors():
    def prog(m):
        with m.autograd.graph.allow_mutation_on_saved_tensors():
            a = m.tensor([[0.5, 1.0, 2.0]], requires_grad=True)
            b = a.clone()
            out = (b ** 2).sum() + (b * 3).exp().sum()
            b.sin_()
            b[0, 0] = 7.0
            out.backward()
        return a.grad, b
    same(prog)


def test_allow_mutation_errors():
    def nested(m):
        with m.autograd.graph.allow_mutation_on_saved_tensors():
            with m.autograd.graph.allow_mutation_on_saved_tensors():
                pass
    raises_like(nested, "cannot be nested")

    def outside(m):
        a = m.ones(2, requires_grad=True)
        with m.autograd.graph.allow_mutation_on_saved_tensors():
            out = (a.clone() ** 2).sum()
        out.backward()
    raises_like(outside, "outside of the 'allow_mutation_on_saved_tensors' context")


def test_variable():
    def prog(m):
        V = m.autograd.Variable
        t = m.tensor([1.0, 2.0])
        v = V(t)
        w = V(t, requires_grad=True)
        x = m.ones(2, requires_grad=True) * 2
        vx = V(x)
        return (v is t, v.data_ptr() == t.data_ptr(), v.requires_grad, type(v).__name__,
                w.requires_grad, w.is_leaf, t.requires_grad, V(), isinstance(t, V),
                issubclass(m.Tensor, V), vx.requires_grad, vx.grad_fn)
    same(prog)
    raises_like(lambda m: m.autograd.Variable([1, 2]), "Variable data has to be a tensor")
    raises_like(lambda m: m.autograd.Variable(m.tensor([1, 2]), requires_grad=True),
                "floating point")
    for m in h.MODULES:
        with pytest.warns(UserWarning, match="volatile was removed"):
            m.autograd.Variable(m.ones(1), volatile=True)


def test_utils_hooks_removable_handle():
    def prog(m):
        d = {}
        handle = m.utils.hooks.RemovableHandle(d)
        d[handle.id] = "hook"
        with handle:
            pass
        hooks = (m.ones(1, requires_grad=True).register_hook(lambda g: None),
                 m.nn.Linear(1, 1).register_forward_hook(lambda *a: None))
        return d, [isinstance(x, m.utils.hooks.RemovableHandle) for x in hooks]
    same(prog)
