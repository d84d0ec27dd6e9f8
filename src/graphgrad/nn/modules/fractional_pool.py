"""Fractional max pooling layers: ``FractionalMaxPool2d`` and ``FractionalMaxPool3d``.

As torch's: ``_random_samples`` (fixed window placements, else drawn on every call) is a
buffer, and exactly one of ``output_size`` and ``output_ratio`` (in (0, 1)) is given.
"""

from __future__ import annotations

from .. import functional as F
from .module import Module
from .utils import _pair, _triple

__all__ = ["FractionalMaxPool2d", "FractionalMaxPool3d"]


class _FractionalMaxPoolNd(Module):
    _d = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None,
                 return_indices: bool = False, _random_samples=None) -> None:
        super().__init__()
        tup = _pair if self._d == 2 else _triple
        self.kernel_size = tup(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = tup(output_size) if output_size is not None else None
        self.output_ratio = tup(output_ratio) if output_ratio is not None else None
        name = type(self).__name__
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a "
                             "pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Max pooling over pseudo-randomly placed windows of (N, C, H, W) or (C, H, W) input.

    >>> import graphgrad as torch
    >>> torch.nn.FractionalMaxPool2d(3, output_ratio=0.5)(torch.ones(1, 2, 10, 8)).shape
    torch.Size([1, 2, 5, 4])
    """

    _d = 2

    def forward(self, input):
        return F.fractional_max_pool2d(input, self.kernel_size, self.output_size,
                                       self.output_ratio, self.return_indices,
                                       _random_samples=self._random_samples)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Max pooling over pseudo-randomly placed windows of (N, C, T, H, W) or (C, T, H, W)."""

    _d = 3

    def forward(self, input):
        return F.fractional_max_pool3d(input, self.kernel_size, self.output_size,
                                       self.output_ratio, self.return_indices,
                                       _random_samples=self._random_samples)
