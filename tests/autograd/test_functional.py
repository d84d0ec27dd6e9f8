"""autograd.functional (vjp, jvp, jacobian, hessian, hvp, vhp) compared with torch: values, the
tuple structure of results, shapes and dtypes, requires_grad of results with and without
create_graph, v defaults and shape errors, strict mode, non-tensor outputs, inputs left alone,
and derivatives taken through create_graph=True results.
"""

import importlib.util
import pathlib

import numpy as np
import pytest

_spec = importlib.util.spec_from_file_location(
    "_gg_test_helpers", pathlib.Path(__file__).parent / "_helpers.py"
)
h = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(h)

same = h.same
raises_like = h.raises_like

W = np.random.default_rng(1).standard_normal((3, 4))
Q = np.random.default_rng(2).standard_normal((3, 3))


def const(m, a):
    return m.tensor(a, dtype=m.float64)


def f64(m, values, requires_grad=False):
    """A float64 tensor from exact float64 values (made in NumPy, so both modules get the same
    bits)."""
    return m.tensor(np.array(values, dtype=np.float64), dtype=m.float64,
                    requires_grad=requires_grad)


def arrays(shapes, seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).round(3) for s in shapes]


def tensors_like(m, shapes, seed, requires_grad=False, dtype="float64"):
    return tuple(m.tensor(a, dtype=getattr(m, dtype), requires_grad=requires_grad)
                 for a in arrays(shapes, seed))


# name: (func of the module, input shapes, inputs passed as a tuple)
FUNCS = {
    "exp": (lambda m: lambda x: x.exp(), [(3,)], False),
    "sin_pow": (lambda m: lambda x: x.sin() * x ** 3, [(2, 3)], False),
    "matmul_tanh": (lambda m: lambda x: m.tanh(m.matmul(x, const(m, W))), [(2, 3)], False),
    "row_sums": (lambda m: lambda x: (x ** 2).sum(dim=1), [(2, 3)], False),
    "single_element": (lambda m: lambda x: x.exp().mean().reshape(1), [(3,)], False),
    "one_tuple": (lambda m: lambda x: (x.sin(),), [(3,)], True),
    "multi": (lambda m: lambda x, y: (x * y.sum(), m.matmul(x.exp(), const(m, W)[:, :2]) * y),
              [(3,), (2,)], True),
    "independent_input": (lambda m: lambda x, y: (x.sin(), x * 2), [(3,), (2,)], True),
    "constant_output": (lambda m: lambda x: (x ** 2, m.ones(2, dtype=m.float64)), [(3,)], False),
}

# Scalar functions, for hessian, hvp and vhp.
SCALARS = {
    "cubic": (lambda m: lambda x: (x ** 3).sum(), [(3,)], False),
    "exp_sin": (lambda m: lambda x: (x.exp() * x.sin()).mean(), [(2, 2)], False),
    "quadratic_form": (lambda m: lambda x: m.matmul(x, m.matmul(const(m, Q), x)).tanh(),
                       [(3,)], False),
    "shape_one": (lambda m: lambda x: (x.pow(4)).sum().reshape(1, 1), [(2,)], False),
    "two_inputs": (lambda m: lambda x, y: (x.sin() * (y ** 2).sum()).sum() + m.dot(x, y),
                   [(3,), (3,)], True),
    "independent_input": (lambda m: lambda x, y: (x ** 3).sum(), [(3,), (2,)], True),
    "linear_in_one": (lambda m: lambda x, y: (x ** 3).sum() + y.sum(), [(3,), (2,)], True),
}


def call_inputs(m, case, table, requires_grad=False, seed=0):
    build, shapes, as_tuple = table[case]
    xs = tensors_like(m, shapes, seed, requires_grad)
    return build(m), (xs if as_tuple else xs[0]), xs


def flat(res):
    if isinstance(res, tuple):
        return [t for r in res for t in flat(r)]
    return [res]


