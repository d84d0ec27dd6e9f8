"""OpInfos for softmax and log_softmax, as ``torch.softmax(x, dim)`` and ``x.softmax(dim)``.

Samples include large and very negative logits (the results must stay finite), -inf entries,
0-d and empty inputs.
"""

from __future__ import annotations

import numpy as np

from .core import FLOAT, ErrorInput, NonContig, OpInfo, SampleInput, make
from .elementwise import fn_and_method


def softmax_samples(dtype, rng):
    def a(shape):
        return make(shape, dtype, rng, -3.0, 3.0)

    yield SampleInput(a((3, 4)), (1,))
    yield SampleInput(a((3, 4)), (0,), name="dim0")
    yield SampleInput(a((2, 3, 4)), (-1,), name="neg_dim")
    yield SampleInput(a((2, 3, 4)), kwargs=dict(dim=1), name="kwarg_middle")
    yield SampleInput(a((5,)), (0,), name="1d")
    yield SampleInput(a(()), (0,), name="0d")
    yield SampleInput(a((3, 1)), (1,), name="size1")
    yield SampleInput(a((0, 3)), (1,), name="empty")
    yield SampleInput(NonContig(a((4, 3))), (1,), name="transposed")
    yield SampleInput((a((3, 4)) * 100 + 1000).astype(dtype), (1,), name="large")
    yield SampleInput((a((3, 4)) - 1000).astype(dtype), (-1,), name="very_negative")
    yield SampleInput(np.array([[-np.inf, 0.0, 1.0], [2.0, -np.inf, 0.5]], dtype=dtype), (1,),
                      name="neg_inf", grad=False)


def _errors():
    yield ErrorInput(SampleInput(np.ones((2, 3)), (2,)), IndexError, "dim")
    yield ErrorInput(SampleInput(np.ones(3, dtype=np.int64), (0,)), RuntimeError, "int")
    yield ErrorInput(SampleInput(np.ones((2, 3)), (1.0,)), TypeError, "float_dim")


def nn_ops() -> list[OpInfo]:
    ops = []
    for name in ("softmax", "log_softmax"):
        ops += fn_and_method(name, softmax_samples, dtypes=FLOAT, errors=_errors)
    return ops


def op_db() -> list[OpInfo]:
    return nn_ops()
