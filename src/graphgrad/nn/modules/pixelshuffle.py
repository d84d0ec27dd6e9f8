"""Sub-pixel and channel rearrangement layers: ``PixelShuffle``, ``PixelUnshuffle`` (an
upscale by moving channels into space, and its inverse) and ``ChannelShuffle`` (ShuffleNet's
channel interleave), each a stored call of the ``graphgrad.nn.functional`` function.
"""

from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle", "ChannelShuffle"]


class PixelShuffle(Module):
    """(*, C * r * r, H, W) -> (*, C, H * r, W * r).

    >>> import graphgrad as torch
    >>> torch.nn.PixelShuffle(3)(torch.ones(1, 9, 4, 4)).shape
    torch.Size([1, 1, 12, 12])
    """

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H * r, W * r) -> (*, C * r * r, H, W), the inverse of ``PixelShuffle``."""

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """Splits the channels into ``groups`` and interleaves them: (N, g * k, *) keeps its
    shape, channel ``i * k + j`` moving to ``j * g + i``."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
