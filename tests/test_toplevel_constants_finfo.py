"""Top-level constants and finfo/iinfo against torch's."""

import math

import pytest
import torch

import graphgrad as gg


@pytest.mark.parametrize("name", ["pi", "e", "inf", "nan", "newaxis"])
def test_constants(name):
    a, b = getattr(torch, name), getattr(gg, name)
    if isinstance(a, float) and math.isnan(a):
        assert math.isnan(b)
    else:
        assert a == b and type(a) is type(b)


def test_newaxis_indexes():
    assert tuple(gg.ones(3)[:, gg.newaxis].shape) == tuple(torch.ones(3)[:, torch.newaxis].shape)


@pytest.mark.parametrize("name", ["float16", "float32", "float64"])
def test_finfo(name):
    a, b = torch.finfo(getattr(torch, name)), gg.finfo(getattr(gg, name))
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(a, attr) == getattr(b, attr), attr
        assert type(getattr(a, attr)) is type(getattr(b, attr)), attr
    assert repr(a) == repr(b) and str(a) == str(b)


def test_finfo_default_follows_default_dtype():
    assert repr(gg.finfo()) == repr(torch.finfo())
    gg.set_default_dtype(gg.float64)
    torch.set_default_dtype(torch.float64)
    try:
        assert repr(gg.finfo()) == repr(torch.finfo())
    finally:
        gg.set_default_dtype(gg.float32)
        torch.set_default_dtype(torch.float32)


def test_finfo_aliases():
    assert gg.finfo(gg.float).eps == torch.finfo(torch.float).eps
    assert gg.finfo(gg.half).max == torch.finfo(torch.half).max


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo(name):
    a, b = torch.iinfo(getattr(torch, name)), gg.iinfo(getattr(gg, name))
    for attr in ("bits", "max", "min", "dtype"):
        assert getattr(a, attr) == getattr(b, attr), attr
        assert type(getattr(a, attr)) is type(getattr(b, attr)), attr
    assert repr(a) == repr(b)


@pytest.mark.parametrize("call", [
    lambda m: m.finfo(m.int32), lambda m: m.iinfo(m.float32), lambda m: m.iinfo(m.bool)])
def test_info_errors(call):
    with pytest.raises(TypeError) as want:
        call(torch)
    with pytest.raises(TypeError) as got:
        call(gg)
    assert str(want.value) == str(got.value).replace("graphgrad", "torch")
