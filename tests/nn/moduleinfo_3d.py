"""ModuleInfo records for the 3-d layers (Conv3d, ConvTranspose3d, 3-d pooling, unpooling and
padding), the pixel/channel shuffles and fractional max pooling (fixed window placements).

Loaded by tests/nn/moduleinfo.py (``_family``), which appends ``INFOS`` to ``MODULE_INFOS``;
each family covers batched and unbatched input and the arguments that change the arithmetic.
"""

from __future__ import annotations

import sys

import numpy as np

ModuleInfo = sys.modules["_gg_moduleinfo"].ModuleInfo

# Sums over many products: float32 results differ from torch's in the last bits.
_F32 = {np.float32: (1e-5, 1e-5)}


def _conv(name, args, kwargs=None, inputs=((2, 2, 4, 5, 4),), variant="", **kw):
    return ModuleInfo(name, args, kwargs or {}, inputs=inputs, variant=variant, tol=_F32, **kw)


CONV = [
    _conv("Conv3d", (2, 4, 3)),
    _conv("Conv3d", (2, 4, 3), {"padding": 1}, inputs=((2, 4, 3, 4),), variant="unbatched"),
    _conv("Conv3d", (4, 6, (3, 2, 2)), {"stride": (2, 1, 2), "padding": (1, 0, 1),
                                        "dilation": (1, 2, 1), "groups": 2},
          inputs=((2, 4, 5, 5, 4),), variant="strided_grouped"),
    _conv("Conv3d", (2, 3, 2), {"padding": "same", "bias": False}, variant="same_even"),
    _conv("Conv3d", (2, 3, 3), {"padding": "valid"}, variant="valid"),
    _conv("Conv3d", (2, 3, 3), {"padding": (1, 2, 1), "padding_mode": "reflect"},
          inputs=((1, 2, 3, 4, 4),), variant="reflect"),
    _conv("Conv3d", (2, 3, 3), {"padding": 1, "padding_mode": "replicate", "stride": 2},
          inputs=((2, 4, 5, 4),), variant="replicate_unbatched"),
    _conv("Conv3d", (2, 3, (2, 3, 2)), {"padding": 1, "padding_mode": "circular"},
          variant="circular"),
    _conv("ConvTranspose3d", (2, 3, 3), {"stride": 2, "padding": 1, "output_padding": 1},
          inputs=((2, 2, 3, 2, 3),)),
    _conv("ConvTranspose3d", (4, 2, (2, 3, 2)), {"groups": 2, "dilation": (2, 1, 1),
                                                 "bias": False},
          inputs=((4, 3, 2, 3),), variant="grouped_unbatched"),
    _conv("ConvTranspose3d", (2, 2, 3), {"stride": 2, "padding": 1},
          inputs=((1, 2, 3, 3, 2),), kwargs_inputs={"output_size": [6, 5, 4]},
          variant="output_size"),
]


def _unpool_inputs(lead, pooled, kernel, seed):
    """A pooled tensor and valid, distinct flat indices into the unpooled volume: one position
    in each kernel window, as a max pool with ``stride == kernel`` would give."""
    rng = np.random.default_rng(seed)
    grids = np.meshgrid(*[np.arange(n) for n in pooled], indexing="ij")
    full = [n * k for n, k in zip(pooled, kernel)]
    flat = np.zeros(lead + tuple(pooled), dtype=np.int64)
    for axis, (g, k) in enumerate(zip(grids, kernel)):
        pos = g * k + rng.integers(0, k, lead + tuple(pooled))
        flat += pos * int(np.prod(full[axis + 1:]))
    return rng.standard_normal(lead + tuple(pooled)), flat


_UP3 = _unpool_inputs((2, 2), (2, 3, 2), (2, 2, 2), 0)
_UP3U = _unpool_inputs((3,), (2, 2, 2), (2, 3, 2), 1)
_POS = np.abs(np.random.default_rng(3).standard_normal((2, 4, 5, 4))) + 0.1

