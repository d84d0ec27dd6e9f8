"""Converters of the 3-d pooling ops (max, average, adaptive max and adaptive average), and
the reasons their backward records have none.

3-d convolution is the ``convolution`` record, whose converter is already N-d; these are the
3-d twins of the 2-d pooling converters in ``_conv_nn.py`` (ONNX's pools take any rank).
"""

from __future__ import annotations

import numpy as np

from ._conv_nn import _adaptive_max, _out, _taps, _unbatched
from ._reasons import _BACKWARD
from .ops import register, unsupported


@register("max_pool3d", "MaxPool")
def _max_pool3d(b, instr):
    p = instr.params
    x, squeeze = _unbatched(b, instr, 3)
    pads = [int(v) for v in p["padding"]] * 2
    out = b.node("MaxPool", [x], kernel_shape=list(p["kernel"]), strides=list(p["stride"]),
                 pads=pads, dilations=list(p["dilation"]), ceil_mode=int(p["ceil_mode"]))
    return b.squeeze(out, [0]) if squeeze else out


@register("avg_pool3d", "AveragePool")
def _avg_pool3d(b, instr):
    p = instr.params
    dt = _out(instr)
    x, squeeze = _unbatched(b, instr, 3)
    pads = [int(v) for v in p["padding"]] * 2
    div = p.get("divisor_override")
    out = b.node("AveragePool", [x], kernel_shape=list(p["kernel"]), strides=list(p["stride"]),
                 pads=pads, ceil_mode=int(p["ceil_mode"]),
                 count_include_pad=int(p["count_include_pad"] or div is not None))
    if div is not None:
        out = b.node("Mul", [out, b.scalar(float(np.prod(p["kernel"])) / div, dt)])
    return b.squeeze(out, [0]) if squeeze else out


register("adaptive_max_pool3d", "Slice+ReduceMax+Concat (separable windows)")(_adaptive_max)
register("adaptive_avg_pool3d", "Gather+Mul+Add (Note [Taps])")(_taps)
unsupported(("avg_pool3d_backward", "adaptive_avg_pool3d_backward"), _BACKWARD)
