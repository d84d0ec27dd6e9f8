"""Custom autograd Functions compared with torch: forward/backward and setup_context styles,
ctx (saved tensors, needs_input_grad, mark_dirty, mark_non_differentiable, materialize
grads), several outputs, non-tensor inputs, the errors torch raises, once_differentiable and
double backward.
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


def leaf(m, shape=(3,), seed=0):
    return m.tensor(h.data(shape, seed), requires_grad=True)


def square(m):
    """x -> x**2 * k, saving x and keeping k on ctx."""

    class Square(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, k=1.0):
            ctx.save_for_backward(x)
            ctx.k = k
            return x * x * k

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g * ctx.k, None

    return Square


def test_forward_backward_and_grad_fn():
    def prog(m):
        x = leaf(m)
        y = square(m).apply(x, 3.0)
        fn = y.grad_fn
        info = (type(fn).__name__, fn.name(), [type(n).__name__ for n, _ in fn.next_functions],
                fn.k, y.requires_grad, y.is_leaf)
        y.sum().backward()
        return info, y, x.grad

    same(prog)


def test_forward_runs_under_no_grad_and_ctx_is_the_node():
    def prog(m):
        seen = []

        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x, y, n):
                seen.append((m.is_grad_enabled(), ctx.needs_input_grad))
                ctx.tag = "t"
                return x * y * n

            @staticmethod
            def backward(ctx, g):
                seen.append(m.is_grad_enabled())
                return g, g, None

        x, y = leaf(m), m.tensor([1.0, 2.0, 3.0])
        out = F.apply(x, y, 2)
        out.sum().backward()
        return seen, out.grad_fn.tag, isinstance(out.grad_fn, m.autograd.function.FunctionCtx)

    same(prog)


def test_setup_context_style():
    def prog(m):
        class Mul(m.autograd.Function):
            @staticmethod
            def forward(x, y, scale=2.0):
                return x * y * scale

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, y, scale = inputs
                ctx.save_for_backward(x, y)
                ctx.scale = scale

            @staticmethod
            def backward(ctx, g):
                x, y = ctx.saved_tensors
                return g * y * ctx.scale, g * x * ctx.scale, None

        x, y = leaf(m), leaf(m, seed=1)
        out = Mul.apply(x, y=y)
        out.sum().backward()
        return out, x.grad, y.grad, type(out.grad_fn).__name__

    same(prog)


def test_multiple_outputs_and_next_functions():
    def prog(m):
        class SinCos(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x.sin(), x.cos()

            @staticmethod
            def backward(ctx, gs, gc):
                (x,) = ctx.saved_tensors
                return gs * x.cos() - gc * x.sin()

        x = leaf(m)
        s, c = SinCos.apply(x)
        z = s * c
        edges = [(type(n).__name__, i) for n, i in z.grad_fn.next_functions]
        ident = (s.grad_fn is c.grad_fn, z.grad_fn.next_functions[1][0] is c.grad_fn)
        (s * 2 + c * 3).sum().backward(retain_graph=True)
        g1 = x.grad.clone()
        x.grad = None
        z.sum().backward()
        return edges, ident, g1, x.grad

    same(prog)


def test_only_one_output_used_gets_materialized_zeros():
    def prog(m):
        seen = []

        class Two(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                seen.append((g1, g2))
                return g1 * 2 + g2 * 3

        x = leaf(m)
        a, _ = Two.apply(x)
        a.sum().backward()
        return seen, x.grad

    same(prog)


def test_set_materialize_grads_false_passes_none():
    def prog(m):
        seen = []

        class Two(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                seen.append((g1, g2))
                return g1 * 2 if g2 is None else g1 * 2 + g2 * 3

        x = leaf(m)
        Two.apply(x)[0].sum().backward()
        return seen, x.grad

    same(prog)


def test_non_tensor_and_non_differentiable_outputs():
    def prog(m):
        seen = []

        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                idx = m.tensor([1, 0, 2])
                other = x * 4
                ctx.mark_non_differentiable(other)
                return x * 3, other, idx, 5

            @staticmethod
            def backward(ctx, g, g_other, g_idx, g_int):
                seen.append((g, g_other, g_idx, g_int))
                return g * 3

        x = leaf(m)
        outs = F.apply(x)
        info = [(o.requires_grad, o.grad_fn is None) if h.is_tensor(o) else o for o in outs]
        outs[0].sum().backward()
        return info, seen, x.grad

    same(prog)


def test_mark_dirty_in_place_forward():
    def prog(m):
        class AddOne(m.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                a.add_(1)
                ctx.mark_dirty(a)
                return a

            @staticmethod
            def backward(ctx, g):
                return g * 2

        x = leaf(m)
        a = x * 1
        b = AddOne.apply(a)
        info = (b is a, a._version, type(a.grad_fn).__name__)
        (a * a).sum().backward()
        return info, a, x.grad

    same(prog)


def test_mark_dirty_errors():
    def leaf_dirty(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                a.mul_(2)
                ctx.mark_dirty(a)
                return a

            @staticmethod
            def backward(ctx, g):
                return g

        return F.apply(leaf(m))

    raises_like(leaf_dirty, "leaf Variable that requires grad")

    def not_returned(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                a.mul_(2)
                ctx.mark_dirty(a)
                return a * 1

            @staticmethod
            def backward(ctx, g):
                return g

        return F.apply(leaf(m) * 1)

    raises_like(not_returned, "marked as dirty", "not returned")


def test_input_returned_as_is_gets_new_history():
    def prog(m):
        class Ident(m.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a

            @staticmethod
            def backward(ctx, g):
                return g * 5

        x = leaf(m)
        y = Ident.apply(x)
        info = (y is x, y.is_leaf, x.is_leaf, type(y.grad_fn).__name__)
        y.sum().backward()
        return info, x.grad

    same(prog)


def test_wrong_number_of_gradients():
    def too_many(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g, g

        F.apply(leaf(m)).sum().backward()

    raises_like(too_many, "returned an incorrect number of gradients (expected 1, got 2)")

    def too_few(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x * y

            @staticmethod
            def backward(ctx, g):
                return g

        F.apply(leaf(m), leaf(m, seed=1)).sum().backward()

    raises_like(too_few, "incorrect number of gradients (expected 2, got 1)")

    def extra_nones(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2, None, None

        x = leaf(m)
        F.apply(x).sum().backward()
        return x.grad

    same(extra_nones)


def test_gradient_for_non_tensor_input_and_bad_shapes():
    def non_tensor(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x, n):
                return x * n

            @staticmethod
            def backward(ctx, g):
                return g, 1

        F.apply(leaf(m), 2).sum().backward()

    raises_like(non_tensor, "forward input was not a Variable")

    def bad_shape(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return m.ones(4)

        F.apply(leaf(m)).sum().backward()

    raises_like(bad_shape, "returned an invalid gradient at index 0",
                "expected shape compatible with [3]")

    def broadcast_grad_is_summed(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, b):
                return b * 2

            @staticmethod
            def backward(ctx, g):
                return m.ones(2, 3) * g

        b = leaf(m)
        F.apply(b).sum().backward()
        return b.grad

    same(broadcast_grad_is_summed)


def test_save_for_backward_rejects_non_tensors():
    def prog(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, 3)
                return x

            @staticmethod
            def backward(ctx, g):
                return g

        F.apply(leaf(m) * 1)

    raises_like(prog, "save_for_backward can only save variables", "argument 1")


def test_saved_tensor_modified_in_place_raises():
    def prog(m):
        x = leaf(m)
        a = x * 1
        y = square(m).apply(a)
        a.mul_(2)
        y.sum().backward()

    raises_like(prog, "modified by an inplace operation", "is at version 1; expected version 0")


def test_saved_tensors_freed_after_backward():
    def prog(m):
        x = leaf(m)
        y = square(m).apply(x)
        y.sum().backward(retain_graph=True)
        kept = len(y.grad_fn.saved_tensors)
        y.sum().backward()
        return kept, y.grad_fn.saved_tensors

    raises_like(prog, "Trying to backward through the graph a second time")

    def twice(m):
        x = leaf(m)
        y = square(m).apply(x)
        y.sum().backward()
        y.sum().backward()

    raises_like(twice, "backward through the graph a second time")


def test_no_grad_and_no_requires_grad_record_nothing():
    def prog(m):
        seen = []

        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                seen.append(ctx.needs_input_grad)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g

        x = leaf(m)
        with m.no_grad():
            a = F.apply(x)
        b = F.apply(m.tensor([1.0, 2.0]))
        return seen, (a.requires_grad, a.grad_fn), (b.requires_grad, b.grad_fn)

    same(prog)


def test_chained_with_builtin_ops_and_autograd_grad():
    def prog(m):
        sq = square(m)
        x = leaf(m, (2, 3))
        w = leaf(m, (3,), seed=2)
        y = (sq.apply(x * w) + x).tanh().sum()
        gx, gw = m.autograd.grad(y, [x, w])
        return gx, gw

    same(prog)


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_double_backward_through_differentiable_backward():
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
        y = Cube.apply(x)
        (g,) = m.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x)
        return g, gg, g.requires_grad

    same(prog)


def test_double_backward_through_saved_output():
    def prog(m):
        class Exp(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x.exp()
                ctx.save_for_backward(y)
                return y

            @staticmethod
            def backward(ctx, g):
                (y,) = ctx.saved_tensors
                return g * y

        x = leaf(m)
        (g,) = m.autograd.grad(Exp.apply(x).sum(), x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x)
        return g, gg

    same(prog)


def test_once_differentiable():
    def make(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            @m.autograd.function.once_differentiable
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 2 * x * g

        return F

    def first_order(m):
        x = leaf(m)
        make(m).apply(x).sum().backward()
        return x.grad

    same(first_order)

    def second_order(m):
        x = leaf(m)
        y = make(m).apply(x)
        (g,) = m.autograd.grad(y, x, m.ones(3, requires_grad=True), create_graph=True)
        info = (type(g.grad_fn).__name__, g.requires_grad)
        try:
            g.sum().backward()
        except RuntimeError as e:
            return info, g, str(e)
        return info, g, None

    same(second_order)


def test_base_class_errors():
    raises_like(lambda m: m.autograd.Function.apply(m.ones(2)),
                "You must implement the forward function")

    def legacy_call(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

        with h.warnings.catch_warnings():
            h.warnings.simplefilter("ignore")
            f = F()
        return f(m.ones(2))

    raises_like(legacy_call, "Legacy autograd function with non-static forward method")

    def no_backward(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

        F.apply(leaf(m)).sum().backward()

    raises_like(no_backward, "You must implement either the backward or vjp method")


def test_grad_fn_call_runs_backward():
    def prog(m):
        x = leaf(m)
        y = square(m).apply(x, 2.0)
        return y.grad_fn(m.ones(3))

    same(prog)
