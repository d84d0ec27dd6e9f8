"""is_tensor, numel, typename, asarray, frombuffer, from_dlpack, empty_strided against torch."""

import warnings

import numpy as np
import pytest
import torch

import graphgrad as gg


def outcome(m, f):
    try:
        r = f(m)
    except Exception as ex:  # noqa: BLE001 - the outcome is compared
        return (type(ex).__name__, str(ex))
    if isinstance(r, m.Tensor):
        return ("tensor", str(r.dtype), tuple(r.shape), r.detach().numpy().tolist(),
                r.requires_grad)
    return ("ok", r)


def same(f):
    want, got = outcome(torch, f), outcome(gg, f)
    assert want == got


@pytest.mark.parametrize("f", [
    lambda m: m.is_tensor(m.ones(1)), lambda m: m.is_tensor([1]),
    lambda m: m.is_tensor(m.nn.Parameter(m.ones(1))), lambda m: m.is_storage(m.ones(1)),
    lambda m: m.numel(m.ones(2, 3)), lambda m: m.numel(m.ones(())), lambda m: m.numel([1]),
    lambda m: m.is_floating_point(m.ones(1)), lambda m: m.is_floating_point(m.ones(1).long()),
    lambda m: m.is_floating_point(1.0), lambda m: m.is_complex(m.ones(1)),
    lambda m: m.typename(m.ones(1)), lambda m: m.typename(m.ones(1, dtype=m.int64)),
    lambda m: m.typename(m.ones(1, dtype=m.bool)), lambda m: m.typename(3),
    lambda m: m.typename(m.nn.Parameter(m.ones(1))), lambda m: m.typename(np.ones(1)),
    lambda m: m.typename(int),
])
def test_queries(f):
    same(f)


def test_typename_of_module_names_its_class():
    assert gg.typename(gg.nn.Linear(1, 1)).endswith(".Linear")


@pytest.mark.parametrize("f", [
    lambda m: m.asarray([1, 2]), lambda m: m.asarray([1, 2.5]), lambda m: m.asarray(3),
    lambda m: m.asarray(np.float64(3)), lambda m: m.asarray([[True], [False]]),
    lambda m: m.asarray([1, 2], dtype=m.float64), lambda m: m.asarray([1, 2], copy=False),
    lambda m: m.asarray([1, 2], requires_grad=True),
    lambda m: m.asarray([1.0, 2], requires_grad=True),
    lambda m: m.asarray(m.ones(2), dtype=m.float64, copy=False),
    lambda m: m.asarray(m.ones(2), dtype=m.float64),
    lambda m: m.asarray(np.ones(2), copy=False, dtype=m.float32),
    lambda m: m.asarray(np.ones(2), dtype=m.float32), lambda m: m.asarray(np.arange(3)),
    lambda m: m.asarray(m.ones(2), requires_grad=True),
    lambda m: m.asarray(m.ones(2, requires_grad=True) * 2, requires_grad=False),
])
def test_asarray(f):
    same(f)


def test_asarray_aliasing():
    for m in (torch, gg):
        t = m.ones(2)
        assert m.asarray(t) is t
        assert m.asarray(t, copy=True) is not t
        a = np.zeros(3, dtype=np.float32)
        x = m.asarray(a)
        a[0] = 5
        assert x[0].item() == 5
        y = m.asarray(a, copy=True)
        a[1] = 7
        assert y[1].item() == 0
        r = m.asarray(t, requires_grad=True)
        assert r is t and t.requires_grad


def test_asarray_keeps_grad_and_warns():
    for m in (torch, gg):
        tt = m.ones(2, requires_grad=True) * 2
        with pytest.warns(UserWarning, match="unspecified requires_grad"):
            r = m.asarray(tt)
        assert r is tt
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert m.asarray(tt, requires_grad=True) is tt


def _buf():
    return bytearray(np.arange(4, dtype=np.float32).tobytes())


@pytest.mark.parametrize("f", [
    lambda m: m.frombuffer(_buf(), dtype=m.float32),
    lambda m: m.frombuffer(_buf(), dtype=m.float32, count=2, offset=4),
    lambda m: m.frombuffer(_buf(), dtype=m.int16, requires_grad=True),
    lambda m: m.frombuffer(_buf(), dtype=m.uint8, count=3),
    lambda m: m.frombuffer(_buf(), dtype=m.float64, requires_grad=True),
    lambda m: m.frombuffer(_buf(), dtype=m.float32, count=5),
    lambda m: m.frombuffer(_buf(), dtype=m.float32, offset=16),
    lambda m: m.frombuffer(_buf(), dtype=m.float32, offset=-1),
    lambda m: m.frombuffer(bytearray(b"abc"), dtype=m.float32),
    lambda m: m.frombuffer(_buf(), dtype=m.float32, offset=2),
    lambda m: m.frombuffer(bytearray(), dtype=m.float32),
    lambda m: m.frombuffer(_buf(), dtype=m.float32, count=0),
])
def test_frombuffer(f):
    same(f)


def test_frombuffer_shares_writable_memory():
    for m in (torch, gg):
        b = _buf()
        t = m.frombuffer(b, dtype=m.float32)
        t[0] = 9.0
        assert np.frombuffer(b, dtype=np.float32)[0] == 9.0


def test_frombuffer_readonly_is_readable():
    # graphgrad copies a read-only buffer (NumPy refuses writes through it); values match.
    raw = bytes(_buf())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = torch.frombuffer(raw, dtype=torch.float32)
    got = gg.frombuffer(raw, dtype=gg.float32)
    assert got.tolist() == want.tolist()
    got[0] = 1.5  # writable
    assert got[0].item() == 1.5


@pytest.mark.parametrize("f", [
    lambda m: m.empty_strided((2, 3), (1, 2)).stride(),
    lambda m: m.empty_strided((2, 3), (3, 1)).stride(),
    lambda m: tuple(m.empty_strided((2, 3), (3, 1), dtype=m.int64).shape),
    lambda m: str(m.empty_strided((2, 3), (3, 1), dtype=m.int64).dtype),
    lambda m: m.empty_strided((4,), (2,), requires_grad=True).requires_grad,
    lambda m: tuple(m.empty_strided((0, 3), (3, 1)).shape),
    lambda m: m.empty_strided((2, 3), (3,)),
    lambda m: m.empty_strided((2, -3), (3, 1)),
])
def test_empty_strided(f):
    same(f)


def test_from_dlpack():
    for src in (np.arange(3), np.ones((2, 2), dtype=np.float32), torch.arange(4.0)):
        want = torch.from_dlpack(src)
        got = gg.from_dlpack(src)
        assert got.tolist() == want.tolist() and str(got.dtype) == str(want.dtype)
    a = np.zeros(2)
    t = gg.from_dlpack(a)
    a[0] = 3
    assert t[0].item() == 3
