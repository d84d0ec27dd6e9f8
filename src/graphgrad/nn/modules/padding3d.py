"""Padding layers over 3-D signals (N, C, D, H, W): ``ConstantPad3d``, ``ZeroPad3d``,
``ReflectionPad3d``, ``ReplicationPad3d`` and ``CircularPad3d``, each a stored ``F.pad`` call.

``padding`` is an int (the same on all six sides) or torch's 6-tuple, last dim first:
``(left, right, top, bottom, front, back)``.
"""

from __future__ import annotations

from .padding import _CircularPadNd, _ConstantPadNd, _ReflectionPadNd, _ReplicationPadNd
from .utils import _ntuple

__all__ = ["CircularPad3d", "ConstantPad3d", "ReflectionPad3d", "ReplicationPad3d",
           "ZeroPad3d"]

_sextuple = _ntuple(6, "_sextuple")


class CircularPad3d(_CircularPadNd):
    """Pads (N, C, D, H, W) or (C, D, H, W) input by wrapping around along each dim."""

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _sextuple(padding)

    def _check_input_dim(self, input) -> None:
        if input.dim() != 4 and input.dim() != 5:
            raise ValueError(f"expected 4D or 5D input (got {input.dim()}D input)")


class ConstantPad3d(_ConstantPadNd):
    """Pads the last three dims with ``value``.

    >>> import graphgrad as torch
    >>> torch.nn.ConstantPad3d((1, 0, 0, 0, 0, 0), 9.0)(torch.zeros(1, 1, 1, 1)).tolist()
    [[[[9.0, 0.0]]]]
    """

    def __init__(self, padding, value: float) -> None:
        super().__init__(value)
        self.padding = _sextuple(padding)


class ZeroPad3d(ConstantPad3d):
    """Pads the last three dims with zeros."""

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReflectionPad3d(_ReflectionPadNd):
    """Pads the last three dims with their mirror image, the edge not repeated."""

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _sextuple(padding)


class ReplicationPad3d(_ReplicationPadNd):
    """Pads the last three dims by repeating their edge values."""

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _sextuple(padding)
