"""ModuleInfo records for the convolution, pooling, padding, resampling and fold layers.

Loaded by tests/nn/moduleinfo.py (``_family``), which appends ``INFOS`` to ``MODULE_INFOS``;
each family covers batched and unbatched input and the arguments that change the arithmetic.
"""

from __future__ import annotations

import sys

import numpy as np

ModuleInfo = sys.modules["_gg_moduleinfo"].ModuleInfo

# Sums over many products: float32 results differ from torch's in the last bits.
_F32 = {np.float32: (1e-5, 1e-5)}


def _conv(name, args, kwargs=None, inputs=((2, 3, 10),), variant="", **kw):
    return ModuleInfo(name, args, kwargs or {}, inputs=inputs, variant=variant, tol=_F32, **kw)


CONV = [
    _conv("Conv1d", (3, 4, 3)),
    _conv("Conv1d", (3, 4, 3), inputs=((3, 10),), variant="unbatched"),
    _conv("Conv1d", (3, 6, 3), {"stride": 2, "padding": 1, "dilation": 2, "groups": 3},
          variant="strided_grouped"),
    _conv("Conv1d", (3, 2, 4), {"padding": "same", "bias": False}, variant="same_even"),
    _conv("Conv1d", (3, 2, 3), {"padding": "valid"}, variant="valid"),
    _conv("Conv1d", (3, 2, 3), {"padding": 2, "padding_mode": "reflect"}, variant="reflect"),
    _conv("Conv1d", (3, 2, 3), {"padding": 2, "padding_mode": "replicate"}, inputs=((3, 7),),
          variant="replicate_unbatched"),
    _conv("Conv1d", (3, 2, 4), {"padding": "same", "padding_mode": "circular", "dilation": 2},
          variant="same_circular"),
    _conv("Conv2d", (2, 4, 3), inputs=((2, 2, 7, 6),)),
    _conv("Conv2d", (2, 4, 3), {"padding": 1}, inputs=((2, 7, 6),), variant="unbatched"),
    _conv("Conv2d", (4, 6, (3, 2)), {"stride": (2, 1), "padding": (1, 0), "dilation": (1, 2),
                                     "groups": 2},
          inputs=((2, 4, 7, 8),), variant="strided_grouped"),
    _conv("Conv2d", (2, 3, 3), {"padding": "same", "dilation": 2, "bias": False},
          inputs=((2, 2, 7, 6),), variant="same_dilated"),
    _conv("Conv2d", (4, 4, 3), {"groups": 4}, inputs=((2, 4, 6, 6),), variant="depthwise"),
    _conv("Conv2d", (2, 3, 3), {"padding": (1, 2), "padding_mode": "reflect"},
          inputs=((2, 2, 5, 6),), variant="reflect"),
    _conv("Conv2d", (2, 3, 3), {"padding": (2, 1), "padding_mode": "replicate", "stride": 2},
          inputs=((2, 5, 6),), variant="replicate_unbatched"),
    _conv("Conv2d", (2, 3, (2, 3)), {"padding": 1, "padding_mode": "circular"},
          inputs=((2, 2, 5, 6),), variant="circular"),
    _conv("ConvTranspose1d", (3, 4, 3), {"stride": 2, "padding": 1, "output_padding": 1}),
    _conv("ConvTranspose1d", (4, 2, 3), {"groups": 2, "dilation": 2, "bias": False},
          inputs=((4, 6),), variant="grouped_unbatched"),
    _conv("ConvTranspose1d", (3, 2, 3), {"stride": 3, "padding": 1}, inputs=((2, 3, 6),),
          kwargs_inputs={"output_size": [17]}, variant="output_size"),
    _conv("ConvTranspose2d", (4, 2, 3), {"stride": 2, "padding": 1, "output_padding": 1},
          inputs=((2, 4, 5, 4),)),
    _conv("ConvTranspose2d", (4, 6, (3, 2)), {"groups": 2, "dilation": (1, 2), "bias": False,
                                              "stride": (1, 2)},
          inputs=((4, 5, 4),), variant="grouped_unbatched"),
    _conv("ConvTranspose2d", (4, 2, 3), {"stride": 2, "padding": 1},
          inputs=((2, 4, 5, 5),), kwargs_inputs={"output_size": [10, 10]},
          variant="output_size"),
    _conv("ConvTranspose2d", (4, 2, 3), {"stride": 2, "padding": 1},
          inputs=((4, 5, 5),), kwargs_inputs={"output_size": [2, 9, 10]},
          variant="output_size_unbatched"),
]


