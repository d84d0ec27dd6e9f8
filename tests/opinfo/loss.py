"""OpInfos for the loss primitives (ops/loss.py): the elementwise binary cross entropy, as
``F.binary_cross_entropy``. Probabilities stay away from 0 and 1, where torch's double backward
adds 1e-12 to its denominator; the saturated points (logs clamped at -100) are compared without
gradients. The composite losses are tested in tests/nn/test_losses.py.
"""

from __future__ import annotations

import numpy as np

from .core import FLOAT, ErrorInput, OpInfo, SampleInput


def _bce(m):
    return m.nn.functional.binary_cross_entropy


def _bce_samples(dtype, rng):
    def p(shape):
        return rng.uniform(0.05, 0.95, shape).astype(dtype)

    yield SampleInput(p((3, 4)), (p((3, 4)),), {"reduction": "none"}, name="none")
    yield SampleInput(p((3, 4)), (p((3, 4)),), name="mean")
    yield SampleInput(p((2, 3)), (p((2, 3)),), {"weight": p((3,)), "reduction": "sum"},
                      name="weight", nondiff=(2,))
    yield SampleInput(p(()), (p(()),), {"reduction": "none"}, name="0d")
    yield SampleInput(p((0, 2)), (p((0, 2)),), {"reduction": "sum"}, name="empty")
    yield SampleInput(np.array([0.0, 1.0, 1.0, 0.0], dtype), (np.array([1.0, 0.0, 1.0, 0.0],
                                                                        dtype),),
                      {"reduction": "none"}, name="saturated", grad=False)


def _bce_errors():
    yield ErrorInput(SampleInput(np.array([1.5, 0.5]), (np.array([1.0, 0.0]),)), RuntimeError,
                     "input_range")
    yield ErrorInput(SampleInput(np.array([0.5, 0.5]), (np.array([-0.5, 0.0]),)), RuntimeError,
                     "target_range")
    yield ErrorInput(SampleInput(np.array([0.5]), (np.array([[1.0]]),)), ValueError, "size")


def op_db() -> list[OpInfo]:
    return [OpInfo("binary_cross_entropy", _bce, _bce_samples, dtypes=FLOAT,
                   errors=_bce_errors)]
