"""OpInfos for the spatial composites of ``nn/_functional/spatial_extra.py``: lp_pool1d/2d/3d,
max_unpool1d/2d/3d, pixel_shuffle / pixel_unshuffle, channel_shuffle, pdist and the deprecated
``upsample*`` spellings of interpolate (plus torch's top-level aliases), and fractional max
pooling with fixed ``_random_samples`` (the window placements torch would draw).
"""

from __future__ import annotations

import numpy as np

from .core import FLOAT, FLOAT_INT, ErrorInput, NonContig, OpInfo, SampleInput, make


def _F(name):
    return lambda m: getattr(m.nn.functional, name)


def _a(dtype, rng):
    return lambda *shape: make(shape, dtype, rng, -3.0, 3.0)


def _pos(dtype, rng):
    # positive inputs keep x ** p smooth for fractional p
    return lambda *shape: make(shape, dtype, rng, 0.2, 2.0)


def lp_pool1d_samples(dtype, rng):
    yield SampleInput(_a(dtype, rng)(2, 3, 8), (2, 3))
    yield SampleInput(_pos(dtype, rng)(3, 9), (1.5, 3, 2, True), name="ceil_unbatched")
    yield SampleInput(_a(dtype, rng)(2, 3, 7), (float("inf"), 2), name="inf")


def lp_pool2d_samples(dtype, rng):
    yield SampleInput(_a(dtype, rng)(2, 2, 6, 5), (2, (2, 3)))
    yield SampleInput(_pos(dtype, rng)(2, 5, 6), (3, 2, (1, 2), True), name="ceil_unbatched")


def lp_pool3d_samples(dtype, rng):
    yield SampleInput(_a(dtype, rng)(2, 2, 4, 4, 4), (2, 2))
    yield SampleInput(_pos(dtype, rng)(2, 4, 5, 4), (1.5, (2, 3, 2), 1), name="stride_unbatched")
    yield SampleInput(_pos(dtype, rng)(1, 2, 5, 4, 5), (3, 2, 2, True), name="ceil")
    yield SampleInput(_a(dtype, rng)(1, 2, 4, 4, 3), (float("-inf"), 2), name="neg_inf")


def _unpool_indices(lead, pooled, kernel, seed):
    """Valid, distinct flat indices: one position in each kernel window of the unpooled
    volume, as a max pool with ``stride == kernel`` would give."""
    rng = np.random.default_rng(seed)
    grids = np.meshgrid(*[np.arange(n) for n in pooled], indexing="ij")
    full = [n * k for n, k in zip(pooled, kernel)]
    flat = np.zeros(lead + tuple(pooled), dtype=np.int64)
    for axis, (g, k) in enumerate(zip(grids, kernel)):
        pos = g * k + rng.integers(0, k, lead + tuple(pooled))
        flat += pos * int(np.prod(full[axis + 1:]))
    return flat


def max_unpool1d_samples(dtype, rng):
    a = _a(dtype, rng)
    yield SampleInput(a(2, 3, 4), (_unpool_indices((2, 3), (4,), (2,), 0), 2))
    yield SampleInput(a(3, 4), (_unpool_indices((3,), (4,), (3,), 1), 3),
                      dict(output_size=[13]), name="output_size_unbatched")


def max_unpool2d_samples(dtype, rng):
    a = _a(dtype, rng)
    yield SampleInput(a(2, 3, 3, 2), (_unpool_indices((2, 3), (3, 2), (2, 3), 2), (2, 3)))
    yield SampleInput(a(3, 3, 3), (_unpool_indices((3,), (3, 3), (2, 2), 3), 2),
                      dict(output_size=[2, 3, 7, 6]), name="output_size_unbatched")


def max_unpool3d_samples(dtype, rng):
    a = _a(dtype, rng)
    yield SampleInput(a(2, 2, 2, 3, 2), (_unpool_indices((2, 2), (2, 3, 2), (2, 2, 2), 4), 2))
    yield SampleInput(a(2, 2, 2, 2), (_unpool_indices((2,), (2, 2, 2), (2, 3, 2), 5),
                                      (2, 3, 2)), dict(output_size=[5, 6, 4]),
                      name="output_size_unbatched")


