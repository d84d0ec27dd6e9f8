"""More losses of ``torch.nn.functional``: CTC (the fused op of ops/ctc.py behind torch's checks),
multilabel margin and triplet margin with a distance function (composites); and the ``torch.*``
spellings of losses and distances, which take ``reduction`` as torch's integer enum.
"""

from __future__ import annotations

import numpy as np

from ..._tensor import Tensor
from ...ops.activation import xlogy
from ...ops.creation import as_tensor
from ...ops.ctc import ctc_loss_nll
from ...ops.elementwise import minimum
from ...ops.gather import _gather
from . import loss as _loss
from . import margin_loss as _margin
from .distance import cosine_similarity, pairwise_distance
from .loss import apply_reduction, check_reduction, reduction_of, scalar_name

__all__ = ["ctc_loss", "multilabel_margin_loss", "triplet_margin_with_distance_loss"]

_CTC = "ctc_loss_allocate_outputs"


# -- CTC ------------------------------------------------------------------------------------------
def _lengths(x, name, batched):
    """Lengths given as a tensor or as a sequence of ints, as an int64 array."""
    if isinstance(x, Tensor):
        if x._data.dtype.kind not in "iu":
            raise RuntimeError(f"{name} must be integral")
        a = x._data.astype(np.int64)
        return a if batched else a.reshape(-1)
    return np.asarray(x, dtype=np.int64).reshape(-1)


def _ctc_targets(targets, tlen, N, C, blank):
    """Extended targets (N, 2 S + 1): blank, l1, blank, ..., lS, blank (blank past the end)."""
    t = targets._data
    if t.ndim == 1:
        offsets = np.concatenate([[0], np.cumsum(tlen)])
        for b in range(N):
            if tlen[b] < 0:
                raise RuntimeError(f"Expected target_lengths to have value at least 0, but got "
                                   f"value {tlen[b]} (while checking arguments for {_CTC})")
        if t.shape[0] != offsets[-1]:
            raise RuntimeError(f"Expected tensor to have size {offsets[-1]} at dimension 0, but "
                               f"got size {t.shape[0]} for argument #2 'targets' (while checking "
                               f"arguments for {_CTC})")
        S = int(tlen.max()) if N else 0
        pos = np.arange(S)
        idx = np.minimum(offsets[:-1, None] + pos, max(t.shape[0] - 1, 0))
        padded = t[idx] if t.size else np.zeros((N, S), np.int64)
    else:
        for b in range(N):
            if tlen[b] < 0:
                raise RuntimeError(f"Expected target_lengths to have value at least 0, but got "
                                   f"value {tlen[b]} (while checking arguments for {_CTC})")
        if t.shape[0] != N:
            raise RuntimeError(f"Expected tensor to have size {N} at dimension 0, but got size "
                               f"{t.shape[0]} for argument #2 'targets' (while checking "
                               f"arguments for {_CTC})")
        S = int(tlen.max()) if N else 0
        if t.shape[1] < S:
            raise RuntimeError(f"Expected tensor to have size at least {S} at dimension 1, but "
                               f"got size {t.shape[1]} for argument #2 'targets' (while checking "
                               f"arguments for {_CTC})")
        padded = t[:, :S]
    inside = np.arange(S)[None, :] < tlen[:, None]
    labels = np.where(inside, padded.astype(np.int64), blank)
    if ((labels < 0) | (labels >= C)).any():
        raise RuntimeError(f"ctc_loss: a target label is outside the range [0, {C})")
    ext = np.full((N, 2 * S + 1), blank, dtype=np.int64)
    ext[:, 1::2] = labels
    return ext


def _ctc(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity):
    if isinstance(input_lengths, Tensor) != isinstance(target_lengths, Tensor):
        raise TypeError("ctc_loss() received an invalid combination of arguments: input_lengths "
                        "and target_lengths must both be tensors or both be tuples of ints")
    if log_probs._data.dtype not in (np.float32, np.float64):
        raise NotImplementedError(f"\"ctc_loss_cpu\" not implemented for "
                                  f"'{scalar_name(log_probs)}'")
    batched = log_probs.dim() == 3
    if not batched:
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0)
    ilen = _lengths(input_lengths, "input_lengths", batched)
    tlen = _lengths(target_lengths, "target_lengths", batched)
    T, N, C = log_probs.shape
    if not 0 <= blank < C:
        raise RuntimeError("blank must be in label range")
    if ilen.size != N:
        raise RuntimeError("input_lengths must be of size batch_size")
    if tlen.size != N:
        raise RuntimeError("target_lengths must be of size batch_size")
    ext = _ctc_targets(targets, tlen, N, C, blank)
    for b in range(N):
        if ilen[b] < 0:
            raise RuntimeError(f"Expected input_lengths to have value at least 0, but got value "
                               f"{ilen[b]} (while checking arguments for {_CTC})")
        if ilen[b] > T:
            raise RuntimeError(f"Expected input_lengths to have value at most {T}, but got "
                               f"value {ilen[b]} (while checking arguments for {_CTC})")
    nll = ctc_loss_nll(log_probs, ext, ilen, tlen, int(blank), bool(zero_infinity))
    if reduction == "mean":
        div = as_tensor(np.maximum(tlen, 1).astype(log_probs._data.dtype))
        return (nll / div).mean()
    if reduction == "sum":
        return nll.sum()
    return nll if batched else nll.squeeze(0)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """Connectionist temporal classification loss of ``log_probs`` (T, N, C) (or (T, C)) against
    ``targets``, padded (N, S) or concatenated (sum of target lengths,); ``'mean'`` divides each
    sequence's loss by its target length, then averages.

    >>> import graphgrad as torch
    >>> lp = torch.zeros(3, 1, 2).log_softmax(2)
    >>> torch.nn.functional.ctc_loss(lp, torch.tensor([[1]]), (3,), (1,), reduction="sum")
    tensor(0.2877)
    """
    return _ctc(log_probs, targets, input_lengths, target_lengths, blank,
                check_reduction(reduction), zero_infinity)


