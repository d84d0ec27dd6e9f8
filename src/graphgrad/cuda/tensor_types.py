"""``torch.cuda.FloatTensor`` and the other CUDA legacy types, as a CPU-only build has them:
``isinstance(t, torch.cuda.FloatTensor)`` is False for every tensor (older programs test it to
pick a device path), and constructing one raises torch's TypeError."""

from __future__ import annotations

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor",
           "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"]


class _CudaTensorType(type):
    def __instancecheck__(cls, obj) -> bool:
        return False  # no tensor lives on a CUDA device in this build

    def __call__(cls, *args, **kwargs):
        raise TypeError(f"type torch.cuda.{cls.__name__} not available. Torch not compiled with "
                        "CUDA enabled.")


def _type(name):
    return _CudaTensorType(name, (), {"__module__": "torch.cuda"})


FloatTensor = _type("FloatTensor")
DoubleTensor = _type("DoubleTensor")
HalfTensor = _type("HalfTensor")
BFloat16Tensor = _type("BFloat16Tensor")
LongTensor = _type("LongTensor")
IntTensor = _type("IntTensor")
ShortTensor = _type("ShortTensor")
CharTensor = _type("CharTensor")
ByteTensor = _type("ByteTensor")
BoolTensor = _type("BoolTensor")
