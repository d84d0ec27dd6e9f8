"""Tensor basics compared with torch: creation functions and their shape/dtype/requires_grad
arguments, random numbers and seeding, attributes (shape, size, dim, device, T, mT) and
conversions (numpy, item, tolist, Python scalars, dtype and device moves).
"""

import importlib.util
import operator
import pathlib

import numpy as np
import pytest

_spec = importlib.util.spec_from_file_location(
    "_gg_test_helpers", pathlib.Path(__file__).parent / "autograd" / "_helpers.py"
)
h = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(h)

same = h.same
raises_like = h.raises_like


def desc(t):
    return str(t.dtype), tuple(t.shape), t.requires_grad, t.is_leaf


# --------------------------------------------------------------------------------- tensor()

TENSOR_DATA = {
    "float": 2.5,
    "int": 3,
    "bool": True,
    "neg_int": -7,
    "list_float": [1.0, 2.0, 3.5],
    "list_int": [1, 2, 3],
    "list_bool": [True, False],
    "mixed_int_float": [1, 2.5],
    "mixed_bool_int": [True, 1],
    "mixed_bool_float": [True, 1.5],
    "nested": [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]],
    "tuple_nested": ((1, 2), (3, 4)),
    "empty": [],
    "empty_nested": [[], []],
    "deep": [[[1], [2]], [[3], [4]]],
}


@pytest.mark.parametrize("name", list(TENSOR_DATA))
def test_tensor_from_python_data(name):
    def prog(m):
        t = m.tensor(TENSOR_DATA[name])
        return t, desc(t)

    same(prog)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "int16", "int32",
                                   "int64", "uint8", "bool"])
def test_tensor_with_dtype(dtype):
    def prog(m):
        t = m.tensor([0, 1, 2, 3], dtype=getattr(m, dtype))
        f = m.tensor([0.0, 1.7, -0.2], dtype=getattr(m, dtype)) if dtype != "uint8" else None
        return t, f

    same(prog)


