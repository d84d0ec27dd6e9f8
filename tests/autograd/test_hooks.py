"""Autograd hooks compared with torch: Tensor.register_hook, Node pre/post hooks,
register_post_accumulate_grad_hook, their order and handles, with retain_graph,
create_graph and autograd.grad; and saved-tensor hooks (saved_tensors_hooks, save_on_cpu,
disable_saved_tensors_hooks).
"""

import importlib.util
import pathlib

import pytest

_spec = importlib.util.spec_from_file_location(
    "_gg_test_helpers", pathlib.Path(__file__).parent / "_helpers.py"
)
h = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(h)

same = h.same
raises_like = h.raises_like

create_graph_warning = pytest.mark.filterwarnings(
    "ignore:Using backward\\(\\) with create_graph=True"
)


def leaf(m, shape=(3,), seed=0):
    return m.tensor(h.data(shape, seed), requires_grad=True)


def lists(grads):
    return [None if g is None else g.tolist() for g in grads]


# ------------------------------------------------------------------------------- tensor hooks


def test_leaf_hook_replaces_gradient_before_accumulation():
    def prog(m):
        x = leaf(m)
        seen = []
        x.register_hook(lambda g: seen.append((g.tolist(), x.grad)) or g * 10)
        (x * 2).sum().backward()
        (x * 2).sum().backward()
        return seen, x.grad

    same(prog)


def test_non_leaf_hooks_chain_and_retain_grad_runs_last():
    def prog(m):
        x = leaf(m)
        y = x * 2
        seen = []
        y.retain_grad()
        y.register_hook(lambda g: seen.append(("a", g.tolist())) or g * 3)
        y.register_hook(lambda g: seen.append(("b", g.tolist())))
        (y * y).sum().backward()
        return seen, y.grad, x.grad

    same(prog)


def test_handle_remove():
    def prog(m):
        x = leaf(m)
        h1 = x.register_hook(lambda g: g * 100)
        h2 = x.register_hook(lambda g: g + 1)
        h1.remove()
        h1.remove()  # a second remove is harmless
        (x * 2).sum().backward()
        g1 = x.grad.clone()
        h2.remove()
        x.grad = None
        (x * 2).sum().backward()
        return g1, x.grad

    same(prog)


def test_hook_errors():
    raises_like(lambda m: m.tensor([1.0, 2.0]).register_hook(lambda g: g),
                "cannot register a hook on a tensor that doesn't require gradient")

    def size_changed(m):
        y = leaf(m) * 2
        y.register_hook(lambda g: g.sum())
        y.sum().backward()

    raises_like(size_changed, "has changed the size of value")

    def not_a_tensor(m):
        y = leaf(m) * 2
        y.register_hook(lambda g: 5)
        y.sum().backward()

    raises_like(not_a_tensor, "expected Variable, but hook returned 'int'")

    raises_like(lambda m: (leaf(m) * 2).register_post_accumulate_grad_hook(lambda t: None),
                "post accumulate grad hooks cannot be registered on non-leaf tensors")
    raises_like(lambda m: m.ones(2).register_post_accumulate_grad_hook(lambda t: None),
                "doesn't require gradient")


def test_full_hook_order():
    def prog(m):
        log = []
        x = leaf(m)
        y = x * 2
        z = y * 3
        y.retain_grad()
        y.register_hook(lambda g: log.append(("t1", g.tolist())) or g * 10)
        y.register_hook(lambda g: log.append(("t2", g.tolist())))
        y.grad_fn.register_prehook(lambda go: log.append(("pre", lists(go))))
        y.grad_fn.register_hook(lambda gi, go: log.append(("post", lists(gi), lists(go))))
        x.register_hook(lambda g: log.append(("leaf", g.tolist(), x.grad)) or g + 1)
        x.register_post_accumulate_grad_hook(lambda t: log.append(("acc", t.grad.tolist())))
        acc = y.grad_fn.next_functions[0][0]
        acc.register_prehook(lambda go: log.append(("accpre", lists(go))))
        acc.register_hook(lambda gi, go: log.append(("accpost", gi, lists(go))))
        z.sum().backward()
        return log, y.grad, x.grad

    same(prog)


def test_hooks_run_on_every_backward_with_retain_graph():
    def prog(m):
        x = leaf(m)
        y = x.exp()
        seen = []
        y.register_hook(lambda g: seen.append(g.tolist()))
        y.grad_fn.register_prehook(lambda go: seen.append("pre"))
        y.sum().backward(retain_graph=True)
        (y * 2).sum().backward()
        return seen, x.grad

    same(prog)


def test_autograd_grad_captures_as_torch():
    """A captured tensor that also leads further is captured before its tensor hooks; one
    that stops there after them; leaf hooks run but nothing accumulates."""

    def prog(m):
        log = []
        x = leaf(m)
        y = x * 2
        z = y * 3
        y.register_hook(lambda g: log.append(("y", g.tolist())) or g * 10)
        x.register_hook(lambda g: log.append(("x", g.tolist())) or g + 1)
        x.register_post_accumulate_grad_hook(lambda t: log.append("acc"))
        both = m.autograd.grad(z.sum(), [y, x], retain_graph=True)
        only_y = m.autograd.grad(z.sum(), [y])
        return log, both, only_y, x.grad

    same(prog)


