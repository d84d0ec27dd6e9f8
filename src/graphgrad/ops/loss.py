"""Loss primitives kept fused for torch's numerics: the elementwise binary cross entropy.

The other losses are composites in ``nn/_functional/loss.py``. BCE is fused because torch
clamps its logs at -100 and divides its gradient by ``max(x (1 - x), 1e-12)``: a composite of
clamped logs gives NaN gradients where a sigmoid saturates to exactly 0 or 1, torch's are finite.
Decomposition (checked by tests/nn/test_losses.py away from 0 and 1):
``-(t * clamp_min(log(x), -100) + (1 - t) * clamp_min(log1p(-x), -100))``.
"""

from __future__ import annotations

from ._dispatch import binary
from ._opdef import defop

__all__ = ["binary_cross_entropy_elementwise"]

_EPS = 1e-12  # torch's EPSILON in binary_cross_entropy_backward


def _bce_fwd(xp, x, t):
    return (t - 1) * xp.maximum(xp.log1p(-x), -100) - t * xp.maximum(xp.log(x), -100)


def _bce_vjp(ns, g, x, t, needs):
    gx = gt = None
    if needs[0]:
        d = (1 - x) * x
        small = ns.raw(d) < _EPS
        if small.any():
            d = ns.where(ns.const(small), _EPS, d)
        gx = g * (x - t) / d
    if needs[1]:
        gt = g * (ns.log(1 - x) - ns.log(x))  # torch: -logit(x), unclamped
    return gx, gt


BINARY_CROSS_ENTROPY = defop("binary_cross_entropy", _bce_fwd, _bce_vjp, kind="elementwise",
                             save=(0, 1), dtype_rule="same", node="BinaryCrossEntropyBackward0",
                             needs_mask=True, onnx=None)


def binary_cross_entropy_elementwise(input, target):
    """The unreduced, unweighted BCE of probabilities ``input`` against ``target`` (same shape
    and dtype, both checked by the caller, ``F.binary_cross_entropy``)."""
    return binary(BINARY_CROSS_ENTROPY, input, target)
