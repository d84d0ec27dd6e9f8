"""Margin and embedding losses of ``torch.nn.functional`` (margin ranking, hinge embedding, soft
margin, cosine embedding, triplet, multilabel soft margin, multi margin), composed as torch
2.13's native kernels compose them, so values, gradients and second derivatives match.
"""

from __future__ import annotations

import numpy as np

from ..._tensor import wrap
from ...ops.activation import logsigmoid
from ...ops.elementwise import minimum, where
from ...ops.gather import _gather
from .distance import pairwise_distance
from .loss import (
    apply_reduction,
    check_reduction,
    legacy_reduction,
    nondiff_arg,
    reduction_of,
    scalar_name,
)

__all__ = ["margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss",
           "cosine_embedding_loss", "triplet_margin_loss", "multilabel_soft_margin_loss",
           "multi_margin_loss"]

_EPSILON = 1e-12  # cosine_embedding_loss's guard on the squared magnitudes, torch's value


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    """``max(0, -target * (input1 - input2) + margin)``: ``target`` (1 or -1) says which input
    should rank higher."""
    reduction = reduction_of(reduction, size_average, reduce)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {input1.size()}, input2: {input2.size()}, "
                           f"target: {target.size()} ")
    return apply_reduction((-target * (input1 - input2) + margin).clamp_min(0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """``input`` where ``target`` is 1, ``max(0, margin - input)`` where it is -1."""
    reduction = reduction_of(reduction, size_average, reduce)
    margin_clamp = (margin - input).clamp_min(0)
    out = where(target != 1, margin_clamp, 0.0) + where(target != -1, input, 0.0)
    return apply_reduction(out, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """The two-class logistic loss ``log(1 + exp(-target * input))``."""
    reduction = reduction_of(reduction, size_average, reduce)
    nondiff_arg(target, "soft_margin_loss", "target")
    return apply_reduction((-input * target).exp().log1p(), reduction)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    """``1 - cos(x1, x2)`` where ``target`` is 1, ``max(0, cos(x1, x2) - margin)`` where -1;
    the cosine is taken along the last dim of 2-d inputs (1-d inputs with a 0-d target)."""
    reduction = reduction_of(reduction, size_average, reduce)
    tdim = target.dim()
    if tdim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    want = 2 if tdim == 1 else 1
    if input1.dim() != want or input2.dim() != want:
        raise RuntimeError(f"{tdim}D target tensor expects {want}D input tensors, but found "
                           f"inputs with sizes {list(input1.shape)} and {list(input2.shape)}.")
    prod_sum = (input1 * input2).sum(tdim)
    mag1 = (input1 * input1).sum(tdim) + _EPSILON
    mag2 = (input2 * input2).sum(tdim) + _EPSILON
    cos = prod_sum / (mag1 * mag2).sqrt()
    out = where(target == 1, 1 - cos, 0.0) + where(target == -1, (cos - margin).clamp_min(0), 0.0)
    return apply_reduction(out, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """``max(0, margin + d(a, p) - d(a, n))`` with ``d`` the pairwise p-norm distance; with
    ``swap``, ``d(a, n)`` is replaced by ``d(p, n)`` where that is smaller."""
    reduction = reduction_of(reduction, size_average, reduce)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a_dim, p_dim, n_dim = anchor.dim(), positive.dim(), negative.dim()
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {a_dim}D, positive "
                           f"{p_dim}D, and negative {n_dim}D inputs")
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = minimum(dist_neg, pairwise_distance(positive, negative, p, eps))
    return apply_reduction((margin + dist_pos - dist_neg).clamp_min(0), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """Per-class logistic loss averaged over the classes (the last dim), then reduced."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return apply_reduction(loss, reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """Multi-class hinge loss: for each sample, ``sum_{i != y} max(0, margin - x[y] + x[i])**p``
    (times ``weight[y]``) divided by the number of classes."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    reduction = check_reduction(reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    x, t = input._data, target._data
    n_classes = x.shape[-1] if x.ndim else 1
    if x.ndim > 2 or (x.ndim == 2 and (t.ndim != 1 or t.shape[0] != x.shape[0])) or \
            (x.ndim < 2 and t.size != 1):
        raise RuntimeError(f"inconsistent target size, expected {x.shape[0] if x.ndim == 2 else 1}"
                           f" but got {list(t.shape)}")
    if t.dtype != np.int64:
        raise RuntimeError(f"expected scalar type Long but found {scalar_name(target)}")
    t = t.reshape(x.shape[:-1]) if x.ndim == 2 else t.reshape(())
    bad = (t < 0) | (t >= n_classes)
    if bad.any():
        raise IndexError("target out of range")
    cdim = x.ndim - 1 if x.ndim else 0
    view = input if x.ndim else input.reshape(1)
    picked = _gather(view, cdim, np.expand_dims(t, cdim))
    z = (view - picked + margin).clamp_min(0)
    if p == 2:
        z = z * z
    if weight is not None:  # torch does not differentiate the class weights
        z = z * wrap(np.expand_dims(weight._data[t], cdim).astype(x.dtype), False, None)
    # the target class itself contributes max(0, margin)**p; torch leaves it out of the sum
    own = np.zeros(view.shape, dtype=bool)
    np.put_along_axis(own, np.expand_dims(t, cdim), True, axis=cdim)
    loss = z.masked_fill(wrap(own, False, None), 0.0).sum(cdim) / n_classes
    return apply_reduction(loss, reduction)