@create_graph_warning
def test_hooks_with_create_graph():
    def prog(m):
        x = leaf(m)
        q = x * x
        q.register_hook(lambda g: g * 2)
        (g,) = m.autograd.grad(q.sum(), x, create_graph=True)
        (gg,) = m.autograd.grad((g * g).sum(), x)
        return g, type(g.grad_fn).__name__, gg

    same(prog)


# --------------------------------------------------------------------------------- node hooks


def test_node_prehook_replaces_grad_outputs():
    def prog(m):
        x = leaf(m)
        u = x.exp()
        handle = u.grad_fn.register_prehook(lambda go: (go[0] * 100,))
        u.sum().backward(retain_graph=True)
        g1 = x.grad.clone()
        handle.remove()
        u.sum().backward()
        return g1, x.grad

    same(prog)


def test_node_post_hook_sees_none_for_unneeded_inputs_and_replaces():
    def prog(m):
        seen = []
        x = leaf(m)
        c = m.tensor([1.0, 2.0, 3.0])
        w = x * c
        w.grad_fn.register_hook(lambda gi, go: seen.append((gi, go)))
        v = (x * 2).sin()
        v.grad_fn.register_hook(lambda gi, go: (gi[0] * 0 + 7,))
        (w + v).sum().backward()
        return seen, x.grad

    same(prog)


def test_hooks_on_custom_function_outputs():
    def prog(m):
        log = []

        class Two(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                return g1 * 2 + g2 * 3

        x = leaf(m)
        a, b = Two.apply(x)
        b.register_hook(lambda g: log.append(("b", g.tolist())) or g * 10)
        b.retain_grad()
        a.grad_fn.register_prehook(lambda go: log.append(("pre", lists(go))))
        a.grad_fn.register_hook(lambda gi, go: log.append(("post", lists(gi), lists(go))))
        (a + 2 * b).sum().backward()
        return log, b.grad, x.grad

    same(prog)


# ------------------------------------------------------------------------ saved-tensor hooks


def test_saved_tensors_hooks_pack_and_unpack():
    def prog(m):
        log = []
        x = leaf(m)

        def pack(t):
            log.append(("pack", t.tolist(), m.is_grad_enabled()))
            return t.detach() * 1

        def unpack(p):
            log.append(("unpack", p.tolist()))
            return p

        with m.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = (x * x).exp()
            z = x + 1  # saves nothing
        (y.sum() + z.sum()).backward()
        return log, x.grad

    same(prog)


def test_saved_tensors_hooks_nest_and_change_values():
    def prog(m):
        x = leaf(m)
        outer = m.autograd.graph.saved_tensors_hooks(lambda t: ("outer", t), lambda p: p[1])
        inner = m.autograd.graph.saved_tensors_hooks(lambda t: t.detach() * 0 + 2,
                                                     lambda p: p)
        with outer:
            a = x * x
            with inner:
                b = x * x
            c = x.sin()
        (a + b + c).sum().backward()
        return x.grad

    same(prog)


@create_graph_warning
def test_saved_tensors_hooks_with_create_graph_and_function():
    def prog(m):
        class Cube(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x * x

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 3 * x * x * g

        x = leaf(m)
        n = []
        with m.autograd.graph.saved_tensors_hooks(lambda t: n.append(1) or t,
                                                  lambda t: n.append(2) or t):
            y = Cube.apply(x) + x.exp()
        (g,) = m.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x)
        return g, gg, sorted(n)

    same(prog)


def test_saved_tensors_hooks_skip_version_check():
    """With hooks, torch cannot see in-place changes; the (same-storage) packed value is
    used."""

    def prog(m):
        x = leaf(m)
        a = x * 1
        with m.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            y = a * a
        a.add_(1)
        y.sum().backward()
        return x.grad

    same(prog)


def test_saved_tensors_hooks_errors():
    def bad_unpack(m):
        x = leaf(m)
        with m.autograd.graph.saved_tensors_hooks(lambda t: 1, lambda t: t):
            y = x.exp()
        y.sum().backward()

    raises_like(bad_unpack, "unpack_hook expected to be a Tensor", "int")

    def freed(m):
        x = leaf(m)
        with m.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            y = x.exp()
        y.sum().backward()
        y.sum().backward()

    raises_like(freed, "backward through the graph a second time")


def test_save_on_cpu():
    def prog(m):
        x = leaf(m, (2, 3))
        w = leaf(m, (3, 2), seed=1)
        with m.autograd.graph.save_on_cpu():
            y = (x @ w).tanh()
        with m.autograd.graph.save_on_cpu(pin_memory=True):
            z = (x * x).sum()
        (y.sum() + z).backward()
        return x.grad, w.grad

    same(prog)


def test_disable_saved_tensors_hooks():
    def blocked(m):
        with m.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
            with m.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass

    raises_like(blocked, "no hooks here")

    def while_active(m):
        with m.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            with m.autograd.graph.disable_saved_tensors_hooks("busy"):
                pass

    raises_like(while_active, "busy")

    def restored(m):
        with m.autograd.graph.disable_saved_tensors_hooks("no"):
            pass
        x = leaf(m)
        with m.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            y = x.exp()
        y.sum().backward()
        return x.grad

    same(restored)
