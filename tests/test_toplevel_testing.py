"""graphgrad.testing.assert_close and make_tensor against torch.testing on the same calls."""

import math

import numpy as np
import pytest
import torch

import graphgrad as gg


def outcome(m, f):
    try:
        return ("ok", f(m))
    except Exception as ex:  # noqa: BLE001 - the outcome is compared
        return (type(ex).__name__, str(ex))


def same(f):
    assert outcome(torch, f) == outcome(gg, f)


CASES = [
    lambda m: m.testing.assert_close(m.tensor([1., 2., 3.]), m.tensor([1., 2.5, 3.1])),
    lambda m: m.testing.assert_close(m.tensor([1., 2., 3.]), m.tensor([1., 2.5, 3.1]), msg="x"),
    lambda m: m.testing.assert_close(m.tensor([1., 2.]), m.tensor([1., 3.]), msg=lambda s: s + "!"),
    lambda m: m.testing.assert_close(m.tensor([1., 2.]), m.tensor([1., 2.], dtype=m.float64)),
    lambda m: m.testing.assert_close(m.tensor([1., 2.]), m.tensor([1., 2.], dtype=m.float64),
                                     check_dtype=False),
    lambda m: m.testing.assert_close(m.tensor([1., 2.]), m.tensor([1., 2., 3.])),
    lambda m: m.testing.assert_close(m.tensor([1, 2]), m.tensor([1, 3])),
    lambda m: m.testing.assert_close(m.tensor([math.nan]), m.tensor([math.nan])),
    lambda m: m.testing.assert_close(m.tensor([math.nan]), m.tensor([math.nan]), equal_nan=True),
    lambda m: m.testing.assert_close(m.tensor([[1., 2.], [3., 4.]]),
                                     m.tensor([[1., 2.], [3., 5.]])),
    lambda m: m.testing.assert_close(1.0, 1.1),
    lambda m: m.testing.assert_close(1.0, 1.0 + 1e-9),
    lambda m: m.testing.assert_close(1, 1.0),
    lambda m: m.testing.assert_close(1, 2),
    lambda m: m.testing.assert_close([1.0, m.tensor(2.)], [1.0, m.tensor(2.1)]),
    lambda m: m.testing.assert_close({"a": m.tensor([1., 2.])}, {"a": m.tensor([1., 2.5])}),
    lambda m: m.testing.assert_close({"a": 1}, {"b": 1}),
    lambda m: m.testing.assert_close([1, 2], [1]),
    lambda m: m.testing.assert_close(m.tensor([1., 2.]), m.tensor([1., 2.5]), rtol=0.1),
    lambda m: m.testing.assert_close(m.tensor([1., 2.]), m.tensor([1., 2.5]), rtol=0.1, atol=0.5),
    lambda m: m.testing.assert_close(m.tensor([True]), m.tensor([False])),
    lambda m: m.testing.assert_close(m.tensor([1., 2.]), m.tensor([1., 2.]).requires_grad_()),
    lambda m: m.testing.assert_close(m.ones(2, 3), m.ones(3, 2)),
    lambda m: m.testing.assert_close(m.tensor([1., 0.]), m.tensor([1., 1e-3], dtype=m.float16),
                                     check_dtype=False),
    lambda m: m.testing.assert_close(m.tensor([1., 1.]), m.tensor([1., 1.0005], dtype=m.float16),
                                     check_dtype=False),
    lambda m: m.testing.assert_close(m.tensor([0., 5.]), m.tensor([1., 0.])),
    lambda m: m.testing.assert_close(m.tensor([0., math.inf]), m.tensor([0., math.inf])),
    lambda m: m.testing.assert_close(m.tensor([0., math.inf]), m.tensor([0., -math.inf])),
    lambda m: m.testing.assert_close(np.ones(2), np.ones(2) * 2),
    lambda m: m.testing.assert_close(None, None),
    lambda m: m.testing.assert_close(None, 1),
    lambda m: m.testing.assert_close(True, False),
    lambda m: m.testing.assert_close((m.tensor([1.]), None), (m.tensor([2.]), "x")),
    lambda m: m.testing.assert_close(m.tensor(3.), m.tensor(3.5)),
    lambda m: m.testing.assert_close(m.tensor([1, 2], dtype=m.uint8),
                                     m.tensor([1, 4], dtype=m.uint8)),
    lambda m: m.testing.assert_close(m.tensor([1, 2], dtype=m.uint8),
                                     m.tensor([1, 4], dtype=m.uint8), rtol=0.0, atol=1.0),
    lambda m: m.testing.assert_close(m.asarray(np.array([1., 2.])),
                                     m.asarray(np.array([1., 2. + 1e-6]))),
    lambda m: m.testing.assert_close(m.tensor([1., 2.]), m.tensor([1., 2. + 1e-6])),
    lambda m: m.testing.assert_close(m.zeros(3, 4), m.zeros(3, 4).t().contiguous().t(),
                                     check_stride=True),
    lambda m: m.testing.assert_close(m.tensor([[1, 2], [3, 4]]), m.tensor([[1, 2], [3, 4]])),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_assert_close_matches_torch(case):
    same(CASES[case])


def test_assert_close_unhandled_types():
    for m in (torch, gg):
        with pytest.raises(TypeError, match="No comparison pair was able to handle inputs"):
            m.testing.assert_close(m.tensor([1., 2.]), [1., 2.])


def test_assert_close_parameter_subclass():
    for m in (torch, gg):
        p = m.nn.Parameter(m.ones(2))
        m.testing.assert_close(p, m.ones(2))
        with pytest.raises(TypeError):
            m.testing.assert_close(p, m.ones(2), allow_subclasses=False)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "int16",
                                   "int8", "uint8", "bool"])
