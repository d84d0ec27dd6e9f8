"""ONNX mappings (or reasons) for the ops of ops/statistics.py and ops/shaping.py.

Sliding windows (``Tensor.unfold``) are a fixed index map, so one Gather replays them; the
others have no ONNX counterpart and say why.
"""

from __future__ import annotations

from ._conv_shape import _map_converter
from .ops import register, unsupported

register("unfold", "Gather (index map)")(_map_converter())

unsupported(["nanmedian", "nanmedian.dim"],
            "ONNX has no median operator and no way to skip NaNs in a sort; TopK over the "
            "whole axis plus a data-dependent count of non-NaN values would be needed")
unsupported(["as_strided.default"],
            "arbitrary strides over a tensor's storage have no ONNX equivalent (ONNX tensors "
            "have no storage); rewrite the model with reshape, slicing or Tensor.unfold")
