"""Grad modes compared with torch: no_grad, enable_grad, set_grad_enabled, inference_mode, as
context managers, decorators (also of generators), their nesting and thread-locality, and the
rules for inference tensors used later in autograd.
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


def recorded(m):
    """Whether an op on a grad-requiring leaf is recorded right now."""
    w = m.tensor([1.0, 2.0], requires_grad=True)
    y = w * 2
    return y.requires_grad, h.fn(y), y.is_leaf


def state(m):
    return m.is_grad_enabled(), m.is_inference_mode_enabled()


def test_default_state():
    same(lambda m: (state(m), recorded(m)))


def test_no_grad_context():
    def prog(m):
        with m.no_grad():
            inside = state(m), recorded(m)
        return inside, state(m), recorded(m)

    same(prog)


def test_no_grad_results_of_several_ops():
    def prog(m):
        w = m.tensor([1.0, 2.0], requires_grad=True)
        with m.no_grad():
            outs = [w + 1, w * w, w.exp(), w.sum(), w @ w, m.cat([w, w]), w.clone()]
        return [(t.requires_grad, h.fn(t), t.is_leaf) for t in outs]

    same(prog)


def test_no_grad_views_of_a_grad_requiring_leaf():
    def prog(m):
        w = m.tensor([[1.0, 2.0]], requires_grad=True)
        with m.no_grad():
            views = [w.reshape(2, 1), w[0], w.view(2), w[:, 1:], w.unsqueeze(0), w.t()]
        return [(t.requires_grad, h.fn(t), t.is_leaf) for t in views]

    same(prog)


def test_no_grad_restores_after_exception():
    def prog(m):
        try:
            with m.no_grad():
                raise ValueError("boom")
        except ValueError:
            pass
        return state(m)

    same(prog)


def test_enable_grad_inside_no_grad():
    def prog(m):
        with m.no_grad():
            with m.enable_grad():
                inner = state(m), recorded(m)
            after = state(m), recorded(m)
        return inner, after, state(m)

    same(prog)


def test_no_grad_inside_enable_grad_inside_no_grad():
    def prog(m):
        with m.no_grad(), m.enable_grad():
            with m.no_grad():
                deepest = m.is_grad_enabled()
            middle = m.is_grad_enabled()
        return deepest, middle, m.is_grad_enabled()

    same(prog)


def test_set_grad_enabled_as_function_call():
    def prog(m):
        m.set_grad_enabled(False)
        off = state(m), recorded(m)
        m.set_grad_enabled(True)
        return off, state(m), recorded(m)

    same(prog)


@pytest.mark.parametrize("mode", [False, True])
def test_set_grad_enabled_as_context_manager(mode):
    def prog(m):
        with m.set_grad_enabled(mode):
            inside = state(m), recorded(m)
        with m.no_grad():
            with m.set_grad_enabled(mode):
                inside_no_grad = m.is_grad_enabled()
            after = m.is_grad_enabled()
        return inside, inside_no_grad, after, state(m)

    same(prog)


def test_set_grad_enabled_context_restores_previous_mode():
    def prog(m):
        with m.no_grad():
            ctx = m.set_grad_enabled(True)
            applied = m.is_grad_enabled()
            with ctx:
                pass
            restored = m.is_grad_enabled()
        return applied, restored, m.is_grad_enabled()

    same(prog)


def test_no_grad_decorator_with_and_without_parentheses():
    def prog(m):
        @m.no_grad()
        def f():
            return state(m), recorded(m)

        @m.no_grad
        def g(x):
            return x * 2, m.is_grad_enabled()

        w = m.tensor([1.0], requires_grad=True)
        gy, genabled = g(w)
        return f(), (gy.requires_grad, genabled), state(m), f.__name__, g.__name__

    same(prog)


def test_enable_grad_decorator():
    def prog(m):
        @m.enable_grad()
        def f():
            return state(m), recorded(m)

        with m.no_grad():
            inside = f()
            after = m.is_grad_enabled()
        return inside, after

    same(prog)


def test_set_grad_enabled_decorator():
    def prog(m):
        @m.set_grad_enabled(False)
        def f():
            return m.is_grad_enabled()

        return m.is_grad_enabled(), f(), m.is_grad_enabled()

    same(prog)


def test_no_grad_decorated_generator():
    def prog(m):
        @m.no_grad()
        def gen():
            for _ in range(3):
                yield state(m), recorded(m)

        seen = []
        for item in gen():
            seen.append((item, m.is_grad_enabled()))
        return seen

    same(prog)


def test_inference_mode_decorated_generator():
    def prog(m):
        @m.inference_mode()
        def gen():
            for _ in range(2):
                yield state(m), m.ones(1).is_inference()

        it = gen()
        first = next(it)
        between = state(m)
        second = next(it)
        return first, between, second

    same(prog)


def test_inference_mode_context():
    def prog(m):
        w = m.tensor([1.0, 2.0], requires_grad=True)
        with m.inference_mode():
            t = m.ones(3)
            y = w * 2
            inside = state(m), t.is_inference(), y.is_inference(), y.requires_grad, h.fn(y)
        return inside, state(m), t.is_inference(), w.is_inference(), recorded(m)

    same(prog)


def test_inference_mode_false_inside_inference_mode():
    def prog(m):
        with m.inference_mode():
            with m.inference_mode(False):
                inner = state(m), m.ones(1).is_inference(), recorded(m)
            after = state(m)
        return inner, after, state(m)

    same(prog)


def test_inference_mode_false_alone_is_a_no_op():
    def prog(m):
        with m.inference_mode(False):
            return state(m), recorded(m), m.ones(1).is_inference()

    same(prog)


def test_inference_mode_decorators():
    def prog(m):
        @m.inference_mode
        def bare():
            return state(m), m.ones(1).is_inference()

        @m.inference_mode()
        def called():
            return state(m)

        @m.inference_mode(False)
        def off():
            return state(m)

        with m.inference_mode():
            off_inside = off()
        return bare(), called(), off_inside, state(m)

    same(prog)


def test_enable_grad_inside_inference_mode_records_nothing():
    def prog(m):
        with m.inference_mode(), m.enable_grad():
            return state(m), recorded(m)

    same(prog)


def test_no_grad_tensors_are_not_inference_tensors():
    def prog(m):
        with m.no_grad():
            t = m.ones(2)
        return t.is_inference(), m.ones(2).is_inference()

    same(prog)


def test_requires_grad_leaf_created_under_no_grad_and_inference_mode():
    def prog(m):
        with m.no_grad():
            a = m.ones(2, requires_grad=True)
            b = m.tensor([1.0], requires_grad=True)
        with m.inference_mode():
            c = m.ones(2, requires_grad=True)
        return [(t.requires_grad, t.is_leaf) for t in (a, b, c)]

    same(prog)


def test_sgd_style_update_under_no_grad():
    def prog(m):
        w = m.tensor([1.0, -2.0], requires_grad=True)
        (w * w).sum().backward()
        with m.no_grad():
            w -= 0.1 * w.grad
            w.sub_(0.05 * w.grad)
        return w, w.is_leaf, w.requires_grad, h.fn(w), w.grad

    same(prog)


def test_grad_mode_is_thread_local():
    def prog(m):
        seen = {}

        def worker(key):
            seen[key] = state(m), recorded(m)

        with m.no_grad():
            t = threading.Thread(target=worker, args=("under_no_grad",))
            t.start()
            t.join()
        with m.inference_mode():
            t = threading.Thread(target=worker, args=("under_inference",))
            t.start()
            t.join()
        return seen

    same(prog)


def test_no_grad_in_a_thread_does_not_leak_to_main():
    def prog(m):
        entered = threading.Event()
        release = threading.Event()
        seen = {}

        def worker():
            with m.no_grad():
                seen["thread"] = m.is_grad_enabled()
                entered.set()
                release.wait(10)

        t = threading.Thread(target=worker)
        t.start()
        entered.wait(10)
        seen["main_while_thread_in_no_grad"] = m.is_grad_enabled(), recorded(m)
        release.set()
        t.join()
        return seen

    same(prog)


# ------------------------------------------------------------------ inference tensors and autograd


def inference_ones(m, n=3):
    with m.inference_mode():
        return m.ones(n) * 2


SAVE_RULES = {
    "mul": lambda w, t: w * t,
    "rmul": lambda w, t: t * w,
    "div": lambda w, t: w / t,
    "rdiv": lambda w, t: t / w,
    "matmul": lambda w, t: w @ t,
    "add": lambda w, t: w + t,
    "sub": lambda w, t: w - t,
    "radd": lambda w, t: t + w,
}


@pytest.mark.parametrize("name", list(SAVE_RULES))
def test_inference_tensor_in_grad_requiring_op(name):
    def prog(m):
        t = inference_ones(m)
        w = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = SAVE_RULES[name](w, t)
        y.sum().backward()
        return y, w.grad

    same(prog)


def test_inference_tensor_saved_for_backward_message():
    def prog(m):
        t = inference_ones(m)
        w = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        return w * t

    raises_like(prog, "Inference tensors cannot be saved for backward")


def test_inference_tensor_in_place_outside_inference_mode_raises():
    def prog(m):
        t = inference_ones(m)
        t.add_(1)

    raises_like(prog, "Inplace update to inference tensor outside InferenceMode")


def test_inference_tensor_in_place_inside_inference_mode_is_fine():
    def prog(m):
        t = inference_ones(m)
        with m.inference_mode():
            t.add_(1)
        return t, t.is_inference()

    same(prog)


def test_inference_tensor_clone_is_a_normal_tensor():
    def prog(m):
        t = inference_ones(m).clone()
        w = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        (w * t).sum().backward()
        return t.is_inference(), w.grad

    same(prog)


def test_inference_tensor_without_grad_ops_is_fine():
    def prog(m):
        t = inference_ones(m)
        u = t * t + 1
        return u, u.requires_grad, u.is_inference()

    same(prog)
