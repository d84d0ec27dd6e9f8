"""3-d convolution layers: ``Conv3d`` and ``ConvTranspose3d``, over (N, C, D, H, W) input.

They share torch's ``_ConvNd`` state, initialisation, checks and repr with the 1-d and 2-d
layers (``conv.py``); only the argument normaliser (``_triple``) and the functional differ.
"""

from __future__ import annotations

from .. import functional as F
from .conv import _ConvNd, _ConvTransposeNd
from .utils import _triple

__all__ = ["Conv3d", "ConvTranspose3d"]


class Conv3d(_ConvNd):
    """3-D convolution over (N, C_in, D, H, W) or (C_in, D, H, W) input.

    >>> import graphgrad as torch
    >>> torch.nn.Conv3d(2, 4, 3, padding=1)(torch.ones(1, 2, 4, 5, 6)).shape
    torch.Size([1, 4, 4, 5, 6])
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, _triple(kernel_size), _triple(stride),
                         padding if isinstance(padding, str) else _triple(padding),
                         _triple(dilation), False, _triple(0), groups, bias, padding_mode,
                         device, dtype)

    def _conv_forward(self, input, weight, bias):
        if self.padding_mode != "zeros":
            return F.conv3d(F.pad(input, self._reversed_padding_repeated_twice,
                                  mode=self.padding_mode),
                            weight, bias, self.stride, _triple(0), self.dilation, self.groups)
        return F.conv3d(input, weight, bias, self.stride, self.padding, self.dilation,
                        self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class ConvTranspose3d(_ConvTransposeNd):
    """The gradient of Conv3d with respect to its input, as a layer."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                 padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, _triple(kernel_size), _triple(stride),
                         _triple(padding), _triple(dilation), True, _triple(output_padding),
                         groups, bias, padding_mode, device, dtype)

    def forward(self, input, output_size=None):
        return self._transposed_forward(F.conv_transpose3d, 3, input, output_size)
