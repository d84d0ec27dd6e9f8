"""The legacy tensor types (``FloatTensor``, ``LongTensor``, ...) and ``set_default_tensor_type``.

Each is a class whose metaclass makes it callable as torch's (``FloatTensor(2, 3)`` makes a 2x3
tensor, ``FloatTensor([1, 2])`` one from data) and ``isinstance(t, FloatTensor)`` true exactly when
``t`` is a tensor of that dtype, as torch's ``tensortype.__instancecheck__`` does. Calls return
plain Tensors; the types are no Tensor subclasses, as in torch.
"""

from __future__ import annotations

import builtins
import warnings

import numpy as np

from . import _dtype, _flags
from ._device import check_device
from ._tensor import Size, Tensor
from .ops.creation import _leaf, _unwrap, empty

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ShortTensor",
           "CharTensor", "ByteTensor", "BoolTensor", "set_default_tensor_type"]


class _TensorType(type):
    """The metaclass of the legacy types: calls construct, isinstance compares dtypes."""

    def __call__(cls, *args, device=None, **kwargs):
        if kwargs:
            raise TypeError(f"new() received an invalid combination of arguments - got "
                            f"unexpected keyword arguments {sorted(kwargs)}")
        check_device(device)
        d = cls.dtype
        if not args:
            return empty(0, dtype=d)
        if len(args) == 1:
            data = args[0]
            if isinstance(data, Tensor):
                if data.dtype is not d:
                    raise TypeError(f"expected {d} (got {data.dtype})")
                return data
            if isinstance(data, (list, tuple, np.ndarray)) and not isinstance(data, Size):
                return _from_data(data, d)
            if isinstance(data, (builtins.float, builtins.complex, builtins.bool, str)):
                raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
        return empty(*args, dtype=d)

    def __instancecheck__(cls, obj) -> builtins.bool:
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype

    def __subclasscheck__(cls, sub) -> builtins.bool:
        return sub is cls

    def __repr__(cls) -> str:
        return f"<class 'torch.{cls.__name__}'>"


def _from_data(data, d: _dtype.dtype) -> Tensor:
    """Python data converted straight to ``d`` (no float32 detour for DoubleTensor), with the
    overflow check of torch's scalar conversion: a float must lie in the integer type's range
    (then it is truncated); a negative int may wrap into an unsigned type (ByteTensor([-2]) is
    254) down to minus its maximum."""
    arr = np.asarray(_unwrap(data) if isinstance(data, (list, tuple)) else data)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if d.np.kind in "iu" and arr.dtype.kind in "iuf" and arr.size:
        info = np.iinfo(d.np)
        lo = -int(info.max) if d.np.kind == "u" and arr.dtype.kind in "iu" else int(info.min)
        if arr.min() < lo or arr.max() > int(info.max):
            raise RuntimeError(f"value cannot be converted to type {d.name} without overflow")
        arr = arr.astype(np.int64)
    return _leaf(arr.astype(d.np), False)


def _legacy(name: str, d: _dtype.dtype) -> _TensorType:
    return _TensorType(name, (), {"dtype": d, "is_sparse": False, "is_cuda": False,
                                  "__module__": __name__.rpartition(".")[0],
                                  "__doc__": f"Legacy constructor of {d} tensors."})


FloatTensor = _legacy("FloatTensor", _dtype.float32)
DoubleTensor = _legacy("DoubleTensor", _dtype.float64)
HalfTensor = _legacy("HalfTensor", _dtype.float16)
LongTensor = _legacy("LongTensor", _dtype.int64)
IntTensor = _legacy("IntTensor", _dtype.int32)
ShortTensor = _legacy("ShortTensor", _dtype.int16)
CharTensor = _legacy("CharTensor", _dtype.int8)
ByteTensor = _legacy("ByteTensor", _dtype.uint8)
BoolTensor = _legacy("BoolTensor", _dtype.bool)

_BY_NAME = {f"torch.{t.__name__}": t for t in (
    FloatTensor, DoubleTensor, HalfTensor, LongTensor, IntTensor, ShortTensor, CharTensor,
    ByteTensor, BoolTensor)}


_warned = [False]


def set_default_tensor_type(t) -> None:
    """Sets the default floating dtype from a legacy type or its name (deprecated in torch)."""
    if isinstance(t, str):
        if t.startswith("torch.cuda."):
            raise TypeError(f"type {t} not available. Torch not compiled with CUDA enabled.")
        if t not in _BY_NAME:
            raise AttributeError(f"module 'torch' has no attribute '{t.rpartition('.')[2]}'")
        t = _BY_NAME[t]
    if not isinstance(t, _TensorType):
        raise TypeError("invalid type object: only floating-point types are supported as the "
                        "default type")
    if not _warned[0] or _flags.flags.warn_always:  # once per process, as torch's WARN_ONCE
        _warned[0] = True
        warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please "
                      "use torch.set_default_dtype() and torch.set_default_device() as "
                      "alternatives.", UserWarning, stacklevel=2)
    if not t.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _dtype.set_default_dtype(t.dtype)
