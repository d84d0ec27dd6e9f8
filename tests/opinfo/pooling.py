"""OpInfos for pooling and resampling: max_pool1d/2d (with indices), avg_pool1d/2d,
adaptive_avg_pool1d/2d, adaptive_max_pool1d/2d and interpolate (nearest, nearest-exact,
linear, bilinear and bicubic with and without align_corners, area), as ``torch.nn.functional``.
"""

from __future__ import annotations

import numpy as np

from .core import FLOAT, FLOAT_INT, ErrorInput, NonContig, OpInfo, SampleInput, make


def _F(name):
    return lambda m: getattr(m.nn.functional, name)


def _a(dtype, rng):
    # distinct-looking floats: ties (where the max's gradient is a convention) are unlikely
    return lambda *shape: make(shape, dtype, rng, -3.0, 3.0)


def max_pool2d_samples(dtype, rng):
    a = _a(dtype, rng)
    yield SampleInput(a(2, 2, 6, 6), (2,))
    yield SampleInput(a(2, 5, 5), (3,), dict(stride=2, padding=1), name="unbatched_pad")
    yield SampleInput(a(1, 2, 7, 6), ((3, 2),), dict(stride=(2, 1), dilation=(2, 1),
                                                    ceil_mode=True), name="dilation_ceil")
    yield SampleInput(a(1, 2, 5, 5), (2,), dict(stride=1, return_indices=True),
                      name="indices_overlap")
    yield SampleInput(NonContig(a(1, 2, 6, 5)), (2,), dict(ceil_mode=True), name="noncontig")


def max_pool1d_samples(dtype, rng):
    a = _a(dtype, rng)
    yield SampleInput(a(2, 3, 8), (2,))
    yield SampleInput(a(3, 9), (3,), dict(stride=2, padding=1, return_indices=True),
                      name="unbatched_indices")


def avg_pool2d_samples(dtype, rng):
    a = _a(dtype, rng)
    yield SampleInput(a(2, 2, 6, 6), (2,))
    yield SampleInput(a(2, 5, 5), (3,), dict(stride=2, padding=1), name="unbatched_pad")
    yield SampleInput(a(1, 2, 5, 6), ((3, 2),), dict(stride=2, padding=1, ceil_mode=True,
                                                    count_include_pad=False), name="exclude_pad")
    yield SampleInput(a(1, 2, 5, 5), (3,), dict(stride=1, divisor_override=4),
                      name="divisor_override")
    yield SampleInput(NonContig(a(1, 2, 6, 5)), (2,), name="noncontig")


def avg_pool1d_samples(dtype, rng):
    a = _a(dtype, rng)
    yield SampleInput(a(2, 3, 8), (2,))
    yield SampleInput(a(3, 9), (3,), dict(stride=2, padding=1, count_include_pad=False),
                      name="unbatched")


def adaptive2d_samples(dtype, rng):
    a = _a(dtype, rng)
    yield SampleInput(a(2, 2, 7, 6), ((3, 4),))
    yield SampleInput(a(2, 6, 6), (3,), name="unbatched_divisible")
    yield SampleInput(a(1, 2, 5, 7), ((None, 3),), name="none")
    yield SampleInput(a(1, 2, 4, 4), (1,), name="global")
    yield SampleInput(NonContig(a(1, 2, 5, 6)), ((4, 7),), name="upsampling")


def adaptive_max2d_samples(dtype, rng):
    yield from adaptive2d_samples(dtype, rng)
    yield SampleInput(_a(dtype, rng)(1, 2, 7, 5), ((3, 2), True), name="indices")


def adaptive1d_samples(dtype, rng):
    a = _a(dtype, rng)
    yield SampleInput(a(2, 3, 9), (4,))
    yield SampleInput(a(3, 8), (4,), name="unbatched")


def adaptive_max1d_samples(dtype, rng):
    yield from adaptive1d_samples(dtype, rng)
    yield SampleInput(_a(dtype, rng)(2, 2, 7), (3, True), name="indices")