def pixel_shuffle_samples(dtype, rng):
    a = _a(dtype, rng)
    yield SampleInput(a(2, 8, 3, 2), (2,))
    yield SampleInput(a(9, 2, 3), (3,), name="unbatched")
    yield SampleInput(NonContig(a(2, 2, 4, 2, 3)), (2,), name="5d_noncontig")


def pixel_unshuffle_samples(dtype, rng):
    a = _a(dtype, rng)
    yield SampleInput(a(2, 2, 6, 4), (2,))
    yield SampleInput(a(1, 6, 9), (3,), name="unbatched")
    yield SampleInput(NonContig(a(2, 2, 2, 4, 6)), (2,), name="5d_noncontig")


def channel_shuffle_samples(dtype, rng):
    a = _a(dtype, rng)
    yield SampleInput(a(2, 6, 3, 2), (3,))
    yield SampleInput(a(2, 4, 5), (2,), name="3d")
    yield SampleInput(NonContig(a(1, 6, 2, 3, 2)), (2,), name="5d_noncontig")


def pdist_samples(dtype, rng):
    a = _a(dtype, rng)
    yield SampleInput(a(5, 3))
    yield SampleInput(a(4, 2), (1,), name="p1")
    yield SampleInput(a(4, 3), (float("inf"),), name="pinf")
    yield SampleInput(a(3, 4), (3.5,), name="p3_5")
    yield SampleInput(a(1, 3), name="single_row")


def upsample_samples(dtype, rng):
    a = _a(dtype, rng)
    yield SampleInput(a(1, 2, 3, 4), kwargs=dict(scale_factor=2))
    yield SampleInput(a(1, 2, 3, 4), kwargs=dict(size=(5, 6), mode="bilinear"), name="bilinear")


def upsample_nearest_samples(dtype, rng):
    yield SampleInput(_a(dtype, rng)(1, 2, 3, 4), kwargs=dict(size=(5, 6)))


def upsample_bilinear_samples(dtype, rng):
    yield SampleInput(_a(dtype, rng)(1, 2, 3, 4), kwargs=dict(scale_factor=2))


def _fractional_samples(d):
    def samples(dtype, rng):
        a = _a(dtype, rng)

        def u(*shape):
            return rng.random(shape).astype(dtype)

        if d == 2:
            yield SampleInput(a(2, 3, 9, 7), ((3, 2),), dict(output_size=(5, 4),
                                                             _random_samples=u(2, 3, 2)),
                              nondiff=(1,))
            yield SampleInput(a(2, 8, 6), (2,), dict(output_ratio=(0.5, 0.65), return_indices=True,
                                                     _random_samples=u(1, 2, 2)),
                              name="ratio_unbatched", nondiff=(1,))
        else:
            yield SampleInput(a(2, 2, 7, 6, 8), ((2, 3, 2),), dict(
                output_size=(4, 3, 5), _random_samples=u(2, 2, 3)), nondiff=(1,))
            yield SampleInput(a(2, 6, 5, 6), (2,), dict(
                output_ratio=(0.5, 0.6, 0.5), return_indices=True, _random_samples=u(1, 2, 3)),
                name="ratio_unbatched", nondiff=(1,))
    return samples


def _fractional_errors():
    x = np.ones((1, 2, 6, 6))
    yield ErrorInput(SampleInput(x, (3,), dict(output_size=5)), RuntimeError, "pool_too_big")
    yield ErrorInput(SampleInput(x, (3,)), ValueError, "no_size")
    yield ErrorInput(SampleInput(x, (3,), dict(output_ratio=0.5)), TypeError, "scalar_ratio")
    yield ErrorInput(SampleInput(x, (3,), dict(output_size=4,
                                               _random_samples=np.ones((1, 2, 3)) / 2)),
                     RuntimeError, "samples_shape")


def _shuffle_errors():
    yield ErrorInput(SampleInput(np.ones((1, 5, 2, 2)), (2,)), RuntimeError, "channels")
    yield ErrorInput(SampleInput(np.ones((5, 2)), (2,)), RuntimeError, "2d")
    yield ErrorInput(SampleInput(np.ones((1, 4, 2, 2)), (0,)), RuntimeError, "zero_factor")


def _unshuffle_errors():
    yield ErrorInput(SampleInput(np.ones((1, 2, 3, 2)), (2,)), RuntimeError, "height")
    yield ErrorInput(SampleInput(np.ones((1, 2, 2, 3)), (2,)), RuntimeError, "width")


