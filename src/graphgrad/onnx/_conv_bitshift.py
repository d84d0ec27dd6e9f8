"""Why the bit shifts have no ONNX mapping: ONNX's BitShift takes unsigned integers only and
leaves amounts past the dtype's width undefined, where torch defines them (0 or sign fill)."""

from __future__ import annotations

from .ops import unsupported

unsupported(["bitwise_left_shift", "bitwise_right_shift"],
            "ONNX's BitShift accepts unsigned integer tensors only and leaves shifts by the "
            "dtype's width or more undefined, while torch shifts signed integers arithmetically "
            "and defines those amounts; multiply or floor-divide by a power of two instead")
