"""OpInfos for 3-d convolution: conv3d and conv_transpose3d (as ``torch.nn.functional``, plus
``torch.conv3d`` / ``torch.conv_transpose3d``).

Samples cover batched and unbatched input, bias, stride, padding (ints, tuples, 'same' with an
even kernel, 'valid'), dilation, groups, output padding, the batch-last layout (many channels
times kernel positions) and non-contiguous input; errors use torch's exception types.
"""

from __future__ import annotations

import numpy as np

from .core import FLOAT, FLOAT_INT, ErrorInput, NonContig, OpInfo, SampleInput, make


def _F(name):
    return lambda m: getattr(m.nn.functional, name)


def conv3d_samples(dtype, rng):
    def a(*shape):
        return make(shape, dtype, rng, -2.0, 2.0)

    yield SampleInput(a(2, 2, 4, 3, 4), (a(3, 2, 2, 2, 2), a(3)))
    yield SampleInput(a(2, 3, 4, 3), (a(2, 2, 2, 1, 2),), name="unbatched")
    yield SampleInput(a(1, 2, 5, 4, 5), (a(2, 2, 3, 2, 3), a(2)),
                      dict(stride=(2, 1, 2), padding=(1, 0, 1), dilation=(1, 2, 1)),
                      name="stride_dilation")
    yield SampleInput(a(1, 4, 3, 4, 3), (a(4, 2, 2, 2, 2),), dict(groups=2, padding="same"),
                      name="groups_same_even")
    yield SampleInput(a(1, 2, 3, 3, 4), (a(2, 1, 2, 2, 2), a(2)),
                      dict(groups=2, padding="valid"), name="depthwise_valid")
    yield SampleInput(NonContig(a(1, 2, 3, 4, 3)), (a(2, 2, 2, 2, 2),), name="noncontig")
    # 3 channels x 27 positions: the weight gradient takes the batch-last layout
    yield SampleInput(a(2, 3, 3, 4, 3), (a(2, 3, 3, 3, 3), a(2)), dict(padding=1), name="wide")


def conv_transpose3d_samples(dtype, rng):
    def a(*shape):
        return make(shape, dtype, rng, -2.0, 2.0)

    yield SampleInput(a(2, 2, 3, 2, 3), (a(2, 3, 2, 2, 2), a(3)))
    yield SampleInput(a(2, 2, 3, 2), (a(2, 1, 2, 2, 1),), name="unbatched")
    yield SampleInput(a(1, 2, 2, 3, 2), (a(2, 2, 3, 2, 2), a(2)),
                      dict(stride=(2, 1, 2), padding=1, output_padding=(1, 0, 1)),
                      name="stride_outpad")
    yield SampleInput(a(1, 4, 2, 2, 3), (a(4, 1, 2, 2, 2),),
                      dict(groups=2, dilation=(2, 1, 1), stride=(1, 2, 1)), name="groups")
    yield SampleInput(a(1, 2, 2, 2, 2), (a(2, 1, 2, 2, 2),), dict(dilation=2, output_padding=1),
                      name="outpad_dilation")
    # 2 output channels x 27 positions: the batch-last transposed form, overlapping windows
    yield SampleInput(a(2, 2, 2, 3, 2), (a(2, 2, 3, 3, 3), a(2)), dict(stride=2, padding=1),
                      name="wide")


def _conv_errors():
    x = np.ones((2, 3, 4, 4, 4))
    w = np.ones((4, 3, 3, 3, 3))
    yield ErrorInput(SampleInput(np.ones((2, 5, 4, 4, 4)), (w,)), RuntimeError, "channels")
    yield ErrorInput(SampleInput(np.ones((2, 3, 2, 4, 4)), (w,)), RuntimeError,
                     "kernel_too_big")
    yield ErrorInput(SampleInput(x, (np.ones((4, 1, 3, 3, 3)),), dict(groups=3)),
                     RuntimeError, "groups_not_dividing")
    yield ErrorInput(SampleInput(x, (w,), dict(stride=0)), RuntimeError, "stride_zero")
    yield ErrorInput(SampleInput(x, (w,), dict(padding=-1)), RuntimeError, "negative_padding")
    yield ErrorInput(SampleInput(x, (w,), dict(padding="same", stride=2)), RuntimeError,
                     "same_strided")
    yield ErrorInput(SampleInput(np.ones((4, 4, 4)), (w,)), RuntimeError, "3d_input")
    yield ErrorInput(SampleInput(x, (np.ones((4, 3, 3, 3)),)), RuntimeError, "4d_weight")
    yield ErrorInput(SampleInput(x, (w, np.ones(5))), RuntimeError, "bias_size")


def _conv_transpose_errors():
    x = np.ones((2, 3, 3, 3, 3))
    yield ErrorInput(SampleInput(x, (np.ones((4, 3, 3, 3, 3)),)), RuntimeError, "channels")
    yield ErrorInput(SampleInput(np.ones((2, 4, 3, 3, 3)), (np.ones((4, 3, 3, 3, 3)),),
                                 dict(stride=2, output_padding=2)), RuntimeError, "outpad")
    yield ErrorInput(SampleInput(np.ones((2, 4, 3, 3, 3)), (np.ones((4, 3, 3, 3, 3)),),
                                 dict(padding="same")), TypeError, "string_padding")


def op_db() -> list[OpInfo]:
    tol = {np.float32: (1e-4, 1e-4)}
    return [
        OpInfo("nn.functional.conv3d", _F("conv3d"), conv3d_samples, dtypes=FLOAT_INT,
               errors=_conv_errors, tol=tol),
        OpInfo("conv3d", lambda m: m.conv3d, conv3d_samples, dtypes=FLOAT, tol=tol,
               variant=True),
        OpInfo("nn.functional.conv_transpose3d", _F("conv_transpose3d"),
               conv_transpose3d_samples, dtypes=FLOAT_INT, errors=_conv_transpose_errors,
               tol=tol),
        OpInfo("conv_transpose3d", lambda m: m.conv_transpose3d, conv_transpose3d_samples,
               dtypes=FLOAT, tol=tol, variant=True),
    ]