# -- margin losses --------------------------------------------------------------------------------
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Multi-class multi-label hinge loss: for each target class ``y`` (the indices in ``target``
    before the first -1) and each non-target class ``i``, ``max(0, 1 - (x[y] - x[i]))``, summed
    and divided by the number of classes."""
    reduction = reduction_of(reduction, size_average, reduce)
    x, t = input._data, target._data
    if x.ndim > 2 or (x.ndim == 2 and x.shape[1] == 0) or (x.ndim == 1 and x.size == 0):
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch size, "
                           f"but got: {list(x.shape)}")
    if t.shape != x.shape and not (x.ndim == 0 and t.size == 1):
        raise RuntimeError(f"inconsistent target size: {list(t.shape)} for input of size: "
                           f"{list(x.shape)}")
    if t.dtype != np.int64:
        raise RuntimeError(f"expected scalar type Long but found {scalar_name(target)}")
    view = input.reshape(1, -1) if x.ndim < 2 else input
    t2 = t.reshape(view.shape)
    C = view.shape[1]
    # targets are read up to the first -1
    valid = np.cumprod(t2 >= 0, axis=1).astype(bool)
    if ((t2 >= C) & valid).any():
        raise RuntimeError("argument #2 'target' is out of range")
    idx = np.where(valid, t2, 0)
    is_target = np.zeros(view.shape, dtype=bool)
    rows = np.broadcast_to(np.arange(view.shape[0])[:, None], idx.shape)
    is_target[rows[valid], idx[valid]] = True
    picked = _gather(view, 1, idx)  # x[y_j], (N, C)
    z = (1 - picked.unsqueeze(2) + view.unsqueeze(1)).clamp_min(0)  # (N, j, i)
    pairs = valid[:, :, None] & ~is_target[:, None, :]
    loss = (z * as_tensor(pairs.astype(x.dtype))).sum((1, 2)) / C
    if x.ndim < 2:
        loss = loss.reshape(())
    return apply_reduction(loss, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """``max(0, margin + d(a, p) - d(a, n))`` for any distance function ``d`` (default: the
    pairwise 2-norm distance); ``swap`` uses ``min(d(a, n), d(p, n))``."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a_dim, p_dim, n_dim = anchor.ndim, positive.ndim, negative.ndim
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {a_dim}D, positive "
                           f"{p_dim}D, and negative {n_dim}D inputs")
    if distance_function is None:
        distance_function = pairwise_distance
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        dist_neg = minimum(dist_neg, distance_function(positive, negative))
    return apply_reduction((margin + dist_pos - dist_neg).clamp_min(0), reduction)


# -- torch.* spellings (reduction as torch's integer enum) -----------------------------------------
def _enum(reduction, fn, position):
    if isinstance(reduction, bool) or not isinstance(reduction, (int, np.integer)):
        raise TypeError(f"{fn}(): argument 'reduction' (position {position}) must be int, not "
                        f"{type(reduction).__name__}")
    return {1: "mean", 2: "sum"}.get(int(reduction), "none")


def torch_ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=1,
                   zero_infinity=False):
    return _ctc(log_probs, targets, input_lengths, target_lengths, blank,
                _enum(reduction, "ctc_loss", 6), zero_infinity)


def torch_cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=1):
    return _margin.cosine_embedding_loss(input1, input2, target, margin,
                                         reduction=_enum(reduction, "cosine_embedding_loss", 5))


def torch_hinge_embedding_loss(input, target, margin=1.0, reduction=1):
    return _margin.hinge_embedding_loss(input, target, margin,
                                        reduction=_enum(reduction, "hinge_embedding_loss", 4))


def torch_kl_div(input, target, reduction=1, *, log_target=False):
    how = _enum(reduction, "kl_div", 3)
    if log_target:
        out = target.exp() * (target - input)
    else:
        out = xlogy(target, target) - target * input
    return apply_reduction(out, how)


def torch_margin_ranking_loss(input1, input2, target, margin=0.0, reduction=1):
    return _margin.margin_ranking_loss(input1, input2, target, margin,
                                       reduction=_enum(reduction, "margin_ranking_loss", 5))


def torch_poisson_nll_loss(input, target, log_input, full, eps, reduction):
    return _loss.poisson_nll_loss(input, target, log_input, full, eps=eps,
                                  reduction=_enum(reduction, "poisson_nll_loss", 6))


def torch_triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                              reduction=1):
    return _margin.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                       reduction=_enum(reduction, "triplet_margin_loss", 8))


def torch_binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None,
                                           reduction=1):
    how = _enum(reduction, "binary_cross_entropy_with_logits", 5)
    return _loss.binary_cross_entropy_with_logits(input, target, weight, reduction=how,
                                                  pos_weight=pos_weight)


TORCH_FUNCTIONS = {
    "ctc_loss": torch_ctc_loss,
    "cosine_embedding_loss": torch_cosine_embedding_loss,
    "hinge_embedding_loss": torch_hinge_embedding_loss,
    "kl_div": torch_kl_div,
    "margin_ranking_loss": torch_margin_ranking_loss,
    "poisson_nll_loss": torch_poisson_nll_loss,
    "triplet_margin_loss": torch_triplet_margin_loss,
    "binary_cross_entropy_with_logits": torch_binary_cross_entropy_with_logits,
    "pairwise_distance": pairwise_distance,
    "cosine_similarity": cosine_similarity,
}
for _name, _fn in TORCH_FUNCTIONS.items():
    _fn.__name__ = _fn.__qualname__ = _name