def test_tensor_requires_grad_and_device_arguments():
    def prog(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        b = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        c = m.tensor([1.0], device="cpu")
        d = m.tensor([1.0], device=m.device("cpu"))
        return desc(a), desc(b), c, str(d.device)

    same(prog)


def test_ragged_list_raises():
    raises_like(lambda m: m.tensor([[1, 2], [3]]))


@pytest.mark.parametrize("np_dtype", ["float64", "float32", "float16", "int64", "int32", "int16",
                                      "int8", "uint8", "bool"])
def test_tensor_from_numpy_array_keeps_dtype_and_copies(np_dtype):
    def prog(m):
        arr = np.array([1, 0, 2]).astype(np_dtype)
        t = m.tensor(arr)
        arr[0] = 0
        return t

    same(prog)


def test_tensor_from_numpy_scalar_and_0d_array():
    def prog(m):
        return m.tensor(np.float64(1.5)), m.tensor(np.array(2, dtype=np.int32)), m.tensor(
            np.float32(0.25))

    same(prog)


# ------------------------------------------------------------------------ as_tensor, from_numpy


def test_as_tensor_of_list_and_dtype():
    same(lambda m: (m.as_tensor([1, 2]), m.as_tensor([1.5, 2.0], dtype=m.float64)))


def test_as_tensor_shares_memory_with_numpy():
    def prog(m):
        arr = np.array([1.0, 2.0])
        t = m.as_tensor(arr)
        arr[0] = 9.0
        other = np.array([1.0, 2.0], dtype=np.float32)
        converted = m.as_tensor(other, dtype=m.float64)
        other[0] = 9.0
        return t, converted

    same(prog)


def test_as_tensor_of_a_tensor():
    def prog(m):
        t = m.tensor([1.0, 2.0])
        same_obj = m.as_tensor(t) is t
        d = m.as_tensor(t, dtype=m.float64)
        return same_obj, d, m.as_tensor(t, dtype=m.float32) is t

    same(prog)


@pytest.mark.parametrize("np_dtype", ["float64", "float32", "float16", "int64", "int32", "int16",
                                      "int8", "uint8", "bool"])
def test_from_numpy_dtype(np_dtype):
    same(lambda m: m.from_numpy(np.array([1, 0, 1]).astype(np_dtype)))


def test_from_numpy_shares_memory_both_ways():
    def prog(m):
        arr = np.zeros((2, 3))
        t = m.from_numpy(arr)
        arr[0, 1] = 5.0
        seen_by_tensor = t.clone()
        t[1, 2] = 7.0
        t.add_(1)
        return seen_by_tensor, arr.tolist(), t

    same(prog)


def test_from_numpy_of_non_contiguous_view():
    def prog(m):
        arr = np.arange(12.0).reshape(3, 4)[:, ::2]
        return m.from_numpy(arr)

    same(prog)


def test_from_numpy_rejects_non_arrays():
    raises_like(lambda m: m.from_numpy([1.0, 2.0]))


def test_numpy_shares_memory():
    def prog(m):
        t = m.ones(3)
        n = t.numpy()
        n[0] = 5.0
        t.mul_(2)
        return t, n.tolist(), str(n.dtype)

    same(prog)


# ------------------------------------------------------------------------------ factories

SHAPES = {
    "ints": ((2, 3), {}),
    "tuple": (((2, 3),), {}),
    "list": (([2, 3],), {}),
    "size_kw": ((), {"size": (2, 3)}),
    "one_int": ((4,), {}),
    "scalar": (((),), {}),
    "zero": ((0,), {}),
    "zero_in_shape": ((2, 0, 3), {}),
}


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("factory", ["zeros", "ones", "empty", "rand", "randn"])
def test_factory_shapes(factory, shape):
    args, kwargs = SHAPES[shape]

    def prog(m):
        t = getattr(m, factory)(*args, **kwargs)
        out = desc(t)
        if factory in ("zeros", "ones"):
            out += (t,)
        return out

    same(prog)


@pytest.mark.parametrize("factory", ["zeros", "ones", "empty", "rand", "randn"])
def test_factory_dtype_and_requires_grad(factory):
    def prog(m):
        f = getattr(m, factory)
        a = f(2, 3, dtype=m.float64)
        b = f((2,), requires_grad=True)
        c = f(3, dtype=m.float16)
        return desc(a), desc(b), desc(c)

    same(prog)


@pytest.mark.parametrize("factory", ["zeros", "ones", "empty"])
def test_factory_integer_and_bool_dtypes(factory):
    def prog(m):
        f = getattr(m, factory)
        out = [desc(f(2, dtype=d)) for d in (m.int64, m.int32, m.uint8, m.bool)]
        if factory != "empty":
            out.append([f(2, dtype=d) for d in (m.int64, m.int8, m.bool)])
        return out

    same(prog)


def test_rand_integer_dtype_raises():
    expected = h.outcome(lambda m: m.rand(2, dtype=m.int64), h.torch)
    # torch raises NotImplementedError, a RuntimeError subclass; RuntimeError is the contract.
    assert isinstance(expected, h.Raised) and isinstance(expected.exc, RuntimeError), expected
    actual = h.outcome(lambda m: m.rand(2, dtype=m.int64), h.gg)
    assert isinstance(actual, h.Raised) and isinstance(actual.exc, RuntimeError), actual


FULL_CASES = {
    "int_fill": lambda m: m.full((2, 3), 7),
    "float_fill": lambda m: m.full((2,), 1.5),
    "bool_fill": lambda m: m.full((2,), True),
    "dtype": lambda m: m.full((2, 2), 3, dtype=m.float64),
    "list_shape": lambda m: m.full([3], -1.0),
    "size_kw": lambda m: m.full(size=(1, 2), fill_value=2.0),
    "requires_grad": lambda m: m.full((2,), 0.5, requires_grad=True),
    "scalar": lambda m: m.full((), 4.0),
}


@pytest.mark.parametrize("name", list(FULL_CASES))
def test_full(name):
    def prog(m):
        t = FULL_CASES[name](m)
        return t, desc(t)

    same(prog)


LIKE_CASES = {
    "zeros_like": lambda m, x: m.zeros_like(x),
    "ones_like": lambda m, x: m.ones_like(x),
    "full_like": lambda m, x: m.full_like(x, 7),
    "full_like_float_into_int": lambda m, x: m.full_like(x.long(), 2.7),
    "zeros_like_dtype": lambda m, x: m.zeros_like(x, dtype=m.int32),
    "ones_like_int_source": lambda m, x: m.ones_like(x.int()),
    "ones_like_requires_grad": lambda m, x: m.ones_like(x, requires_grad=True),
    "empty_like": lambda m, x: m.empty_like(x).shape,
    "empty_like_dtype": lambda m, x: m.empty_like(x, dtype=m.float64).dtype,
    "rand_like": lambda m, x: desc(m.rand_like(x)),
    "randn_like": lambda m, x: desc(m.randn_like(x)),
}


@pytest.mark.parametrize("name", list(LIKE_CASES))
def test_like_factories(name):
    def prog(m):
        x = m.tensor([[1.5, 2.5, 3.5], [4.5, 5.5, 6.5]], requires_grad=True)
        r = LIKE_CASES[name](m, x)
        return (r, desc(r)) if h.is_tensor(r) else r

    same(prog)


ARANGE_CASES = {
    "end": lambda m: m.arange(5),
    "start_end": lambda m: m.arange(2, 7),
    "step": lambda m: m.arange(1, 10, 3),
    "negative_step": lambda m: m.arange(5, 0, -2),
    "float_step": lambda m: m.arange(0, 1, 0.25),
    "float_end": lambda m: m.arange(5.0),
    "dtype": lambda m: m.arange(1, 4, dtype=m.float64),
    "keywords": lambda m: m.arange(start=1, end=3),
    "empty": lambda m: m.arange(0),
    "requires_grad": lambda m: m.arange(3.0, requires_grad=True),
}


@pytest.mark.parametrize("name", list(ARANGE_CASES))
def test_arange(name):
    def prog(m):
        t = ARANGE_CASES[name](m)
        return t, desc(t)

    same(prog)


LINSPACE_EYE_CASES = {
    "linspace": lambda m: m.linspace(0, 1, 5),
    "linspace_steps_kw": lambda m: m.linspace(-2, 2, steps=9),
    "linspace_int_ends": lambda m: m.linspace(0, 10, 5),
    "linspace_dtype": lambda m: m.linspace(0, 1, steps=3, dtype=m.float64),
    "linspace_one": lambda m: m.linspace(3, 7, 1),
    "linspace_reverse": lambda m: m.linspace(1, 0, 4),
    "eye": lambda m: m.eye(3),
    "eye_rect": lambda m: m.eye(2, 3),
    "eye_kw": lambda m: m.eye(n=3, m=1),
    "eye_dtype": lambda m: m.eye(2, dtype=m.int64),
    "eye_requires_grad": lambda m: m.eye(2, requires_grad=True),
}


@pytest.mark.parametrize("name", list(LINSPACE_EYE_CASES))
def test_linspace_and_eye(name):
    def prog(m):
        t = LINSPACE_EYE_CASES[name](m)
        return t, desc(t)

    same(prog)


# --------------------------------------------------------------------------------- random


RANDOM_CASES = {
    "randint_high": lambda m: m.randint(5, (3,)),
    "randint_low_high": lambda m: m.randint(2, 5, (4, 2)),
    "randint_size_kw": lambda m: m.randint(0, 5, size=(2, 2)),
    "randint_dtype": lambda m: m.randint(3, (2,), dtype=m.int32),
    "randint_float_dtype": lambda m: m.randint(3, (2,), dtype=m.float32),
    "normal_floats_size": lambda m: m.normal(0.0, 1.0, size=(3,)),
    "normal_positional_size": lambda m: m.normal(2.0, 3.0, (4,)),
    "normal_tensors": lambda m: m.normal(m.zeros(3), m.ones(3)),
    "normal_tensor_mean": lambda m: m.normal(m.zeros(2, 2), 1.0),
    "normal_tensor_std": lambda m: m.normal(0.0, m.ones(5)),
    "rand_float64": lambda m: m.rand(3, dtype=m.float64),
    "randn_requires_grad": lambda m: m.randn(2, requires_grad=True),
}


@pytest.mark.parametrize("name", list(RANDOM_CASES))
def test_random_shapes_and_dtypes(name):
    same(lambda m: desc(RANDOM_CASES[name](m)))


@pytest.mark.parametrize("m", h.MODULES, ids=lambda m: m.__name__)
def test_random_ranges(m):
    r = m.rand(2000).numpy()
    assert r.min() >= 0.0 and r.max() < 1.0 and 0.4 < r.mean() < 0.6
    n = m.randn(4000).numpy()
    assert abs(n.mean()) < 0.1 and 0.9 < n.std() < 1.1
    i = m.randint(2, 5, (2000,)).numpy()
    assert set(i.tolist()) == {2, 3, 4}
    g = m.normal(10.0, 0.5, size=(4000,)).numpy()
    assert abs(g.mean() - 10.0) < 0.05 and 0.45 < g.std() < 0.55


@pytest.mark.parametrize("m", h.MODULES, ids=lambda m: m.__name__)
def test_manual_seed_reproducibility(m):
    def draw():
        return [m.rand(4).tolist(), m.randn(3).tolist(), m.randint(0, 100, (5,)).tolist(),
                m.normal(0.0, 1.0, size=(2,)).tolist()]

    m.manual_seed(1234)
    first = draw()
    m.manual_seed(1234)
    second = draw()
    m.manual_seed(4321)
    third = draw()
    assert first == second
    assert first != third


@pytest.mark.parametrize("m", h.MODULES, ids=lambda m: m.__name__)
def test_generator_argument(m):
    g1 = m.Generator().manual_seed(7)
    assert isinstance(g1, m.Generator)
    g2 = m.Generator()
    g2.manual_seed(7)

    def draw(g):
        return [m.rand(3, generator=g).tolist(), m.randn(2, generator=g).tolist(),
                m.randint(0, 50, (4,), generator=g).tolist(),
                m.normal(0.0, 1.0, size=(2,), generator=g).tolist()]

    a = draw(g1)
    m.manual_seed(0)
    m.rand(10)
    b = draw(g2)
    assert a == b
    assert draw(g1) != a


@pytest.mark.parametrize("m", h.MODULES, ids=lambda m: m.__name__)
def test_generator_does_not_touch_global_state(m):
    m.manual_seed(99)
    expected = m.rand(3).tolist()
    m.manual_seed(99)
    m.rand(5, generator=m.Generator().manual_seed(1))
    assert m.rand(3).tolist() == expected


# ------------------------------------------------------------------------------ attributes


def test_shape_size_dim_numel():
    def prog(m):
        x = m.zeros(2, 3)
        s = x.shape
        return (str(s), repr(s), s == (2, 3), s == [2, 3], isinstance(s, tuple), tuple(s),
                x.size(), x.size(0), x.size(-1), x.size(dim=1), x.dim(), x.ndim, x.numel(),
                len(x), s[1], s[-1], list(s), type(s).__name__, x.shape == x.size(),
                str(m.zeros(()).shape), m.zeros(()).numel(), m.zeros(()).dim(), m.zeros(4).size())

    same(prog)


def test_size_class_is_exposed():
    def prog(m):
        return m.Size([2, 3]) == (2, 3), str(m.Size([2, 3])), m.zeros(2, 3).shape == m.Size([2, 3])

    same(prog)


def test_size_dim_out_of_range_raises():
    raises_like(lambda m: m.zeros(2, 3).size(2), "Dimension out of range")


def test_dtype_and_device_attributes():
    def prog(m):
        x = m.tensor([1.0, 2.0])
        return (str(x.dtype), repr(x.device), str(x.device), x.device.type, x.device.index,
                x.device == m.device("cpu"), repr(m.device("cpu")), str(m.device("cpu")),
                x.is_floating_point(), m.tensor([1]).is_floating_point())

    same(prog)


def test_transposes():
    def prog(m):
        x = m.tensor(h.data((2, 3)))
        b = m.tensor(h.data((4, 2, 3)))
        return x.T, b.mT, x.mT, x.T.shape, b.mT.shape

    same(prog)


def test_mt_on_1d_raises():
    raises_like(lambda m: m.ones(3).mT)


# ----------------------------------------------------------------------------- conversions


def test_numpy_values_and_dtype():
    def prog(m):
        out = []
        for d in (m.float32, m.float64, m.float16, m.int64, m.int32, m.uint8, m.bool, m.int8):
            n = m.tensor([1, 0, 1], dtype=d).numpy()
            out.append((type(n).__name__, str(n.dtype), n.tolist()))
        return out

    same(prog)


def test_numpy_of_requires_grad_tensor_raises():
    raises_like(lambda m: m.ones(2, requires_grad=True).numpy(), "detach")


@pytest.mark.filterwarnings("ignore:__array__ implementation doesn't accept a copy keyword")
def test_array_protocol():
    def prog(m):
        t = m.tensor([[1.0, 2.0], [3.0, 4.0]])
        a = np.asarray(t)
        b = np.asarray(t, dtype=np.float64)
        c = np.array(m.tensor([1, 2]))
        return str(a.dtype), a.tolist(), str(b.dtype), str(c.dtype), c.tolist()

    same(prog)


def test_item():
    def prog(m):
        vals = [m.tensor(2.5).item(), m.tensor([3]).item(), m.tensor(True).item(),
                m.tensor([[1.5]]).item(), m.tensor(7, dtype=m.uint8).item(),
                m.tensor(0.5, dtype=m.float16).item(), m.tensor(-1, dtype=m.int8).item()]
        return vals, [type(v).__name__ for v in vals]

    same(prog)


def test_item_of_a_requires_grad_tensor():
    same(lambda m: (m.tensor(1.5, requires_grad=True) * 2).item())


def test_item_on_multi_element_raises():
    raises_like(lambda m: m.tensor([1.0, 2.0]).item(), "cannot be converted to Scalar")


def test_tolist():
    def prog(m):
        return (m.tensor(2.0).tolist(), m.tensor([[1, 2], [3, 4]]).tolist(),
                m.tensor([True, False]).tolist(), m.tensor([1.5], dtype=m.float16).tolist(),
                m.zeros(2, 0).tolist(), m.tensor([1.0], requires_grad=True).tolist())

    same(prog)


def test_python_scalar_conversions():
    def prog(m):
        return (float(m.tensor(2.5)), int(m.tensor(3.9)), int(m.tensor(-3.9)), bool(m.tensor(0.0)),
                bool(m.tensor([2])), float(m.tensor([[1.5]])), int(m.tensor([7])),
                bool(m.tensor(True)), float(m.tensor(3)))

    same(prog)


def test_operator_index():
    def prog(m):
        i = m.tensor(2)
        data = [10, 20, 30]
        return operator.index(i), data[i], list(range(5))[m.tensor(1):m.tensor(3)]

    same(prog)


def test_operator_index_of_float_tensor_raises():
    raises_like(lambda m: operator.index(m.tensor(1.0)), "only integer tensors")


@pytest.mark.parametrize("case", ["bool", "bool_empty", "float", "int"])
def test_multi_element_conversion_raises(case):
    progs = {
        "bool": lambda m: bool(m.tensor([1.0, 2.0])),
        "bool_empty": lambda m: bool(m.tensor([])),
        "float": lambda m: float(m.tensor([1.0, 2.0])),
        "int": lambda m: int(m.tensor([1, 2])),
    }
    phrases = {"bool": ("ambiguous",), "bool_empty": ("ambiguous",)}
    raises_like(progs[case], *phrases.get(case, ()))


def test_len_and_iteration():
    def prog(m):
        x = m.tensor([[1, 2], [3, 4], [5, 6]])
        rows = list(x)
        return len(x), rows, [len(r) for r in rows], [v.item() for v in m.tensor([1.5, 2.5])]

    same(prog)


@pytest.mark.parametrize("case", ["len", "iter"])
def test_len_and_iteration_of_0d_raise(case):
    progs = {"len": lambda m: len(m.tensor(1.0)), "iter": lambda m: list(m.tensor(1.0))}
    raises_like(progs[case], "0-d tensor")


def test_hash_by_identity():
    def prog(m):
        a = m.tensor([1.0])
        b = m.tensor([1.0])
        d = {a: "a", b: "b"}
        s = {a, b, a}
        return d[a], d[b], len(s), a in s, m.tensor([1.0]) in {a: 1}, hash(a) == hash(a)

    same(prog)


def test_comparisons_return_bool_tensors():
    def prog(m):
        a = m.tensor([1.0, 2.0, 3.0])
        b = m.tensor([3.0, 2.0, 1.0])
        return (a < b, a <= b, a > b, a >= b, a == b, a != b, a < 2, 2 < a, a == 2.0,
                m.tensor([1, 2]) == m.tensor([1.0, 2.5]))

    same(prog)


def test_comparison_does_not_require_grad():
    def prog(m):
        a = m.tensor([1.0, 2.0], requires_grad=True)
        c = a > 1
        return c, c.requires_grad, h.fn(c)

    same(prog)


def test_to_dtype():
    def prog(m):
        x = m.tensor([-1.7, 0.0, 2.7])
        return (x.to(m.float64), x.to(m.int64), x.to(m.int32), x.to(m.bool), x.to(m.float16),
                x.to(dtype=m.float64), x.to("cpu", m.float64), x.to(device="cpu", dtype=m.int8),
                x.to(m.tensor([1], dtype=m.int16)))

    same(prog)


def test_to_without_change_returns_self():
    def prog(m):
        x = m.tensor([1.0, 2.0])
        return x.to(m.float32) is x, x.to("cpu") is x, x.cpu() is x, x.float() is x

    same(prog)


def test_dtype_shortcuts():
    def prog(m):
        x = m.tensor([-1.7, 0.0, 2.7, 300.0])
        return (x.float(), x.double(), x.half(), x.long(), x.int(), x.bool(), x.short(),
                m.tensor([1, 0, 3]).float(), m.tensor([True, False]).long())

    same(prog)


def test_type_with_dtype():
    def prog(m):
        x = m.tensor([1.5, 2.5])
        return x.type(m.float64), x.type(m.int64), x.type(dtype=m.int32)

    same(prog)


def test_conversion_is_differentiable():
    def prog(m):
        w = m.tensor([1.0, 2.0], requires_grad=True)
        y = w.to(m.float64)
        (y * y).sum().backward()
        return y, h.fn(y), w.grad, w.double().requires_grad

    same(prog)


def test_cpu_device_arguments():
    def prog(m):
        return (m.zeros(2, device="cpu"), m.ones(2, device=m.device("cpu")),
                m.arange(3, device="cpu"), m.tensor([1.0]).to("cpu"), m.tensor([1.0]).cpu(),
                m.tensor([1.0]).to(m.device("cpu")), str(m.full((1,), 2.0, device="cpu").device))

    same(prog)


CUDA_CASES = {
    "tensor": lambda m: m.tensor([1.0], device="cuda"),
    "zeros": lambda m: m.zeros(2, device="cuda"),
    "to": lambda m: m.ones(2).to("cuda"),
    "to_device": lambda m: m.ones(2).to(m.device("cuda")),
    "cuda_method": lambda m: m.ones(2).cuda(),
}


@pytest.mark.parametrize("name", list(CUDA_CASES))
def test_cuda_raises_a_clear_error(name):
    expected = h.outcome(CUDA_CASES[name], h.torch)
    assert isinstance(expected, h.Raised), "oracle torch was expected to lack CUDA"
    actual = h.outcome(CUDA_CASES[name], h.gg)
    assert isinstance(actual, h.Raised), f"graphgrad did not raise: {actual!r}"
    assert isinstance(actual.exc, (RuntimeError, type(expected.exc))), actual
    assert "cuda" in str(actual.exc).lower(), actual


def test_repr_of_simple_tensors():
    def prog(m):
        ts = [m.tensor([1.0, 2.0, 3.0]), m.tensor([1, 2]), m.tensor(True), m.tensor(3),
              m.tensor([1.0, 2.0], dtype=m.float64), m.tensor([1.5, 2.0], requires_grad=True),
              m.tensor([1, 2], dtype=m.int32), m.zeros(2, 2), m.tensor([]), m.tensor(-0.5)]
        return [repr(t) for t in ts]

    same(prog)
