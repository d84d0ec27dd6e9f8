"""dtypes compared with torch: names, aliases and attributes, default dtype inference, and type
promotion for every pair of the supported dtypes (1-d/0-d tensors and Python scalars), plus
promote_types, result_type and in-place casting rules.
"""

import importlib.util
import itertools
import pathlib

import pytest

_spec = importlib.util.spec_from_file_location(
    "_gg_test_helpers", pathlib.Path(__file__).parent / "autograd" / "_helpers.py"
)
h = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(h)

same = h.same

DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]
ALIASES = {"float": "float32", "double": "float64", "half": "float16", "long": "int64",
           "int": "int32", "short": "int16"}
PAIRS = list(itertools.product(DTYPES, DTYPES))

# Values without zeros in the right operand so that divisions stay finite.
LEFT = {"bool": [True, False, True]}
RIGHT = {"bool": [True, True, True]}
LEFT_DEFAULT = [1, 2, 3]
RIGHT_DEFAULT = [3, 1, 2]


@pytest.mark.parametrize("name", DTYPES)
def test_dtype_names(name):
    def prog(m):
        d = getattr(m, name)
        return (str(d), repr(d), d.is_floating_point, d.is_signed, d.itemsize,
                d == getattr(m, name), d == m.float32, hash(d) == hash(getattr(m, name)))

    same(prog)


@pytest.mark.parametrize("alias", list(ALIASES))
def test_dtype_aliases(alias):
    same(lambda m: (getattr(m, alias) == getattr(m, ALIASES[alias]), str(getattr(m, alias))))


def test_dtypes_are_instances_of_dtype_and_usable_as_keys():
    def prog(m):
        table = {getattr(m, n): n for n in DTYPES}
        return (isinstance(m.float32, m.dtype), len(table), table[m.float], table[m.long],
                m.tensor([1.0]).dtype in (m.float32, m.float64))

    same(prog)


def test_default_dtype():
    same(lambda m: m.get_default_dtype())


INFERENCE = {
    "float": 1.5,
    "int": 2,
    "bool": False,
    "int_and_float": [1, 2.5],
    "bool_and_int": [True, 1],
    "bool_and_float": [True, 1.5],
    "nested_mixed": [[1, 2], [3.0, 4]],
    "empty": [],
    "float_list": [0.1, 0.2],
    "int_list": [1, 2],
    "bool_list": [True, False],
}


@pytest.mark.parametrize("name", list(INFERENCE))
def test_dtype_inference(name):
    same(lambda m: m.tensor(INFERENCE[name]).dtype)


def test_factory_default_dtypes():
    def prog(m):
        made = (m.zeros(2), m.ones(2), m.empty(2), m.rand(2), m.randn(2), m.arange(3),
                m.arange(3.0), m.arange(0, 1, 0.5), m.linspace(0, 1, 3), m.eye(2),
                m.full((1,), 2), m.full((1,), 2.0), m.randint(3, (2,)))
        return [t.dtype for t in made]

    same(prog)


def values(m, name, side, zero_d=False):
    data = (LEFT if side == "left" else RIGHT).get(
        name, LEFT_DEFAULT if side == "left" else RIGHT_DEFAULT
    )
    return m.tensor(data[0] if zero_d else data, dtype=getattr(m, name))


OPS = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "truediv": lambda a, b: a / b,
    "eq": lambda a, b: a == b,
    "lt": lambda a, b: a < b,
    "ge": lambda a, b: a >= b,
}


def binary_results(m, a, b):
    return {name: h.outcome(lambda mm, op=op: op(a, b), m) for name, op in OPS.items()}


LAYOUTS = {
    "1d_1d": (False, False),
    "1d_0d": (False, True),
    "0d_1d": (True, False),
    "0d_0d": (True, True),
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: "-".join(p))
def test_binary_promotion(pair, layout):
    left, right = pair
    lz, rz = LAYOUTS[layout]

    def prog(m):
        a = values(m, left, "left", lz)
        b = values(m, right, "right", rz)
        return binary_results(m, a, b)

    same(prog)