def test_make_tensor_defaults(dtype):
    t = gg.testing.make_tensor(3, 50, dtype=getattr(gg, dtype), device="cpu")
    ref = torch.testing.make_tensor(3, 50, dtype=getattr(torch, dtype), device="cpu")
    assert str(t.dtype) == str(ref.dtype) and tuple(t.shape) == tuple(ref.shape)
    lo, hi = {"bool": (0, 1), "uint8": (0, 9), "int64": (-9, 9), "int32": (-9, 9),
              "int16": (-9, 9), "int8": (-9, 9)}.get(dtype, (-9, 9))
    v = t.numpy().astype(np.float64)
    assert v.min() >= lo and (v.max() <= hi if dtype not in ("float32", "float64", "float16")
                              else v.max() < hi + 1e-3)


@pytest.mark.parametrize("kw", [
    dict(low=-1, high=1), dict(low=2, high=3), dict(low=0, high=5, exclude_zero=True),
    dict(low=0.5, high=0.75),
])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8"])
def test_make_tensor_range(kw, dtype):
    if kw["low"] == 0.5 and not dtype.startswith("float"):
        # [1, 1) after rounding: both raise, with the same message
        same(lambda m: m.testing.make_tensor((4,), dtype=getattr(m, dtype), device="cpu", **kw))
        return
    t = gg.testing.make_tensor((40,), dtype=getattr(gg, dtype), device="cpu", **kw)
    ref = torch.testing.make_tensor((40,), dtype=getattr(torch, dtype), device="cpu", **kw)
    for x in (t.numpy(), ref.numpy()):
        x = x.astype(np.float64)
        if getattr(gg, dtype).is_floating_point:
            assert x.min() >= kw["low"] and x.max() < kw["high"]
        else:
            assert x.min() >= math.ceil(kw["low"]) and x.max() < math.ceil(kw["high"])
        if kw.get("exclude_zero"):
            assert (x != 0).all()


@pytest.mark.parametrize("call", [
    lambda m: m.testing.make_tensor(2, dtype=m.int64, device="cpu", requires_grad=True),
    lambda m: m.testing.make_tensor(2, dtype=m.float32, device="cpu", low=3, high=2),
    lambda m: m.testing.make_tensor(2, dtype=m.float32, device="cpu", low=math.nan),
    lambda m: m.testing.make_tensor(2, dtype=m.uint8, device="cpu", low=300, high=400),
    lambda m: m.testing.make_tensor((2, 3), dtype=m.float32, device="cpu", requires_grad=True)
    .requires_grad,
    lambda m: m.testing.make_tensor([2, 3], dtype=m.float32, device="cpu", noncontiguous=True)
    .is_contiguous(),
    lambda m: tuple(m.testing.make_tensor([2, 3], dtype=m.float32, device="cpu",
                                          noncontiguous=True).shape),
])
def test_make_tensor_checks(call):
    same(call)


def test_make_tensor_seeded():
    gg.manual_seed(3)
    a = gg.testing.make_tensor(5, dtype=gg.float32, device="cpu")
    gg.manual_seed(3)
    b = gg.testing.make_tensor(5, dtype=gg.float32, device="cpu")
    torch.testing.assert_close(torch.from_numpy(a.numpy()), torch.from_numpy(b.numpy()))