def _unpool_inputs(lead, pooled, kernel, seed):
    """A pooled tensor and valid, distinct flat indices into the unpooled plane: one position
    in each kernel window, as a max pool with ``stride == kernel`` would give."""
    rng = np.random.default_rng(seed)
    grids = np.meshgrid(*[np.arange(n) for n in pooled], indexing="ij")
    full = [n * k for n, k in zip(pooled, kernel)]
    flat = np.zeros(lead + tuple(pooled), dtype=np.int64)
    for axis, (g, k) in enumerate(zip(grids, kernel)):
        pos = g * k + rng.integers(0, k, lead + tuple(pooled))
        stride = int(np.prod(full[axis + 1:]))
        flat += pos * stride
    return rng.standard_normal(lead + tuple(pooled)), flat


_UP1 = _unpool_inputs((2, 3), (4,), (2,), 0)
_UP2 = _unpool_inputs((2, 3), (3, 2), (2, 3), 1)
_UP2U = _unpool_inputs((3,), (3, 3), (2, 2), 2)

POOL = [
    ModuleInfo("MaxPool1d", (3,), inputs=((2, 3, 10),)),
    ModuleInfo("MaxPool1d", (3, 2, 1), {"ceil_mode": True, "dilation": 2}, inputs=((3, 11),),
               variant="ceil_dilated_unbatched"),
    ModuleInfo("MaxPool1d", (2,), {"return_indices": True}, inputs=((2, 3, 9),),
               variant="indices"),
    ModuleInfo("MaxPool2d", (2,), inputs=((2, 3, 6, 7),)),
    ModuleInfo("MaxPool2d", ((3, 2), (2, 1), (1, 0)), {"ceil_mode": True},
               inputs=((3, 7, 6),), variant="ceil_unbatched"),
    ModuleInfo("MaxPool2d", (3, 1, 1), {"dilation": (2, 1), "return_indices": True},
               inputs=((2, 2, 7, 6),), variant="dilated_indices"),
    ModuleInfo("AvgPool1d", (3,), inputs=((2, 3, 10),)),
    ModuleInfo("AvgPool1d", (3, 2, 1), {"ceil_mode": True, "count_include_pad": False},
               inputs=((3, 10),), variant="ceil_exclude_pad_unbatched"),
    ModuleInfo("AvgPool2d", (2,), inputs=((2, 3, 6, 7),)),
    ModuleInfo("AvgPool2d", ((3, 2), 2, 1), {"ceil_mode": True, "count_include_pad": False},
               inputs=((3, 7, 6),), variant="ceil_exclude_pad_unbatched"),
    ModuleInfo("AvgPool2d", (3, 2, 1), {"divisor_override": 4}, inputs=((2, 2, 7, 6),),
               variant="divisor"),
    ModuleInfo("LPPool1d", (2, 3), inputs=((2, 3, 10),), tol=_F32),
    ModuleInfo("LPPool1d", (3, 2, 1), inputs=((3, 9),), tol=_F32, variant="p3_unbatched"),
    ModuleInfo("LPPool2d", (2, (2, 3)), inputs=((2, 3, 6, 7),), tol=_F32),
    ModuleInfo("LPPool2d", (1.5, 2, (1, 2)), {"ceil_mode": True},
               inputs=(np.abs(np.random.default_rng(3).standard_normal((3, 5, 6))) + 0.1,),
               tol=_F32, variant="ceil_unbatched"),
    ModuleInfo("AdaptiveAvgPool1d", (4,), inputs=((2, 3, 10),)),
    ModuleInfo("AdaptiveAvgPool1d", (3,), inputs=((3, 7),), variant="unbatched"),
    ModuleInfo("AdaptiveAvgPool2d", ((3, 4),), inputs=((2, 3, 7, 9),)),
    ModuleInfo("AdaptiveAvgPool2d", (1,), inputs=((2, 3, 5, 6),), variant="global"),
    ModuleInfo("AdaptiveAvgPool2d", ((None, 2),), inputs=((3, 5, 7),),
               variant="none_unbatched"),
    ModuleInfo("AdaptiveMaxPool1d", (4,), inputs=((2, 3, 10),)),
    ModuleInfo("AdaptiveMaxPool1d", (3, True), inputs=((3, 8),), variant="indices_unbatched"),
    ModuleInfo("AdaptiveMaxPool2d", ((3, 4),), inputs=((2, 3, 7, 9),)),
    ModuleInfo("AdaptiveMaxPool2d", ((2, None), True), inputs=((3, 5, 4),),
               variant="indices_none_unbatched"),
    ModuleInfo("MaxUnpool1d", (2,), inputs=_UP1),
    ModuleInfo("MaxUnpool1d", (2,), inputs=_UP1, kwargs_inputs={"output_size": [9]},
               variant="output_size"),
    ModuleInfo("MaxUnpool2d", ((2, 3),), inputs=_UP2),
    ModuleInfo("MaxUnpool2d", (2,), inputs=_UP2U, kwargs_inputs={"output_size": [7, 6]},
               variant="output_size_unbatched"),
]