SCALARS = {"int": 2, "neg_int": -1, "float": 2.5, "bool": True}
SCALAR_OPS = {
    "add": lambda t, s: t + s,
    "radd": lambda t, s: s + t,
    "sub": lambda t, s: t - s,
    "rsub": lambda t, s: s - t,
    "mul": lambda t, s: t * s,
    "rmul": lambda t, s: s * t,
    "truediv": lambda t, s: t / s,
    "rtruediv": lambda t, s: s / t,
    "eq": lambda t, s: t == s,
    "gt": lambda t, s: t > s,
}


@pytest.mark.parametrize("scalar", list(SCALARS))
@pytest.mark.parametrize("name", DTYPES)
def test_python_scalars_are_weak(name, scalar):
    def prog(m):
        t = values(m, name, "right")
        s = SCALARS[scalar]
        return {op: h.outcome(lambda mm, f=f: f(t, s), m) for op, f in SCALAR_OPS.items()}

    same(prog)


def test_named_scalar_promotion_examples():
    def prog(m):
        return {
            "int8 + 1": (m.tensor([1], dtype=m.int8) + 1).dtype,
            "int64 * 2.5": (m.tensor([1, 2]) * 2.5).dtype,
            "int32 * 2.5": (m.tensor([1], dtype=m.int32) * 2.5).dtype,
            "float16 + 1.0": (m.tensor([1.0], dtype=m.float16) + 1.0).dtype,
            "bool + 1": (m.tensor([True]) + 1).dtype,
            "bool + True": (m.tensor([True]) + True).dtype,
            "bool * 1.5": (m.tensor([True]) * 1.5).dtype,
            "int / int": (m.tensor([1]) / m.tensor([2])).dtype,
            "int64 1-d + float64 0-d": (m.tensor([1]) + m.tensor(1.0, dtype=m.float64)).dtype,
            "float16 1-d + float64 0-d": (m.tensor([1.0], dtype=m.float16)
                                          + m.tensor(1.0, dtype=m.float64)).dtype,
            "uint8 1-d + int64 0-d": (m.tensor([1], dtype=m.uint8) + m.tensor(300)).dtype,
            "int8 1-d + uint8 1-d": (m.tensor([1], dtype=m.int8)
                                     + m.tensor([1], dtype=m.uint8)).dtype,
        }

    same(prog)


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: "-".join(p))
def test_in_place_casting_rules(pair):
    left, right = pair

    def prog(m):
        out = {}
        for op in ("add_", "mul_"):
            a = values(m, left, "left")
            b = values(m, right, "right")
            out[op] = h.outcome(lambda mm, a=a, b=b, op=op: (getattr(a, op)(b), a), m)
        return out

    same(prog)


@pytest.mark.parametrize("scalar", list(SCALARS))
@pytest.mark.parametrize("name", DTYPES)
def test_in_place_with_python_scalar(name, scalar):
    def prog(m):
        t = values(m, name, "right")

        def iadd(mm):
            nonlocal t
            t += SCALARS[scalar]
            return t

        return h.outcome(iadd, m)

    same(prog)


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: "-".join(p))
def test_promote_types(pair):
    left, right = pair
    same(lambda m: m.promote_types(getattr(m, left), getattr(m, right)))


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: "-".join(p))
def test_result_type_of_tensors(pair):
    left, right = pair

    def prog(m):
        a1, b1 = values(m, left, "left"), values(m, right, "right")
        a0, b0 = values(m, left, "left", True), values(m, right, "right", True)
        return (m.result_type(a1, b1), m.result_type(a1, b0), m.result_type(a0, b1),
                m.result_type(a0, b0))

    same(prog)


@pytest.mark.parametrize("name", DTYPES)
def test_result_type_with_scalars(name):
    def prog(m):
        t = values(m, name, "left")
        return [m.result_type(t, s) for s in (1, 2.5, True)] + [m.result_type(2.5, t)]

    same(prog)


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: "-".join(p))
def test_can_cast(pair):
    if not hasattr(h.gg, "can_cast"):
        pytest.skip("graphgrad does not expose can_cast")
    left, right = pair
    same(lambda m: m.can_cast(getattr(m, left), getattr(m, right)))


@pytest.mark.parametrize("name", DTYPES)
def test_conversion_between_dtypes_keeps_values(name):
    def prog(m):
        src = m.tensor([0.0, 1.0, 2.0, 3.0])
        t = src.to(getattr(m, name))
        return t, t.to(m.float64), t.element_size(), t.is_floating_point()

    same(prog)
