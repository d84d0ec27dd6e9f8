"""3-d convolution: ``conv3d`` and ``conv_transpose3d`` over (N, C, D, H, W) input.

The ``convolution`` and ``convolution_weight`` primitives of ``ops/conv.py`` are N-d (im2col
over any number of spatial dims, col2im one strided add per kernel position), so the 3-d forms
are their argument checks with three spatial dims, as torch's ``conv3d`` is ``convolution``.
"""

from __future__ import annotations

from .conv import _conv_transposend, _convnd

__all__ = ["conv3d", "conv_transpose3d"]


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution over (N, C, D, H, W) or (C, D, H, W) input.

    >>> import graphgrad as torch
    >>> torch.conv3d(torch.ones(1, 1, 3, 3, 3), torch.ones(1, 1, 2, 2, 2)).shape
    torch.Size([1, 1, 2, 2, 2])
    """
    return _convnd("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """The gradient of conv3d with respect to its input, as a layer."""
    return _conv_transposend("conv_transpose3d", 3, input, weight, bias, stride, padding,
                             output_padding, groups, dilation)
