"""``finfo`` and ``iinfo``: the numeric limits of graphgrad's dtypes, with torch's attributes.

Values come from NumPy's finfo/iinfo, which agree with torch's for IEEE float16/32/64 and the
integer types; ``dtype`` is the dtype's name as a string, as torch reports it.
"""

from __future__ import annotations

import numpy as np

from . import _dtype

__all__ = ["finfo", "iinfo"]


def _fmt(x) -> str:
    return f"{x:g}"


class finfo:
    """Limits of a floating-point dtype; ``finfo()`` describes the default dtype.

    >>> import graphgrad as torch
    >>> torch.finfo(torch.float32).eps
    1.1920928955078125e-07
    """

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __init__(self, type=None):  # noqa: A002 - torch's parameter name
        d = _dtype.get_default_dtype() if type is None else _dtype.to_dtype(type)
        if not d.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo "
                            "to handle 'torch.finfo'")
        info = np.finfo(d.np)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)  # torch: 10^-digits, not rounded to dtype
        self.dtype = d.name

    def __repr__(self) -> str:
        return (f"finfo(resolution={_fmt(self.resolution)}, min={_fmt(self.min)}, "
                f"max={_fmt(self.max)}, eps={_fmt(self.eps)}, "
                f"smallest_normal={_fmt(self.smallest_normal)}, tiny={_fmt(self.tiny)}, "
                f"dtype={self.dtype})")

    __str__ = __repr__


class iinfo:
    """Limits of an integer dtype (``bool`` is not one, as in torch).

    >>> import graphgrad as torch
    >>> torch.iinfo(torch.int8).max
    127
    """

    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, type):  # noqa: A002 - torch's parameter name
        d = _dtype.to_dtype(type)
        if d.is_floating_point:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to "
                            "handle 'torch.iinfo'")
        if d.np.kind == "b":
            raise TypeError(f"{d} is not supported by torch.iinfo")
        info = np.iinfo(d.np)
        self.bits = int(info.bits)
        self.max = int(info.max)
        self.min = int(info.min)
        self.dtype = d.name

    def __repr__(self) -> str:
        return f"iinfo(min={_fmt(self.min)}, max={_fmt(self.max)}, dtype={self.dtype})"

    __str__ = __repr__
