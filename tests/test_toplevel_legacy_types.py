"""The legacy tensor types (FloatTensor, ...) and Tensor.type against torch's."""

import numpy as np
import pytest
import torch

import graphgrad as gg

TYPES = ["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ShortTensor",
         "CharTensor", "ByteTensor", "BoolTensor"]


def outcome(m, f):
    try:
        r = f(m)
    except Exception as ex:  # noqa: BLE001 - the outcome is compared
        return (type(ex).__name__,)
    if isinstance(r, m.Tensor):
        return ("tensor", str(r.dtype), tuple(r.shape), r.numpy().tolist() if r.numel() and
                r.dtype is not m.float16 else None)
    return ("ok", r)


def same(f):
    assert outcome(torch, f) == outcome(gg, f)


@pytest.mark.parametrize("name", TYPES)
@pytest.mark.parametrize("call", [
    lambda T: T(2, 3), lambda T: T([1, 2]), lambda T: T([1.7, -2.2]), lambda T: T(),
    lambda T: T((1, 0)), lambda T: T([[1, 2], [3, 4]]), lambda T: T(np.array([1, 0, 3])),
    lambda T: T(-1), lambda T: T(2.5), lambda T: T([[1, 2], [3]]), lambda T: T(0),
])
def test_construct(name, call):
    def prog(m):
        r = call(getattr(m, name))
        # uninitialised memory: compare only the shape and dtype of T(sizes...)
        return r if r.numel() == 0 or isinstance(r, m.Tensor) and r.shape != (2, 3) else \
            (str(r.dtype), tuple(r.shape))

    same(prog)


@pytest.mark.parametrize("call", [
    lambda m: m.ByteTensor([300]), lambda m: m.ByteTensor([1, -2]),
    lambda m: m.ByteTensor([-256]), lambda m: m.ByteTensor([-0.5]),
    lambda m: m.ByteTensor([255.9]), lambda m: m.CharTensor([200.0]),
    lambda m: m.CharTensor([-128, 127]), lambda m: m.IntTensor([3e9]),
    lambda m: m.BoolTensor([0.5, 0]),
    lambda m: m.LongTensor([True, 2]), lambda m: m.LongTensor([2**62, -(2**62)]),
    lambda m: m.DoubleTensor([0.1, 1e300]), lambda m: m.FloatTensor([m.tensor(1.5), 2]),
])
def test_construct_conversions(call):
    same(call)


def test_construct_from_size_and_tensor():
    same(lambda m: tuple(m.FloatTensor(m.Size([2, 4])).shape))
    for m in (torch, gg):
        t = m.tensor([1.0, 2.0])
        assert m.FloatTensor(t).data_ptr() == t.data_ptr()
    same(lambda m: m.FloatTensor(m.tensor([1, 2])))
    same(lambda m: m.FloatTensor(2, dtype=m.float64))
    same(lambda m: tuple(m.FloatTensor(2, device="cpu").shape))


@pytest.mark.parametrize("name", TYPES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "int16",
                                   "int8", "uint8", "bool"])
def test_isinstance(name, dtype):
    same(lambda m: isinstance(m.zeros(2, dtype=getattr(m, dtype)), getattr(m, name)))


def test_isinstance_other():
    same(lambda m: isinstance(m.nn.Parameter(m.ones(1)), m.FloatTensor))
    same(lambda m: isinstance(1.0, m.FloatTensor))
    same(lambda m: issubclass(m.FloatTensor, m.Tensor))
    same(lambda m: (m.FloatTensor.__name__, repr(m.FloatTensor), str(m.LongTensor.dtype),
                    m.FloatTensor.is_sparse))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "int16",
                                   "int8", "uint8", "bool"])
def test_type_string(dtype):
    same(lambda m: m.zeros(2, dtype=getattr(m, dtype)).type())


@pytest.mark.parametrize("name", TYPES)
def test_type_converts(name):
    same(lambda m: m.tensor([1.5, -2.0, 0.0]).type(getattr(m, name)))
    same(lambda m: m.tensor([1.5, -2.0, 0.0]).type(f"torch.{name}"))


def test_type_dtype_and_errors():
    same(lambda m: m.tensor([1.5]).type(m.float64))
    same(lambda m: m.tensor([1.5]).type("torch.Foo"))