POOL = [
    ModuleInfo("MaxPool3d", (2,), inputs=((2, 2, 4, 5, 4),)),
    ModuleInfo("MaxPool3d", ((3, 2, 2), (2, 1, 2), (1, 0, 1)), {"ceil_mode": True},
               inputs=((2, 5, 4, 5),), variant="ceil_unbatched"),
    ModuleInfo("MaxPool3d", (3, 1, 1), {"dilation": (2, 1, 1), "return_indices": True},
               inputs=((1, 2, 5, 4, 4),), variant="dilated_indices"),
    ModuleInfo("AvgPool3d", (2,), inputs=((2, 2, 4, 5, 4),)),
    ModuleInfo("AvgPool3d", ((3, 2, 3), 2, 1), {"ceil_mode": True, "count_include_pad": False},
               inputs=((2, 5, 4, 5),), variant="ceil_exclude_pad_unbatched"),
    ModuleInfo("AvgPool3d", (3, 2, 1), {"divisor_override": 5}, inputs=((1, 2, 5, 4, 4),),
               variant="divisor"),
    ModuleInfo("LPPool3d", (2, 2), inputs=((2, 2, 4, 5, 4),), tol=_F32),
    ModuleInfo("LPPool3d", (1.5, (2, 3, 2), 1, True), inputs=(_POS,), tol=_F32,
               variant="ceil_unbatched"),
    ModuleInfo("AdaptiveAvgPool3d", ((3, 2, 4),), inputs=((2, 2, 5, 4, 6),)),
    ModuleInfo("AdaptiveAvgPool3d", (1,), inputs=((2, 2, 3, 4, 5),), variant="global"),
    ModuleInfo("AdaptiveAvgPool3d", ((None, 2, 3),), inputs=((2, 3, 5, 7),),
               variant="none_unbatched"),
    ModuleInfo("AdaptiveMaxPool3d", ((3, 2, 4),), inputs=((2, 2, 5, 4, 6),)),
    ModuleInfo("AdaptiveMaxPool3d", ((2, None, 2), True), inputs=((3, 5, 4, 3),),
               variant="indices_none_unbatched"),
    ModuleInfo("MaxUnpool3d", (2,), inputs=_UP3),
    ModuleInfo("MaxUnpool3d", ((2, 3, 2),), inputs=_UP3U,
               kwargs_inputs={"output_size": [5, 6, 4]}, variant="output_size_unbatched"),
]

PADDING = [
    ModuleInfo("ZeroPad3d", (1,), inputs=((2, 2, 3, 4, 3),)),
    ModuleInfo("ZeroPad3d", ((1, -1, 0, 2, 1, 0),), inputs=((2, 3, 4, 3),),
               variant="crop_unbatched"),
    ModuleInfo("ConstantPad3d", ((2, 1, 0, 1, 1, 2), 3.5), inputs=((2, 2, 3, 4, 3),)),
    ModuleInfo("ReflectionPad3d", ((1, 2, 0, 1, 2, 1),), inputs=((2, 2, 3, 4, 3),)),
    ModuleInfo("ReflectionPad3d", (1,), inputs=((2, 3, 4, 3),), variant="unbatched"),
    ModuleInfo("ReplicationPad3d", ((1, 2, 0, 1, 3, 1),), inputs=((2, 2, 3, 4, 3),)),
    ModuleInfo("ReplicationPad3d", (2,), inputs=((2, 2, 2, 3),), variant="unbatched"),
    ModuleInfo("CircularPad3d", ((1, 2, 0, 1, 2, 1),), inputs=((2, 2, 3, 4, 3),)),
    ModuleInfo("CircularPad3d", (1,), inputs=((2, 3, 4, 3),), variant="unbatched"),
]

SHUFFLE = [
    ModuleInfo("PixelShuffle", (2,), inputs=((2, 8, 3, 2),)),
    ModuleInfo("PixelShuffle", (3,), inputs=((9, 2, 3),), variant="unbatched"),
    ModuleInfo("PixelUnshuffle", (2,), inputs=((2, 2, 6, 4),)),
    ModuleInfo("PixelUnshuffle", (3,), inputs=((1, 6, 9),), variant="unbatched"),
    ModuleInfo("ChannelShuffle", (3,), inputs=((2, 6, 3, 2),)),
    ModuleInfo("ChannelShuffle", (2,), inputs=((2, 4, 5),), variant="3d"),
]

_SAMPLES2 = np.random.default_rng(5).random((2, 3, 2))
_SAMPLES3 = np.random.default_rng(6).random((1, 2, 3))


def _tensor(a):
    return lambda m: m.tensor(a)


FRACTIONAL = [
    ModuleInfo("FractionalMaxPool2d", ((3, 2),), {"output_size": (5, 4),
                                                  "_random_samples": _tensor(_SAMPLES2)},
               inputs=((2, 3, 9, 7),)),
    ModuleInfo("FractionalMaxPool2d", (2,), {"output_ratio": 0.5, "return_indices": True,
                                             "_random_samples": _tensor(_SAMPLES2[:1])},
               inputs=((3, 8, 6),), variant="ratio_indices_unbatched"),
    ModuleInfo("FractionalMaxPool3d", ((2, 3, 2),), {"output_size": (4, 3, 5),
                                                     "_random_samples": _tensor(_SAMPLES3)},
               inputs=((1, 2, 7, 6, 8),)),
    ModuleInfo("FractionalMaxPool3d", (2,), {"output_ratio": (0.5, 0.6, 0.5),
                                             "_random_samples": _tensor(_SAMPLES3)},
               inputs=((2, 6, 5, 6),), variant="ratio_unbatched"),
]

INFOS = CONV + POOL + PADDING + SHUFFLE + FRACTIONAL