def _channel_errors():
    yield ErrorInput(SampleInput(np.ones((1, 5, 3, 2)), (2,)), RuntimeError, "channels")
    yield ErrorInput(SampleInput(np.ones((1, 6, 3)), (0,)), RuntimeError, "zero_groups")


def _pdist_errors():
    yield ErrorInput(SampleInput(np.ones((3, 2, 2))), RuntimeError, "3d")
    yield ErrorInput(SampleInput(np.ones((3, 2)), (-1,)), RuntimeError, "negative_p")
    yield ErrorInput(SampleInput(np.ones((3, 2), dtype=np.int64)), RuntimeError, "int")


def _unpool_errors():
    x = np.ones((1, 2, 2, 2))
    idx = np.zeros((1, 2, 2, 2), dtype=np.int64)
    yield ErrorInput(SampleInput(x, (idx, 2), dict(output_size=[9, 9])), ValueError,
                     "output_size_range")
    yield ErrorInput(SampleInput(x, (idx + 16, 2)), RuntimeError, "index_out_of_range")
    yield ErrorInput(SampleInput(x, (idx[..., :1], 2)), RuntimeError, "index_shape")


def op_db() -> list[OpInfo]:
    F = _F
    tol = {np.float32: (1e-5, 1e-5)}
    return [
        OpInfo("nn.functional.lp_pool1d", F("lp_pool1d"), lp_pool1d_samples, tol=tol),
        OpInfo("nn.functional.lp_pool2d", F("lp_pool2d"), lp_pool2d_samples, tol=tol),
        OpInfo("nn.functional.lp_pool3d", F("lp_pool3d"), lp_pool3d_samples, tol=tol),
        OpInfo("nn.functional.max_unpool1d", F("max_unpool1d"), max_unpool1d_samples),
        OpInfo("nn.functional.max_unpool2d", F("max_unpool2d"), max_unpool2d_samples,
               errors=_unpool_errors),
        OpInfo("nn.functional.max_unpool3d", F("max_unpool3d"), max_unpool3d_samples),
        OpInfo("nn.functional.pixel_shuffle", F("pixel_shuffle"), pixel_shuffle_samples,
               dtypes=FLOAT_INT, errors=_shuffle_errors),
        OpInfo("pixel_shuffle", lambda m: m.pixel_shuffle, pixel_shuffle_samples, variant=True),
        OpInfo("nn.functional.pixel_unshuffle", F("pixel_unshuffle"), pixel_unshuffle_samples,
               dtypes=FLOAT_INT, errors=_unshuffle_errors),
        OpInfo("pixel_unshuffle", lambda m: m.pixel_unshuffle, pixel_unshuffle_samples,
               variant=True),
        OpInfo("nn.functional.channel_shuffle", F("channel_shuffle"), channel_shuffle_samples,
               dtypes=FLOAT_INT, errors=_channel_errors),
        OpInfo("channel_shuffle", lambda m: m.channel_shuffle, channel_shuffle_samples,
               variant=True),
        # torch has no derivative for native_channel_shuffle: only the forward is compared
        OpInfo("native_channel_shuffle", lambda m: m.native_channel_shuffle,
               channel_shuffle_samples, variant=True, supports_grad=False),
        # torch's _pdist_backward has no derivative: no second-order parity to check
        OpInfo("nn.functional.pdist", F("pdist"), pdist_samples, errors=_pdist_errors,
               supports_gradgrad=False),
        OpInfo("pdist", lambda m: m.pdist, pdist_samples, variant=True),
        OpInfo("nn.functional.fractional_max_pool2d", F("fractional_max_pool2d"),
               _fractional_samples(2), errors=_fractional_errors),
        OpInfo("nn.functional.fractional_max_pool3d", F("fractional_max_pool3d"),
               _fractional_samples(3)),
        OpInfo("nn.functional.upsample", F("upsample"), upsample_samples, dtypes=FLOAT),
        OpInfo("nn.functional.upsample_nearest", F("upsample_nearest"),
               upsample_nearest_samples, dtypes=FLOAT),
        OpInfo("nn.functional.upsample_bilinear", F("upsample_bilinear"),
               upsample_bilinear_samples, dtypes=FLOAT),
    ]
