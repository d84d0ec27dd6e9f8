"""``torch.nn.utils.convert_conv{2,3}d_weight_memory_format``: no-ops in graphgrad.

graphgrad does not model memory layouts (channels_last): NumPy arrays carry their own strides
and every op accepts any layout, so converting a convolution's weight changes nothing.
"""

from __future__ import annotations

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def convert_conv2d_weight_memory_format(module, memory_format):
    """Returns ``module`` unchanged (layouts are not modelled; results are the same)."""
    return module


def convert_conv3d_weight_memory_format(module, memory_format):
    """Returns ``module`` unchanged (layouts are not modelled; results are the same)."""
    return module