PADDING = [
    ModuleInfo("ZeroPad1d", (2,), inputs=((2, 3, 5),)),
    ModuleInfo("ZeroPad1d", ((1, -1),), inputs=((3, 5),), variant="crop_unbatched"),
    ModuleInfo("ZeroPad2d", ((1, 2, 0, 3),), inputs=((2, 3, 4, 5),)),
    ModuleInfo("ZeroPad2d", (1,), inputs=((3, 4, 5),), variant="unbatched"),
    ModuleInfo("ConstantPad1d", ((2, 1), 3.5), inputs=((2, 3, 5),)),
    ModuleInfo("ConstantPad2d", (2, -1.0), inputs=((3, 4, 5),), variant="unbatched"),
    ModuleInfo("ReflectionPad1d", ((3, 1),), inputs=((2, 3, 5),)),
    ModuleInfo("ReflectionPad1d", (2,), inputs=((3, 5),), variant="unbatched"),
    ModuleInfo("ReflectionPad2d", ((1, 2, 3, 0),), inputs=((2, 3, 4, 5),)),
    ModuleInfo("ReflectionPad2d", (2,), inputs=((3, 4, 5),), variant="unbatched"),
    ModuleInfo("ReplicationPad1d", ((3, 1),), inputs=((2, 3, 5),)),
    ModuleInfo("ReplicationPad1d", (4,), inputs=((3, 2),), variant="unbatched"),
    ModuleInfo("ReplicationPad2d", ((1, 2, 3, 0),), inputs=((2, 3, 4, 5),)),
    ModuleInfo("ReplicationPad2d", (3,), inputs=((3, 2, 2),), variant="unbatched"),
    ModuleInfo("CircularPad1d", ((3, 1),), inputs=((2, 3, 5),)),
    ModuleInfo("CircularPad1d", (2,), inputs=((3, 5),), variant="unbatched"),
    ModuleInfo("CircularPad2d", ((1, 2, 3, 0),), inputs=((2, 3, 4, 5),)),
    ModuleInfo("CircularPad2d", (2,), inputs=((3, 4, 5),), variant="unbatched"),
]

RESAMPLE = [
    ModuleInfo("Upsample", kwargs={"scale_factor": 2}, inputs=((2, 3, 4, 5),),
               needs=("interpolate",)),
    ModuleInfo("Upsample", kwargs={"size": (7, 3)}, inputs=((2, 3, 4, 5),),
               needs=("interpolate",), variant="size"),
    ModuleInfo("Upsample", kwargs={"scale_factor": (1.5, 2.5), "mode": "bilinear"},
               inputs=((2, 3, 4, 5),), needs=("interpolate",), variant="bilinear"),
    ModuleInfo("Upsample", kwargs={"size": 7, "mode": "bilinear", "align_corners": True},
               inputs=((2, 3, 4, 5),), needs=("interpolate",), variant="bilinear_corners"),
    ModuleInfo("Upsample", kwargs={"scale_factor": 3, "mode": "linear"},
               inputs=((2, 3, 4),), needs=("interpolate",), variant="linear"),
    ModuleInfo("Upsample", kwargs={"size": 9, "mode": "nearest-exact"},
               inputs=((2, 3, 4),), needs=("interpolate",), variant="nearest_exact_1d"),
    ModuleInfo("UpsamplingNearest2d", kwargs={"scale_factor": 2}, inputs=((2, 3, 3, 4),),
               needs=("interpolate",)),
    ModuleInfo("UpsamplingBilinear2d", kwargs={"size": (5, 7)}, inputs=((2, 3, 3, 4),),
               needs=("interpolate",)),
    ModuleInfo("Unfold", ((2, 3),), inputs=((2, 3, 6, 7),)),
    ModuleInfo("Unfold", (2, 2, 1, 2), inputs=((3, 6, 7),), variant="dilated_unbatched"),
    ModuleInfo("Fold", ((4, 5), 2), inputs=((2, 12, 12),)),
    ModuleInfo("Fold", ((5, 6), (2, 3)), {"padding": 1, "stride": 2},
               inputs=((18, 9),), variant="strided_unbatched"),
]

INFOS = CONV + POOL + PADDING + RESAMPLE
