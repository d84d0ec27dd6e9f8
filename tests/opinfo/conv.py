"""OpInfos for convolution: conv1d, conv2d, conv_transpose1d, conv_transpose2d (as
``torch.nn.functional``, plus ``torch.conv2d``), and unfold / fold (im2col / col2im).

Samples cover batched and unbatched input, bias or none, stride, padding (ints, tuples,
'same', 'valid'), dilation, groups, output padding and non-contiguous input; errors use
torch's exception types (wrong channel counts, kernel larger than input, bad groups).
"""

from __future__ import annotations

import numpy as np

from .core import FLOAT, FLOAT_INT, ErrorInput, NonContig, OpInfo, SampleInput, make


def _F(name):
    return lambda m: getattr(m.nn.functional, name)


def conv2d_samples(dtype, rng):
    def a(*shape):
        return make(shape, dtype, rng, -2.0, 2.0)

    yield SampleInput(a(2, 3, 6, 5), (a(4, 3, 3, 3), a(4)))
    yield SampleInput(a(3, 6, 5), (a(2, 3, 2, 2),), name="unbatched")
    yield SampleInput(a(1, 2, 7, 6), (a(3, 2, 3, 2),), dict(stride=2, padding=1), name="stride")
    yield SampleInput(a(1, 2, 7, 7), (a(2, 2, 2, 3), a(2)), dict(stride=(2, 1), padding=(1, 0),
                                                                dilation=(2, 1)), name="dilation")
    yield SampleInput(a(2, 4, 5, 5), (a(6, 2, 3, 3), a(6)), dict(groups=2, padding="same"),
                      name="groups_same")
    yield SampleInput(a(1, 2, 5, 6), (a(2, 2, 2, 2),), dict(padding="same", dilation=2),
                      name="same_even_kernel")
    yield SampleInput(a(1, 3, 4, 4), (a(3, 1, 2, 2),), dict(groups=3, padding="valid"),
                      name="depthwise")
    yield SampleInput(NonContig(a(1, 2, 5, 6)), (a(2, 2, 3, 3),), name="noncontig")
    # 8 channels x 9 positions: the weight and input gradients take the batch-last layout
    yield SampleInput(a(2, 8, 5, 4), (a(3, 8, 3, 3), a(3)), dict(padding=1), name="wide")


def conv1d_samples(dtype, rng):
    def a(*shape):
        return make(shape, dtype, rng, -2.0, 2.0)

    yield SampleInput(a(2, 3, 8), (a(4, 3, 3), a(4)))
    yield SampleInput(a(3, 7), (a(2, 3, 2),), dict(padding=1), name="unbatched")
    yield SampleInput(a(1, 4, 9), (a(4, 2, 3), a(4)), dict(stride=2, dilation=2, groups=2),
                      name="groups_stride")
    yield SampleInput(a(1, 2, 6), (a(3, 2, 4),), dict(padding="same"), name="same")


def conv_transpose2d_samples(dtype, rng):
    def a(*shape):
        return make(shape, dtype, rng, -2.0, 2.0)

    yield SampleInput(a(2, 3, 4, 3), (a(3, 2, 3, 3), a(2)))
    yield SampleInput(a(2, 3, 3), (a(2, 3, 2, 2),), name="unbatched")
    yield SampleInput(a(1, 2, 3, 4), (a(2, 2, 3, 2), a(2)),
                      dict(stride=2, padding=1, output_padding=1), name="stride_outpad")
    yield SampleInput(a(1, 4, 3, 3), (a(4, 1, 2, 3),), dict(groups=2, stride=(1, 2),
                                                          dilation=(2, 1)), name="groups")
    yield SampleInput(a(1, 2, 3, 3), (a(2, 1, 2, 2),), dict(dilation=2, output_padding=1),
                      name="outpad_dilation")
    # 8 output channels x 9 positions: the batch-last layout, with overlapping strided windows
    yield SampleInput(a(2, 3, 3, 4), (a(3, 8, 3, 3), a(8)), dict(stride=2, padding=1),
                      name="wide")


def conv_transpose1d_samples(dtype, rng):
    def a(*shape):
        return make(shape, dtype, rng, -2.0, 2.0)

    yield SampleInput(a(2, 3, 5), (a(3, 2, 3), a(2)))
    yield SampleInput(a(2, 4), (a(2, 3, 2),), dict(stride=3, padding=1), name="unbatched")


def unfold_samples(dtype, rng):
    def a(*shape):
        return make(shape, dtype, rng, -2.0, 2.0)

    yield SampleInput(a(2, 2, 5, 4), (2,))
    yield SampleInput(a(2, 5, 5), ((2, 3),), dict(dilation=2, padding=1, stride=(1, 2)),
                      name="unbatched")
    yield SampleInput(NonContig(a(1, 2, 4, 5)), (3,), dict(stride=2, padding=1),
                      name="noncontig")


