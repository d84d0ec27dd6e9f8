"""OpInfos for 3-d pooling: max_pool3d (with indices), avg_pool3d, adaptive_avg_pool3d,
adaptive_max_pool3d, the ``*_with_indices`` spellings and ``torch.max_pool3d``, plus
``interpolate`` on 5-d input in 'area' mode, as ``torch.nn.functional``.
"""

from __future__ import annotations

import numpy as np

from .core import FLOAT, FLOAT_INT, ErrorInput, NonContig, OpInfo, SampleInput, make


def _F(name):
    return lambda m: getattr(m.nn.functional, name)


def _a(dtype, rng):
    # distinct-looking floats: ties (where the max's gradient is a convention) are unlikely
    return lambda *shape: make(shape, dtype, rng, -3.0, 3.0)


def max_pool3d_samples(dtype, rng):
    a = _a(dtype, rng)
    yield SampleInput(a(2, 2, 4, 4, 4), (2,))
    yield SampleInput(a(2, 5, 4, 5), (3,), dict(stride=2, padding=1), name="unbatched_pad")
    yield SampleInput(a(1, 2, 5, 6, 5), ((3, 2, 2),), dict(stride=(2, 1, 2),
                                                          dilation=(1, 2, 1), ceil_mode=True),
                      name="dilation_ceil")
    yield SampleInput(a(1, 2, 3, 4, 4), (2,), dict(stride=1, return_indices=True),
                      name="indices_overlap")
    yield SampleInput(NonContig(a(1, 2, 4, 5, 4)), ((2, 3, 2),), dict(ceil_mode=True),
                      name="noncontig")


def avg_pool3d_samples(dtype, rng):
    a = _a(dtype, rng)
    yield SampleInput(a(2, 2, 4, 4, 4), (2,))
    yield SampleInput(a(2, 5, 4, 5), (3,), dict(stride=2, padding=1), name="unbatched_pad")
    yield SampleInput(a(1, 2, 5, 4, 5), ((3, 2, 3),), dict(stride=2, padding=1, ceil_mode=True,
                                                          count_include_pad=False),
                      name="exclude_pad")
    yield SampleInput(a(1, 2, 3, 4, 3), (2,), dict(stride=1, divisor_override=3),
                      name="divisor_override")
    yield SampleInput(NonContig(a(1, 2, 4, 5, 4)), (2,), name="noncontig")


def adaptive3d_samples(dtype, rng):
    a = _a(dtype, rng)
    yield SampleInput(a(2, 2, 5, 6, 4), ((3, 4, 2),))
    yield SampleInput(a(2, 4, 6, 4), (2,), name="unbatched_divisible")
    yield SampleInput(a(1, 2, 5, 3, 4), ((None, 2, None),), name="none")
    yield SampleInput(a(1, 2, 3, 4, 3), (1,), name="global")
    yield SampleInput(NonContig(a(1, 2, 3, 4, 5)), ((4, 5, 3),), name="upsampling")


def adaptive_max3d_samples(dtype, rng):
    yield from adaptive3d_samples(dtype, rng)
    yield SampleInput(_a(dtype, rng)(1, 2, 5, 4, 5), ((3, 2, 2), True), name="indices")


def _indices_samples(dtype, rng):
    a = _a(dtype, rng)
    yield SampleInput(a(1, 2, 4, 5, 4), (2,), dict(stride=1))


def _adaptive_indices(shape, size):
    def samples(dtype, rng):
        yield SampleInput(_a(dtype, rng)(*shape), (size,))
    return samples


def interpolate_samples(dtype, rng):
    a = _a(dtype, rng)
    yield SampleInput(a(1, 2, 5, 4, 6), kwargs=dict(size=(3, 4, 2), mode="area"), name="area")
    yield SampleInput(NonContig(a(1, 2, 4, 3, 4)), kwargs=dict(scale_factor=0.5, mode="area"),
                      name="area_scale")


def _pool_errors(input_3d=RuntimeError):
    x = np.ones((2, 3, 6, 6, 6))
    yield ErrorInput(SampleInput(x, (3,), dict(padding=2)), RuntimeError, "pad_too_big")
    yield ErrorInput(SampleInput(x, (7,)), RuntimeError, "kernel_too_big")
    yield ErrorInput(SampleInput(x, (2,), dict(stride=0)), RuntimeError, "stride_zero")
    yield ErrorInput(SampleInput(np.ones((6, 6, 6)), (2,)), input_3d, "3d_input")
    yield ErrorInput(SampleInput(np.ones((6, 6)), (2,)), input_3d, "2d_input")


def _avg_errors():
    yield from _pool_errors()
    yield ErrorInput(SampleInput(np.ones((2, 3, 4, 4, 4)), (2,), dict(divisor_override=0)),
                     RuntimeError, "divisor_zero")


def _adaptive_errors():
    yield ErrorInput(SampleInput(np.ones((2, 3, 4, 4, 4), dtype=np.int64), (2,)),
                     NotImplementedError, "int")
    yield ErrorInput(SampleInput(np.ones((4, 4)), (2,)), RuntimeError, "2d_input")


def _no_indices(samples):
    # torch.max_pool3d (unlike F.max_pool3d) takes no return_indices
    return lambda dtype, rng: (s for s in samples(dtype, rng) if "return_indices" not in s.kwargs)


def op_db() -> list[OpInfo]:
    F = _F
    return [
        OpInfo("nn.functional.max_pool3d", F("max_pool3d"), max_pool3d_samples,
               dtypes=FLOAT_INT, errors=_pool_errors),
        OpInfo("max_pool3d", lambda m: m.max_pool3d, _no_indices(max_pool3d_samples),
               variant=True),
        OpInfo("nn.functional.max_pool3d_with_indices", F("max_pool3d_with_indices"),
               _indices_samples, variant=True),
        OpInfo("nn.functional.avg_pool3d", F("avg_pool3d"), avg_pool3d_samples,
               dtypes=FLOAT_INT, errors=_avg_errors),
        OpInfo("nn.functional.adaptive_avg_pool3d", F("adaptive_avg_pool3d"),
               adaptive3d_samples, errors=_adaptive_errors),
        OpInfo("nn.functional.adaptive_max_pool3d", F("adaptive_max_pool3d"),
               adaptive_max3d_samples, errors=_adaptive_errors),
        OpInfo("nn.functional.adaptive_max_pool1d_with_indices",
               F("adaptive_max_pool1d_with_indices"), _adaptive_indices((2, 3, 7), 3),
               variant=True),
        OpInfo("nn.functional.adaptive_max_pool2d_with_indices",
               F("adaptive_max_pool2d_with_indices"), _adaptive_indices((2, 5, 6), (2, 4)),
               variant=True),
        OpInfo("nn.functional.adaptive_max_pool3d_with_indices",
               F("adaptive_max_pool3d_with_indices"), _adaptive_indices((2, 5, 4, 3), 2),
               variant=True),
        OpInfo("adaptive_max_pool1d", lambda m: m.adaptive_max_pool1d,
               _adaptive_indices((2, 3, 8), 3), variant=True),
        OpInfo("nn.functional.interpolate.area5d", F("interpolate"), interpolate_samples,
               dtypes=FLOAT),
    ]