def flags(res):
    """requires_grad of every tensor, in the nesting of ``res``."""
    if isinstance(res, tuple):
        return tuple(flags(r) for r in res)
    return res.requires_grad


def cotangent(m, like, seed=7):
    """A v shaped like ``like`` (a tensor or a tuple of them), with the same tuple-ness."""
    shapes = [tuple(t.shape) for t in flat(like)]
    vs = tensors_like(m, shapes, seed)
    return vs if isinstance(like, tuple) else vs[0]


def second_order(m, res, wrt):
    """Gradients w.r.t. ``wrt`` of a nonlinear scalar made from the results that have a graph."""
    live = [t for t in flat(res) if t.requires_grad]
    if not live:
        return "no graph"
    total = live[0].sin().sum()
    for t in live[1:]:
        total = total + t.sin().sum()
    return m.autograd.grad(total, wrt, materialize_grads=True)


def check(prog):
    expected, actual = same(prog, rtol=1e-9, atol=1e-12)
    assert not isinstance(expected, h.Raised), f"the program failed under torch: {expected!r}"
    return expected, actual


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("case", list(FUNCS))
def test_vjp(case, create_graph):
    def prog(m):
        func, inputs, xs = call_inputs(m, case, FUNCS, requires_grad=create_graph)
        v = cotangent(m, func(*xs))
        res = m.autograd.functional.vjp(func, inputs, v, create_graph=create_graph)
        return res, flags(res), second_order(m, res, xs) if create_graph else None

    check(prog)


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("case", list(FUNCS))
def test_jvp(case, create_graph):
    def prog(m):
        func, inputs, xs = call_inputs(m, case, FUNCS, requires_grad=create_graph)
        v = cotangent(m, inputs)
        res = m.autograd.functional.jvp(func, inputs, v, create_graph=create_graph)
        return res, flags(res), second_order(m, res, xs) if create_graph else None

    check(prog)


@pytest.mark.parametrize("vectorize", [False, True])
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("case", list(FUNCS))
def test_jacobian(case, create_graph, vectorize):
    def prog(m):
        func, inputs, xs = call_inputs(m, case, FUNCS, requires_grad=create_graph)
        res = m.autograd.functional.jacobian(func, inputs, create_graph=create_graph,
                                             vectorize=vectorize)
        return res, flags(res), second_order(m, res, xs) if create_graph else None

    check(prog)


@pytest.mark.parametrize("vectorize", [False, True])
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("case", list(SCALARS))
def test_hessian(case, create_graph, vectorize):
    def prog(m):
        func, inputs, xs = call_inputs(m, case, SCALARS, requires_grad=create_graph)
        res = m.autograd.functional.hessian(func, inputs, create_graph=create_graph,
                                            vectorize=vectorize)
        return res, flags(res), second_order(m, res, xs) if create_graph else None

    check(prog)


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("case", list(SCALARS))
@pytest.mark.parametrize("name", ["hvp", "vhp"])
def test_hvp_vhp(name, case, create_graph):
    def prog(m):
        func, inputs, xs = call_inputs(m, case, SCALARS, requires_grad=create_graph)
        fn = getattr(m.autograd.functional, name)
        res = fn(func, inputs, cotangent(m, inputs), create_graph=create_graph)
        return res, flags(res), second_order(m, res, xs) if create_graph else None

    check(prog)


def test_jacobian_keeps_float32():
    def prog(m):
        (x,) = tensors_like(m, [(2, 3)], 0, dtype="float32")
        res = m.autograd.functional.jacobian(lambda a: (a.exp() * a).sum(dim=0), x)
        return res, res.dtype

    same(prog)


def test_gradient_of_a_hessian_entry():
    """A third derivative: d/dx of H[0, 1] for f(x) = sum(x0^2 x1^3 + sin(x)), through
    create_graph=True."""
    def prog(m):
        x = f64(m, [0.7, -1.2], requires_grad=True)
        hess = m.autograd.functional.hessian(
            lambda a: (a[0] ** 2 * a[1] ** 3 + a.sin()).sum(), x, create_graph=True)
        (g,) = m.autograd.grad(hess[0, 1], x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x)
        return hess, g, gg

    check(prog)


