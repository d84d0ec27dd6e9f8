"""Generated kernels against the ops' own NumPy forwards (the eager arithmetic): every templated
elementwise op, in float32 and float64, on ordinary and special values (0, -0, inf, NaN); the
broadcast index arithmetic; trailing reductions; the disk cache across processes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from graphgrad.compiler.codegen import KernelSpec, Lit, Term, get_backend
from graphgrad.compiler.codegen.templates import TEMPLATES
from graphgrad.ops import OPS

pytest.importorskip("numba", reason="the numba backend needs numba (graphgrad[compile])")

# (op, literal operands after the tensor ones, params)
UNARY = [
    ("neg", (), {}), ("abs", (), {}), ("exp", (), {}), ("exp2", (), {}), ("log", (), {}),
    ("log2", (), {}), ("log10", (), {}), ("log1p", (), {}), ("expm1", (), {}),
    ("sqrt", (), {}), ("rsqrt", (), {}), ("sin", (), {}), ("cos", (), {}), ("tan", (), {}),
    ("tanh", (), {}), ("sigmoid", (), {}), ("erf", (), {}), ("reciprocal", (), {}),
    ("square", (), {}), ("relu", (), {}), ("sign", (), {}), ("floor", (), {}),
    ("ceil", (), {}), ("trunc", (), {}), ("round", (), {}), ("isnan", (), {}),
    ("isinf", (), {}), ("isfinite", (), {}), ("logical_not", (), {}),
    ("pow.Tensor_Scalar", (2,), {}), ("pow.Tensor_Scalar", (3,), {}),
    ("pow.Tensor_Scalar", (0.5,), {}), ("pow.Tensor_Scalar", (-1,), {}),
    ("pow.Tensor_Scalar", (1.7,), {}), ("clamp", (-0.5, 0.75), {}), ("clamp", (None, 0.2), {}),
    ("gelu", (), {}), ("gelu", (), {"approximate": "tanh"}), ("silu", (), {}),
    ("softplus", (), {"beta": 2.0, "threshold": 10.0}), ("log_sigmoid", (), {}),
    ("mish", (), {}), ("elu", (), {"alpha": 1.3, "scale": 1.0, "input_scale": 1.0}),
    ("celu", (), {"alpha": 0.5, "scale": 1.0, "input_scale": 2.0}),
    ("leaky_relu", (), {"negative_slope": 0.1}),
    ("hardtanh", (), {"min_val": -0.5, "max_val": 2.0}), ("hardsigmoid", (), {}),
    ("hardswish", (), {}), ("logit", (), {"eps": 0.1}), ("logit", (), {}),
    ("hardshrink", (), {"lambd": 0.5}), ("softshrink", (), {"lambd": 0.5}),
    ("threshold", (), {"threshold": 0.1, "value": 20.0}),
    ("to", (), {"dtype": np.dtype(np.float64)}), ("to", (), {"dtype": np.dtype(np.bool_)}),
]
BINARY = [
    ("add", {}), ("add", {"alpha": 2}), ("sub", {}), ("sub", {"alpha": 0.5}), ("rsub", {}),
    ("mul", {}), ("div", {}), ("remainder", {}), ("fmod.Tensor", {}),  # floor_divide: unfused
    ("pow.Tensor_Tensor", {}), ("maximum", {}), ("minimum", {}), ("eq", {}), ("ne", {}),
    ("lt", {}), ("le", {}), ("gt", {}), ("ge", {}), ("logical_and", {}), ("logical_or", {}),
    ("logical_xor", {}), ("hypot", {}), ("atan2", {}), ("logaddexp", {}), ("xlogy.Tensor", {}),
    ("binary_cross_entropy", {}),
]
TERNARY = [("addcmul", {"value": 0.5}), ("addcdiv", {"value": 2.0}), ("lerp.Tensor", {})]


def _values(dtype, n=64):
    rng = np.random.default_rng(0)
    special = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, np.inf, -np.inf, np.nan, 1e-5, 3.0,
                        -3.0, 0.25, 0.75, 20.0, -20.0])
    return np.concatenate([special, rng.uniform(-4, 4, n)]).astype(dtype)


def _tol(dtype):
    # float32: tanh_f32 and libm may differ from NumPy's SIMD functions by a few ulp
    return dict(rtol=4e-6, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-13, atol=1e-14)


def _run_spec(spec, arrays, backend="numba"):
    return get_backend(backend).compile(spec)(*arrays)


def _eager(op, args, params):
    return np.asarray(OPS[op].forward(np, *args, **params)) if op != "cast" else None


def _check(outs, refs, dtype, names):
    for got, ref, name in zip(outs, refs, names):
        assert got.dtype == ref.dtype, name
        if ref.dtype.kind == "f":
            np.testing.assert_allclose(got, ref, equal_nan=True, err_msg=name, **_tol(dtype))
        else:
            np.testing.assert_array_equal(got, ref, err_msg=name)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_templates_match_forward(dtype):
    x = _values(dtype)
    terms, refs, names = [], [], []
    for name, lits, params in UNARY:
        ref = _eager(name, (x, *lits), params)
        terms.append(Term(OPS[name], (0, *map(Lit, lits)), params, ref.dtype, x.shape))
        refs.append(ref)
        names.append(f"{name}{lits}{params}")
    spec = KernelSpec(x.shape, [(x.shape, x.dtype)], terms, list(range(1, len(terms) + 1)))
    _check(_run_spec(spec, [x]), refs, dtype, names)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_binary_and_ternary_templates_match_forward(dtype):
    a = _values(dtype)
    b = np.roll(_values(dtype), 5)
    p = np.abs(np.sin(a)).astype(dtype)  # probabilities for binary_cross_entropy
    terms, refs, names = [], [], []
    for name, params in BINARY:
        args = (p, b) if name == "binary_cross_entropy" else (a, b)
        ref = _eager(name, args, params)
        slots = (2, 1) if name == "binary_cross_entropy" else (0, 1)
        terms.append(Term(OPS[name], slots, params, ref.dtype, a.shape))
        refs.append(ref)
        names.append(name)
    for name, params in TERNARY:
        ref = _eager(name, (a, b, p), params)
        terms.append(Term(OPS[name], (0, 1, 2), params, ref.dtype, a.shape))
        refs.append(ref)
        names.append(name)
    inputs = [(a.shape, a.dtype)] * 3
    outs = [3 + i for i in range(len(terms))]
    spec = KernelSpec(a.shape, inputs, terms, outs)
    _check(_run_spec(spec, [a, b, p]), refs, dtype, names)


def test_where_with_a_literal_branch():
    a = _values(np.float32)
    b = np.roll(a, 3)
    terms = [Term(OPS["gt"], (0, 1), {}, np.bool_, a.shape),
             Term(OPS["where"], (2, 0, Lit(2.5)), {"dtype": np.dtype(np.float32)}, np.float32,
                  a.shape)]
    spec = KernelSpec(a.shape, [(a.shape, a.dtype)] * 2, terms, [3])
    (got,) = _run_spec(spec, [a, b])
    np.testing.assert_array_equal(got, np.where(a > b, a, np.float32(2.5)))


def test_integer_and_bool_templates():
    a = np.arange(-6, 10, dtype=np.int64)
    b = np.array([3, -2, 5, 1] * 4, dtype=np.int64)
    names = ["add", "sub", "mul", "maximum", "minimum", "eq", "lt", "bitwise_and",
             "bitwise_xor"]
    terms, refs = [], []
    for name in names:
        ref = _eager(name, (a, b), {})
        terms.append(Term(OPS[name], (0, 1), {}, ref.dtype, a.shape))
        refs.append(ref)
    spec = KernelSpec(a.shape, [(a.shape, a.dtype)] * 2, terms, [2 + i for i in range(len(terms))])
    _check(_run_spec(spec, [a, b]), refs, np.int64, names)


def test_broadcast_index_arithmetic():
    rng = np.random.default_rng(1)
    shape = (2, 3, 4, 5)
    x = rng.standard_normal(shape).astype(np.float32)
    c = rng.standard_normal((3, 1, 1)).astype(np.float32)
    w = rng.standard_normal((5,)).astype(np.float32)
    r = rng.standard_normal((2, 1, 4, 1)).astype(np.float32)
    s = np.array(0.5, np.float32)
    ins = [x, c, w, r, s]
    terms = [Term(OPS["mul"], (0, 1), {}, np.float32, shape),
             Term(OPS["add"], (5, 2), {}, np.float32, shape),
             Term(OPS["sub"], (6, 3), {}, np.float32, shape),
             Term(OPS["mul"], (7, 4), {}, np.float32, shape)]
    spec = KernelSpec(shape, [(a.shape, a.dtype) for a in ins], terms, [8])
    (got,) = _run_spec(spec, ins)
    np.testing.assert_allclose(got, (x * c + w - r) * s, rtol=1e-6)


@pytest.mark.parametrize("op,axes,keepdim", [("sum", None, False), ("mean", None, False),
                                              ("sum.dim_IntList", (2,), False),
                                              ("mean.dim", (1, 2), True)])
def test_trailing_reductions(op, axes, keepdim):
    rng = np.random.default_rng(2)
    shape = (3, 4, 50)
    x = rng.standard_normal(shape).astype(np.float32)
    params = {"shape": shape} if axes is None else {"axes": axes, "keepdim": keepdim,
                                                     "shape": shape}
    ref = np.asarray(OPS[op].forward(np, np.exp(x), **params))
    terms = [Term(OPS["exp"], (0,), {}, np.float32, shape),
             Term(OPS[op], (1,), params, np.float32, ref.shape)]
    spec = KernelSpec(shape, [(shape, np.float32)], terms, [1, 2])
    e, red = _run_spec(spec, [x])
    np.testing.assert_allclose(e, np.exp(x), rtol=1e-6)
    assert red.shape == ref.shape
    np.testing.assert_allclose(red, ref, rtol=2e-6)


def test_large_reduction_uses_the_parallel_variant():
    from graphgrad.compiler.codegen import numba as nb

    n = nb.PARALLEL_MIN * 2
    x = np.random.default_rng(3).standard_normal(n).astype(np.float32)
    terms = [Term(OPS["mul"], (0, 0), {}, np.float32, (n,)),
             Term(OPS["sum"], (1,), {"shape": (n,)}, np.float32, ())]
    spec = KernelSpec((n,), [((n,), np.float32)], terms, [2])
    (got,) = _run_spec(spec, [x])
    np.testing.assert_allclose(got, np.sum(x.astype(np.float64) ** 2), rtol=1e-6)


def test_numpy_backend_is_the_forwards():
    x = _values(np.float32)
    terms = [Term(OPS["tanh"], (0,), {}, np.float32, x.shape),
             Term(OPS["mul"], (1, Lit(2.0)), {}, np.float32, x.shape)]
    spec = KernelSpec(x.shape, [(x.shape, x.dtype)], terms, [2])
    (got,) = _run_spec(spec, [x], "numpy")
    np.testing.assert_array_equal(got, np.tanh(x) * np.float32(2.0))


def test_every_template_names_an_elementwise_op():
    for name in TEMPLATES:
        assert name == "cast" or OPS[name].kind == "elementwise"
    covered = {n for n in TEMPLATES} & {n for n, o in OPS.items() if o.kind == "elementwise"}
    assert len(covered) >= 80


def test_disk_cache_serves_a_second_process(tmp_path):
    script = textwrap.dedent("""
        import numpy as np
        from graphgrad.compiler.codegen import KernelSpec, Term, get_backend
        from graphgrad.ops import OPS
        x = np.linspace(-1, 1, 10, dtype=np.float32)
        spec = KernelSpec(x.shape, [(x.shape, x.dtype)],
                          [Term(OPS["sin"], (0,), {}, np.float32, x.shape),
                           Term(OPS["mul"], (1, 1), {}, np.float32, x.shape)], [2])
        (y,) = get_backend("numba").compile(spec)(x)
        assert np.allclose(y, np.sin(x) ** 2)
        import graphgrad.compiler.codegen.numba as nb
        print(sum(len(d.stats.cache_hits) for d in (nb.cache._modules.popitem()[1].serial,)))
    """)
    env = dict(os.environ, GRAPHGRAD_CACHE_DIR=str(tmp_path))
    env.pop("NUMBA_CACHE_DIR", None)
    first = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                           text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    kernels = list((tmp_path / "kernels").glob("k_*.py"))
    assert len(kernels) == 1
    assert list((tmp_path / "kernels" / "numba").rglob("*.nbi"))
    second = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                            text=True, timeout=300)
    assert second.returncode == 0, second.stderr
    assert first.stdout.strip() == "0" and second.stdout.strip() == "1"
