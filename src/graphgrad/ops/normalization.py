"""Normalization as one fused primitive: ``x`` normalized over some axes by its own mean and
variance, then scaled and shifted by a weight and bias broadcast against it. Batch, layer,
group and instance norm are records of it (torch's grad_fn names); the ``nn.functional``
wrappers (argument checks, running statistics) live in ``nn/_functional/normalization.py``.
"""

from __future__ import annotations

from ._dispatch import apply
from ._opdef import defop

__all__ = ["norm_apply", "BATCH_NORM", "LAYER_NORM", "GROUP_NORM"]

# Note [Normalization primitive]: with n the number of elements in the normalized axes,
#   mean = x.mean(axes, keepdim=True);  var = ((x - mean) ** 2).mean(axes, keepdim=True)
#   xhat = (x - mean) / sqrt(var + eps);  out = xhat * w.reshape(wshape) + b.reshape(wshape)
# is the decomposition (tests/nn/test_normalization.py checks the op against it). The VJP is the
# textbook one, with gh = g * w:
#   dx = rstd * (gh - mean(gh) - xhat * mean(gh * xhat)),  dw = sum_to(g * xhat),  db = sum_to(g)
# Without create_graph the saved mean and rstd of the forward are reused; with it (the DIFF
# namespace) they are recomputed from x with differentiable ops, so that second derivatives see
# how the statistics depend on x. The forward takes two passes over x (mean, then the centred
# squares), which keeps float32 variances accurate where E[x^2] - E[x]^2 would cancel.


def _count(shape, axes):
    n = 1
    for a in axes:
        n *= shape[a]
    return n


def _norm_fwd(xp, x, w, b, axes, wshape, pshape, eps):
    mean = x.mean(axis=axes, keepdims=True)
    d = x - mean
    var = (d * d).mean(axis=axes, keepdims=True)
    rstd = 1.0 / xp.sqrt(var + eps)
    if w is not None:
        d *= rstd * w.reshape(wshape)
    else:
        d *= rstd
    if b is not None:
        d += b.reshape(wshape)
    return d, (mean, var, rstd)


def _stats(ns, x, aux, axes, eps):
    """(mean, rstd) with keepdim: the forward's (raw) or recomputed from ``x`` (differentiable)."""
    if not ns.differentiable:
        return aux[0], aux[2]
    n = _count(ns.raw(x).shape, axes)
    mean = ns.sum(x, axes, True) / n
    d = x - mean
    return mean, (ns.sum(d * d, axes, True) / n + eps) ** -0.5


def _norm_vjp(ns, g, x, w, aux, axes, wshape, pshape, eps, needs):
    mean, rstd = _stats(ns, x, aux, axes, eps)
    xhat = (x - mean) * rstd
    gx = gw = gb = None
    if needs[0]:
        n = _count(ns.raw(x).shape, axes)
        gh = g if w is None else g * ns.reshape(w, wshape)
        gx = rstd * (gh - ns.sum(gh, axes, True) / n - xhat * (ns.sum(gh * xhat, axes, True) / n))
    if needs[1]:
        gw = ns.reshape(ns.sum_to(g * xhat, wshape), pshape)
    if needs[2]:
        gb = ns.reshape(ns.sum_to(g, wshape), pshape)
    return gx, gw, gb


def _record(name, node, onnx):
    return defop(name, _norm_fwd, _norm_vjp, kind="reduction", save=(0, 1, "aux"),
                 dtype_rule="promote", node=node, needs_mask=True, onnx=onnx)


BATCH_NORM = _record("native_batch_norm", "NativeBatchNormBackward0", "BatchNormalization")
LAYER_NORM = _record("native_layer_norm", "NativeLayerNormBackward0", "LayerNormalization")
GROUP_NORM = _record("native_group_norm", "NativeGroupNormBackward0", "GroupNormalization")


def norm_apply(op, x, weight, bias, axes, wshape, eps):
    """Runs one of the records above on tensors; ``wshape`` is the shape weight and bias take to
    broadcast against ``x``. Returns the output and the NumPy (mean, var, rstd), each of ``x``'s
    rank (size 1 in ``axes``)."""
    p = weight if weight is not None else bias
    pshape = p._data.shape if p is not None else ()
    return apply(op, (x, weight, bias), {"axes": tuple(axes), "wshape": tuple(wshape),
                                         "pshape": pshape, "eps": float(eps)})
