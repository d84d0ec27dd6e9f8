"""Padding layers over 1-D and 2-D signals: constant (``ZeroPad``, ``ConstantPad``),
``ReflectionPad``, ``ReplicationPad`` and ``CircularPad``, each a stored ``F.pad`` call.

``padding`` is an int (the same on every side) or torch's tuple, last dim first:
``(left, right)`` for 1-D, ``(left, right, top, bottom)`` for 2-D.
"""

from __future__ import annotations

from .. import functional as F
from .module import Module
from .utils import _pair, _quadruple

__all__ = ["CircularPad1d", "CircularPad2d", "ConstantPad1d", "ConstantPad2d",
           "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d", "ReplicationPad2d",
           "ZeroPad1d", "ZeroPad2d"]


class _CircularPadNd(Module):
    def _check_input_dim(self, input):
        raise NotImplementedError

    def forward(self, input):
        self._check_input_dim(input)
        return F.pad(input, self.padding, "circular")

    def extra_repr(self) -> str:
        return f"{self.padding}"


class CircularPad1d(_CircularPadNd):
    """Pads (N, C, L) or (C, L) input by wrapping around: the left pad is the signal's end."""

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _pair(padding)

    def _check_input_dim(self, input) -> None:
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class CircularPad2d(_CircularPadNd):
    """Pads (N, C, H, W) or (C, H, W) input by wrapping around (a torus)."""

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _quadruple(padding)

    def _check_input_dim(self, input) -> None:
        if input.dim() != 3 and input.dim() != 4:
            raise ValueError(f"expected 3D or 4D input (got {input.dim()}D input)")


class _ConstantPadNd(Module):
    def __init__(self, value: float) -> None:
        super().__init__()
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim with ``value``."""

    def __init__(self, padding, value: float) -> None:
        super().__init__(value)
        self.padding = _pair(padding)


class ConstantPad2d(_ConstantPadNd):
    """Pads the last two dims with ``value``.

    >>> import graphgrad as torch
    >>> torch.nn.ConstantPad2d((1, 0, 0, 1), 9.0)(torch.zeros(1, 1, 1)).tolist()
    [[[9.0, 0.0], [9.0, 9.0]]]
    """

    def __init__(self, padding, value: float) -> None:
        super().__init__(value)
        self.padding = _quadruple(padding)


class _ReflectionPadNd(Module):
    def forward(self, input):
        return F.pad(input, self.padding, "reflect")

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReflectionPad1d(_ReflectionPadNd):
    """Pads the last dim with its mirror image, the edge value not repeated."""

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _pair(padding)


class ReflectionPad2d(_ReflectionPadNd):
    """Pads the last two dims with their mirror image, the edge not repeated."""

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _quadruple(padding)


class _ReplicationPadNd(Module):
    def forward(self, input):
        return F.pad(input, self.padding, "replicate")

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReplicationPad1d(_ReplicationPadNd):
    """Pads the last dim by repeating its edge values."""

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _pair(padding)


class ReplicationPad2d(_ReplicationPadNd):
    """Pads the last two dims by repeating their edge values."""

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _quadruple(padding)


class ZeroPad1d(ConstantPad1d):
    """Pads the last dim with zeros."""

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pads the last two dims with zeros."""

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"
