"""``Unfold`` (im2col: sliding blocks of an image as columns) and ``Fold`` (col2im: columns
summed back into an image), the stored-argument forms of ``F.unfold`` and ``F.fold``.
"""

from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    """Sums (N, C * prod(kernel_size), L) blocks into an (N, C, *output_size) image; where
    blocks overlap their values add up."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")


class Unfold(Module):
    """The sliding blocks of (N, C, H, W) input as columns of shape (N, C * kh * kw, L).

    >>> import graphgrad as torch
    >>> torch.nn.Unfold(kernel_size=2)(torch.ones(1, 3, 4, 5)).shape
    torch.Size([1, 12, 12])
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")