def test_gradient_flows_to_v_with_create_graph():
    def prog(m):
        x, v = tensors_like(m, [(3,), (3,)], 3, requires_grad=True)
        out, prod = m.autograd.functional.vjp(lambda a: a.sin() * a, x, v, create_graph=True)
        return prod, m.autograd.grad((prod ** 2).sum(), (x, v))

    check(prog)


def test_hvp_differentiated_by_backward():
    def prog(m):
        x, v = tensors_like(m, [(3,), (3,)], 4, requires_grad=True)
        _, hv = m.autograd.functional.hvp(lambda a: (a.exp() * a ** 2).sum(), x, v,
                                          create_graph=True)
        (hv * hv).sum().backward()
        return hv, x.grad, v.grad

    check(prog)


@pytest.mark.parametrize("name", ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"])
def test_inputs_are_left_alone(name):
    """Not modified, no .grad, still leaves; results have no graph without create_graph."""
    def prog(m):
        x = f64(m, [0.5, -1.0, 2.0], requires_grad=True)
        fn = getattr(m.autograd.functional, name)
        func = lambda a: (a ** 3).sum()  # noqa: E731
        v = m.ones(3, dtype=m.float64) if name in ("jvp", "hvp", "vhp") else None
        res = fn(func, x, v) if v is not None else fn(func, x)
        return res, flags(res), x, x.grad, x.is_leaf, x.requires_grad, x.grad_fn

    check(prog)


@pytest.mark.parametrize("name", ["vjp", "jacobian", "hessian"])
def test_derivatives_only_through_the_argument(name):
    """A tensor the function closes over is a constant, even when it is the input itself."""
    def prog(m):
        x = f64(m, [0.5, -1.0, 2.0], requires_grad=True)
        fn = getattr(m.autograd.functional, name)
        return fn(lambda a: (a ** 2 * x).sum(), x)

    check(prog)


@pytest.mark.parametrize("name", ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"])
def test_works_under_no_grad(name):
    def prog(m):
        x = f64(m, [0.5, -1.0])
        fn = getattr(m.autograd.functional, name)
        with m.no_grad():
            if name in ("jvp", "hvp", "vhp"):
                res = fn(lambda a: (a.exp() ** 2).sum(), x, x, create_graph=True)
            else:
                res = fn(lambda a: (a.exp() ** 2).sum(), x, create_graph=True)
        return res, flags(res), m.is_grad_enabled()

    check(prog)


@pytest.mark.parametrize("name", ["vjp", "jvp", "hvp", "vhp"])
@pytest.mark.parametrize("as_tuple", [False, True])
def test_v_may_be_omitted_for_a_single_element(name, as_tuple):
    def prog(m):
        x = f64(m, [0.3])
        fn = getattr(m.autograd.functional, name)
        return fn(lambda a: (a.sin() * a).sum(), (x,) if as_tuple else x)

    check(prog)


def test_v_may_be_a_one_tuple_for_a_tensor():
    def prog(m):
        x = f64(m, [0.3, 0.4])
        return m.autograd.functional.vjp(lambda a: a.exp(), x, (m.ones(2, dtype=m.float64),))

    check(prog)


def _x(m):
    return f64(m, [0.5, -1.0, 2.0])


def _xy(m):
    return _x(m), f64(m, [1.5, 0.25])


def _cube(a):
    return (a ** 3).sum()


# name: (program, message fragments)
BAD_V = {
    "vjp_missing": (lambda m: m.autograd.functional.vjp(lambda a: a.exp(), _x(m)),
                    ["v can only be None if the user-provided function returns a single Tensor"]),
    "vjp_missing_tuple_out": (
        lambda m: m.autograd.functional.vjp(lambda a: (a.sum(), a.sum()), _x(m)),
        ["single Tensor with a single element"]),
    "vjp_shape": (lambda m: m.autograd.functional.vjp(lambda a: a.exp(), _x(m), m.ones(2)),
                  ["v has invalid size: should be torch.Size([3]) but got torch.Size([2])"]),
    "vjp_entry_shape": (
        lambda m: m.autograd.functional.vjp(lambda a: (a, a), _x(m), (m.ones(3), m.ones(1))),
        ["Entry 1 in v has invalid size"]),
    "vjp_length": (lambda m: m.autograd.functional.vjp(lambda a: (a, a), _x(m), (m.ones(3),)),
                   ["v is a tuple of invalid length: should be 2 but got 1"]),
    "vjp_two_for_one": (
        lambda m: m.autograd.functional.vjp(lambda a: a, _x(m), (m.ones(3), m.ones(3))),
        ["The given v should contain a single Tensor"]),
    "vjp_not_tensor": (lambda m: m.autograd.functional.vjp(lambda a: a, _x(m), 3.0),
                       ["The v given to vjp must be either a Tensor or a tuple of Tensors"]),
    "jvp_missing": (lambda m: m.autograd.functional.jvp(lambda a: a.exp(), _x(m)),
                    ["v can only be None if the input to the user-provided function is a single"]),
    "jvp_shape": (lambda m: m.autograd.functional.jvp(lambda a: a, _xy(m), (m.ones(3), m.ones(3))),
                  ["Entry 1 in v has invalid size: should be torch.Size([2])"]),
    "hvp_missing": (lambda m: m.autograd.functional.hvp(_cube, _x(m)), ["v can only be None"]),
    "hvp_shape": (lambda m: m.autograd.functional.hvp(_cube, _x(m), m.ones(2)),
                  ["v has invalid size"]),
    "vhp_missing": (lambda m: m.autograd.functional.vhp(_cube, _x(m)), ["v can only be None"]),
    "vhp_length": (lambda m: m.autograd.functional.vhp(lambda a, b: _cube(a), _xy(m), m.ones(3)),
                   ["v is a tuple of invalid length: should be 2 but got 1"]),
}


@pytest.mark.parametrize("case", list(BAD_V))
def test_bad_v(case):
    prog, phrases = BAD_V[case]
    raises_like(prog, *phrases)


def _strict(name, func, inputs, v=None, **kw):
    def prog(m):
        fn = getattr(m.autograd.functional, name)
        args = (func(m), inputs(m)) + (() if v is None else (v(m),))
        return fn(*args, strict=True, **kw)

    return prog


def _ones_xy(m):
    return m.ones(3, dtype=m.float64), m.ones(2, dtype=m.float64)


def _w(m):
    return f64(m, [0.3, 0.7], requires_grad=True)


# name: (program, message fragments); each breaks a different strict-mode rule.
STRICT = {
    "vjp_output_without_grad": (
        _strict("vjp", lambda m: lambda a: m.ones(3), _x, lambda m: m.ones(3)),
        ["Output 0 of the user-provided function does not require gradients"]),
    "vjp_independent_input": (
        _strict("vjp", lambda m: lambda a, b: a * 2, _xy, lambda m: m.ones(3, dtype=m.float64)),
        ["The output of the user-provided function is independent of input 1"]),
    "vjp_constant_jacobian_create_graph": (
        _strict("vjp", lambda m: lambda a: a * 2, _x, lambda m: m.ones(3, dtype=m.float64),
                create_graph=True),
        ["jacobian of the user-provided function is independent of input 0",
         "when create_graph=True"]),
    "jvp_output_without_grad": (
        _strict("jvp", lambda m: lambda a, b: (a * 2, b.detach()), _xy, _ones_xy),
        ["Output 1 of the user-provided function does not require gradients"]),
    "jvp_independent_input": (
        _strict("jvp", lambda m: lambda a, b: a * 2, _xy, _ones_xy),
        ["independent of input 1"]),
    "jvp_output_unreached_by_cotangent": (
        _strict("jvp", lambda m: lambda a: (a ** 2, a.detach()[:2] + _w(m)), _x, _x),
        ["independent of entry 1 in the grad_outputs", "double backward trick"]),
    "jvp_constant_create_graph": (
        _strict("jvp", lambda m: lambda a: a * 2, _x, _x, create_graph=True),
        ["jacobian of the user-provided function is independent of input 0"]),
    "jacobian_output_without_grad": (
        _strict("jacobian", lambda m: lambda a, b: m.ones(2), _xy),
        ["Output 0 of the user-provided function does not require gradients"]),
    "jacobian_independent_input": (
        _strict("jacobian", lambda m: lambda a, b: (a * b.sum(), a.sum() * b, a * 2), _xy),
        ["Output 2 of the user-provided function is independent of input 1"]),
    "jacobian_constant_create_graph": (
        _strict("jacobian", lambda m: lambda a, b: (a ** 2).sum() + b.sum(), _xy,
                create_graph=True),
        # torch names the output's index (0) although input 1 is the constant one
        ["The jacobian of the user-provided function is independent of input 0"]),
    "jacobian_vectorize": (
        _strict("jacobian", lambda m: lambda a: a * a, _x, vectorize=True),
        ["`strict=True` and `vectorized=True` are not supported together"]),
    "hessian_output_without_grad": (
        _strict("hessian", lambda m: lambda a: m.ones(()), _x),
        ["Output 0 of the user-provided function does not require gradients"]),
    "hessian_linear": (
        _strict("hessian", lambda m: lambda a: a.sum(), _x),
        ["jacobian of the user-provided function with respect to input 0 is independent",
         "twice differentiable"]),
    "hessian_linear_in_one_input": (
        _strict("hessian", lambda m: lambda a, b: (a ** 2).sum() + b.sum(), _xy),
        ["with respect to input 1 is independent of the input"]),
    "hessian_block_independent": (
        _strict("hessian", lambda m: lambda a, b: (a ** 2).sum() + (a.sum() * b).sum(), _xy),
        ["Output 1 of the user-provided function is independent of input 1"]),
    **{f"{n}_{rule}": (_strict(n, func, inputs, v, **kw), phrases) for n in ("hvp", "vhp")
       for rule, (func, inputs, v, kw, phrases) in {
           "output_without_grad": (lambda m: lambda a: m.ones(()), _x, _x, {},
                                   ["Output 0 of the user-provided function does not require"]),
           "independent_input": (lambda m: lambda a, b: _cube(a), _xy, _xy, {},
                                 ["The output of the user-provided function is independent of "
                                  "input 1"]),
           "linear": (lambda m: lambda a: a.sum(), _x, _x, {},
                      ["jacobian of the user-provided function with respect to input 0"]),
           "constant_hessian_create_graph": (lambda m: lambda a: (a * a).sum(), _x, _x,
                                             {"create_graph": True},
                                             ["The hessian of the user-provided function is "
                                              "independent of input 0", "create_graph=True"]),
       }.items()},
    "vhp_gradient_independent_of_input": (
        _strict("vhp", lambda m: lambda a, b: (a ** 2).sum() + (b * _w(m)).sum(), _xy, _xy),
        ["The jacobian of the user-provided function is independent of input 1"]),
    "hvp_gradient_independent_of_input": (
        _strict("hvp", lambda m: lambda a, b: (a ** 2).sum() + (b * _w(m)).sum(), _xy, _xy),
        ["independent of entry 1 in the grad_jacobian"]),
}


@pytest.mark.parametrize("case", list(STRICT))
def test_strict(case):
    prog, phrases = STRICT[case]
    raises_like(prog, *phrases)


def test_strict_passes_when_everything_depends():
    def prog(m):
        x, y = tensors_like(m, [(3,), (2,)], 5)
        f = m.autograd.functional
        func = lambda a, b: (a.exp() * b.sum()).sum()  # noqa: E731
        return (f.vjp(func, (x, y), strict=True), f.jacobian(func, (x, y), strict=True),
                f.hvp(lambda a, b: (a.exp() * b.sum() ** 2).sum(), (x, y), (x, y), strict=True))

    check(prog)


@pytest.mark.parametrize("name", ["vjp", "jvp", "hvp", "vhp"])
def test_non_strict_fills_zeros(name):
    def prog(m):
        x, y = tensors_like(m, [(3,), (2,)], 6)
        fn = getattr(m.autograd.functional, name)
        func = lambda a, b: (a ** 3).sum()  # noqa: E731
        return fn(func, (x, y), (x, y) if name != "vjp" else None)

    check(prog)


@pytest.mark.parametrize("name", ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"])
@pytest.mark.parametrize("bad", ["number", "in_tuple", "list_inputs", "tuple_input_entry"])
def test_non_tensors_raise_type_error(name, bad):
    def prog(m):
        x = f64(m, [0.5])
        fn = getattr(m.autograd.functional, name)
        if bad == "number":
            return fn(lambda a: 3.0, x)
        if bad == "in_tuple":
            return fn(lambda a: (a.sum(), 3.0), x)
        if bad == "list_inputs":
            return fn(lambda a: a.sum(), [x])
        return fn(lambda a, b: a.sum(), (x, 2.0))

    phrases = {
        "number": [f"The outputs of the user-provided function given to {name} must be either a "
                   "Tensor or a tuple of Tensors", "has type <class 'float'>"],
        "in_tuple": ["the value at index 1 has type <class 'float'>"],
        "list_inputs": [f"The inputs given to {name} must be either a Tensor or a tuple of "
                        "Tensors but the given inputs has type <class 'list'>"],
        "tuple_input_entry": ["the value at index 1 has type <class 'float'>"],
    }[bad]
    raises_like(prog, *phrases)


@pytest.mark.parametrize("name", ["hessian", "hvp", "vhp"])
@pytest.mark.parametrize("bad", ["tuple", "several_elements"])
def test_scalar_functions_need_one_element(name, bad):
    def prog(m):
        x = _x(m)
        fn = getattr(m.autograd.functional, name)
        func = (lambda a: (a.sum(),)) if bad == "tuple" else (lambda a: a * 2)
        return fn(func, x) if name == "hessian" else fn(func, x, x)

    phrase = ("should return a single Tensor" if bad == "tuple" else
              "should contain a single element")
    raises_like(prog, f"The function given to {name}" if bad == "tuple" else
                f"The Tensor returned by the function given to {name}", phrase)


def test_unknown_strategy():
    raises_like(lambda m: m.autograd.functional.jacobian(lambda a: a, _x(m), strategy="fast"),
                'Expected strategy to be either "forward-mode" or "reverse-mode"')
    raises_like(lambda m: m.autograd.functional.hessian(
        _cube, _x(m), outer_jacobian_strategy="fast"), "Expected strategy")


def test_forward_mode_needs_vectorize():
    raises_like(lambda m: m.autograd.functional.jacobian(
        lambda a: a, _x(m), strategy="forward-mode"), "only implemented for `vectorize=True`")


def test_forward_mode_with_create_graph():
    raises_like(lambda m: m.autograd.functional.jacobian(
        lambda a: a, _x(m), strategy="forward-mode", vectorize=True, create_graph=True),
        '`create_graph=True` and `strategy="forward-mode"` are not supported together')


@pytest.mark.parametrize("name", ["jacobian", "hessian"])
def test_forward_mode_gives_the_same_result(name):
    """torch computes these with forward-mode AD; graphgrad's reverse-mode loop matches it."""
    key = "strategy" if name == "jacobian" else "outer_jacobian_strategy"
    same(lambda m: getattr(m.autograd.functional, name)(
        _cube, _x(m), vectorize=True, **{key: "forward-mode"}))