def interpolate_samples(dtype, rng):
    a = _a(dtype, rng)
    yield SampleInput(a(1, 2, 3, 4), kwargs=dict(scale_factor=2), name="nearest_scale")
    yield SampleInput(a(1, 2, 5, 4), kwargs=dict(size=(3, 7)), name="nearest_size")
    yield SampleInput(a(1, 2, 5), kwargs=dict(scale_factor=1.5), name="nearest1d")
    yield SampleInput(a(1, 2, 5, 4), kwargs=dict(size=(7, 3), mode="nearest-exact"),
                      name="nearest_exact")
    yield SampleInput(a(1, 2, 4, 3), kwargs=dict(size=(6, 5), mode="bilinear"), name="bilinear")
    yield SampleInput(a(1, 2, 4, 5), kwargs=dict(scale_factor=(1.5, 0.6), mode="bilinear",
                                                 align_corners=True), name="bilinear_corners")
    yield SampleInput(a(2, 2, 5), kwargs=dict(size=8, mode="linear"), name="linear")
    yield SampleInput(a(1, 2, 4, 5), kwargs=dict(scale_factor=1.7, mode="bicubic"),
                      name="bicubic")
    yield SampleInput(a(1, 2, 5, 4), kwargs=dict(size=(3, 6), mode="bicubic",
                                                 align_corners=True), name="bicubic_corners")
    yield SampleInput(a(1, 2, 7, 6), kwargs=dict(scale_factor=0.4, mode="bilinear",
                                                 antialias=True), name="bilinear_aa")
    yield SampleInput(a(1, 2, 6, 7), kwargs=dict(size=(3, 9), mode="bicubic", antialias=True),
                      name="bicubic_aa")
    yield SampleInput(a(1, 2, 6), kwargs=dict(scale_factor=0.5, mode="linear",
                                              align_corners=True), name="linear_down")
    yield SampleInput(a(1, 2, 5), kwargs=dict(size=7, mode="nearest-exact"),
                      name="nearest_exact1d")
    yield SampleInput(a(1, 1, 2, 3, 2), kwargs=dict(size=(3, 2, 3)), name="nearest3d")
    yield SampleInput(a(1, 1, 2, 3, 2), kwargs=dict(scale_factor=1.5, mode="nearest-exact"),
                      name="nearest_exact3d")
    yield SampleInput(a(1, 1, 2, 3, 2), kwargs=dict(size=(3, 4, 3), mode="trilinear"),
                      name="trilinear")
    yield SampleInput(NonContig(a(1, 2, 5, 6)), kwargs=dict(size=(3, 4), mode="area"),
                      name="area")


def _pool_errors(input_2d=RuntimeError):
    x = np.ones((2, 3, 8, 8))
    yield ErrorInput(SampleInput(x, (3,), dict(padding=2)), RuntimeError, "pad_too_big")
    yield ErrorInput(SampleInput(x, (9,)), RuntimeError, "kernel_too_big")
    yield ErrorInput(SampleInput(x, (2,), dict(stride=0)), RuntimeError, "stride_zero")
    yield ErrorInput(SampleInput(np.ones((8, 8)), (2,)), input_2d, "2d_input")


def _avg_errors():
    yield from _pool_errors(IndexError)  # torch's avg_pool reads the channel dim first
    yield ErrorInput(SampleInput(np.ones((2, 3, 8, 8)), (2,), dict(divisor_override=0)),
                     RuntimeError, "divisor_zero")


def _adaptive_errors():
    yield ErrorInput(SampleInput(np.ones((2, 3, 4, 4), dtype=np.int64), (2,)),
                     NotImplementedError, "int")


def _interpolate_errors():
    x = np.ones((1, 2, 4, 4))
    yield ErrorInput(SampleInput(x, kwargs=dict(scale_factor=2, align_corners=True)),
                     ValueError, "align_corners_nearest")
    yield ErrorInput(SampleInput(x, kwargs=dict(size=4, scale_factor=2)), ValueError, "both")
    yield ErrorInput(SampleInput(x), ValueError, "neither")
    yield ErrorInput(SampleInput(x, kwargs=dict(size=4, mode="linear")), NotImplementedError,
                     "linear_4d")
    yield ErrorInput(SampleInput(x.astype(np.int64), kwargs=dict(size=4, mode="bilinear")),
                     NotImplementedError, "int_bilinear")
    yield ErrorInput(SampleInput(x, kwargs=dict(size=2, antialias=True)), ValueError,
                     "antialias_nearest")


def _no_indices(samples):
    # torch.max_pool2d (unlike F.max_pool2d) takes no return_indices
    return lambda dtype, rng: (s for s in samples(dtype, rng) if "return_indices" not in s.kwargs)


def op_db() -> list[OpInfo]:
    F = _F
    return [
        OpInfo("nn.functional.max_pool2d", F("max_pool2d"), max_pool2d_samples,
               dtypes=FLOAT_INT, errors=_pool_errors),
        OpInfo("max_pool2d", lambda m: m.max_pool2d, _no_indices(max_pool2d_samples),
               variant=True),
        OpInfo("nn.functional.max_pool1d", F("max_pool1d"), max_pool1d_samples),
        OpInfo("nn.functional.avg_pool2d", F("avg_pool2d"), avg_pool2d_samples,
               dtypes=FLOAT_INT, errors=_avg_errors),
        OpInfo("nn.functional.avg_pool1d", F("avg_pool1d"), avg_pool1d_samples),
        OpInfo("nn.functional.adaptive_avg_pool2d", F("adaptive_avg_pool2d"),
               adaptive2d_samples, errors=_adaptive_errors),
        OpInfo("nn.functional.adaptive_avg_pool1d", F("adaptive_avg_pool1d"),
               adaptive1d_samples),
        OpInfo("nn.functional.adaptive_max_pool2d", F("adaptive_max_pool2d"),
               adaptive_max2d_samples, errors=_adaptive_errors),
        OpInfo("nn.functional.adaptive_max_pool1d", F("adaptive_max_pool1d"),
               adaptive_max1d_samples),
        OpInfo("nn.functional.interpolate", F("interpolate"), interpolate_samples,
               dtypes=FLOAT, errors=_interpolate_errors),
    ]
