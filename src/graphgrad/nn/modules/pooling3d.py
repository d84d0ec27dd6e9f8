"""Pooling layers over 3-D signals (N, C, D, H, W): max, average, power-average (LP),
adaptive max and average, and ``MaxUnpool3d``.

They store their arguments as torch's do (what the repr prints) on the 1-d/2-d layers' bases
(``pooling.py``) and forward to ``graphgrad.nn.functional``.
"""

from __future__ import annotations

from .. import functional as F
from .pooling import (
    _AdaptiveAvgPoolNd,
    _AdaptiveMaxPoolNd,
    _AvgPoolNd,
    _LPPoolNd,
    _MaxPoolNd,
    _MaxUnpoolNd,
)
from .utils import _triple

__all__ = ["MaxPool3d", "AvgPool3d", "LPPool3d", "AdaptiveMaxPool3d", "AdaptiveAvgPool3d",
           "MaxUnpool3d"]


class MaxPool3d(_MaxPoolNd):
    """The maximum over sliding windows of (N, C, D, H, W) or (C, D, H, W) input.

    >>> import graphgrad as torch
    >>> torch.nn.MaxPool3d(2)(torch.arange(8.).reshape(1, 2, 2, 2)).tolist()
    [[[[7.0]]]]
    """

    def forward(self, input):
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool3d(_AvgPoolNd):
    """The mean over sliding windows of (N, C, D, H, W) or (C, D, H, W) input."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class LPPool3d(_LPPoolNd):
    """The p-norm over sliding windows of (N, C, D, H, W) or (C, D, H, W) input."""

    def forward(self, input):
        return F.lp_pool3d(input, float(self.norm_type), self.kernel_size, self.stride,
                           self.ceil_mode)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """The maximum over near-equal windows giving an ``output_size`` volume (None keeps a
    dim)."""

    def forward(self, input):
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """The mean over near-equal windows giving an ``output_size`` volume (None keeps a dim)."""

    def forward(self, input):
        return F.adaptive_avg_pool3d(input, self.output_size)


class MaxUnpool3d(_MaxUnpoolNd):
    """Puts each value of a ``MaxPool3d(return_indices=True)`` output back where it came from;
    every other position is zero."""

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        self.kernel_size = _triple(kernel_size)
        self.stride = _triple(stride if (stride is not None) else kernel_size)
        self.padding = _triple(padding)

    def forward(self, input, indices, output_size=None):
        return F.max_unpool3d(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)