def fold_samples(dtype, rng):
    def a(*shape):
        return make(shape, dtype, rng, -2.0, 2.0)

    yield SampleInput(a(2, 8, 12), ((4, 5), 2))
    yield SampleInput(a(12, 9), ((5, 6), (2, 3)), dict(stride=2, padding=1, dilation=1),
                      name="unbatched")
    yield SampleInput(a(1, 4, 9), ((5, 5), 2), dict(dilation=2, padding=1, stride=2),
                      name="dilation")


def _conv_errors():
    x = np.ones((2, 3, 6, 6))
    yield ErrorInput(SampleInput(np.ones((2, 5, 6, 6)), (np.ones((4, 3, 3, 3)),)),
                     RuntimeError, "channels")
    yield ErrorInput(SampleInput(np.ones((2, 3, 2, 2)), (np.ones((4, 3, 3, 3)),)),
                     RuntimeError, "kernel_too_big")
    yield ErrorInput(SampleInput(x, (np.ones((4, 1, 3, 3)),), dict(groups=3)), RuntimeError,
                     "groups_not_dividing")
    yield ErrorInput(SampleInput(x, (np.ones((4, 3, 3, 3)),), dict(groups=0)), RuntimeError,
                     "groups_zero")
    yield ErrorInput(SampleInput(x, (np.ones((4, 3, 3, 3)),), dict(stride=0)), RuntimeError,
                     "stride_zero")
    yield ErrorInput(SampleInput(x, (np.ones((4, 3, 3, 3)),), dict(padding=-1)), RuntimeError,
                     "negative_padding")
    yield ErrorInput(SampleInput(x, (np.ones((4, 3, 3, 3)),), dict(padding="same", stride=2)),
                     RuntimeError, "same_strided")
    yield ErrorInput(SampleInput(x, (np.ones((4, 3, 3, 3)),), dict(padding="full")),
                     RuntimeError, "bad_padding_string")
    yield ErrorInput(SampleInput(np.ones((6, 6)), (np.ones((4, 3, 3, 3)),)), RuntimeError,
                     "2d_input")
    yield ErrorInput(SampleInput(x, (np.ones((4, 3, 3, 3), dtype=np.float32),)), RuntimeError,
                     "dtype_mismatch")
    yield ErrorInput(SampleInput(x, (np.ones((4, 3, 3, 3)), np.ones(5))), RuntimeError,
                     "bias_size")


def _conv_transpose_errors():
    x = np.ones((2, 3, 4, 4))
    yield ErrorInput(SampleInput(x, (np.ones((4, 3, 3, 3)),)), RuntimeError, "channels")
    yield ErrorInput(SampleInput(np.ones((2, 4, 4, 4)), (np.ones((4, 3, 3, 3)),),
                                 dict(stride=2, output_padding=2)), RuntimeError, "outpad")
    yield ErrorInput(SampleInput(np.ones((2, 4, 4, 4)), (np.ones((4, 3, 3, 3)),),
                                 dict(padding="same")), TypeError, "string_padding")


def _fold_errors():
    yield ErrorInput(SampleInput(np.ones((2, 3, 8, 8)), (9,)), RuntimeError, "unfold_too_big")
    yield ErrorInput(SampleInput(np.ones((8, 8)), (2,)), IndexError, "unfold_2d")


def _fold_only_errors():
    yield ErrorInput(SampleInput(np.ones((2, 12, 50)), ((8, 8), 2)), RuntimeError, "blocks")
    yield ErrorInput(SampleInput(np.ones((2, 13, 49)), ((8, 8), 2)), RuntimeError, "kernel")


def op_db() -> list[OpInfo]:
    tol = {np.float32: (1e-4, 1e-4)}
    return [
        OpInfo("nn.functional.conv2d", _F("conv2d"), conv2d_samples, dtypes=FLOAT_INT,
               errors=_conv_errors, tol=tol),
        OpInfo("conv2d", lambda m: m.conv2d, conv2d_samples, dtypes=FLOAT, tol=tol,
               variant=True),
        OpInfo("nn.functional.conv1d", _F("conv1d"), conv1d_samples, tol=tol),
        OpInfo("nn.functional.conv_transpose2d", _F("conv_transpose2d"),
               conv_transpose2d_samples, dtypes=FLOAT_INT, errors=_conv_transpose_errors,
               tol=tol),
        OpInfo("nn.functional.conv_transpose1d", _F("conv_transpose1d"),
               conv_transpose1d_samples, tol=tol),
        OpInfo("nn.functional.unfold", _F("unfold"), unfold_samples, errors=_fold_errors),
        OpInfo("nn.functional.fold", _F("fold"), fold_samples, errors=_fold_only_errors),
    ]
